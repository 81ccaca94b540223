// Package serve is the HTTP and JSON API of live episodes (runtime/session): a client creates a
// session of a task, then acts in it one step at a time (a tool call, a message) and gets what a
// model agent would give its model back, the turns' rewards and, at the end, the verdict. Each
// session writes its trace. docs/serve.md describes the API.
//
// The server keeps its sessions in memory, in one registry (registry.go) that every front end
// reaches them through: the HTTP+JSON API, OpenEnv's WebSocket, MCP per session, and POST
// /episodes. It bounds them (MaxSessions), closes those left idle (IdleTimeout), bounds request
// bodies (MaxBody), and may require a bearer token. Every error is a JSON object with a stable
// code, and none ends a session. Close ends every session, their traces with them.
//
// The tasks of a Source without a pool run in this process; those of a Source with one run in
// its worker processes (package isolate), each session in its own worker from the loading of its
// file to its verdict, so that a runaway task file ends its own session and nothing else.
package serve

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/session"
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
	// Pool, when set, runs the files in its worker processes: New loads them there, and each
	// session (and each episode of POST /episodes) holds a worker while it lives, so the pool
	// needs as many workers as the server keeps sessions (MaxSessions). Without one, the files
	// run in this process.
	Pool *isolate.Pool
}

// Live is a live episode the server keeps: a session.Session in this process, or an
// isolate.Session in a worker process.
type Live interface {
	Task() *dsl.Task
	System() string
	Tools() []*jsonv.Object
	First() session.Step
	Done() <-chan struct{}
	Call(id, name, arguments string) (session.Step, error)
	Reply(text string) (session.Step, error)
	State() session.Status
	Close() session.Status
}

var (
	_ Live = (*session.Session)(nil)
	_ Live = (*isolate.Session)(nil)
)

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

// Server is the API's http.Handler: a session registry and its front ends. Create it with New
// and end it with Close.
type Server struct {
	reg   *registry
	tasks *catalog
	mux   *http.ServeMux
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
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	tasks, err := loadCatalog(opts.Sources)
	if err != nil {
		return nil, err
	}
	s := &Server{reg: newRegistry(opts, idle), tasks: tasks, mux: http.NewServeMux()}
	f := &front{reg: s.reg, tasks: tasks, token: opts.Token, maxBody: opts.MaxBody}
	(&rest{f}).routes(s.mux)
	(&openEnv{f}).routes(s.mux)
	(&mcpFront{front: f}).routes(s.mux)
	(&episodes{f}).routes(s.mux)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !f.authorized(r) {
			writeError(w, unauthorized())
			return
		}
		writeError(w, &apiError{http.StatusNotFound, CodeNotFound, fmt.Sprintf("no route %s %s; see docs/serve.md", r.Method, r.URL.Path)})
	})
	return s, nil
}

// Skipped are the diagnostics of the task files New left out.
func (s *Server) Skipped() []dsl.Diagnostic { return s.tasks.skipped }

// Tasks are the names of the tasks served, in load order.
func (s *Server) Tasks() []string {
	out := make([]string, len(s.tasks.order))
	for i, t := range s.tasks.order {
		out[i] = t.task.Name
	}
	return out
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close ends the server: new requests are refused (shutting_down), the reaper stops, what the
// front ends run ends (WebSocket connections, episodes), and every session is closed, its trace
// ended. A session a request is creating meanwhile is closed by that request. Close may be called
// more than once; every call returns when the first is done.
func (s *Server) Close() { s.reg.close() }
