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
	"sync"
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
	// Like the command (main.go), trade memory for less collection; the soft memory limit below
	// makes it collect harder as the worker nears its limit.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
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
	out := newLineWriter(w)
	type parsed struct {
		req *request
		err error
	}
	reqs := make(chan parsed, 4)
	var mu sync.Mutex
	var cur *conn             // the request running
	early := map[int64]bool{} // requests cancelled before they ran
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 1 {
				var in inbound
				switch jerr := json.Unmarshal(line, &in); {
				case jerr != nil:
					reqs <- parsed{err: jerr}
				case in.Answer > 0 || in.Cancel:
					mu.Lock()
					c := cur
					if in.Cancel && (c == nil || c.id != in.ID) {
						early[in.ID] = true
					}
					mu.Unlock()
					if c != nil && c.id == in.ID {
						c.deliver(&in)
					}
				default:
					reqs <- parsed{req: &in.request}
				}
			}
			if err != nil {
				if opts.OnEOF != nil {
					opts.OnEOF()
				}
				close(reqs)
				return
			}
		}
	}()
	for p := range reqs {
		if p.err != nil {
			if out.write(&response{Error: fmt.Sprintf("bad request: %v", p.err)}) != nil && out.broken() {
				return 1
			}
			continue
		}
		req := p.req
		ctx, cancel := context.WithCancel(context.Background())
		c := &conn{id: req.ID, out: out, cancel: cancel, waiting: map[int64]chan *inbound{}}
		if opts.Watchdog != nil && req.TimeLimitMS > 0 {
			c.clock = newBudget(time.Duration(req.TimeLimitMS)*time.Millisecond+5*time.Second, opts.Watchdog)
		}
		mu.Lock()
		cur = c
		if early[req.ID] {
			delete(early, req.ID)
			cancel()
		}
		mu.Unlock()
		resp := handle(ctx, req, c)
		mu.Lock()
		cur = nil
		mu.Unlock()
		if c.clock != nil {
			c.clock.stop()
		}
		cancel()
		resp.ID = req.ID
		if err := out.write(resp); err != nil {
			if out.broken() {
				return 1
			}
			out.write(&response{ID: req.ID, Error: err.Error()})
		}
	}
	return 0
}

// conn is the worker's side of the request running: its messages, its calls to the pool and
// their answers, and its cancellation.
type conn struct {
	id     int64
	out    *lineWriter
	cancel context.CancelFunc
	clock  *budget // the watchdog, paused while the pool serves a call; nil without one

	mu      sync.Mutex
	next    int64
	waiting map[int64]chan *inbound
}

// send writes a message.
func (c *conn) send(m *message) { c.out.write(&outMessage{ID: c.id, Msg: m}) }

// call asks the pool to do method with params and waits for the answer, or for ctx.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *inbound, 1)
	c.mu.Lock()
	c.next++
	n := c.next
	c.waiting[n] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, n)
		c.mu.Unlock()
	}()
	if c.clock != nil {
		c.clock.pause()
		defer c.clock.resume()
	}
	c.send(&message{Call: n, Method: method, Params: raw})
	select {
	case a := <-ch:
		if a.Failure != nil {
			return nil, &remoteError{a.Failure}
		}
		return a.Result, nil
	case <-ctx.Done():
		c.send(&message{Abandon: n})
		return nil, ctx.Err()
	}
}

// deliver hands an answer to its call, or cancels the request.
func (c *conn) deliver(in *inbound) {
	if in.Cancel {
		c.cancel()
		return
	}
	c.mu.Lock()
	ch := c.waiting[in.Answer]
	c.mu.Unlock()
	if ch != nil {
		select {
		case ch <- in:
		default:
		}
	}
}

// handle runs one request in this process.
func handle(ctx context.Context, req *request, c *conn) *response {
	lim := dsl.Limits{Steps: req.Steps, Timeout: time.Duration(req.CallTimeoutMS) * time.Millisecond}
	if lim == (dsl.Limits{}) {
		lim = dsl.DefaultLimits
	}
	corp := corpusOf(req, lim)
	switch {
	case req.Episode != nil:
		return serveEpisode(ctx, req.Episode, corp, lim, c)
	case req.Session != nil:
		return serveSession(ctx, req.Session, corp, lim, c)
	case req.Replay != nil:
		return serveReplay(ctx, req.Replay, corp)
	}
	resp := &response{Tasks: []TaskInfo{}}
	if req.Validate {
		opts := validate.Options{Jobs: 1, Limits: lim, Runs: req.Runs}
		if m := req.Models; m != nil {
			models, err := workerModels(Agent{User: m.User, Judge: m.Judge}, c)
			if err != nil {
				resp.Error = err.Error()
				return resp
			}
			opts.Models = models
		}
		rep, err := validate.Corpus(ctx, corp, req.Check, opts)
		if err != nil {
			resp.Error = err.Error()
			return resp
		}
		resp.Report = json.RawMessage(jsonv.MustEncode(rep.JSON()))
	}
	for _, rel := range req.Check {
		f := corp.LoadFile(ctx, rel)
		if !req.Validate {
			resp.Diags = append(resp.Diags, f.Diags...)
		}
		for _, t := range f.Tasks {
			resp.Tasks = append(resp.Tasks, Describe(ctx, t, lim, req.Setup))
		}
	}
	return resp
}

// corpusOf is the corpus of the files a request brings.
func corpusOf(req *request, lim dsl.Limits) *dsl.Corpus {
	fsys := fstest.MapFS{}
	for p, data := range req.Files {
		fsys[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return dsl.NewCorpus(fsys, ".", req.Display).WithLimits(lim)
}
