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

	"github.com/coworkenv/coworkenv/runtime/session"
)

// The server is a session registry (registry.go) and the front ends that reach its sessions:
// the HTTP+JSON API (rest.go), OpenEnv's WebSocket (openenv.go), MCP (mcp.go) and whole
// episodes against the caller's model (episode.go). front is what they share: the registry, the
// tasks, and the HTTP plumbing (the token, bodies, errors).

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

// front is the part every front end has.
type front struct {
	reg     *registry
	tasks   *catalog
	token   string
	maxBody int64
}

// route checks the token (when auth) and dispatches by method.
func (f *front) route(auth bool, methods map[string]http.HandlerFunc) http.HandlerFunc {
	allowed := make([]string, 0, len(methods))
	for m := range methods {
		allowed = append(allowed, m)
	}
	sort.Strings(allowed)
	return func(w http.ResponseWriter, r *http.Request) {
		if auth && !f.authorized(r) {
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
func (f *front) authorized(r *http.Request) bool {
	if f.token == "" {
		return true
	}
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(f.token)) == 1
}

func unauthorized() *apiError {
	return &apiError{http.StatusUnauthorized, CodeUnauthorized, "this server needs the header Authorization: Bearer TOKEN with its token"}
}

// task is the served task of a request's name, or the error that says there is none.
func (f *front) task(name string) (*task, *apiError) {
	if name == "" {
		return nil, badRequest("task is required: the name of a task (GET /tasks lists them)")
	}
	t, ok := f.tasks.byName[name]
	if !ok {
		return nil, &apiError{http.StatusNotFound, CodeUnknownTask, fmt.Sprintf("no task %q; GET /tasks lists the %d tasks", name, len(f.tasks.order))}
	}
	return t, nil
}

// start is the task and seed of a request that starts an episode.
type start struct {
	Task string `json:"task"`
	Seed int64  `json:"seed"`
}

// decodeStart reads the body of a request that starts an episode into req (whose task and seed
// are st) and finds its task; false when it answered the request with an error.
func (f *front) decodeStart(w http.ResponseWriter, r *http.Request, req any, st *start) (*task, bool) {
	if e := f.decode(w, r, req); e != nil {
		writeError(w, e)
		return nil, false
	}
	t, e := f.task(st.Task)
	if e != nil {
		writeError(w, e)
		return nil, false
	}
	return t, true
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
func (f *front) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	body := http.MaxBytesReader(w, r.Body, f.maxBody)
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
