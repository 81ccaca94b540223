package serve

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/session"
)

// Error codes. They are stable: clients may switch on them.
const (
	CodeBadJSON          = "bad_json"           // the body is not one JSON value
	CodeBadRequest       = "bad_request"        // a field is missing, unknown or of the wrong type
	CodeBodyTooLarge     = "body_too_large"     // the body is over MaxBody
	CodeUnauthorized     = "unauthorized"       // the bearer token is missing or wrong
	CodeNotFound         = "not_found"          // no such route
	CodeMethodNotAllowed = "method_not_allowed" // the route has no such method
	CodeUnknownTask      = "unknown_task"
	CodeUnknownSession   = "unknown_session" // never created, deleted, or closed for idleness
	CodeUnknownTool      = "unknown_tool"    // the task has no such tool; nothing ran
	CodeSessionBusy      = "session_busy"    // another action of the session is under way
	CodeEpisodeOver      = "episode_over"    // the episode ended; the session can still be read
	CodeTooManySessions  = "too_many_sessions"
	CodeSetupFailed      = "setup_failed" // the task's setup failed: no session
	CodeShuttingDown     = "shutting_down"
)

// maxCallID bounds the length of a call id a client gives.
const maxCallID = 256

// apiError is an error answer: {"error": {"code": ..., "message": ...}}.
type apiError struct {
	status        int
	code, message string
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("/health", s.route(false, map[string]http.HandlerFunc{http.MethodGet: s.health}))
	m.HandleFunc("/tasks", s.route(true, map[string]http.HandlerFunc{http.MethodGet: s.listTasks}))
	m.HandleFunc("/sessions", s.route(true, map[string]http.HandlerFunc{http.MethodPost: s.createSession}))
	m.HandleFunc("/sessions/{id}", s.route(true, map[string]http.HandlerFunc{http.MethodGet: s.getSession, http.MethodDelete: s.deleteSession}))
	m.HandleFunc("/sessions/{id}/call", s.route(true, map[string]http.HandlerFunc{http.MethodPost: s.call}))
	m.HandleFunc("/sessions/{id}/reply", s.route(true, map[string]http.HandlerFunc{http.MethodPost: s.reply}))
	s.openEnvRoutes(m)
	s.mcpRoutes(m)
	s.episodeRoutes(m)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeError(w, unauthorized())
			return
		}
		writeError(w, &apiError{http.StatusNotFound, CodeNotFound, fmt.Sprintf("no route %s %s; see docs/serve.md", r.Method, r.URL.Path)})
	})
	s.mux = m
}

// route checks the token (when auth) and dispatches by method.
func (s *Server) route(auth bool, methods map[string]http.HandlerFunc) http.HandlerFunc {
	allowed := make([]string, 0, len(methods))
	for m := range methods {
		allowed = append(allowed, m)
	}
	sort.Strings(allowed)
	return func(w http.ResponseWriter, r *http.Request) {
		if auth && !s.authorized(r) {
			writeError(w, unauthorized())
			return
		}
		h, ok := methods[r.Method]
		if !ok {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(w, &apiError{http.StatusMethodNotAllowed, CodeMethodNotAllowed,
				fmt.Sprintf("%s does not take %s (it takes %s)", r.URL.Path, r.Method, strings.Join(allowed, ", "))})
			return
		}
		h(w, r)
	}
}

// authorized reports whether the request carries the token, when the server has one.
func (s *Server) authorized(r *http.Request) bool {
	if s.opts.Token == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.opts.Token)) == 1
}

func unauthorized() *apiError {
	return &apiError{http.StatusUnauthorized, CodeUnauthorized, "this server needs the header Authorization: Bearer TOKEN with its token"}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closed, n := s.closed, len(s.sessions)
	s.mu.Unlock()
	if closed {
		writeError(w, sessionError(errShuttingDown))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "healthy", "sessions": n, "max_sessions": s.opts.MaxSessions, "tasks": len(s.order)})
}

// taskInfo describes a task in GET /tasks.
type taskInfo struct {
	Name          string   `json:"name"`
	File          string   `json:"file"`
	Description   string   `json:"description"`
	Capabilities  []string `json:"capabilities"`
	Turns         int      `json:"turns"`
	SimulatedUser bool     `json:"simulated_user"` // a turn's user answers within the turn
	Tools         []string `json:"tools"`
}

// task is the served task of a request's name, or the error that says there is none.
func (s *Server) task(name string) (*task, *apiError) {
	if name == "" {
		return nil, badRequest("task is required: the name of a task (GET /tasks lists them)")
	}
	t, ok := s.tasks[name]
	if !ok {
		return nil, &apiError{http.StatusNotFound, CodeUnknownTask, fmt.Sprintf("no task %q; GET /tasks lists the %d tasks", name, len(s.order))}
	}
	return t, nil
}

// taskInfos describe the tasks served (GET /tasks, OpenEnv's /metadata).
func (s *Server) taskInfos() []taskInfo {
	out := make([]taskInfo, len(s.order))
	for i, t := range s.order {
		ti := taskInfo{Name: t.task.Name, File: t.task.File, Description: t.task.Description,
			Capabilities: append([]string{}, t.task.Capabilities...), Turns: len(t.task.Turns),
			SimulatedUser: t.task.Simulated(), Tools: []string{}}
		for _, tool := range t.task.Tools {
			ti.Tools = append(ti.Tools, tool.Name)
		}
		out[i] = ti
	}
	return out
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"tasks": s.taskInfos()})
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

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Task string `json:"task"`
		Seed int64  `json:"seed"`
	}
	if e := s.decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	t, ae := s.task(req.Task)
	if ae != nil {
		writeError(w, ae)
		return
	}
	e, err := s.create(r.Context(), t, req.Seed)
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

func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	var req callRequest
	if e := s.decode(w, r, &req); e != nil {
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
	e, err := s.begin(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	st, err := e.s.Call(req.ID, req.Name, args)
	s.end(e)
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// argumentsText is a call's arguments as the JSON text a model sends: a string as it is, any
// other value as its JSON, "" when absent.
func argumentsText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content string `json:"content"`
	}
	if e := s.decode(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	e, err := s.begin(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	st, err := e.s.Reply(req.Content)
	s.end(e)
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

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	e, err := s.lookup(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, stateOf(e, e.s.State()))
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	e, err := s.remove(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	writeJSON(w, http.StatusOK, stateOf(e, e.s.Close()))
}

// sessionError is the answer to an error of the server or a session.
func sessionError(err error) *apiError {
	var ute *session.UnknownToolError
	var se *session.SetupError
	switch {
	case errors.Is(err, errUnknownSession):
		return &apiError{http.StatusNotFound, CodeUnknownSession, "no such session: it was never created, was deleted, or was closed after its idle timeout"}
	case errors.Is(err, errShuttingDown):
		return &apiError{http.StatusServiceUnavailable, CodeShuttingDown, err.Error()}
	case errors.Is(err, errTooMany):
		return &apiError{http.StatusTooManyRequests, CodeTooManySessions, "the server keeps as many sessions as it may; delete finished ones (DELETE /sessions/{id})"}
	case errors.Is(err, session.ErrBusy):
		return &apiError{http.StatusConflict, CodeSessionBusy, err.Error()}
	case errors.Is(err, session.ErrOver):
		return &apiError{http.StatusConflict, CodeEpisodeOver, "the episode is over; GET the session for its result"}
	case errors.As(err, &ute):
		return &apiError{http.StatusNotFound, CodeUnknownTool, ute.Error() + "; nothing ran"}
	case errors.As(err, &se):
		return &apiError{http.StatusUnprocessableEntity, CodeSetupFailed, se.Error()}
	}
	return &apiError{http.StatusInternalServerError, "internal", err.Error()}
}

func badRequest(msg string) *apiError {
	return &apiError{http.StatusBadRequest, CodeBadRequest, msg}
}

// decode reads the body, at most MaxBody bytes, as one JSON object into v; fields v does not
// have are refused.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		// one value and nothing after it
		if _, terr := dec.Token(); terr != io.EOF {
			err = terr
			if terr == nil {
				err = errors.New("trailing data after the JSON object")
			}
		}
	}
	if err == nil {
		return nil
	}
	var mbe *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mbe):
		return &apiError{http.StatusRequestEntityTooLarge, CodeBodyTooLarge, fmt.Sprintf("the body is over the limit of %d bytes", mbe.Limit)}
	case errors.Is(err, io.EOF):
		return &apiError{http.StatusBadRequest, CodeBadJSON, "the body is empty; send a JSON object"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &apiError{http.StatusBadRequest, CodeBadJSON, "the body ends in the middle of its JSON"}
	case errors.As(err, &se):
		return &apiError{http.StatusBadRequest, CodeBadJSON, fmt.Sprintf("the body is not JSON: %v (at byte %d)", se, se.Offset)}
	case errors.As(err, &te):
		if te.Field == "" {
			return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("the body is a JSON %s; send a JSON object", te.Value)}
		}
		return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("%s is a JSON %s; it must be a %s", te.Field, te.Value, typeName(te.Type.Kind().String()))}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return &apiError{http.StatusBadRequest, CodeBadRequest, "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")}
	}
	return &apiError{http.StatusBadRequest, CodeBadJSON, "the body is not JSON: " + err.Error()}
}

// typeName says a Go kind in JSON's words.
func typeName(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"):
		return "whole number"
	case kind == "string":
		return "string"
	}
	return kind
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // an error here is a client that went away
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"code": e.code, "message": e.message}})
}
