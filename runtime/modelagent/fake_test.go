package modelagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/require"
)

// reply is one scripted answer of the fake model.
type reply struct {
	status int               // 0 means 200
	body   string            // the answer's body
	header map[string]string // extra headers
	// fn, when set, builds the body from the request (decoded JSON).
	fn func(req map[string]any) string
	// hang waits until the client gives up on the request.
	hang bool
	// drop closes the connection without an answer.
	drop bool
}

// fakeModel is an OpenAI chat-completions server that answers from a script and records the
// requests.
type fakeModel struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	queue []reply
	reqs  []map[string]any
	raw   []string
	auth  []string
}

func newFake(t *testing.T, replies ...reply) *fakeModel {
	t.Helper()
	f := &fakeModel{t: t, queue: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"fake: unexpected `+r.Method+` `+r.URL.Path+`"}}`, http.StatusNotFound)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("fake: request is not JSON: %v\n%s", err, body)
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.raw = append(f.raw, string(body))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if len(f.queue) == 0 {
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"fake: no scripted answer left","type":"invalid_request_error"}}`)
		return
	}
	rp := f.queue[0]
	f.queue = f.queue[1:]
	f.mu.Unlock()
	if rp.hang {
		<-r.Context().Done()
		return
	}
	if rp.drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("fake: hijack: %v", err)
			return
		}
		conn.Close()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	b := rp.body
	if rp.fn != nil {
		b = rp.fn(req)
	}
	w.WriteHeader(status)
	fmt.Fprint(w, b)
}

func (f *fakeModel) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.reqs...)
}

func (f *fakeModel) rawRequests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.raw...)
}

func (f *fakeModel) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// completion is a chat-completions answer with one choice. msg is the message's JSON.
func completion(finish, msg string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1767603600,"model":"test-model",` +
		`"choices":[{"index":0,"message":` + msg + `,"finish_reason":"` + finish + `"}],` +
		`"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`
}

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// say is an answer with text and no tool call.
func say(text string) reply {
	return reply{body: completion("stop", `{"role":"assistant","content":`+js(text)+`}`)}
}

// call is one tool call's JSON.
func call(id, name, args string) string {
	return `{"id":` + js(id) + `,"type":"function","function":{"name":` + js(name) + `,"arguments":` + js(args) + `}}`
}

// calls is an answer with tool calls and the given text beside them ("" for null).
func calls(text string, cs ...string) reply {
	content := "null"
	if text != "" {
		content = js(text)
	}
	return reply{body: completion("tool_calls", `{"role":"assistant","content":`+content+`,"tool_calls":[`+strings.Join(cs, ",")+`]}`)}
}

// status is an error answer.
func status(code int, body string) reply { return reply{status: code, body: body} }

// newAgent makes an agent talking to f, with tiny backoffs and a recorded sleep.
func newAgent(t *testing.T, f *fakeModel, mod func(*modelagent.Config)) (*modelagent.Agent, *[]time.Duration) {
	t.Helper()
	var mu sync.Mutex
	sleeps := &[]time.Duration{}
	cfg := modelagent.Config{
		Model:   "test-model",
		BaseURL: f.srv.URL + "/v1",
		Backoff: time.Millisecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			*sleeps = append(*sleeps, d)
			mu.Unlock()
			return ctx.Err()
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	a, err := modelagent.New(cfg)
	require.NoError(t, err)
	return a, sleeps
}

// prepare loads the only task of src and runs its setup.
func prepare(t *testing.T, src string) *episode.Prepared {
	t.Helper()
	m := fstest.MapFS{"t.star": &fstest.MapFile{Data: []byte(src)}}
	f := dsl.NewCorpus(m, ".", "c").LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	require.Len(t, f.Tasks, 1)
	p, d := episode.Prepare(context.Background(), f.Tasks[0], episode.Options{})
	require.Nil(t, d)
	return p
}

// assistantEvent is one TurnContext.Assistant report.
type assistantEvent struct {
	turn      int
	content   string
	toolCalls string // JSON
	usage     string // JSON, "null" when nil
}

// observer records the model messages.
type observer struct {
	mu        sync.Mutex
	assistant []assistantEvent
}

func (o *observer) OnUser(int, string, string) {}
func (o *observer) OnAssistant(turn int, content string, toolCalls []jsonv.Value, usage *jsonv.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tc := "null"
	if toolCalls != nil {
		tc = jsonv.MustEncode(toolCalls)
	}
	o.assistant = append(o.assistant, assistantEvent{turn, content, tc, jsonv.MustEncode(usage)})
}
func (o *observer) OnCall(*episode.Call)          {}
func (o *observer) OnResult(*episode.Call)        {}
func (o *observer) OnReply(int, string)           {}
func (o *observer) OnTurnEnd(*episode.TurnResult) {}

// messages returns the messages of a recorded request.
func messages(t *testing.T, req map[string]any) []map[string]any {
	t.Helper()
	raw, ok := req["messages"].([]any)
	require.True(t, ok, "the request has messages")
	out := make([]map[string]any, len(raw))
	for i, m := range raw {
		out[i] = m.(map[string]any)
	}
	return out
}
