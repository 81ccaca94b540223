// Package chattest is a fake OpenAI chat-completions server for tests (it is imported by tests
// only): it records the requests it gets and answers each from a function of the request.
//
// The function is the test's script: a queue of answers, a policy over the conversation so
// far, or a script keyed by what the prompt says (SeedScript). The server may be called from
// many goroutines at once (several episodes talking to one model); it records under a lock, but
// calls the answer function concurrently, so a function with state guards it itself.
package chattest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Path is the path the server answers on; any other path or method gets a 404.
const Path = "/v1/chat/completions"

// Request is one chat-completions request the server got.
type Request struct {
	Header http.Header
	Body   []byte         // as sent
	JSON   map[string]any // Body decoded

	// From JSON, for convenience:
	Model       string
	Messages    []map[string]any // a message that is not an object is nil
	Tools       []any            // nil when the request has none
	Temperature *float64         // nil when the request has none
}

// Rounds is the number of assistant messages in the conversation so far.
func (r *Request) Rounds() int {
	n := 0
	for _, m := range r.Messages {
		if m["role"] == "assistant" {
			n++
		}
	}
	return n
}

// Answer is what the server sends back.
type Answer struct {
	Status int               // 0 means 200
	Header map[string]string // set after Content-Type: application/json
	Body   string
	// Handler, when set, answers instead of the fields above: for answers that are not a
	// status and a body (Hang, Drop, or anything a test needs to do to the connection).
	Handler http.HandlerFunc
}

// Server is a fake chat-completions server. The embedded httptest.Server gives URL and Close;
// New closes it when the test ends.
type Server struct {
	*httptest.Server
	t      testing.TB
	answer func(*Request) Answer

	mu   sync.Mutex
	reqs []*Request
}

// New starts a server that answers each request with answer(request).
func New(t testing.TB, answer func(r *Request) Answer) *Server {
	t.Helper()
	s := &Server{t: t, answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the URL an OpenAI client wants: URL + "/v1".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests so far, in the order they came in.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// JSON returns the decoded bodies of the requests so far, in the order they came in.
func (s *Server) JSON() []map[string]any {
	var out []map[string]any
	for _, r := range s.Requests() {
		out = append(out, r.JSON)
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != Path {
		write(w, r, Error(http.StatusNotFound, "chattest: unexpected "+r.Method+" "+r.URL.Path, ""))
		return
	}
	req, err := decode(r.Header, body)
	if err != nil {
		s.t.Errorf("chattest: %v\n%s", err, body)
		write(w, r, Error(http.StatusBadRequest, "chattest: "+err.Error(), "invalid_request_error"))
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	write(w, r, s.answer(req))
}

func decode(h http.Header, body []byte) (*Request, error) {
	req := &Request{Header: h.Clone(), Body: body}
	if err := json.Unmarshal(body, &req.JSON); err != nil || req.JSON == nil {
		return nil, fmt.Errorf("the request is not a JSON object: %v", err)
	}
	req.Model, _ = req.JSON["model"].(string)
	raw, _ := req.JSON["messages"].([]any)
	req.Messages = make([]map[string]any, len(raw))
	for i, m := range raw {
		req.Messages[i], _ = m.(map[string]any)
	}
	req.Tools, _ = req.JSON["tools"].([]any)
	if t, ok := req.JSON["temperature"].(float64); ok {
		req.Temperature = &t
	}
	return req, nil
}

func write(w http.ResponseWriter, r *http.Request, a Answer) {
	if a.Handler != nil {
		a.Handler(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range a.Header {
		w.Header().Set(k, v)
	}
	status := a.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, a.Body)
}

// InOrder answers with the given answers in order, one per request, and with a 400 error
// ("no answer left") once they are spent. It is safe for concurrent requests.
func InOrder(answers ...Answer) func(*Request) Answer {
	var mu sync.Mutex
	return func(*Request) Answer {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) == 0 {
			return Error(http.StatusBadRequest, "no answer left", "invalid_request_error")
		}
		a := answers[0]
		answers = answers[1:]
		return a
	}
}

// Hang is an answer that never comes: it waits until the client gives up on the request.
func Hang() Answer {
	return Answer{Handler: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }}
}

// Drop closes the connection without an answer.
func Drop() Answer {
	return Answer{Handler: func(w http.ResponseWriter, _ *http.Request) {
		if h, ok := w.(http.Hijacker); ok {
			if conn, _, err := h.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // the server drops the connection
	}}
}

// Error is an error answer in OpenAI's shape, {"error":{"message":…,"type":…}}; typ "" leaves
// the type out.
func Error(status int, message, typ string) Answer {
	e := map[string]string{"message": message}
	if typ != "" {
		e["type"] = typ
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return Answer{Status: status, Body: string(b)}
}

// Completion is a chat.completion answer with one choice.
type Completion struct {
	Model   string // "fake-model" when ""
	Finish  string // the finish reason; "stop" when ""
	Message string // the message's JSON (Text, WithCalls)
	// The usage; 100 and 20 when both are 0. The total is their sum.
	PromptTokens, CompletionTokens int
}

// String is the answer's body.
func (c Completion) String() string {
	if c.Model == "" {
		c.Model = "fake-model"
	}
	if c.Finish == "" {
		c.Finish = "stop"
	}
	if c.PromptTokens == 0 && c.CompletionTokens == 0 {
		c.PromptTokens, c.CompletionTokens = 100, 20
	}
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1767603600,"model":` + Quote(c.Model) + `,` +
		`"choices":[{"index":0,"message":` + c.Message + `,"finish_reason":` + Quote(c.Finish) + `}],` +
		`"usage":{"prompt_tokens":` + strconv.Itoa(c.PromptTokens) + `,"completion_tokens":` + strconv.Itoa(c.CompletionTokens) +
		`,"total_tokens":` + strconv.Itoa(c.PromptTokens+c.CompletionTokens) + `}}`
}

// Say is the body of an answer with text and no tool call.
func Say(text string) string {
	return Completion{Finish: "stop", Message: Text(text)}.String()
}

// Calls is the body of an answer with tool calls (Call) and the text beside them ("" for null).
func Calls(text string, calls ...string) string {
	return Completion{Finish: "tool_calls", Message: WithCalls(text, calls...)}.String()
}

// Text is an assistant message's JSON, with text and no tool call.
func Text(text string) string {
	return `{"role":"assistant","content":` + Quote(text) + `}`
}

// WithCalls is an assistant message's JSON with tool calls (Call) and the text beside them
// ("" for null).
func WithCalls(text string, calls ...string) string {
	content := "null"
	if text != "" {
		content = Quote(text)
	}
	return `{"role":"assistant","content":` + content + `,"tool_calls":[` + strings.Join(calls, ",") + `]}`
}

// Call is one tool call's JSON; args is the arguments' text, as a model sends it.
func Call(id, name, args string) string {
	return `{"id":` + Quote(id) + `,"type":"function","function":{"name":` + Quote(name) + `,"arguments":` + Quote(args) + `}}`
}

// Quote is s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// SeedScript answers the generator's attempts, each found by the "attempt seed N" its prompt
// (the second message) names, from a script: the n-th answer of a seed for its n-th round.
type SeedScript struct {
	Answers map[int64][]string
	// Missing is the error message (400) when the script has no answer for a round: a format
	// given the seed and the round, counted from 1.
	Missing string
	// Tokens, when set, gives the usage of an answer with text.
	Tokens func(r *Request, text string) (prompt, completion int)
}

var seedRE = regexp.MustCompile(`attempt seed (-?\d+)`)

// Answer answers r; the completions name the model r asks for.
func (s SeedScript) Answer(r *Request) Answer {
	seed, err := Seed(r)
	if err != nil {
		return Error(http.StatusBadRequest, "fake: "+err.Error(), "")
	}
	round := r.Rounds()
	answers := s.Answers[seed]
	if round >= len(answers) {
		return Error(http.StatusBadRequest, fmt.Sprintf(s.Missing, seed, round+1), "")
	}
	c := Completion{Model: r.Model, Message: Text(answers[round])}
	if s.Tokens != nil {
		c.PromptTokens, c.CompletionTokens = s.Tokens(r, answers[round])
	}
	return Answer{Body: c.String()}
}

// Seed is the N of "attempt seed N" in the request's second message.
func Seed(r *Request) (int64, error) {
	if len(r.Messages) < 2 {
		return 0, errors.New("no prompt")
	}
	content, _ := r.Messages[1]["content"].(string)
	m := seedRE.FindStringSubmatch(content)
	if m == nil {
		return 0, errors.New("no seed in the prompt")
	}
	return strconv.ParseInt(m[1], 10, 64)
}

// JudgedText is the text a judge request asks about: what follows "Text:" in its last message,
// after the rubric (which may quote what the text must say).
func JudgedText(last string) string {
	_, text, _ := strings.Cut(last, "\n\nText:\n")
	return text
}

// GivesOnlyCount is a fair fake judge's verdict: text counts noun (in digits, or in words when
// word is given) and every count of noun it gives is n ("7 orders", "seven orders", not "7 or
// 8 orders").
func GivesOnlyCount(text string, n int, word, noun string) bool {
	counts := regexp.MustCompile(`(?i)(\w+) `+regexp.QuoteMeta(noun)).FindAllStringSubmatch(text, -1)
	for _, m := range counts {
		if m[1] != strconv.Itoa(n) && !strings.EqualFold(m[1], word) {
			return false
		}
	}
	return len(counts) > 0
}
