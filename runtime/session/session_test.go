package session_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/leaktest"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

// The tasks of these tests: two turns with faults, a task-defined tool and a clock that moves;
// a simulated user who must be asked for a fact; a tool that prints (the tests hold it there);
// and a turn of at most two calls.
const tasksSrc = tasktest.ShipAndReport + `
def _ann(said, round):
    if "budget" in said:
        return "We can spend 500 euros."
    if said.startswith("Booked"):
        return None
    return "Please just ask me what you need."

ANN = simulated_user(
    opening = "Book a venue for the team dinner.",
    persona = "Ann, the office manager",
    goal = "a venue booked for the team dinner",
    facts = {"budget": "five hundred euros"},
    stand_in = _ann,
)

def _solve_clarify(agent):
    answer = agent.ask("What budget do we have?")
    agent.call("fs_write", path = "/booking.txt", content = answer)
    agent.reply("Booked within: " + answer)

def _verify_clarify(ws, ep):
    check(ws.fs.exists("/booking.txt") and ws.fs.read("/booking.txt") == "We can spend 500 euros.", "the budget from the user")

task(name = "clarify", prompt = ANN, tools = ["fs"], solution = _solve_clarify, verify = _verify_clarify)

def _wait(ws):
    print("waiting")
    return {"ok": True}

WAIT = tool(name = "wait", description = "Waits.", params = {}, impl = _wait)

task(name = "waits", prompt = "Wait.", tools = ["fs", WAIT])

task(name = "limited", max_calls_per_turn = 2, turns = [turn(user = "One."), turn(user = "Two.")], tools = ["fs"])
`

type fixture struct {
	corpus *dsl.Corpus
	src    []byte
	tasks  map[string]*dsl.Task
}

func newFixture(t testing.TB) *fixture {
	f := &fixture{corpus: dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(tasksSrc)}}, ".", "c"), src: []byte(tasksSrc), tasks: map[string]*dsl.Task{}}
	file := f.corpus.LoadFile(context.Background(), "t.star")
	require.Empty(t, file.Diags)
	for _, task := range file.Tasks {
		f.tasks[task.Name] = task
	}
	return f
}

// create starts a traced session of the task.
func (f *fixture) create(t testing.TB, name string, seed int64, opts session.Options) (*session.Session, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	sources, err := trace.Sources(f.corpus, "t.star")
	require.NoError(t, err)
	opts.Trace, opts.Source, opts.Sources = &buf, f.src, sources
	s, err := session.Create(context.Background(), f.tasks[name], seed, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, &buf
}

// replay replays a session's trace against the task.
func (f *fixture) replay(t *testing.T, data []byte) *trace.Result {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	r, err := trace.ReplayCorpus(context.Background(), events, func(file, name string) (*dsl.Task, *dsl.Corpus, error) {
		return f.tasks[name], f.corpus, nil
	})
	require.NoError(t, err)
	return r
}

// act is one action of a client: a call, or a message (a question to a simulated user, or the
// turn's reply).
type act struct {
	reply      bool
	text, name string
	args       string
}

// oracleActs runs the task's oracle and returns what a client must send to do what it did,
// turn by turn: its calls (faulted attempts included) and its questions in order, then its
// reply.
func oracleActs(t testing.TB, task *dsl.Task, seed int64) ([][]act, *episode.Result) {
	t.Helper()
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: seed})
	require.Nil(t, d)
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
	require.Nil(t, r.Err)
	out := make([][]act, len(r.Turns))
	for i, tr := range r.Turns {
		asks := tr.Asks
		if n := len(asks); n > 0 && asks[n-1].Said == tr.Reply {
			asks = asks[:n-1] // the engine's own exchange with the reply
		}
		for k, c := range r.Calls {
			for len(asks) > 0 && asks[0].Calls <= k {
				out[i] = append(out[i], act{reply: true, text: asks[0].Said})
				asks = asks[1:]
			}
			if c.Turn == i {
				out[i] = append(out[i], act{name: c.Name, args: jsonv.MustEncode(c.Args)})
			}
		}
		for _, x := range asks {
			out[i] = append(out[i], act{reply: true, text: x.Said})
		}
		out[i] = append(out[i], act{reply: true, text: tr.Reply})
	}
	return out, r
}

// drive sends the acts and returns the last step; it checks that every act but each turn's
// last keeps the turn going.
func drive(t *testing.T, s *session.Session, turns [][]act) []session.Step {
	t.Helper()
	var ends []session.Step
	for i, acts := range turns {
		for k, a := range acts {
			var st session.Step
			var err error
			if a.reply {
				st, err = s.Reply(a.text)
			} else {
				st, err = s.Call("", a.name, a.args)
			}
			require.NoError(t, err)
			last := k == len(acts)-1
			require.Equal(t, last, st.TurnOver, "turn %d act %d", i+1, k+1)
			if last {
				ends = append(ends, st)
			} else {
				require.Equal(t, i, st.Turn)
			}
		}
	}
	return ends
}

// The oracle's calls and replies sent through a session give the oracle's rewards and verdict,
// and the trace replays as it was recorded.
func TestOracleThroughSession(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"ship-and-report", "clarify"} {
		t.Run(name, func(t *testing.T) {
			acts, want := oracleActs(t, f.tasks[name], 5)
			s, buf := f.create(t, name, 5, session.Options{})
			first := s.First()
			assert.Equal(t, want.Turns[0].User, first.User)
			assert.False(t, first.TurnOver)
			ends := drive(t, s, acts)
			require.Len(t, ends, len(want.Turns))
			for i, end := range ends {
				assert.Equal(t, want.Turns[i].Score, end.Reward, "turn %d reward", i+1)
			}
			last := ends[len(ends)-1]
			require.True(t, last.Done)
			wantEnd := trace.EndOf(want)
			assert.Equal(t, *wantEnd, last.Result.End)
			assert.Equal(t, 1.0, last.Result.Score)
			assert.Len(t, last.Result.Rewards, len(want.Turns))

			st := s.State()
			assert.True(t, st.Done)
			assert.Equal(t, len(want.Calls), st.Calls)
			<-s.Done()
			r := f.replay(t, buf.Bytes())
			assert.True(t, r.Matched(), "%v", r.Divergence)
			assert.Empty(t, r.Notes)

			_, err := s.Reply("more")
			assert.ErrorIs(t, err, session.ErrOver)
			_, err = s.Call("", "fs_list", `{"path": "/"}`)
			assert.ErrorIs(t, err, session.ErrOver)
		})
	}
}

// A message to a simulated user that it answers keeps the turn going, with the answer as the
// next user message; the message it is satisfied with ends the turn.
func TestSimulatedUserAnswersWithinTheTurn(t *testing.T) {
	f := newFixture(t)
	s, _ := f.create(t, "clarify", 0, session.Options{})
	st, err := s.Reply("What budget do we have?")
	require.NoError(t, err)
	assert.Equal(t, session.Step{User: "We can spend 500 euros.", Turn: 0}, st)
	st, err = s.Call("w1", "fs_write", `{"path": "/booking.txt", "content": "We can spend 500 euros."}`)
	require.NoError(t, err)
	assert.Equal(t, "w1", st.CallID)
	assert.False(t, st.IsError)
	st, err = s.Reply("Booked the venue.")
	require.NoError(t, err)
	assert.True(t, st.Done)
	assert.Equal(t, 1.0, st.Result.Score)

	msgs := s.State().Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	assert.Equal(t, []string{"system", "user", "assistant", "user", "assistant", "tool", "assistant"}, roles)
	assert.Equal(t, s.System(), msgs[0].Content)
	assert.Equal(t, "We can spend 500 euros.", msgs[3].Content)
	assert.Equal(t, []session.ToolCall{{ID: "w1", Type: "function", Function: session.FunctionCall{Name: "fs_write",
		Arguments: `{"path": "/booking.txt", "content": "We can spend 500 euros."}`}}}, msgs[4].ToolCalls)
	assert.Equal(t, "w1", msgs[5].ToolCallID)
}

// What a model would be told: the default system prompt, the tools as the model agent sends
// them, a note of the time when the clock moved between turns.
func TestWhatTheClientIsTold(t *testing.T) {
	f := newFixture(t)
	s, buf := f.create(t, "ship-and-report", 0, session.Options{})
	p, d := episode.Prepare(context.Background(), f.tasks["ship-and-report"], episode.Options{})
	require.Nil(t, d)
	assert.Equal(t, modelagent.DefaultSystemPrompt("me@acme.example", p.Base.Clock().NowString()), s.System())
	require.Len(t, s.Tools(), len(f.tasks["ship-and-report"].Tools))
	assert.Equal(t, f.tasks["ship-and-report"].Tools[0].Schema(), s.Tools()[0])
	assert.Equal(t, "Handle the boss's mail.", s.First().User)

	st, err := s.Reply("Nothing done.")
	require.NoError(t, err)
	assert.True(t, st.TurnOver)
	require.NotNil(t, st.Reward)
	assert.Equal(t, 0.0, *st.Reward)
	assert.Equal(t, 1, st.Turn)
	assert.True(t, strings.HasPrefix(st.User, "(It is now Monday, 2026-01-05T10:00:00Z.)\n\nThanks! You said: Nothing done."), st.User)
	assert.Equal(t, st, s.State().Last)

	s.Close()
	events, err := trace.Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	start := events[0].Body.(*trace.Start)
	assert.Equal(t, "remote", start.Agent)
	assert.Equal(t, s.System(), start.System)
}

// Arguments that are not a JSON object, a wrong argument type and an unknown tool: the first
// two get the tool message a model would get, the last runs nothing.
func TestCallErrors(t *testing.T) {
	f := newFixture(t)
	s, buf := f.create(t, "limited", 0, session.Options{})

	_, err := s.Call("", "no_such_tool", "{}")
	var ute *session.UnknownToolError
	require.ErrorAs(t, err, &ute)
	assert.Equal(t, "no_such_tool", ute.Name)

	st, err := s.Call("", "fs_read", `["/a"]`)
	require.NoError(t, err)
	_, problem := conversation.ParseArguments(`["/a"]`)
	assert.Equal(t, conversation.BadArgumentsContent("fs_read", problem, `["/a"]`), st.Content)
	assert.True(t, st.IsError)
	assert.Equal(t, "call_1_1", st.CallID)

	st, err = s.Call("", "fs_read", `{"path": 7}`)
	require.NoError(t, err)
	assert.True(t, st.IsError)
	assert.Contains(t, st.Content, `"error":`)
	assert.Contains(t, st.Content, "path")
	assert.False(t, st.TurnOver)

	// the turn allows two calls to run: the third is not run and ends the turn as truncated
	st, err = s.Call("", "fs_list", `{"path": "/"}`)
	require.NoError(t, err)
	assert.False(t, st.IsError)
	assert.False(t, st.TurnOver)
	assert.Equal(t, 2, s.State().Calls, "the refused arguments did not run")
	st, err = s.Call("", "fs_list", `{"path": "/"}`)
	require.NoError(t, err)
	assert.True(t, st.IsError)
	assert.Contains(t, st.Content, "not run")
	assert.True(t, st.TurnOver)
	assert.Equal(t, "Two.", st.User)
	assert.Equal(t, 1, st.Turn)
	// and once the turn is full, arguments that would be refused end the next one the same way
	st, err = s.Call("", "fs_list", `{"path": "/"}`)
	require.NoError(t, err)
	st, err = s.Call("", "fs_list", `{"path": "/"}`)
	require.NoError(t, err)
	assert.False(t, st.TurnOver)
	st, err = s.Call("", "fs_list", `"no"`)
	require.NoError(t, err)
	assert.True(t, st.TurnOver)
	assert.True(t, st.Done)
	assert.Equal(t, []string{"call_1_1", "call_1_2", "call_1_3", "call_1_4", "call_2_1", "call_2_2", "call_2_3"}, callIDs(s.State().Messages))
	assert.Nil(t, st.Result.Error)
	for _, tr := range st.Result.Rewards {
		assert.Nil(t, tr, "the turns have no verifier")
	}

	r := f.replay(t, buf.Bytes())
	assert.True(t, r.Matched(), "%v", r.Divergence)
	assert.Empty(t, r.Notes)
}

// callIDs are the ids of the tool messages.
func callIDs(msgs []session.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == "tool" {
			out = append(out, m.ToolCallID)
		}
	}
	return out
}

// holdPrint makes a Print that stops each script print until the test releases it.
func holdPrint() (print func(syntax.Position, string), entered <-chan struct{}, release chan<- struct{}) {
	in, out := make(chan struct{}), make(chan struct{})
	return func(syntax.Position, string) {
		in <- struct{}{}
		<-out
	}, in, out
}

// One action at a time: an action while another runs is refused, and the session goes on.
func TestBusy(t *testing.T) {
	f := newFixture(t)
	print, entered, release := holdPrint()
	s, _ := f.create(t, "waits", 0, session.Options{Print: print})
	got := make(chan session.Step)
	go func() {
		st, err := s.Call("", "wait", "{}")
		assert.NoError(t, err)
		got <- st
	}()
	<-entered
	_, err := s.Reply("hello")
	assert.ErrorIs(t, err, session.ErrBusy)
	_, err = s.Call("", "fs_list", "{}")
	assert.ErrorIs(t, err, session.ErrBusy)
	release <- struct{}{}
	st := <-got
	assert.Equal(t, `{"ok":true}`, st.Content)
	st, err = s.Reply("done")
	require.NoError(t, err)
	assert.True(t, st.Done)
}

// Close in the middle: the episode ends as interrupted, its trace has the end, and it replays.
func TestCloseInterrupts(t *testing.T) {
	f := newFixture(t)
	s, buf := f.create(t, "ship-and-report", 0, session.Options{})
	_, err := s.Call("", "mail_read", `{"id": "m1"}`)
	require.NoError(t, err)
	st := s.Close()
	assert.True(t, st.Done)
	require.NotNil(t, st.Result.Error)
	assert.Equal(t, episode.Interrupted, st.Result.Error.Code)
	assert.True(t, st.Last.Done)
	select {
	case <-s.Done():
	default:
		t.Fatal("the episode's goroutine did not end")
	}
	assert.Equal(t, st, s.Close(), "Close again changes nothing")
	_, err = s.Reply("late")
	assert.ErrorIs(t, err, session.ErrOver)

	events, err := trace.Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	end := events[len(events)-1].Body.(*trace.End)
	assert.Equal(t, episode.Interrupted, end.Error.Code)
	r := f.replay(t, buf.Bytes())
	assert.True(t, r.Matched(), "%v", r.Divergence)
}

// A session closed before any action left no assistant event; its trace still replays as a
// model's (the remote agent), with nothing it could not check.
func TestCloseBeforeAnyAction(t *testing.T) {
	f := newFixture(t)
	s, buf := f.create(t, "ship-and-report", 0, session.Options{})
	s.Close()
	r := f.replay(t, buf.Bytes())
	assert.True(t, r.Matched(), "%v", r.Divergence)
	assert.Empty(t, r.Notes)
}

// A setup that fails gives no session and no trace.
func TestSetupError(t *testing.T) {
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte("def _setup(ws):\n    fail(\"broken\")\n\ntask(name = \"b\", prompt = \"x\", tools = [\"fs\"], setup = _setup)\n")}}, ".", "c")
	file := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, file.Diags)
	var buf bytes.Buffer
	_, err := session.Create(context.Background(), file.Tasks[0], 0, session.Options{Trace: &buf})
	var se *session.SetupError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Error(), "broken")
	assert.Zero(t, buf.Len())
}

// Many sessions at once, each its own episode, give the oracle's verdict; none leaves a
// goroutine behind.
func TestSessionsInParallel(t *testing.T) {
	f := newFixture(t)
	const n = 24
	names := []string{"ship-and-report", "clarify"}
	type want struct {
		acts [][]act
		end  *trace.End
	}
	wants := map[string]want{}
	for _, name := range names {
		for seed := int64(0); seed < n/2; seed++ {
			acts, r := oracleActs(t, f.tasks[name], seed)
			wants[fmt.Sprint(name, seed)] = want{acts, trace.EndOf(r)}
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		name, seed := names[i%2], int64(i/2)
		w := wants[fmt.Sprint(name, seed)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := session.Create(context.Background(), f.tasks[name], seed, session.Options{})
			if !assert.NoError(t, err) {
				return
			}
			defer s.Close()
			var st session.Step
			for _, acts := range w.acts {
				for _, a := range acts {
					if a.reply {
						st, err = s.Reply(a.text)
					} else {
						st, err = s.Call("", a.name, a.args)
					}
					if !assert.NoError(t, err) {
						return
					}
				}
			}
			if assert.True(t, st.Done, "%s seed %d", name, seed) {
				assert.Equal(t, *w.end, st.Result.End, "%s seed %d", name, seed)
			}
		}()
	}
	wg.Wait()
	// the episodes' goroutines are gone (they may take a moment to return after Done)
	assert.Empty(t, leaktest.Leftover("session_test.TestSessionsInParallel(", "coworkenv/runtime/session."))
}

// Close while an action runs: the action still gets its answer, and Close returns once the
// episode has ended.
func TestCloseWhileBusy(t *testing.T) {
	f := newFixture(t)
	print, entered, release := holdPrint()
	s, _ := f.create(t, "waits", 0, session.Options{Print: print})
	got := make(chan error)
	go func() {
		_, err := s.Call("", "wait", "{}")
		got <- err
	}()
	<-entered
	closed := make(chan session.Status)
	go func() { closed <- s.Close() }()
	release <- struct{}{}
	assert.NoError(t, <-got)
	st := <-closed
	assert.True(t, st.Done)
	assert.Equal(t, episode.Interrupted, st.Result.Error.Code)
}

// BenchmarkSessionStep measures one tool call through a session, in process.
func BenchmarkSessionStep(b *testing.B) {
	f := newFixture(b)
	var s *session.Session
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s == nil || n == 49 { // max_calls_per_turn is 50
			b.StopTimer()
			if s != nil {
				s.Close()
			}
			var err error
			s, err = session.Create(context.Background(), f.tasks["waits"], 0, session.Options{})
			require.NoError(b, err)
			n = 0
			b.StartTimer()
		}
		if _, err := s.Call("", "fs_list", `{"path": "/"}`); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.StopTimer()
	s.Close()
}

// An episode that ends before its first turn (a `before` that fails) is created done, and its
// trace is whole.
func TestEndsBeforeTheFirstTurn(t *testing.T) {
	src := "def _before(ws):\n    fail(\"no\")\n\ntask(name = \"b\", turns = [turn(user = \"x\", before = _before)], tools = [\"fs\"])\n"
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "c")
	file := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, file.Diags)
	var buf bytes.Buffer
	s, err := session.Create(context.Background(), file.Tasks[0], 0, session.Options{Trace: &buf, Source: []byte(src)})
	require.NoError(t, err)
	first := s.First()
	assert.True(t, first.Done)
	assert.Empty(t, first.User)
	require.NotNil(t, first.Result.Error)
	assert.Equal(t, "script-error", first.Result.Error.Code)
	<-s.Done()
	_, err = s.Reply("hi")
	assert.ErrorIs(t, err, session.ErrOver)
	events, err := trace.Read(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, "end", events[len(events)-1].Kind)
}
