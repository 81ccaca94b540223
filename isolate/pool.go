// Package isolate validates untrusted task files (generated ones, corpora from elsewhere) in
// worker processes with a memory limit and a wall-clock limit, so that a runaway script costs a
// diagnostic and never the caller (SPEC §4).
//
// Neither the step budget nor Thread.Cancel stops work inside a builtin: str() of a deeply
// nested list runs for seconds, and a few string doublings exhaust memory within a handful of
// steps. Only a process boundary contains them. The binary re-executes itself as a worker
// (`coworkenv __worker`, see WorkerMain); a Pool keeps up to N workers alive and sends each a
// request at a time as one JSON line on stdin (the files a task needs, and which of them to
// check), and reads the validation report back as one JSON line on stdout.
//
// A worker that outlives the time limit is killed and the file gets `timeout`; one that runs
// out of memory (the runtime's "out of memory" fatal error under RLIMIT_DATA, or a SIGKILL from
// the system) gets `memory-limit`; one that dies any other way (a panic) gets `crash`. The pool
// starts a fresh worker for the next request.
package isolate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/validate"
)

// Defaults of Options.
const (
	DefaultMemoryLimit = 1 << 30
	DefaultTimeLimit   = 60 * time.Second
)

// Options configure a pool.
type Options struct {
	// Workers is the most worker processes alive and requests served at once (default: the
	// number of CPUs).
	Workers int
	// MemoryLimit is each worker's memory limit in bytes (default DefaultMemoryLimit; negative:
	// none).
	MemoryLimit int64
	// TimeLimit is the wall-clock limit of one request (default DefaultTimeLimit).
	TimeLimit time.Duration
	// Limits are the in-process limits of each call into a script (default dsl.DefaultLimits).
	Limits dsl.Limits
	// Command starts a worker: the program and its first arguments, to which the pool adds
	// --memory-limit. Default: this executable with WorkerCommand.
	Command []string
	// Env is the workers' environment (default: this process's).
	Env []string
}

// Pool runs requests on worker processes. It is safe for concurrent use.
type Pool struct {
	opts   Options
	tokens chan struct{}
	nextID atomic.Int64

	mu     sync.Mutex
	idle   []*worker
	busy   map[*worker]bool
	closed bool
	// Started counts worker processes started (for tests and statistics).
	started atomic.Int64
}

// NewPool checks opts and returns a pool; workers start on demand.
func NewPool(opts Options) (*Pool, error) {
	if opts.Workers <= 0 {
		opts.Workers = runtime.NumCPU()
	}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	if opts.TimeLimit <= 0 {
		opts.TimeLimit = DefaultTimeLimit
	}
	if opts.Limits == (dsl.Limits{}) {
		opts.Limits = dsl.DefaultLimits
	}
	if len(opts.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("isolate: cannot find this program to start workers: %v", err)
		}
		opts.Command = []string{exe, WorkerCommand}
	}
	p := &Pool{opts: opts, tokens: make(chan struct{}, opts.Workers), busy: map[*worker]bool{}}
	return p, nil
}

// Workers is the pool's size.
func (p *Pool) Workers() int { return p.opts.Workers }

// Started is how many worker processes the pool has started so far.
func (p *Pool) Started() int64 { return p.started.Load() }

// Options returns the pool's options with their defaults filled in.
func (p *Pool) Options() Options { return p.opts }

// Close stops every worker. Requests running at that moment end with an error.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	var busy []*worker
	for w := range p.busy {
		busy = append(busy, w)
	}
	p.mu.Unlock()
	for _, w := range idle {
		w.stop()
	}
	for _, w := range busy {
		w.kill()
	}
	return nil
}

// Job is one request: the files a task file needs and which of them to check.
type Job struct {
	// Display is how the corpus root is shown in diagnostics ("" shows root-relative paths).
	Display string
	// Files maps root-relative paths to contents: the files to check, the root's
	// capabilities.star and the helpers they load.
	Files map[string][]byte
	// Check lists the root-relative task files to check.
	Check []string
	// InfoOnly skips validation: the worker only loads the files and describes their tasks.
	InfoOnly bool
	// Setup asks for TaskInfo.Setup (it runs each task's setup once more).
	Setup bool
}

// Result is the answer to a job.
type Result struct {
	// Report is the validation report of the checked files (nil for an InfoOnly job that
	// completed). For a worker that was stopped, every checked file gets one entry with the
	// diagnostic that says why.
	Report *validate.Report
	// Tasks describes each task the checked files declare (empty when the worker was stopped or
	// a file failed to load).
	Tasks []TaskInfo
	// Stopped is the code of the diagnostic when the worker did not finish: "timeout",
	// "memory-limit" or "crash"; "" when it answered.
	Stopped string
	// Elapsed is the wall-clock time of the request.
	Elapsed time.Duration
}

// errClosed is returned by a pool that was closed.
var errClosed = errors.New("isolate: the pool is closed")

// Run sends a job to a worker and waits for its answer, the time limit or ctx. An error means
// the job could not be run at all (the worker program does not start, ctx is done, the pool is
// closed); what a task file does to its worker is in the Result.
func (p *Pool) Run(ctx context.Context, job Job) (*Result, error) {
	select {
	case p.tokens <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.tokens }()
	start := time.Now()
	req := &request{
		ID: p.nextID.Add(1), Display: job.Display, Files: job.Files, Check: job.Check,
		Validate: !job.InfoOnly, Setup: job.Setup,
		Steps: p.opts.Limits.Steps, CallTimeoutMS: p.opts.Limits.Timeout.Milliseconds(),
		TimeLimitMS: p.opts.TimeLimit.Milliseconds(),
	}
	line, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	// A worker that sat idle may have died (its stdin write fails): try a fresh one once.
	for try := 0; ; try++ {
		w, fresh, err := p.get()
		if err != nil {
			return nil, err
		}
		res, retry, err := p.exchange(ctx, w, req, line, job)
		if retry && !fresh && try == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		res.Elapsed = time.Since(start)
		return res, nil
	}
}

func (p *Pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// get returns an idle worker or starts one.
func (p *Pool) get() (w *worker, fresh bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, errClosed
	}
	if n := len(p.idle); n > 0 {
		w = p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.busy[w] = true
		p.mu.Unlock()
		return w, false, nil
	}
	p.mu.Unlock()
	w, err = p.start()
	if err != nil {
		return nil, false, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		w.kill()
		return nil, false, errClosed
	}
	p.busy[w] = true
	p.mu.Unlock()
	return w, true, nil
}

// put gives a healthy worker back, or forgets a dead one.
func (p *Pool) put(w *worker, healthy bool) {
	p.mu.Lock()
	delete(p.busy, w)
	if healthy && !p.closed {
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	if healthy {
		w.stop()
	}
}

// exchange sends one request to w and waits. retry is set when the request could not even be
// written (the worker was already gone).
func (p *Pool) exchange(ctx context.Context, w *worker, req *request, line []byte, job Job) (res *Result, retry bool, err error) {
	if _, err := w.stdin.Write(line); err != nil {
		w.kill()
		p.put(w, false)
		return nil, true, nil
	}
	timer := time.NewTimer(p.opts.TimeLimit)
	defer timer.Stop()
	select {
	case out, ok := <-w.lines:
		if !ok {
			<-w.done
			p.put(w, false)
			if p.isClosed() {
				return nil, false, errClosed
			}
			code, msg := p.classify(w, false)
			return p.stopped(job, code, msg), false, nil
		}
		var resp response
		if err := json.Unmarshal(out, &resp); err != nil || resp.ID != req.ID {
			w.kill()
			<-w.done
			p.put(w, false)
			why := fmt.Sprintf("the worker answered something that is not its answer (%s)", clip(string(out), 200))
			return p.stopped(job, "crash", why), false, nil
		}
		p.put(w, true)
		if resp.Error != "" {
			return nil, false, fmt.Errorf("isolate: worker: %s", resp.Error)
		}
		r, err := decodeResult(&resp, job)
		return r, false, err
	case <-timer.C:
		w.kill()
		<-w.done
		p.put(w, false)
		// It may have run out of memory in the very same moment.
		if code, msg := p.classify(w, true); code == "memory-limit" {
			return p.stopped(job, code, msg), false, nil
		}
		msg := fmt.Sprintf("the file ran longer than the isolated worker's limit of %s and was stopped: a script or a builtin call that does not end (the step budget cannot stop work inside a builtin, such as str() of a deeply nested value)", p.opts.TimeLimit)
		return p.stopped(job, "timeout", msg), false, nil
	case <-ctx.Done():
		w.kill()
		<-w.done
		p.put(w, false)
		return nil, false, ctx.Err()
	}
}

// oomSignatures in a dead worker's stderr (lower case) mean it ran out of memory.
var oomSignatures = []string{"out of memory", "cannot allocate memory", "pthread_create failed", "resource temporarily unavailable", "memory limit reached"}

// limitSignatures mean the same when the worker ran under a memory limit: the runtime failing to
// start a thread, or faulting inside itself (a bare SIGSEGV or SIGBUS report, with no "panic:"),
// which Go code cannot cause (it panics).
var limitSignatures = []string{"failed to create new os thread", "fatal error: newosproc", "unexpected signal during runtime execution", "sigsegv: segmentation violation", "sigbus: bus error"}

// classify tells why a worker died: memory-limit or crash, with a message.
func (p *Pool) classify(w *worker, killedByUs bool) (code, msg string) {
	tail := w.stderr.String()
	low := strings.ToLower(tail)
	limit := "its memory limit"
	if p.opts.MemoryLimit > 0 {
		limit = "its memory limit of " + bytesString(p.opts.MemoryLimit)
	}
	// Under RLIMIT_DATA, running out of memory shows up in several ways: the runtime's fatal
	// "out of memory", a thread that cannot be created (cgo's pthread_create, or the runtime's
	// own clone with errno 11 or 12), or a fault when something fails to map memory (the
	// runtime's "unexpected signal"; a bug in Go code panics instead). A worker that died near
	// its limit ran out of it too.
	oom := false
	for _, m := range oomSignatures {
		if strings.Contains(low, m) {
			oom = true
		}
	}
	if !oom && p.opts.MemoryLimit > 0 && !strings.Contains(low, "panic: ") {
		for _, m := range limitSignatures {
			if strings.Contains(low, m) {
				oom = true
			}
		}
	}
	// (A worker the pool killed for its time has no say in this: its peak proves nothing.)
	near := !killedByUs && p.opts.MemoryLimit > 0 && peakRSS(w.cmd.ProcessState) >= p.opts.MemoryLimit/2
	switch {
	case oom || near:
		return "memory-limit", fmt.Sprintf("the file needed more memory than the isolated worker has (%s) and was stopped: a script or a builtin call builds a huge value, such as a string or list doubled in a loop", limit)
	case !killedByUs && killedBySignal(w.cmd.ProcessState):
		return "memory-limit", fmt.Sprintf("the isolated worker was killed by the system while checking the file, most likely for using too much memory (%s)", limit)
	}
	state := "it exited"
	if ps := w.cmd.ProcessState; ps != nil {
		state = ps.String()
	}
	why := panicLine(tail)
	if why == "" {
		why = "no message"
	}
	return "crash", fmt.Sprintf("the isolated worker died without a verdict (%s): %s", state, why)
}

// panicLine finds the message of a Go panic or fatal error in a worker's stderr.
func panicLine(tail string) string {
	for _, l := range strings.Split(tail, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			return clip(l, 300)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(tail), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return clip(l, 300)
		}
	}
	return ""
}

// stopped is the result of a job whose worker did not finish: each checked file gets one entry
// with the diagnostic.
func (p *Pool) stopped(job Job, code, msg string) *Result {
	rep := &validate.Report{}
	for _, rel := range job.Check {
		d := dsl.NewDiag(code, msg)
		d.File = displayPath(job.Display, rel)
		rep.Add(&validate.TaskReport{File: d.File, Diagnostics: []dsl.Diagnostic{d}, Source: job.Files[rel]})
	}
	return &Result{Report: rep, Stopped: code, Tasks: []TaskInfo{}}
}

func displayPath(display, rel string) string {
	if display == "" || display == "." {
		return rel
	}
	return strings.TrimSuffix(display, "/") + "/" + rel
}

func decodeResult(resp *response, job Job) (*Result, error) {
	res := &Result{Tasks: resp.Tasks}
	if res.Tasks == nil {
		res.Tasks = []TaskInfo{}
	}
	if job.InfoOnly {
		return res, nil
	}
	src := map[string][]byte{}
	for rel, data := range job.Files {
		src[displayPath(job.Display, rel)] = data
	}
	rep, err := validate.ParseReport(resp.Report, func(file string) []byte { return src[file] })
	if err != nil {
		return nil, fmt.Errorf("isolate: the worker's report is not readable: %v", err)
	}
	res.Report = &validate.Report{}
	for _, tr := range rep.Tasks {
		res.Report.Add(tr)
	}
	return res, nil
}

// worker is one worker process.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // answers; closed when stdout ends
	stderr *tail
	done   chan struct{} // closed when the process has been waited for
}

func (p *Pool) start() (*worker, error) {
	args := append([]string{}, p.opts.Command[1:]...)
	if p.opts.MemoryLimit > 0 {
		args = append(args, fmt.Sprintf("--memory-limit=%d", p.opts.MemoryLimit))
	}
	cmd := exec.Command(p.opts.Command[0], args...)
	cmd.Env = p.opts.Env
	w := &worker{cmd: cmd, lines: make(chan []byte, 1), stderr: &tail{max: 64 << 10}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	detach(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("isolate: cannot start a worker (%s): %v", strings.Join(p.opts.Command, " "), err)
	}
	p.started.Add(1)
	w.stdin = stdin
	go func() {
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				break
			}
			w.lines <- line
		}
		close(w.lines)
		cmd.Wait()
		close(w.done)
	}()
	return w, nil
}

// stop ends an idle worker by closing its input (it exits on end of input), then kills it if
// it does not go within a second.
func (w *worker) stop() {
	w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(time.Second):
		w.kill()
	}
}

func (w *worker) kill() {
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
	w.stdin.Close()
}

// tail keeps the first and the last bytes written to it (a panic's message comes first, its
// goroutine dump after).
type tail struct {
	mu   sync.Mutex
	max  int
	head bytes.Buffer
	end  []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if room := t.max/2 - t.head.Len(); room > 0 {
		k := min(room, len(b))
		t.head.Write(b[:k])
		b = b[k:]
	}
	t.end = append(t.end, b...)
	if len(t.end) > t.max/2 {
		t.end = append([]byte{}, t.end[len(t.end)-t.max/2:]...)
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.head.String() + string(t.end)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
