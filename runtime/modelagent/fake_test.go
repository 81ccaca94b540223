package modelagent_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
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

// fakeModel is an OpenAI chat-completions server that answers from a queue of replies and
// records the requests.
type fakeModel struct {
	srv   *chattest.Server
	mu    sync.Mutex
	queue []reply
}

func newFake(t *testing.T, replies ...reply) *fakeModel {
	t.Helper()
	f := &fakeModel{queue: replies}
	f.srv = chattest.New(t, f.next)
	return f
}

// next answers with the head of the queue.
func (f *fakeModel) next(r *chattest.Request) chattest.Answer {
	f.mu.Lock()
	if len(f.queue) == 0 {
		f.mu.Unlock()
		return chattest.Error(http.StatusBadRequest, "fake: no scripted answer left", "invalid_request_error")
	}
	rp := f.queue[0]
	f.queue = f.queue[1:]
	f.mu.Unlock()
	switch {
	case rp.hang:
		return chattest.Hang()
	case rp.drop:
		return chattest.Drop()
	case rp.fn != nil:
		rp.body = rp.fn(r.JSON)
	}
	return chattest.Answer{Status: rp.status, Header: rp.header, Body: rp.body}
}

func (f *fakeModel) requests() []map[string]any { return f.srv.JSON() }

func (f *fakeModel) rawRequests() []string {
	var out []string
	for _, r := range f.srv.Requests() {
		out = append(out, string(r.Body))
	}
	return out
}

// auth is the Authorization header of each request.
func (f *fakeModel) auth() []string {
	var out []string
	for _, r := range f.srv.Requests() {
		out = append(out, r.Header.Get("Authorization"))
	}
	return out
}

func (f *fakeModel) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// completion is a chat-completions answer with one choice. msg is the message's JSON.
func completion(finish, msg string) string {
	return chattest.Completion{Finish: finish, Message: msg}.String()
}

// say is an answer with text and no tool call.
func say(text string) reply { return reply{body: chattest.Say(text)} }

// call is one tool call's JSON.
var call = chattest.Call

// calls is an answer with tool calls and the given text beside them ("" for null).
func calls(text string, cs ...string) reply { return reply{body: chattest.Calls(text, cs...)} }

// status is an error answer.
func status(code int, body string) reply { return reply{status: code, body: body} }

// newAgent makes an agent talking to f, with tiny backoffs and a recorded sleep.
func newAgent(t *testing.T, f *fakeModel, mod func(*modelagent.Config)) (*modelagent.Agent, *[]time.Duration) {
	t.Helper()
	var mu sync.Mutex
	sleeps := &[]time.Duration{}
	cfg := modelagent.Config{
		Model:   "test-model",
		BaseURL: f.srv.BaseURL(),
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
	msg       episode.AssistantMessage
}

// observer records the model messages.
type observer struct {
	mu        sync.Mutex
	assistant []assistantEvent
}

func (o *observer) OnUser(int, string, string, string) {}
func (o *observer) OnAssistant(turn int, m *episode.AssistantMessage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	tc := "null"
	if m.ToolCalls != nil {
		tc = jsonv.MustEncode(m.ToolCalls)
	}
	o.assistant = append(o.assistant, assistantEvent{turn, m.Content, tc, jsonv.MustEncode(m.Usage), *m})
}
func (o *observer) OnUserAsk(*episode.UserAsk)    {}
func (o *observer) OnJudge(*episode.JudgeCall)    {}
func (o *observer) OnNotRun(int, string, string)  {}
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
