// Package serve is the HTTP and JSON API of live episodes (runtime/session): a client creates a
// session of a task, then acts in it one step at a time (a tool call, a message) and gets what a
// model agent would give its model back, the turns' rewards and, at the end, the verdict. Each
// session writes its trace. docs/serve.md describes the API.
//
// The server keeps its sessions in memory. It bounds them (MaxSessions), closes those left idle
// (IdleTimeout), bounds request bodies (MaxBody), and may require a bearer token. Every error is
// a JSON object with a stable code, and none ends a session. Close ends every session, their
// traces with them.
//
// The tasks run in this process: the built-in corpus is trusted; a corpus from disk runs with
// the server's rights (running sessions in isolated workers is later work).
package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

// Defaults of Options.
const (
	DefaultMaxSessions = 64
	DefaultIdleTimeout = 10 * time.Minute
	DefaultMaxBody     = 1 << 20
)

// Source is a corpus and the task files of it to serve.
type Source struct {
	Corpus *dsl.Corpus
	// Files are root-relative task files; nil serves every task file of the corpus.
	Files []string
}

// Options configure a server.
type Options struct {
	// Sources are the tasks to serve, loaded once by New. A task whose name an earlier one has
	// is left out (Skipped).
	Sources []Source
	// TraceDir, when set, receives a trace per session: TraceDir/<id>.jsonl.partial while the
	// episode runs, renamed to <id>.jsonl when it finishes. An episode that was closed before it
	// finished (DELETE, idle, shutdown) keeps the .partial name; its trace ends all the same.
	TraceDir string
	// MaxSessions bounds the sessions kept at once, finished ones included until they are
	// deleted or reaped; 0 is DefaultMaxSessions.
	MaxSessions int
	// IdleTimeout closes and forgets a session that had no action for that long; 0 is
	// DefaultIdleTimeout, a negative value keeps sessions until they are deleted.
	IdleTimeout time.Duration
	// MaxBody bounds a request's body in bytes; 0 is DefaultMaxBody.
	MaxBody int64
	// Token, when set, is the bearer token every request but GET /health must carry
	// (Authorization: Bearer TOKEN).
	Token string
	// Now is the clock idleness is measured by; nil is time.Now.
	Now func() time.Time
	// Print, when set, receives what the tasks' scripts print, with the session's id; nil drops
	// it. It is called on the session's episode goroutine.
	Print func(id string, pos syntax.Position, msg string)
	// Tick, when set, drives the reaper of idle sessions: each value received is one sweep.
	// Otherwise a ticker does, a quarter of IdleTimeout apart (at least a second).
	Tick <-chan time.Time
}

// task is a task the server offers.
type task struct {
	task    *dsl.Task
	source  []byte
	sources []trace.Source
}

// Server is the API's http.Handler. Create it with New and end it with Close.
type Server struct {
	opts    Options
	idle    time.Duration
	tasks   map[string]*task
	order   []*task
	skipped []dsl.Diagnostic
	mux     *http.ServeMux

	stop       chan struct{}
	reaperDone chan struct{}
	ticker     *time.Ticker
	closeOnce  sync.Once

	mu       sync.Mutex // guards the fields below
	sessions map[string]*entry
	reserved int // sessions being created
	counter  int // of session ids
	closed   bool
}

// entry is one session of the server.
type entry struct {
	id   string
	s    *session.Session
	last time.Time // the last action's end (guarded by Server.mu)
	busy int       // actions under way (guarded by Server.mu)
	tr   *traceState
}

// traceState is a session's trace file; err is set on the episode's goroutine when it ends.
type traceState struct {
	path string // "" when the server keeps no traces
	mu   sync.Mutex
	err  error
}

func (t *traceState) setErr(err error) {
	t.mu.Lock()
	t.err = err
	t.mu.Unlock()
}

func (t *traceState) getErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// New loads the tasks of the sources and returns a server with its reaper started. Files that
// do not load are skipped (Skipped says why); an error is a source that cannot be read or a bad
// option.
func New(opts Options) (*Server, error) {
	switch {
	case opts.MaxSessions < 0:
		return nil, fmt.Errorf("serve: MaxSessions %d is negative", opts.MaxSessions)
	case opts.MaxBody < 0:
		return nil, fmt.Errorf("serve: MaxBody %d is negative", opts.MaxBody)
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxBody == 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TraceDir != "" {
		if info, err := os.Stat(opts.TraceDir); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("serve: the trace folder %s is not a folder", opts.TraceDir)
		}
	}
	s := &Server{opts: opts, idle: opts.IdleTimeout, tasks: map[string]*task{}, sessions: map[string]*entry{},
		stop: make(chan struct{}), reaperDone: make(chan struct{})}
	if s.idle == 0 {
		s.idle = DefaultIdleTimeout
	}
	if err := s.load(); err != nil {
		return nil, err
	}
	s.routes()
	tick := opts.Tick
	if tick == nil && s.idle > 0 {
		s.ticker = time.NewTicker(max(s.idle/4, time.Second))
		tick = s.ticker.C
	}
	go s.reaper(tick)
	return s, nil
}

// load loads the tasks of every source.
func (s *Server) load() error {
	for _, src := range s.opts.Sources {
		files := src.Files
		if files == nil {
			var err error
			if files, err = src.Corpus.TaskFiles(); err != nil {
				return err
			}
		}
		for _, rel := range files {
			f := src.Corpus.LoadFile(context.Background(), rel)
			if len(f.Diags) > 0 {
				s.skipped = append(s.skipped, f.Diags...)
				continue
			}
			sources, err := trace.Sources(src.Corpus, rel)
			if err != nil {
				d := dsl.NewDiag("io", fmt.Sprintf("%s: %v", f.Path, err))
				s.skipped = append(s.skipped, d)
				continue
			}
			for _, t := range f.Tasks {
				if prev, dup := s.tasks[t.Name]; dup {
					d := dsl.NewDiag("schema", fmt.Sprintf("task %q is served from %s already; this one is left out", t.Name, prev.task.File)).At(t.Pos)
					s.skipped = append(s.skipped, d)
					continue
				}
				e := &task{task: t, source: f.Source, sources: sources}
				s.tasks[t.Name] = e
				s.order = append(s.order, e)
			}
		}
	}
	return nil
}

// Skipped are the diagnostics of the task files New left out.
func (s *Server) Skipped() []dsl.Diagnostic { return s.skipped }

// Tasks are the names of the tasks served, in load order.
func (s *Server) Tasks() []string {
	out := make([]string, len(s.order))
	for i, t := range s.order {
		out[i] = t.task.Name
	}
	return out
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close ends the server: new requests are refused (shutting_down), the reaper stops, and every
// session is closed, its trace ended. A session a request is creating meanwhile is closed by that
// request. Close may be called more than once; every call returns when the first is done.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		all := make([]*entry, 0, len(s.sessions))
		for _, e := range s.sessions {
			all = append(all, e)
		}
		s.sessions = map[string]*entry{}
		s.mu.Unlock()
		close(s.stop)
		<-s.reaperDone
		if s.ticker != nil {
			s.ticker.Stop()
		}
		closeAll(all)
	})
}

// closeAll closes the sessions in parallel and waits for them.
func closeAll(all []*entry) {
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.s.Close()
		}()
	}
	wg.Wait()
}

// reaper closes idle sessions at every tick until the server closes.
func (s *Server) reaper(tick <-chan time.Time) {
	defer close(s.reaperDone)
	for {
		select {
		case <-tick:
			s.reap()
		case <-s.stop:
			return
		}
	}
}

// reap closes and forgets the sessions that had no action for the idle timeout; a session with
// an action under way is never idle.
func (s *Server) reap() {
	if s.idle <= 0 {
		return
	}
	now := s.opts.Now()
	var idle []*entry
	s.mu.Lock()
	for id, e := range s.sessions {
		if e.busy == 0 && now.Sub(e.last) >= s.idle {
			delete(s.sessions, id)
			idle = append(idle, e)
		}
	}
	s.mu.Unlock()
	closeAll(idle)
}

// errShuttingDown and errTooMany are reserve's refusals.
var (
	errShuttingDown = errors.New("the server is shutting down")
	errTooMany      = errors.New("too many sessions")
)

// reserve takes a place for a new session and gives it its id: s1, s2, ... in order, past the
// ids whose trace is in the trace folder already (a server started again never writes over
// one).
func (s *Server) reserve() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return "", errShuttingDown
	case len(s.sessions)+s.reserved >= s.opts.MaxSessions:
		return "", errTooMany
	}
	s.reserved++
	for {
		s.counter++
		id := fmt.Sprintf("s%d", s.counter)
		if s.opts.TraceDir == "" || !exists(s.tracePath(id)) && !exists(s.tracePath(id)+".partial") {
			return id, nil
		}
	}
}

func (s *Server) tracePath(id string) string { return filepath.Join(s.opts.TraceDir, id+".jsonl") }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// admit puts a created session in place of its reservation; false when the server closed
// meanwhile (the caller closes the session).
func (s *Server) admit(e *entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved--
	if s.closed {
		return false
	}
	e.last = s.opts.Now()
	s.sessions[e.id] = e
	return true
}

// release gives a reservation back.
func (s *Server) release() {
	s.mu.Lock()
	s.reserved--
	s.mu.Unlock()
}

// begin finds a session for an action and marks it busy (the reaper leaves it alone).
func (s *Server) begin(id string) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookupLocked(id)
	if err == nil {
		e.busy++
	}
	return e, err
}

// end marks an action over: the session's idle time starts again.
func (s *Server) end(e *entry) {
	s.mu.Lock()
	e.busy--
	e.last = s.opts.Now()
	s.mu.Unlock()
}

// lookup finds a session.
func (s *Server) lookup(id string) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookupLocked(id)
}

// lookupLocked finds a session; s.mu is held.
func (s *Server) lookupLocked(id string) (*entry, error) {
	if s.closed {
		return nil, errShuttingDown
	}
	e, ok := s.sessions[id]
	if !ok {
		return nil, errUnknownSession
	}
	return e, nil
}

// remove forgets a session.
func (s *Server) remove(id string) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errShuttingDown
	}
	e, ok := s.sessions[id]
	if !ok {
		return nil, errUnknownSession
	}
	delete(s.sessions, id)
	return e, nil
}

var errUnknownSession = errors.New("no such session")

// create makes a session of t (its setup runs under ctx), tracing it to its file when the server keeps traces.
func (s *Server) create(ctx context.Context, t *task, seed int64) (*entry, error) {
	id, err := s.reserve()
	if err != nil {
		return nil, err
	}
	e := &entry{id: id, tr: &traceState{}}
	opts := session.Options{Source: t.source, Sources: t.sources}
	if print := s.opts.Print; print != nil {
		opts.Print = func(pos syntax.Position, msg string) { print(id, pos, msg) }
	}
	if s.opts.TraceDir != "" {
		e.tr.path = s.tracePath(id)
		tf := &rollout.TraceFile{Path: e.tr.path}
		opts.Trace = tf
		opts.OnEnd = func(res *episode.Result, traceErr error) {
			// the trace of an episode that was closed before it finished keeps its .partial name
			interrupted := res.Err != nil && res.Err.Code == episode.Interrupted
			if err := tf.Finish(interrupted); err != nil && traceErr == nil {
				traceErr = err
			}
			e.tr.setErr(traceErr)
		}
	}
	sess, err := session.Create(ctx, t.task, seed, opts)
	if err != nil {
		s.release()
		return nil, err
	}
	e.s = sess
	if !s.admit(e) {
		sess.Close()
		return nil, errShuttingDown
	}
	return e, nil
}
