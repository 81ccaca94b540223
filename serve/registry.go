package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"go.starlark.net/syntax"
)

// registry is the server's sessions: it makes them (create), bounds how many there are
// (MaxSessions, counting the places reserved for sessions being made and for POST /episodes),
// hands them to one action at a time (begin, end), forgets them (remove), closes those left idle
// (its reaper) and, at Close, all of them. Every front end reaches the sessions through it; its
// lock guards nothing else.
type registry struct {
	max      int
	idle     time.Duration // <= 0: sessions are kept however long they are idle
	now      func() time.Time
	traceDir string
	print    func(id string, pos syntax.Position, msg string)

	stop       chan struct{} // closed by close: the front ends end what they run
	reaperDone chan struct{}
	ticker     *time.Ticker
	closeOnce  sync.Once

	mu       sync.Mutex // guards the fields below
	sessions map[string]*entry
	reserved int // places taken for sessions being made, and for POST /episodes
	counter  int // of session ids
	closed   bool
}

// entry is one session of the server.
type entry struct {
	id   string
	s    Live
	last time.Time // the last action's end (guarded by registry.mu)
	busy int       // actions under way (guarded by registry.mu)
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

// newRegistry returns a registry of checked options (New filled in their defaults) with its
// reaper started.
func newRegistry(opts Options, idle time.Duration) *registry {
	r := &registry{max: opts.MaxSessions, idle: idle, now: opts.Now, traceDir: opts.TraceDir, print: opts.Print,
		sessions: map[string]*entry{}, stop: make(chan struct{}), reaperDone: make(chan struct{})}
	tick := opts.Tick
	if tick == nil && idle > 0 {
		r.ticker = time.NewTicker(max(idle/4, time.Second))
		tick = r.ticker.C
	}
	go r.reaper(tick)
	return r
}

// close refuses what comes next (shutting_down), stops the reaper, and closes every session, its
// trace ended. A session being made meanwhile is closed by its maker (admit). Only the first call
// does anything; every call returns when it is done.
func (r *registry) close() {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		all := make([]*entry, 0, len(r.sessions))
		for _, e := range r.sessions {
			all = append(all, e)
		}
		r.sessions = map[string]*entry{}
		r.mu.Unlock()
		close(r.stop)
		<-r.reaperDone
		if r.ticker != nil {
			r.ticker.Stop()
		}
		closeAll(all)
	})
}

// stopping is closed when the registry closes.
func (r *registry) stopping() <-chan struct{} { return r.stop }

// count is how many sessions the registry keeps, and whether it closed.
func (r *registry) count() (n int, closed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions), r.closed
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

// reaper closes idle sessions at every tick until the registry closes.
func (r *registry) reaper(tick <-chan time.Time) {
	defer close(r.reaperDone)
	for {
		select {
		case <-tick:
			r.reap()
		case <-r.stop:
			return
		}
	}
}

// reap closes and forgets the sessions that had no action for the idle timeout; a session with
// an action under way is never idle.
func (r *registry) reap() {
	if r.idle <= 0 {
		return
	}
	now := r.now()
	var idle []*entry
	r.mu.Lock()
	for id, e := range r.sessions {
		if e.busy == 0 && now.Sub(e.last) >= r.idle {
			delete(r.sessions, id)
			idle = append(idle, e)
		}
	}
	r.mu.Unlock()
	closeAll(idle)
}

// The registry's refusals.
var (
	errShuttingDown   = errors.New("the server is shutting down")
	errTooMany        = errors.New("too many sessions")
	errUnknownSession = errors.New("no such session")
)

// reserve takes a place for a new session and gives it its id: s1, s2, ... in order, past the
// ids whose trace is in the trace folder already (a server started again never writes over
// one). release gives the place back, admit fills it.
func (r *registry) reserve() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return "", errShuttingDown
	case len(r.sessions)+r.reserved >= r.max:
		return "", errTooMany
	}
	r.reserved++
	for {
		r.counter++
		id := fmt.Sprintf("s%d", r.counter)
		if r.traceDir == "" || !exists(r.tracePath(id)) && !exists(r.tracePath(id)+".partial") {
			return id, nil
		}
	}
}

// tracePath is where the trace of the session id goes (with a trace folder).
func (r *registry) tracePath(id string) string { return filepath.Join(r.traceDir, id+".jsonl") }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// admit puts a created session in place of its reservation; false when the registry closed
// meanwhile (the caller closes the session).
func (r *registry) admit(e *entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reserved--
	if r.closed {
		return false
	}
	e.last = r.now()
	r.sessions[e.id] = e
	return true
}

// release gives a reservation back.
func (r *registry) release() {
	r.mu.Lock()
	r.reserved--
	r.mu.Unlock()
}

// begin finds a session for an action and marks it busy (the reaper leaves it alone).
func (r *registry) begin(id string) (*entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.lookupLocked(id)
	if err == nil {
		e.busy++
	}
	return e, err
}

// end marks an action over: the session's idle time starts again.
func (r *registry) end(e *entry) {
	r.mu.Lock()
	e.busy--
	e.last = r.now()
	r.mu.Unlock()
}

// act runs one action of the session id, marked busy meanwhile.
func (r *registry) act(id string, do func(Live) (session.Step, error)) (session.Step, error) {
	e, err := r.begin(id)
	if err != nil {
		return session.Step{}, err
	}
	defer r.end(e)
	return do(e.s)
}

// lookup finds a session.
func (r *registry) lookup(id string) (*entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookupLocked(id)
}

// lookupLocked finds a session; r.mu is held.
func (r *registry) lookupLocked(id string) (*entry, error) {
	if r.closed {
		return nil, errShuttingDown
	}
	e, ok := r.sessions[id]
	if !ok {
		return nil, errUnknownSession
	}
	return e, nil
}

// remove forgets a session (the caller closes it).
func (r *registry) remove(id string) (*entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errShuttingDown
	}
	e, ok := r.sessions[id]
	if !ok {
		return nil, errUnknownSession
	}
	delete(r.sessions, id)
	return e, nil
}

// printer is what the scripts of the session or episode id print, for Options.Print; nil drops
// it.
func (r *registry) printer(id string) func(pos syntax.Position, msg string) {
	if r.print == nil {
		return nil
	}
	return func(pos syntax.Position, msg string) { r.print(id, pos, msg) }
}

// TraceEnd puts the trace file tf of a session in place once its episode ended (one that was
// closed before it finished keeps its .partial name) and tells done the trace's first error: the
// OnEnd of a session here (session.Options) and of one in a worker (isolate.SessionHost).
func TraceEnd(tf *rollout.TraceFile, done func(traceErr error)) (here func(*episode.Result, error), there func(*session.Result, error)) {
	ended := func(code string, traceErr error) {
		if err := tf.Finish(code == episode.Interrupted); err != nil && traceErr == nil {
			traceErr = err
		}
		done(traceErr)
	}
	here = func(res *episode.Result, traceErr error) {
		code := ""
		if res.Err != nil {
			code = res.Err.Code
		}
		ended(code, traceErr)
	}
	there = func(res *session.Result, traceErr error) {
		code := ""
		if res.Error != nil {
			code = res.Error.Code
		}
		ended(code, traceErr)
	}
	return here, there
}

// create makes a session of t (its setup runs under ctx), tracing it to its file when the server
// keeps traces.
func (r *registry) create(ctx context.Context, t *task, seed int64) (*entry, error) {
	id, err := r.reserve()
	if err != nil {
		return nil, err
	}
	e := &entry{id: id, tr: &traceState{}}
	var tf *rollout.TraceFile
	if r.traceDir != "" {
		e.tr.path = r.tracePath(id)
		tf = &rollout.TraceFile{Path: e.tr.path}
	}
	here, there := TraceEnd(tf, e.tr.setErr)
	var sess Live
	if t.pool != nil {
		spec := t.spec
		spec.Seed = seed
		host := isolate.SessionHost{Print: r.printer(id)}
		if tf != nil {
			host.Trace, host.OnEnd = tf, there
		}
		sess, err = t.pool.Session(ctx, spec, host)
	} else {
		opts := session.Options{Source: t.source, Sources: t.sources, Print: r.printer(id)}
		if tf != nil {
			opts.Trace, opts.OnEnd = tf, here
		}
		sess, err = session.Create(ctx, t.task, seed, opts)
	}
	if err != nil {
		r.release()
		return nil, err
	}
	e.s = sess
	if !r.admit(e) {
		sess.Close()
		return nil, errShuttingDown
	}
	return e, nil
}
