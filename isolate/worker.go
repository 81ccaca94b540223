package isolate

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/validate"
)

// WorkerCommand is the hidden subcommand that runs a worker: `coworkenv __worker`. A program
// that serves as its own worker dispatches to WorkerMain when its first argument is this, before
// anything else (a test binary does it in TestMain).
const WorkerCommand = "__worker"

// request is one line the pool writes to a worker.
type request struct {
	ID      int64             `json:"id"`
	Display string            `json:"display"`
	Files   map[string][]byte `json:"files"`
	Check   []string          `json:"check"`
	// Validate runs the validator; without it the worker only loads the files (and runs setup
	// when Setup is set) for the task facts.
	Validate bool `json:"validate"`
	Setup    bool `json:"setup"`
	// Steps and CallTimeoutMS are the limits of each call into a script (dsl.Limits).
	Steps         uint64 `json:"steps"`
	CallTimeoutMS int64  `json:"call_timeout_ms"`
	// TimeLimitMS is the pool's wall-clock limit for this request; the worker exits on its own
	// a little after it, in case the pool is gone.
	TimeLimitMS int64 `json:"time_limit_ms"`
}

// response is one line a worker writes back.
type response struct {
	ID     int64           `json:"id"`
	Report json.RawMessage `json:"report,omitempty"` // SPEC §5 JSON of validate.Report
	Tasks  []TaskInfo      `json:"tasks"`
	Error  string          `json:"error,omitempty"`
}

// WorkerMain is the worker process: it sets its memory limit, then answers requests read from
// stdin, one JSON object per line, until stdin closes. args are the flags after
// WorkerCommand: --memory-limit BYTES.
func WorkerMain(args []string) int {
	fs := flag.NewFlagSet(WorkerCommand, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	mem := fs.Int64("memory-limit", 0, "bytes of memory (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	debug.SetGCPercent(100)
	if *mem > 0 {
		if err := limitMemory(uint64(*mem)); err != nil {
			// Without the hard limit, the soft one below and the pool's clock still hold.
			fmt.Fprintf(os.Stderr, "coworkenv worker: no hard memory limit: %v\n", err)
		}
		// Collect harder before the hard limit, so that garbage does not end a task that fits.
		debug.SetMemoryLimit(*mem * 3 / 4)
		go watchMemory(uint64(*mem))
	}
	// Keep the protocol stream to ourselves: anything else that writes to stdout goes to stderr.
	out := os.Stdout
	os.Stdout = os.Stderr
	return Serve(os.Stdin, out, ServeOptions{
		OnEOF:    func() { os.Exit(0) },
		Watchdog: func() { fmt.Fprintln(os.Stderr, "coworkenv worker: request ran past its time limit"); os.Exit(3) },
	})
}

// memoryPoll is how often a worker with a memory limit reads its own memory use.
const memoryPoll = 2 * time.Millisecond

// watchMemory ends the worker as soon as the memory the runtime holds passes limit. The hard
// limit (RLIMIT_DATA) is not enough on its own: where the kernel lets a big mapping through, the
// worker fills it page by page, slowly on a loaded machine, and would reach the pool's time limit
// first; a file over its memory must be reported as memory-limit whatever the machine's speed.
// The message is one the pool's classify reads as running out of memory.
func watchMemory(limit uint64) {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	t := time.NewTicker(memoryPoll)
	defer t.Stop()
	for range t.C {
		metrics.Read(samples)
		held := samples[0].Value.Uint64() - samples[1].Value.Uint64()
		if held > limit {
			fmt.Fprintf(os.Stderr, "coworkenv worker: memory limit reached (%d bytes held, limit %d)\n", held, limit)
			os.Exit(4)
		}
	}
}

// ServeOptions tune Serve.
type ServeOptions struct {
	// OnEOF, when set, is called as soon as the input ends, even while a request is running (a
	// worker whose pool is gone stops at once).
	OnEOF func()
	// Watchdog, when set, is called when a request runs 5 s past its time limit.
	Watchdog func()
}

// Serve answers requests from r on w, one per line, until r ends.
func Serve(r io.Reader, w io.Writer, opts ServeOptions) int {
	lines := make(chan []byte)
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 1 {
				lines <- line
			}
			if err != nil {
				if opts.OnEOF != nil {
					opts.OnEOF()
				}
				close(lines)
				return
			}
		}
	}()
	bw := bufio.NewWriter(w)
	for line := range lines {
		var req request
		var resp *response
		if err := json.Unmarshal(line, &req); err != nil {
			resp = &response{Error: fmt.Sprintf("bad request: %v", err)}
		} else {
			var stop func() bool
			if opts.Watchdog != nil && req.TimeLimitMS > 0 {
				stop = time.AfterFunc(time.Duration(req.TimeLimitMS)*time.Millisecond+5*time.Second, opts.Watchdog).Stop
			}
			resp = handle(&req)
			if stop != nil {
				stop()
			}
		}
		data, err := json.Marshal(resp)
		if err != nil {
			data, _ = json.Marshal(&response{ID: req.ID, Error: err.Error()})
		}
		bw.Write(data)
		bw.WriteByte('\n')
		if err := bw.Flush(); err != nil {
			return 1
		}
	}
	return 0
}

// handle runs one request in this process.
func handle(req *request) *response {
	ctx := context.Background()
	fsys := fstest.MapFS{}
	for p, data := range req.Files {
		fsys[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	lim := dsl.Limits{Steps: req.Steps, Timeout: time.Duration(req.CallTimeoutMS) * time.Millisecond}
	if lim == (dsl.Limits{}) {
		lim = dsl.DefaultLimits
	}
	c := dsl.NewCorpus(fsys, ".", req.Display)
	c.Limits = lim
	resp := &response{ID: req.ID, Tasks: []TaskInfo{}}
	if req.Validate {
		rep, err := validate.Corpus(ctx, c, req.Check, validate.Options{Jobs: 1, Limits: lim})
		if err != nil {
			resp.Error = err.Error()
			return resp
		}
		resp.Report = json.RawMessage(jsonv.MustEncode(rep.JSON()))
	}
	for _, rel := range req.Check {
		f := c.LoadFile(ctx, rel)
		for _, t := range f.Tasks {
			resp.Tasks = append(resp.Tasks, Describe(ctx, t, lim, req.Setup))
		}
	}
	return resp
}
