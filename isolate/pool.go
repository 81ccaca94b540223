// Package isolate runs untrusted task files (from disk, generated, from elsewhere) in worker
// processes with a memory limit and a wall-clock limit, so that a runaway script costs a
// diagnostic for its file or episode and never the caller (docs/limits.md).
//
// Neither the step budget nor Thread.Cancel stops work inside every builtin or operator: ==
// between deeply nested lists runs for ages in one step, and list.extend of a huge range
// exhausts memory within it. Only a process boundary contains them. The binary re-executes
// itself as a worker (`coworkenv __worker`, see WorkerMain); a Pool keeps up to N workers alive,
// each serving many requests one at a time, written as JSON lines on its stdin: validate files
// (Run, ValidateCorpus, as `validate` and `generate` do), run an episode (Episode, as `run` and
// `rollout` do), or replay a trace (Replay). An episode streams its trace to the pool a line
// per event as it happens, so the pool writes the trace; a model agent in a worker sends its
// HTTP requests through the pool, which holds the key (the worker's environment has none), and
// the time the pool spends on them does not count against the worker's time limit. So do the
// models that answer for a task's simulated users and judges (Agent.User, Agent.Judge; in a
// validation, Job.Models).
//
// A worker that outlives the time limit is killed and the request gets `timeout`; one that runs
// out of memory (the runtime's "out of memory" fatal error under RLIMIT_DATA, its own memory
// watchdog, or a SIGKILL from the system) gets `memory-limit`; one that dies any other way (a
// panic) gets `crash`. An episode whose worker stopped keeps its trace so far, ended by an end
// event that the pool writes with that diagnostic. The pool starts a fresh worker for the next
// request.
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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
)

// Defaults of Options.
const (
	DefaultMemoryLimit = 1 << 30
	DefaultTimeLimit   = 60 * time.Second
)

// SecretEnv are the variables of the environment that workers do not get.
var SecretEnv = []string{"OPENAI_API_KEY"}

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
	// Env is the workers' environment (default: this process's). SecretEnv is always left out:
	// the model's key stays in this process (Host).
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
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = slices.DeleteFunc(slices.Clone(opts.Env), func(kv string) bool {
		for _, k := range SecretEnv {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
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
	// Models, when set, are models the validator also runs the checked tasks against
	// (validate.Options.Models; not for InfoOnly): the worker is given their settings, and their
	// requests come back through this process (TaskModels).
	Models *TaskModels
	// Runs are recorded runs the validator plays against the checked tasks they name
	// (validate.Options.Runs; not for InfoOnly).
	Runs []*recorded.Run
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
	// Diags are the diagnostics of the checked files that do not load (InfoOnly jobs).
	Diags []dsl.Diagnostic
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
	start := time.Now()
	req := &request{Display: job.Display, Files: job.Files, Check: job.Check, Validate: !job.InfoOnly, Setup: job.Setup}
	if !job.InfoOnly {
		req.Runs = job.Runs
	}
	sess := &session{subject: "the file"}
	if m := job.Models; m != nil && !job.InfoOnly {
		req.Models = &modelSettings{User: m.User, Judge: m.Judge}
		sess.call, sess.message = m.serve, m.message
	}
	resp, st, err := p.do(ctx, req, sess)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		res := p.stopped(job, st.code, st.msg)
		res.Elapsed = time.Since(start)
		return res, nil
	case resp.Error != "":
		return nil, fmt.Errorf("isolate: worker: %s", resp.Error)
	}
	res, err := decodeResult(resp, job)
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// session is the pool's side of one request: what the worker's messages and calls are for.
type session struct {
	// subject names what the request runs, in the diagnostics of a stopped worker ("the file").
	subject string
	// message receives the worker's messages (trace lines, prints, retries), in order.
	message func(*message)
	// call answers a call of the worker; it must return soon after ctx is done.
	call func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// graceful: when ctx is done, ask the worker to stop the request and wait for its answer
	// (an episode ends as interrupted, with its trace) instead of killing it.
	graceful bool
}

// stop says why a worker did not answer: the code of the diagnostic (memory-limit, timeout,
// crash; interrupted for a request the pool gave up on) and its message.
type stop struct {
	code, msg string
}

// graceCancel is how long a worker has to end a cancelled request before it is killed.
const graceCancel = 5 * time.Second

// do runs a request on a worker: its answer, or why the worker stopped, or an error when the
// request could not run at all (no worker starts, ctx is done for a request that is not
// graceful, the pool is closed).
func (p *Pool) do(ctx context.Context, req *request, sess *session) (*response, *stop, error) {
	select {
	case p.tokens <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	defer func() { <-p.tokens }()
	req.ID = p.nextID.Add(1)
	req.Steps, req.CallTimeoutMS = p.opts.Limits.Steps, p.opts.Limits.Timeout.Milliseconds()
	req.TimeLimitMS = p.opts.TimeLimit.Milliseconds()
	// A worker that sat idle may have died (its stdin write fails): try a fresh one once.
	for try := 0; ; try++ {
		w, fresh, err := p.get()
		if err != nil {
			return nil, nil, err
		}
		resp, st, retry, err := p.exchange(ctx, w, req, sess)
		if retry && !fresh && try == 0 {
			continue
		}
		return resp, st, err
	}
}

// answerLine answers a call of the worker; cancelLine cancels the request running.
type answerLine struct {
	ID      int64           `json:"id"`
	Answer  int64           `json:"answer"`
	Result  json.RawMessage `json:"result,omitempty"`
	Failure *callFailure    `json:"failure,omitempty"`
}

type cancelLine struct {
	ID     int64 `json:"id"`
	Cancel bool  `json:"cancel"`
}

// exchange sends one request to w and serves it until its answer. retry is set when the
// request could not even be written (the worker was already gone).
func (p *Pool) exchange(ctx context.Context, w *worker, req *request, sess *session) (resp *response, st *stop, retry bool, err error) {
	if err := w.out.write(req); err != nil {
		w.kill()
		p.put(w, false)
		return nil, nil, true, nil
	}
	expired := make(chan struct{})
	var once sync.Once
	clock := newBudget(p.opts.TimeLimit, func() { once.Do(func() { close(expired) }) })
	defer clock.stop()

	// calls of the worker being served, by number
	var mu sync.Mutex
	var wg sync.WaitGroup
	calls := map[int64]context.CancelFunc{}
	defer func() {
		mu.Lock()
		for _, cancel := range calls {
			cancel()
		}
		mu.Unlock()
		wg.Wait()
	}()
	serve := func(m *message) {
		cctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		calls[m.Call] = cancel
		mu.Unlock()
		clock.pause()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer clock.resume()
			var result json.RawMessage
			err := fmt.Errorf("the pool serves no %q calls here", m.Method)
			if sess.call != nil {
				result, err = sess.call(cctx, m.Method, m.Params)
			}
			mu.Lock()
			delete(calls, m.Call)
			mu.Unlock()
			if cctx.Err() != nil {
				return // abandoned by the worker, or the request is cancelled
			}
			ans := &answerLine{ID: req.ID, Answer: m.Call, Result: result}
			if err != nil {
				ans.Result, ans.Failure = nil, failureOf(err)
			}
			w.out.write(ans)
			cancel()
		}()
	}

	done := ctx.Done()
	var grace <-chan time.Time
	for {
		select {
		case out, ok := <-w.lines:
			if !ok {
				w.wait()
				p.put(w, false)
				if p.isClosed() {
					return nil, nil, false, errClosed
				}
				code, msg := p.classify(w, false, sess.subject)
				return nil, &stop{code, msg}, false, nil
			}
			if line, ok := traceOf(out, req.ID); ok {
				if sess.message != nil {
					sess.message(&message{Trace: line})
				}
				continue
			}
			var r response
			if err := json.Unmarshal(out, &r); err != nil || r.ID != req.ID {
				w.kill()
				w.wait()
				p.put(w, false)
				return nil, &stop{"crash", fmt.Sprintf("the worker answered something that is not its answer (%s)", clip(string(out), 200))}, false, nil
			}
			switch m := r.Msg; {
			case m == nil:
				p.put(w, true)
				return &r, nil, false, nil
			case m.Call > 0:
				serve(m)
			case m.Abandon > 0:
				mu.Lock()
				if cancel := calls[m.Abandon]; cancel != nil {
					cancel()
				}
				mu.Unlock()
			case sess.message != nil:
				sess.message(m)
			}
		case <-expired:
			w.kill()
			w.wait()
			p.put(w, false)
			if ctx.Err() != nil && sess.graceful {
				return nil, p.interrupted(sess), false, nil
			}
			// It may have run out of memory in the very same moment.
			if code, msg := p.classify(w, true, sess.subject); code == "memory-limit" {
				return nil, &stop{code, msg}, false, nil
			}
			return nil, &stop{"timeout", p.timeoutMessage(sess)}, false, nil
		case <-done:
			done = nil
			if !sess.graceful {
				w.kill()
				w.wait()
				p.put(w, false)
				return nil, nil, false, ctx.Err()
			}
			w.out.write(&cancelLine{ID: req.ID, Cancel: true})
			t := time.NewTimer(graceCancel)
			defer t.Stop()
			grace = t.C
		case <-grace:
			w.kill()
			w.wait()
			p.put(w, false)
			return nil, p.interrupted(sess), false, nil
		}
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

// timeoutMessage is the message of a request that ran out of time.
func (p *Pool) timeoutMessage(sess *session) string {
	msg := fmt.Sprintf("%s ran longer than the isolated worker's limit of %s and was stopped: a script, or a builtin call or operator that does not end (no step budget reaches inside some of them, such as == between deeply nested lists)", sess.subject, p.opts.TimeLimit)
	if sess.call != nil {
		msg += "; the time the model took to answer does not count"
	}
	return msg
}

// interrupted is the stop of a request cancelled by its caller whose worker did not end it.
func (p *Pool) interrupted(sess *session) *stop {
	return &stop{episode.Interrupted, fmt.Sprintf("%s was interrupted, and its isolated worker did not stop within %s", sess.subject, graceCancel)}
}

// oomSignatures in a dead worker's stderr (lower case) mean it ran out of memory.
var oomSignatures = []string{"out of memory", "cannot allocate memory", "pthread_create failed", "resource temporarily unavailable", "memory limit reached"}

// limitSignatures mean the same when the worker ran under a memory limit: the runtime failing to
// start a thread, or faulting inside itself (a bare SIGSEGV or SIGBUS report, with no "panic:"),
// which Go code cannot cause (it panics).
var limitSignatures = []string{"failed to create new os thread", "fatal error: newosproc", "unexpected signal during runtime execution", "sigsegv: segmentation violation", "sigbus: bus error"}

// classify tells why a worker died: memory-limit or crash, with a message about subject (what
// the request ran: "the file", "the episode").
func (p *Pool) classify(w *worker, killedByUs bool, subject string) (code, msg string) {
	if w.oversized.Load() {
		return "crash", fmt.Sprintf("%s made the isolated worker write a line longer than %d MiB (a tool result or value too large for a trace) and was stopped", subject, maxMessage>>20)
	}
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
		return "memory-limit", fmt.Sprintf("%s needed more memory than the isolated worker has (%s) and was stopped: a script or a builtin call builds a huge value, such as a string or list doubled in a loop or a list extended by a huge range", subject, limit)
	case !killedByUs && killedBySignal(w.cmd.ProcessState):
		return "memory-limit", fmt.Sprintf("the isolated worker was killed by the system while it ran %s, most likely for using too much memory (%s)", subject, limit)
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
	res := &Result{Tasks: resp.Tasks, Diags: resp.Diags}
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
	out    *lineWriter // on stdin
	lines  chan []byte // answers and messages; closed when stdout ends
	stderr *tail
	done   chan struct{} // closed when the process has been waited for
	// oversized: the worker wrote a line longer than maxMessage, and was killed for it.
	oversized atomic.Bool
}

func (p *Pool) start() (*worker, error) {
	args := append([]string{}, p.opts.Command[1:]...)
	if p.opts.MemoryLimit > 0 {
		args = append(args, fmt.Sprintf("--memory-limit=%d", p.opts.MemoryLimit))
	}
	cmd := exec.Command(p.opts.Command[0], args...)
	cmd.Env = p.opts.Env
	w := &worker{cmd: cmd, lines: make(chan []byte, 16), stderr: &tail{max: 64 << 10}, done: make(chan struct{})}
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
	w.out = newLineWriter(stdin)
	go func() {
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := readMessage(br)
			if err == errLongMessage {
				w.oversized.Store(true)
				w.kill()
				io.Copy(io.Discard, stdout)
			}
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

// wait waits for a worker that is ending, reading what it still writes.
func (w *worker) wait() {
	for range w.lines {
	}
	<-w.done
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
