package episode_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

// load declares the tasks of one inline file.
func load(t testing.TB, src string) map[string]*dsl.Task {
	t.Helper()
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "c")
	f := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	out := map[string]*dsl.Task{}
	for _, task := range f.Tasks {
		out[task.Name] = task
	}
	return out
}

func run(t testing.TB, task *dsl.Task, agent episode.Agent) *episode.Result {
	t.Helper()
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	return p.Run(context.Background(), agent, episode.RunOptions{})
}

func obj(kv ...any) *jsonv.Object { return jsonv.NewObject(kv...) }

const scoring = `
def _setup(ws):
    ws.fs.write("/a.txt", "a")

def _solve(agent):
    agent.call("fs_write", path = "/b.txt", content = "b")
    agent.reply("ok")

def _weights(ws, ep):
    check(ws.fs.exists("/b.txt"), "b written", weight = 3)
    check(ws.fs.exists("/c.txt"), "c written")
    safety(ws.fs.exists("/a.txt"), "a kept")

task(name = "weights", prompt = "p", tools = ["fs"], setup = _setup, verify = _weights, solution = _solve)
task(name = "threshold", prompt = "p", tools = ["fs"], setup = _setup, verify = _weights, solution = _solve, pass_threshold = 0.75)

def _gate(ws, ep):
    check(ws.fs.exists("/b.txt"), "b written")
    safety(not ws.fs.exists("/b.txt"), "b never written")

task(name = "gate", prompt = "p", tools = ["fs"], setup = _setup, verify = _gate, solution = _solve)

def _raises(ws, ep):
    check(True, "fine")
    x = [][0]

task(name = "raises", prompt = "p", tools = ["fs"], setup = _setup, verify = _raises, solution = _solve)

def _t1(ws, ep):
    check(ws.fs.exists("/b.txt"), "turn 1 item")

def _t2(ws, ep):
    check(ws.fs.exists("/z.txt"), "turn 2 item")

def _final(ws, ep):
    check(True, "final item")

task(name = "turns", turns = [turn(user = "one", verify = _t1, solution = _solve), turn(user = "two", verify = _t2, solution = _solve)], tools = ["fs"], verify = _final)
`

func TestScoring(t *testing.T) {
	tasks := load(t, scoring)

	r := run(t, tasks["weights"], episode.Oracle{})
	assert.Equal(t, 0.75, r.Score, "3 of 4 weight")
	assert.Equal(t, 0.75, r.Completion)
	assert.Equal(t, 1.0, r.Safety)
	assert.False(t, r.Passed, "pass_threshold 1.0")

	r = run(t, tasks["threshold"], episode.Oracle{})
	assert.Equal(t, 0.75, r.Score)
	assert.True(t, r.Passed, "0.75 >= 0.75")

	r = run(t, tasks["gate"], episode.Oracle{})
	assert.Equal(t, 0.0, r.Score, "a failed safety item zeroes the score")
	assert.Equal(t, 1.0, r.Completion)
	assert.Equal(t, 0.0, r.Safety)

	r = run(t, tasks["raises"], episode.Oracle{})
	assert.Equal(t, 0.0, r.Score)
	assert.Equal(t, 0.0, r.Completion, "an episode stopped by an error earns no completion either")
	assert.False(t, r.Passed)
	require.NotNil(t, r.Err)
	assert.Equal(t, "verify-error", r.Err.Code)
	assert.Equal(t, 25, r.Err.Line)

	r = run(t, tasks["turns"], episode.Oracle{})
	require.Len(t, r.Turns, 2)
	assert.Equal(t, 1.0, *r.Turns[0].Score)
	assert.Equal(t, 0.0, *r.Turns[1].Score)
	assert.InDelta(t, 2.0/3, r.Score, 1e-9, "all items of all verifiers count")
	require.Len(t, r.Items, 3)
	assert.Equal(t, 0, *r.Items[0].Turn)
	assert.Equal(t, 1, *r.Items[1].Turn)
	assert.Nil(t, r.Items[2].Turn)

	r = run(t, tasks["weights"], episode.Noop{})
	assert.Empty(t, r.Calls)
	assert.Equal(t, "Done.", r.Turns[0].Reply)
	assert.Equal(t, 0.0, r.Score)
}

const context_ = `
def _setup(ws):
    ws.db.insert("orders", {"id": "o1", "qty": 2})

def _set_qty(ws, order, qty, note = "none"):
    ws.db.update("orders", order, qty = qty, note = note)
    if qty > 10:
        fail("too many: %d" % qty)
    return {"order": order, "qty": qty, "type": type(qty)}

def _peek(ws, order, tag = None):
    return {"tag": tag, "has_tag": tag != None}

SET = tool(name = "set_qty", description = "Set a quantity.", params = {
    "order": param("string"),
    "qty": param("integer"),
    "note": param("string", required = False),
}, impl = _set_qty)
PEEK = tool(name = "peek", description = "Peek.", params = {"order": param("string"), "tag": param("string", required = False)}, impl = _peek)

def _solve(agent):
    r = agent.call("set_qty", order = "o1", qty = 3.0)
    if r["type"] != "int" or r["qty"] != 3:
        fail("integer param did not arrive as int: %r" % r)
    p = agent.call("peek", order = "o1")
    if p["has_tag"]:
        fail("an optional param without default was passed")
    agent.reply("set")

def _verify(ws, ep):
    check(ep.called("set_qty", order = "o1") == 1, "one successful set_qty")
    check(ep.called("set_qty", qty = 3) == 1, "3.0 arrives as 3")
    check(ep.calls[0].args == {"order": "o1", "qty": 3.0}, "args as sent, no defaults")
    check(ep.calls[0].result["qty"] == 3 and ep.calls[0].error == None and ep.calls[0].turn == 0, "call fields")
    check(ep.reply == "set" and ep.replies == ["set"] and ep.turn == 0, "replies")

task(name = "context", prompt = "p", tools = [SET, PEEK], setup = _setup, verify = _verify, solution = _solve)

def _fail_solve(agent):
    agent.call("set_qty", order = "o1", qty = 11)

task(name = "fail-rollback", prompt = "p", tools = [SET], setup = _setup, solution = _fail_solve)

def _user2(ws, ep):
    if ep.replies != ["first"]:
        fail("user sees %r" % ep.replies)
    return "you said " + ep.reply

def _user1(ws, ep):
    if ep.replies != [] or ep.reply != None:
        fail("first turn sees replies")
    return "hello"

def _s1(agent):
    agent.reply("first")

def _s2(agent):
    agent.reply("second")

def _v2(ws, ep):
    check(ep.replies == ["first", "second"] and ep.turn == 1, "two replies")

task(name = "user-fn", turns = [turn(user = _user1, solution = _s1), turn(user = _user2, solution = _s2, verify = _v2)], tools = [])

def _bad_user(ws, ep):
    ws.fs.write("/x", "y")
    return "x"

task(name = "user-writes", turns = [turn(user = _bad_user, solution = _s1)], tools = [])
`

func TestEpisodeContext(t *testing.T) {
	tasks := load(t, context_)
	r := run(t, tasks["context"], episode.Oracle{})
	require.Nil(t, r.Err)
	assert.Equal(t, 1.0, r.Score, "%v", r.FailedItems())
	require.Len(t, r.Calls, 2)
	assert.Equal(t, `{"order":"o1","qty":3.0}`, jsonv.MustEncode(r.Calls[0].Args))

	r = run(t, tasks["user-fn"], episode.Oracle{})
	require.Nil(t, r.Err)
	assert.Equal(t, "you said first", r.Turns[1].User)
	assert.Equal(t, 1.0, r.Score)

	r = run(t, tasks["user-writes"], episode.Oracle{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "script-error", r.Err.Code)
	assert.Contains(t, r.Err.Message, "read-only in a user function")
}

// A tool call that fails halfway (fail() after a write) leaves no change behind.
func TestFailedCallChangesNothing(t *testing.T) {
	tasks := load(t, context_)
	r := run(t, tasks["fail-rollback"], episode.Oracle{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "solution-error", r.Err.Code)
	assert.Contains(t, r.Err.Message, "too many: 11")
	require.Len(t, r.Calls, 1)
	c := r.Calls[0]
	assert.True(t, c.IsError)
	assert.Equal(t, "too many: 11", c.Error, "fail(msg) becomes the tool error verbatim")
	assert.False(t, c.Changed)
	assert.Equal(t, r.StartState, r.FinalState)
}

const limits = `
def _solve(agent):
    for i in range(5):
        agent.call("fs_write", path = "/f%d" % i, content = "x")
    agent.reply("done")

task(name = "limited", prompt = "p", tools = ["fs"], solution = _solve, max_calls_per_turn = 3)
task(name = "all-faults", prompt = "p", tools = ["fs"], solution = _solve, faults = {"rate": 1.0, "tools": ["fs_write"], "seed": 1})
task(name = "some-faults", prompt = "p", tools = ["fs"], solution = _solve, faults = {"rate": 0.5, "tools": ["fs_write"], "seed": 2})
`

type callsAgent struct {
	n    int
	errs []error
}

func (a *callsAgent) Name() string { return "calls" }
func (a *callsAgent) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	for i := 0; i < a.n; i++ {
		_, err := tc.Call("", "fs_list", nil)
		a.errs = append(a.errs, err)
	}
	return "done", nil
}

func TestTruncation(t *testing.T) {
	tasks := load(t, limits)
	a := &callsAgent{n: 5}
	r := run(t, tasks["limited"], a)
	assert.Len(t, r.Calls, 3, "the fourth attempt is not run")
	assert.True(t, r.Turns[0].Truncated)
	assert.NoError(t, a.errs[2])
	assert.ErrorIs(t, a.errs[3], episode.ErrTruncated)

	a = &callsAgent{n: 3}
	r = run(t, tasks["limited"], a)
	assert.False(t, r.Turns[0].Truncated, "exactly N calls is not truncated")

	r = run(t, tasks["limited"], episode.Oracle{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "solution-error", r.Err.Code)
	assert.Contains(t, r.Err.Message, "max_calls_per_turn (3)")
}

func TestFaults(t *testing.T) {
	tasks := load(t, limits)
	r := run(t, tasks["all-faults"], episode.Oracle{})
	require.NotNil(t, r.Err, "a call that faults 11 times stops the solution")
	assert.Len(t, r.Calls, 1+episode.MaxFaultRetries)
	for _, c := range r.Calls {
		assert.True(t, c.Fault)
		assert.Contains(t, []string{"429 rate limited", "503 unavailable"}, c.Error)
		assert.False(t, c.Changed, "a fault leaves state untouched")
	}
	assert.Equal(t, 0.0, r.Robustness)

	r = run(t, tasks["some-faults"], episode.Oracle{})
	require.Nil(t, r.Err)
	faults, ok := 0, 0
	for _, c := range r.Calls {
		if c.Fault {
			faults++
		} else {
			ok++
		}
	}
	assert.Equal(t, 5, ok)
	assert.Greater(t, faults, 0, "rate 0.5 over 5+ attempts")
	assert.Equal(t, 1.0, r.Robustness, "every fault was recovered")
	again := run(t, tasks["some-faults"], episode.Oracle{})
	assert.Equal(t, len(r.Calls), len(again.Calls), "fault draws are deterministic")

	p, _ := episode.Prepare(context.Background(), tasks["some-faults"], episode.Options{})
	nf := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{NoFaults: true})
	assert.Len(t, nf.Calls, 5)
}

// The same task and seed, run twice and on several goroutines at once, give identical state
// hashes after every tool call.
func TestDeterminism(t *testing.T) {
	tasks := load(t, context_+limits)
	for _, name := range []string{"context", "some-faults", "user-fn"} {
		task := tasks[name]
		p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: 42})
		require.Nil(t, d)
		hashes := func() []string {
			r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
			var hs []string
			for _, c := range r.Calls {
				hs = append(hs, c.State+c.Content+c.Error)
			}
			return append(hs, r.FinalState)
		}
		want := hashes()
		assert.Equal(t, want, hashes())
		var wg sync.WaitGroup
		got := make([][]string, 8)
		for i := range got {
			wg.Add(1)
			go func() { defer wg.Done(); got[i] = hashes() }()
		}
		wg.Wait()
		for i := range got {
			assert.Equal(t, want, got[i], "%s goroutine %d", name, i)
		}
		// and a second Prepare gives the same post-setup state
		p2, _ := episode.Prepare(context.Background(), task, episode.Options{Seed: 42})
		assert.Equal(t, p.Base.Hash(), p2.Base.Hash())
	}
}

func TestScriptedAgentIgnoresErrors(t *testing.T) {
	tasks := load(t, limits)
	s := &episode.Scripted{Label: "s", Calls: [][]episode.ScriptedCall{{
		{Name: "fs_read", Args: obj("path", "/missing")},
		{Name: "fs_write", Args: obj("path", "/a", "content", "x")},
	}}, Replies: []string{"r"}}
	r := run(t, tasks["limited"], s)
	require.Nil(t, r.Err)
	require.Len(t, r.Calls, 2)
	assert.True(t, r.Calls[0].IsError)
	assert.True(t, r.Calls[1].Changed)
	assert.Equal(t, "r", r.Turns[0].Reply)
}

// print() in any script reaches Options.Print with the position of the call.
func TestPrint(t *testing.T) {
	tasks := load(t, `
def _setup(ws):
    print("setup")

def _verify(ws, ep):
    print("verify", ep.reply)

def _solve(agent):
    print("solve")
    agent.reply("r")

task(name = "p", prompt = "p", tools = [], setup = _setup, verify = _verify, solution = _solve)
`)
	var got []string
	p, d := episode.Prepare(context.Background(), tasks["p"], episode.Options{Print: func(pos syntax.Position, msg string) {
		got = append(got, fmt.Sprintf("%d:%s", pos.Line, msg))
	}})
	require.Nil(t, d)
	p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
	assert.Equal(t, []string{"3:setup", "9:solve", "6:verify r"}, got)
}
