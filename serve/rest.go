package serve

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/session"
)

// rest is the HTTP+JSON API of sessions (docs/serve.md): the tasks, a session's creation, its
// actions (a call, a message), its state, and its end.
type rest struct{ *front }

func (a *rest) routes(m *http.ServeMux) {
	m.HandleFunc("/health", a.route(false, map[string]http.HandlerFunc{http.MethodGet: a.health}))
	m.HandleFunc("/tasks", a.route(true, map[string]http.HandlerFunc{http.MethodGet: a.listTasks}))
	m.HandleFunc("/sessions", a.route(true, map[string]http.HandlerFunc{http.MethodPost: a.createSession}))
	m.HandleFunc("/sessions/{id}", a.route(true, map[string]http.HandlerFunc{http.MethodGet: a.getSession, http.MethodDelete: a.deleteSession}))
	m.HandleFunc("/sessions/{id}/call", a.route(true, map[string]http.HandlerFunc{http.MethodPost: a.call}))
	m.HandleFunc("/sessions/{id}/reply", a.route(true, map[string]http.HandlerFunc{http.MethodPost: a.reply}))
}

func (a *rest) health(w http.ResponseWriter, r *http.Request) {
	n, closed := a.reg.count()
	if closed {
		writeError(w, sessionError(errShuttingDown))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "healthy", "sessions": n, "max_sessions": a.reg.max, "tasks": len(a.tasks.order)})
}

func (a *rest) listTasks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"tasks": a.tasks.infos()})
}

// created is the answer to POST /sessions.
type created struct {
	ID     string            `json:"id"`
	Task   string            `json:"task"`
	Seed   int64             `json:"seed"`
	System string            `json:"system"`
	Tools  []json.RawMessage `json:"tools"`
	// User is the first user message; Messages the conversation so far (system, user).
	User     string            `json:"user"`
	Messages []session.Message `json:"messages"`
	Turn     int               `json:"turn"`
	Turns    int               `json:"turns"`
	// Done and Result: the episode ended before its first turn (a `before` that failed).
	Done   bool            `json:"done"`
	Result *session.Result `json:"result,omitempty"`
	Trace  string          `json:"trace,omitempty"`
}

func (a *rest) createSession(w http.ResponseWriter, r *http.Request) {
	var req start
	t, ok := a.decodeStart(w, r, &req, &req)
	if !ok {
		return
	}
	e, err := a.reg.create(r.Context(), t, req.Seed)
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	tools := make([]json.RawMessage, len(e.s.Tools()))
	for i, tool := range e.s.Tools() {
		tools[i] = json.RawMessage(jsonv.MustEncode(tool))
	}
	st, first := e.s.State(), e.s.First()
	writeJSON(w, http.StatusCreated, created{ID: e.id, Task: t.task.Name, Seed: req.Seed, System: e.s.System(), Tools: tools,
		User: first.User, Messages: st.Messages, Turn: first.Turn, Turns: st.Turns, Done: first.Done, Result: first.Result, Trace: e.tr.path})
}

// callRequest is the body of POST /sessions/{id}/call.
type callRequest struct {
	// ID names the call; "" has one assigned.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments are a JSON object, or its text as a string (a model's function.arguments as it
	// sent them); absent or null is {}. Anything else is shown to the agent as a tool error, as
	// the model agent does.
	Arguments json.RawMessage `json:"arguments"`
}

func (a *rest) call(w http.ResponseWriter, r *http.Request) {
	var req callRequest
	if e := a.decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	switch {
	case req.Name == "":
		writeError(w, badRequest("name is required: the tool to call"))
		return
	case len(req.ID) > maxCallID:
		writeError(w, badRequest(fmt.Sprintf("id is %d bytes long; at most %d", len(req.ID), maxCallID)))
		return
	}
	args, err := argumentsText(req.Arguments)
	if err != nil {
		writeError(w, badRequest("arguments: "+err.Error()))
		return
	}
	st, err := a.reg.act(r.PathValue("id"), func(s Live) (session.Step, error) { return s.Call(req.ID, req.Name, args) })
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (a *rest) reply(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content string `json:"content"`
	}
	if e := a.decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	st, err := a.reg.act(r.PathValue("id"), func(s Live) (session.Step, error) { return s.Reply(req.Content) })
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// state is the answer to GET and DELETE /sessions/{id}.
type state struct {
	ID string `json:"id"`
	session.Status
	Trace      string `json:"trace,omitempty"`
	TraceError string `json:"trace_error,omitempty"`
}

func stateOf(e *entry, st session.Status) state {
	out := state{ID: e.id, Status: st, Trace: e.tr.path}
	if err := e.tr.getErr(); err != nil {
		out.TraceError = err.Error()
	}
	return out
}

func (a *rest) getSession(w http.ResponseWriter, r *http.Request) {
	e, err := a.reg.lookup(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, stateOf(e, e.s.State()))
}

func (a *rest) deleteSession(w http.ResponseWriter, r *http.Request) {
	e, err := a.reg.remove(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, stateOf(e, e.s.Close()))
}
