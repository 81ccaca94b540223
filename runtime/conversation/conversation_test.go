package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is a turn whose calls succeed with their arguments as content, except those of the tool
// "bad" (a tool error) and "flaky" (an injected fault); it logs what the machine tells it.
type env struct {
	index, max int
	user, now  string
	answers    []string // a simulated user's answers, then done
	calls      int
	log        []string
	truncated  bool
	failWith   error // every call fails with it
}

func (e *env) Index() int      { return e.index }
func (e *env) User() string    { return e.user }
func (e *env) Now() string     { return e.now }
func (e *env) MaxCalls() int   { return e.max }
func (e *env) Simulated() bool { return e.answers != nil }
func (e *env) Truncate()       { e.truncated = true }

func (e *env) Ask(said string) (string, bool, error) {
	e.log = append(e.log, "ask "+said)
	if len(e.answers) == 0 {
		return "", true, nil
	}
	a := e.answers[0]
	e.answers = e.answers[1:]
	return a, false, nil
}

func (e *env) Call(id, name string, args *jsonv.Object) (*episode.Call, error) {
	if e.failWith != nil {
		return nil, e.failWith
	}
	if e.calls >= e.max {
		e.truncated = true // as the episode marks a full turn
		return nil, episode.ErrTruncated
	}
	e.calls++
	e.log = append(e.log, "call "+id+" "+name)
	c := &episode.Call{ID: id, Name: name, Args: args, Content: jsonv.MustEncode(args)}
	switch name {
	case "bad":
		c.IsError, c.Error, c.Content = true, "no such thing", "null"
	case "flaky":
		c.IsError, c.Error, c.Fault, c.Content = true, "503 unavailable", true, "null"
	}
	return c, nil
}

func (e *env) NotRun(c conversation.Call, content string) string {
	e.log = append(e.log, "not_run "+c.ID)
	return content
}

func (e *env) Assistant(m episode.AssistantMessage) {
	var ids []string
	for _, c := range m.ToolCalls {
		id, _ := c.(*jsonv.Object).Get("id")
		ids = append(ids, id.(string))
	}
	e.log = append(e.log, fmt.Sprintf("assistant %q %s", m.Content, strings.Join(ids, ",")))
}

// script is a source that gives its answers in order, then fails with end.
type script struct {
	answers []conversation.Answer
	end     error
}

func (s *script) Next(context.Context, *conversation.Conversation) (conversation.Answer, error) {
	if len(s.answers) == 0 {
		return conversation.Answer{}, s.end
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func call(id, name, args string) conversation.Call {
	return conversation.Call{ID: id, Name: name, Arguments: args}
}

func say(text string, calls ...conversation.Call) conversation.Answer {
	return conversation.Answer{Text: text, Calls: calls}
}

// tool is a tool message of the history, as "id: content".
func tools(msgs []conversation.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == conversation.Tool {
			out = append(out, m.ToolCallID+": "+m.Content)
		}
	}
	return out
}

var (
	limit = conversation.ToolErrorContent(conversation.NotRunLimit, false)
	ended = conversation.ToolErrorContent(conversation.NotRunEnded, false)
	cut   = conversation.ToolErrorContent(conversation.NotRunCut, false)
)

// Each way a turn goes: what the episode is told, the tool messages, the reply, and whether the
// turn is truncated.
func TestTurn(t *testing.T) {
	t.Parallel()
	_, notObject := conversation.ParseArguments(`[1]`)
	cases := []struct {
		name      string
		env       env
		answers   []conversation.Answer
		end       error
		reply     string
		err       string
		truncated bool
		log       []string
		tools     []string
	}{
		{name: "calls, then a reply", env: env{max: 5},
			answers: []conversation.Answer{say("Looking.", call("a", "fs_read", `{"p":1}`), call("", "fs_list", "")), say("Done.")},
			reply:   "Done.",
			log:     []string{`assistant "Looking." a,call_1_2`, "call a fs_read", "call call_1_2 fs_list", `assistant "Done." `},
			tools:   []string{`a: {"p":1}`, `call_1_2: {}`}},
		{name: "a repeated id is numbered in the turn", env: env{max: 5, index: 1},
			answers: []conversation.Answer{say("", call("a", "x", "{}")), say("", call("a", "y", "{}"), call("a", "z", "{}")), say("ok")},
			reply:   "ok",
			log:     []string{`assistant "" a`, "call a x", `assistant "" call_2_2,call_2_3`, "call call_2_2 y", "call call_2_3 z", `assistant "ok" `},
			tools:   []string{"a: {}", "call_2_2: {}", "call_2_3: {}"}},
		{name: "tool errors and faults", env: env{max: 5},
			answers: []conversation.Answer{say("", call("a", "bad", "{}"), call("b", "flaky", "{}")), say("")},
			log:     []string{`assistant "" a,b`, "call a bad", "call b flaky", `assistant "" `},
			tools: []string{`a: {"error":"no such thing"}`,
				`b: ` + conversation.ToolErrorContent("503 unavailable", true)}},
		{name: "bad arguments are not run but count", env: env{max: 2},
			answers: []conversation.Answer{say("Try.", call("a", "x", "{}"), call("b", "x", `[1]`), call("c", "x", `[1]`), call("d", "x", "{}")), say("never")},
			reply:   "Try.", truncated: true,
			log:   []string{`assistant "Try." a,b,c,d`, "call a x", "not_run b", "not_run c", "not_run d"},
			tools: []string{"a: {}", "b: " + conversation.BadArgumentsContent("x", notObject, `[1]`), "c: " + limit, "d: " + ended}},
		{name: "a call past the limit ends the turn", env: env{max: 1},
			answers: []conversation.Answer{say("One.", call("a", "x", "{}")), say("", call("b", "x", "{}"), call("c", "x", "{}")), say("never")},
			reply:   "One.", truncated: true,
			log:   []string{`assistant "One." a`, "call a x", `assistant "" b,c`, "not_run b", "not_run c"},
			tools: []string{"a: {}", "b: " + limit, "c: " + ended}},
		{name: "a cut-off answer runs none of its calls", env: env{max: 5},
			answers: []conversation.Answer{{Text: "I will", Calls: []conversation.Call{call("a", "x", "{}")}, Cut: true}},
			reply:   "I will", truncated: true,
			log:   []string{`assistant "I will" a`, "not_run a"},
			tools: []string{"a: " + cut}},
		{name: "a simulated user answers until done", env: env{max: 5, answers: []string{"Blue."}},
			answers: []conversation.Answer{say("Which colour?"), say("", call("a", "x", "{}")), say("Noted."), say("never")},
			reply:   "Noted.",
			log:     []string{`assistant "Which colour?" `, "ask Which colour?", `assistant "" a`, "call a x", `assistant "Noted." `, "ask Noted."},
			tools:   []string{"a: {}"}},
		{name: "a message without text does not go to the user", env: env{max: 5, answers: []string{"Blue."}},
			answers: []conversation.Answer{say("")},
			log:     []string{`assistant "" `}},
		{name: "a call that fails ends the turn with its error", env: env{max: 5, failWith: errors.New("boom")},
			answers: []conversation.Answer{say("", call("a", "x", "{}"), call("b", "x", "{}"))},
			err:     "boom",
			log:     []string{`assistant "" a,b`, "not_run a", "not_run b"},
			tools:   []string{"a: " + conversation.ToolErrorContent(conversation.NotRun+": boom", false), "b: " + ended}},
		{name: "a recorded answer stops where the record does", env: env{max: 5},
			answers: []conversation.Answer{{Calls: []conversation.Call{call("a", "x", "{}"), call("b", "x", "{}")}, Stopped: true, Ran: 1}},
			end:     errors.New("interrupted"), err: "interrupted",
			log:   []string{`assistant "" a,b`, "call a x", "not_run b"},
			tools: []string{"a: {}", "b: " + ended}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := c.env
			conv := conversation.New("S", "")
			reply, err := conv.Turn(context.Background(), &e, &script{answers: c.answers, end: c.end})
			if c.err != "" {
				require.EqualError(t, err, c.err)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, c.reply, reply)
			assert.Equal(t, c.truncated, e.truncated)
			assert.Equal(t, c.log, e.log)
			assert.Equal(t, c.tools, tools(conv.Messages()))
		})
	}
}

// A source that has nothing more to say in a turn ends it as truncated (ErrTruncated), with the
// last text as the reply.
func TestSourceEndsTurnTruncated(t *testing.T) {
	t.Parallel()
	e := env{max: 5}
	conv := conversation.New("S", "")
	reply, err := conv.Turn(context.Background(), &e, &script{answers: []conversation.Answer{say("Half.", call("a", "x", "{}"))}, end: conversation.ErrTruncated})
	require.NoError(t, err)
	assert.Equal(t, "Half.", reply)
	assert.True(t, e.truncated)
}

// The history: the system message, the user messages with a time note when the clock moved
// since the model was last told, the assistant messages with their calls as sent, and the tool
// messages with the call's tool.
func TestHistory(t *testing.T) {
	t.Parallel()
	conv := conversation.New("You help.", "2026-01-05T09:00:00Z")
	e := env{max: 5, user: "First.", now: "2026-01-05T09:00:00Z"}
	_, err := conv.Turn(context.Background(), &e, &script{answers: []conversation.Answer{
		{Text: "Hm.", Reasoning: "think", Calls: []conversation.Call{{ID: "a", Type: "function", Name: "x", Arguments: `[1]`}}}, say("Done.")}})
	require.NoError(t, err)
	e = env{index: 1, max: 5, user: "Second.", now: "2026-01-06T09:00:00Z"}
	_, err = conv.Turn(context.Background(), &e, &script{answers: []conversation.Answer{say("Again.")}})
	require.NoError(t, err)
	_, problem := conversation.ParseArguments(`[1]`)
	want := []conversation.Message{
		{Role: "system", Content: "You help."},
		{Role: "user", Content: "First."},
		{Role: "assistant", Content: "Hm.", Reasoning: "think", ToolCalls: []conversation.Call{{ID: "a", Type: "function", Name: "x", Arguments: `[1]`}}},
		{Role: "tool", Content: conversation.BadArgumentsContent("x", problem, `[1]`), ToolCallID: "a", Name: "x", IsError: true, NotRun: true},
		{Role: "assistant", Content: "Done."},
		{Role: "user", Content: "(It is now Tuesday, 2026-01-06T09:00:00Z.)\n\nSecond.", Turn: 1},
		{Role: "assistant", Content: "Again.", Turn: 1},
	}
	assert.Equal(t, want, conv.Messages())
	assert.Equal(t, want[5:], conv.Since(5))
	assert.Equal(t, 7, conv.Len())
}

func TestUserContent(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "hi", conversation.UserContent("hi", "2026-01-05T09:00:00Z", "2026-01-05T09:00:00Z"))
	assert.Equal(t, "(It is now Monday, 2026-01-05T11:00:00Z.)\n\nhi", conversation.UserContent("hi", "2026-01-05T11:00:00Z", "2026-01-05T09:00:00Z"))
	assert.Equal(t, "hi", conversation.UserContent("hi", "", "2026-01-05T09:00:00Z"), "traces written before times were recorded")
}

func TestHistoryArgs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "{}", "  ": "{}", "null": "{}", "[1]": "{}", "{": "{}", `{"a":1}`: `{"a":1}`, ` {"a": 1} `: ` {"a": 1} `} {
		assert.Equal(t, want, conversation.HistoryArgs(in), "%q", in)
	}
}

// A result that is a string reaches the model as its text; every other result as its JSON.
func TestResultContent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"call the bank"`:        "call the bank",
		`"line 1\nline 2\n"`:     "line 1\nline 2\n",
		`"{\"a\": 1}"`:           `{"a": 1}`,
		`""`:                     "",
		`"caf\u00e9 \"quoted\""`: `café "quoted"`,
		`{"path":"/a.txt"}`:      `{"path":"/a.txt"}`,
		`["a.txt"]`:              `["a.txt"]`,
		`42`:                     `42`,
		`null`:                   `null`,
		`"not closed`:            `"not closed`,
	} {
		assert.Equal(t, want, conversation.ResultContent(in), in)
	}
}
