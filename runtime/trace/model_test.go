package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordModel runs runtime/modelagent against a fake model that gives the answers in order (an
// error once they are spent) and returns the trace.
func recordModel(t testing.TB, task *dsl.Task, src []byte, answers ...chattest.Answer) []byte {
	t.Helper()
	srv := chattest.New(t, chattest.InOrder(answers...))
	agent, err := modelagent.New(modelagent.Config{Model: "fake-model", BaseURL: srv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, trace.StartOf(p, src, 0, agent.Name()))
	r := p.Run(context.Background(), agent, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(r))
	return buf.Bytes()
}

func say(text string) chattest.Answer { return chattest.Answer{Body: chattest.Say(text)} }

func calls(text string, cs ...string) chattest.Answer {
	return chattest.Answer{Body: chattest.Calls(text, cs...)}
}

// modelAnswers solve taskSrc in two turns, with text beside calls, arguments that are not JSON
// (not run), arguments left empty ({}), and several calls per message.
var modelAnswers = []chattest.Answer{
	calls("Let me look.", chattest.Call("c0", "mail_list", ""), chattest.Call("c1", "mail_read", `{"id":"m1"}`),
		chattest.Call("c2", "ship_order", `{"order":"o1"}`)),
	calls("", chattest.Call("c3", "ship_order", `{"order": o1}`), chattest.Call("c4", "mail_reply", `{"id":"m1","body":"Shipped o1."}`)),
	say("Shipped."),
	calls("", chattest.Call("c5", "fs_read", `{"path":"/stock.csv"}`), chattest.Call("c6", "fs_write", `{"path":"/report.md","content":"A: 1 left\n"}`)),
	say("Report written."),
}

// A model trace replays from the model's messages by the model agent's rules: the traces the
// agent writes, in every way a turn can go, match.
func TestModelTracesReplay(t *testing.T) {
	t.Parallel()
	limited := strings.Replace(noFaults, "setup = _setup,", "setup = _setup, max_calls_per_turn = 2,", 1)
	require.NotEqual(t, noFaults, limited)
	cases := []struct {
		name    string
		src     string
		answers []chattest.Answer
		kinds   string // the events after start, by their first letter (user, assistant, call, result, not_run, reply, turn_end, end)
	}{
		{"two turns, with faults", taskSrc, modelAnswers, ""},
		{"max_calls_per_turn cuts a message short", limited, []chattest.Answer{
			calls("Working.", chattest.Call("a", "mail_read", `{"id":"m1"}`), chattest.Call("b", "ship_order", `{"order":"o1"}`),
				chattest.Call("c", "mail_reply", `{"id":"m1","body":"Shipped."}`)),
			say("Nothing else."),
		}, "u a c r c r n R t u a R t e"},
		{"bad arguments past the limit end the turn", limited, []chattest.Answer{
			calls("", chattest.Call("a", "mail_read", `{"id":"m1"}`), chattest.Call("b", "ship_order", `{"order":"o1"}`),
				chattest.Call("c", "mail_reply", `[1]`), chattest.Call("d", "fs_read", `{"path":"/stock.csv"}`)),
			say("Nothing else."),
		}, "u a c r c r n n R t u a R t e"},
		{"an answer cut off at the token limit runs none of its calls", noFaults, []chattest.Answer{
			calls("Let me", chattest.Call("a", "mail_read", `{"id":"m1"}`)),
			{Body: chattest.Completion{Finish: "length", Message: chattest.WithCalls("I will now", chattest.Call("b", "ship_order", `{"order":"o1"}`))}.String()},
			say("Nothing else."),
		}, "u a c r a n R t u a R t e"},
		{"a cut-off answer without calls ends the turn as truncated", noFaults, []chattest.Answer{
			{Body: chattest.Completion{Finish: "length", Message: chattest.Text("I was cut")}.String()},
			say("Nothing else."),
		}, "u a R t u a R t e"},
		{"a model that fails ends the episode", noFaults, []chattest.Answer{
			calls("", chattest.Call("a", "mail_read", `{"id":"m1"}`)),
			chattest.Error(http.StatusBadRequest, "bad request", "invalid_request_error"),
		}, "u a c r e"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(c.src)
			data := recordModel(t, f.task(t), f.src, c.answers...)
			events, err := trace.Read(bytes.NewReader(data))
			require.NoError(t, err)
			if c.kinds != "" {
				var kinds []string
				for _, ev := range events[1:] {
					k := ev.Kind[:1]
					if ev.Kind == "reply" {
						k = "R"
					}
					kinds = append(kinds, k)
				}
				require.Equal(t, c.kinds, strings.Join(kinds, " "), "the agent did not do what the case is about")
			}
			r := replay(t, f, data)
			assert.True(t, r.Matched(), "%v", r.Divergence)
			assert.Empty(t, r.Changed)
		})
	}
}

// Every rewrite of what the model said, or of what the trace says it did with that, diverges.
func TestTamperedModelTraces(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	orig := lines(recordModel(t, f.task(t), f.src, modelAnswers...))
	require.True(t, replay(t, f, join(orig)).Matched())
	reply := find(t, orig, 0, `"event":"reply"`)
	t.Run("assistant text", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `"Shipped."`)
		d := tamper(t, f, edit(t, orig, i, `"Shipped."`, `"Shipped, and refunded the customer."`), reply+1, "reply", "")
		assert.Equal(t, []string{`content: recorded "Shipped.", replayed "Shipped, and refunded the customer."`}, d.Diffs)
	})
	t.Run("reply", func(t *testing.T) {
		d := tamper(t, f, edit(t, orig, reply, `"Shipped."`, `"Shipped, and refunded the customer."`), reply+1, "reply", "")
		assert.Equal(t, []string{`content: recorded "Shipped, and refunded the customer.", replayed "Shipped."`}, d.Diffs)
	})
	t.Run("tool call arguments", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `ship_order`)
		call := find(t, orig, 0, `"event":"call"`, `"ship_order"`)
		d := tamper(t, f, edit(t, orig, i, `{\"order\":\"o1\"}`, `{\"order\":\"o2\"}`), call+1, "call", "ship_order")
		assert.Equal(t, []string{`args.order: recorded "o1", replayed "o2"`}, d.Diffs)
	})
	t.Run("call arguments", func(t *testing.T) {
		call := find(t, orig, 0, `"event":"call"`, `"ship_order"`)
		d := tamper(t, f, edit(t, orig, call, `"args":{"order":"o1"}`, `"args":{"order":"o2"}`), call+1, "call", "ship_order")
		assert.Equal(t, []string{`args.order: recorded "o2", replayed "o1"`}, d.Diffs)
	})
	t.Run("tool call id", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `ship_order`)
		call := find(t, orig, 0, `"event":"call"`, `"ship_order"`)
		d := tamper(t, f, edit(t, orig, i, `"id":"c2"`, `"id":"c9"`), call+1, "call", "ship_order")
		assert.Equal(t, []string{"id: recorded c2, replayed c9"}, d.Diffs)
	})
	t.Run("tool call name", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `ship_order`)
		call := find(t, orig, 0, `"event":"call"`, `"ship_order"`)
		d := tamper(t, f, edit(t, orig, i, `"name":"ship_order"`, `"name":"mail_send"`), call+1, "call", "ship_order")
		assert.Contains(t, d.Diffs, `name: recorded "ship_order", replayed "mail_send"`)
	})
	t.Run("tool call shape", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `ship_order`)
		d := tamper(t, f, edit(t, orig, i, `"id":"c2",`, `"id":"c2","note":"x",`), i+1, "assistant", "")
		assert.Contains(t, d.Diffs[0], "tool_calls[2]: not a tool call as the model agent records it")
	})
	t.Run("bad arguments made good", func(t *testing.T) {
		// the call with arguments that are not JSON did not run; made JSON, it runs
		// (the trace says what the model was told about them: that is where the replay differs)
		i := find(t, orig, 0, `"event":"assistant"`, `c3`)
		told := find(t, orig, 0, `"event":"not_run"`, `"c3"`)
		d := tamper(t, f, edit(t, orig, i, `{\"order\": o1}`, `{\"order\":\"o1\"}`), told+1, "not_run", "")
		assert.Contains(t, d.Diffs, "event: recorded not_run, replayed call (turn 0)")
	})
	t.Run("dropped call", func(t *testing.T) {
		call := find(t, orig, 0, `"event":"call"`, `"ship_order"`)
		ls := drop(orig, call, 2)
		d := tamper(t, f, ls, call+1, "assistant", "")
		assert.Equal(t, []string{"event: recorded assistant, replayed call (turn 0)"}, d.Diffs)
	})
	t.Run("dropped message", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `"Shipped."`)
		ls := drop(orig, i, 1)
		d := tamper(t, f, ls, i+1, "reply", "")
		assert.Contains(t, d.Diffs[0], "the model agent would ask the model for another message in turn 0")
	})
	t.Run("extra message", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"assistant"`, `"Shipped."`)
		ls := append(orig[:i+1:i+1], append([]string{strings.Replace(orig[i], `"Shipped."`, `"Also refunded."`, 1)}, orig[i+1:]...)...)
		tamper(t, f, ls, i+2, "assistant", "")
	})
}

// cancelAfter is an observer that cancels the episode's context after n results (Ctrl-C).
type cancelAfter struct {
	episode.Observer
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) OnResult(call *episode.Call) {
	c.Observer.OnResult(call)
	if c.n--; c.n == 0 {
		c.cancel()
	}
}

// An episode interrupted halfway (its end records the error) replays: the turn the interruption
// ended is re-issued as recorded, the turns before it are made again. The model is interrupted
// between two calls of one message, and after a message's calls.
func TestInterruptedTracesReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	for _, c := range []struct {
		agent    string
		n, turns int // results before the interruption; turns reached
	}{{"oracle", 2, 1}, {"oracle", 4, 2}, {"openai", 2, 1}, {"openai", 3, 1}, {"openai", 5, 2}} {
		t.Run(fmt.Sprintf("%s after %d results", c.agent, c.n), func(t *testing.T) {
			var agent episode.Agent = episode.Oracle{}
			if c.agent == "openai" {
				srv := chattest.New(t, func(r *chattest.Request) chattest.Answer {
					return modelAnswers[r.Rounds()]
				})
				a, err := modelagent.New(modelagent.Config{Model: "fake-model", BaseURL: srv.BaseURL(), MaxRetries: -1})
				require.NoError(t, err)
				agent = a
			}
			p, d := episode.Prepare(context.Background(), f.task(t), episode.Options{})
			require.Nil(t, d)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var buf bytes.Buffer
			w := trace.NewWriter(&buf, trace.StartOf(p, f.src, 0, agent.Name()))
			r := p.Run(ctx, agent, episode.RunOptions{Observer: &cancelAfter{Observer: w, n: c.n, cancel: cancel}})
			require.NoError(t, w.End(r))
			require.NotNil(t, r.Err)
			require.Len(t, r.Turns, c.turns)
			res := replay(t, f, buf.Bytes())
			assert.True(t, res.Matched(), "%v", res.Divergence)
		})
	}
}
