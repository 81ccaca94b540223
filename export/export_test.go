package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const flakyTask = `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.fs.write("/a.txt", "alpha")

def _v1(ws, ep):
    check(ws.fs.exists("/b.txt"), "b is written")

def _s1(agent):
    a = agent.call("fs_read", path = "/a.txt")
    agent.call("fs_write", path = "/b.txt", content = a)
    agent.reply("Copied.")

def _v2(ws, ep):
    check(not ws.fs.exists("/a.txt"), "a is deleted")

def _s2(agent):
    agent.call("fs_delete", path = "/a.txt")
    agent.reply("Deleted.")

task(
    name = "flaky",
    turns = [
        turn(user = "Copy /a.txt to /b.txt.", verify = _v1, solution = _s1),
        turn(user = "Delete /a.txt.", verify = _v2, solution = _s2),
    ],
    tools = ["fs"],
    setup = _setup,
    faults = {"rate": 0.5, "tools": ["fs_write"], "seed": 1},
)
`

func loadTask(t *testing.T, src string) (*dsl.Task, []byte) {
	t.Helper()
	m := fstest.MapFS{"t.star": &fstest.MapFile{Data: []byte(src)}}
	f := dsl.NewCorpus(m, ".", "c").LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	return f.Tasks[0], f.Source
}

// record runs an episode into a trace and reads it back.
func record(t *testing.T, task *dsl.Task, src []byte, seed int64, agent episode.Agent, system, path string) *Episode {
	t.Helper()
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: seed})
	require.Nil(t, d)
	var buf bytes.Buffer
	start := trace.StartOf(p, src, seed, agent.Name())
	start.System = system
	w := trace.NewWriter(&buf, start)
	res := p.Run(context.Background(), agent, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(res))
	events, err := trace.Read(&buf)
	require.NoError(t, err)
	return &Episode{Path: path, Events: events}
}

func roles(msgs []jsonv.Value) []string {
	var out []string
	for _, m := range msgs {
		r, _ := m.(*jsonv.Object).Get("role")
		out = append(out, r.(string))
	}
	return out
}

func field(m jsonv.Value, k string) jsonv.Value {
	v, _ := m.(*jsonv.Object).Get(k)
	return v
}

// The oracle's faulted attempts become a transient tool error followed by the retry.
func TestOracleMessagesWithFaults(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	var e *Episode
	for seed := int64(0); seed < 50; seed++ {
		cand := record(t, task, src, seed, episode.Oracle{}, "", "out/flaky/3.jsonl")
		for _, ev := range cand.Events {
			if ev.Kind == "result" && ev.Bool("fault") {
				e = cand
			}
		}
		if e != nil {
			break
		}
	}
	require.NotNil(t, e, "some seed makes fs_write fault")
	require.True(t, e.Passed())
	assert.False(t, e.FromModel())
	assert.Equal(t, 3, e.Sample())
	assert.Equal(t, "flaky@"+trace.FileSHA256(src)[:12], e.Group())

	msgs := e.Messages("SYS")
	rs := roles(msgs)
	assert.Equal(t, "system", rs[0])
	assert.Equal(t, "user", rs[1])
	var sawFault bool
	ids := map[string]bool{}
	for i, m := range msgs {
		switch rs[i] {
		case "assistant":
			if calls, ok := field(m, "tool_calls").([]jsonv.Value); ok {
				require.Len(t, calls, 1)
				id := field(calls[0], "id").(string)
				ids[id] = true
				args := field(field(calls[0], "function"), "arguments").(string)
				assert.True(t, json.Valid([]byte(args)))
				assert.Equal(t, "tool", rs[i+1], "each call is answered at once")
			}
		case "tool":
			id := field(m, "tool_call_id").(string)
			assert.True(t, ids[id])
			var c map[string]any
			if json.Unmarshal([]byte(field(m, "content").(string)), &c) == nil && c["transient"] == true {
				sawFault = true
				assert.Contains(t, []any{"429 rate limited", "503 unavailable"}, c["error"])
			}
		}
	}
	assert.True(t, sawFault, "the faulted attempt is shown as a transient error")
	assert.Equal(t, "Deleted.", field(msgs[len(msgs)-1], "content"))
	users := 0
	for _, r := range rs {
		if r == "user" {
			users++
		}
	}
	assert.Equal(t, 2, users)
	assert.Equal(t, []jsonv.Value{1.0, 1.0}, e.TurnRewards())

	// the default system prompt is rebuilt from the task
	sys := &Systems{Load: func(*Episode) (*dsl.Task, error) { return task, nil }}
	got, err := sys.For(e)
	require.NoError(t, err)
	assert.Equal(t, modelagent.DefaultSystemPrompt("sam@acme.example", "2026-01-05T09:00:00Z"), got)
	sys = &Systems{Load: func(*Episode) (*dsl.Task, error) { return nil, errors.New("gone") }}
	_, err = sys.For(e)
	assert.Error(t, err)
	assert.Equal(t, "not a model's episode (use --include-oracle)", SFTSkip(e, SFTOptions{}))
	assert.Equal(t, "", SFTSkip(e, SFTOptions{IncludeReference: true}))
}

// modelLike reports assistant messages and runs calls the way runtime/modelagent does: a call
// with broken arguments is not run.
type modelLike struct{}

func (modelLike) Name() string { return "openai" }

func call(id, name, args string) jsonv.Value {
	return jsonv.NewObject("id", id, "type", "function", "function", jsonv.NewObject("name", name, "arguments", args))
}

func (modelLike) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	usage := jsonv.NewObject("prompt_tokens", int64(10), "completion_tokens", int64(5), "total_tokens", int64(15))
	if tc.Index == 0 {
		tc.Assistant(episode.AssistantMessage{Content: "Let me look.", ToolCalls: []jsonv.Value{call("a", "fs_read", `{"path": "/a.txt"`), call("b", "fs_read", `{"path":"/a.txt"}`)}, Usage: usage})
		if _, err := tc.Call("b", "fs_read", jsonv.NewObject("path", "/a.txt")); err != nil {
			return "", err
		}
		tc.Assistant(episode.AssistantMessage{Content: "", ToolCalls: []jsonv.Value{call("c", "fs_write", `{"path":"/b.txt","content":"alpha"}`), call("d", "fs_list", "")}, Usage: usage})
		if _, err := tc.Call("c", "fs_write", jsonv.NewObject("path", "/b.txt", "content", "alpha")); err != nil {
			return "", err
		}
		// "d" is left unrun, as when the turn ends before it
		tc.Assistant(episode.AssistantMessage{Content: "Copied.", ToolCalls: nil, Usage: usage})
		return "Copied.", nil
	}
	return "", errors.New("the model went away")
}

func TestModelMessages(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, modelLike{}, "You are helpful.", "x/run.jsonl")
	assert.True(t, e.FromModel())
	assert.Equal(t, -1, e.Sample())
	assert.Equal(t, 1, e.MalformedCalls())
	assert.NotEmpty(t, e.Error())
	assert.False(t, e.Passed())
	assert.Equal(t, "the episode ended with an error", SFTSkip(e, SFTOptions{}))
	assert.Equal(t, []jsonv.Value{1.0, nil}, e.TurnRewards(), "turn 2 stopped before its verifier")

	msgs := e.Messages(e.RecordedSystem())
	rs := roles(msgs)
	require.Len(t, rs, 10)
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "tool", "assistant", "user"}, rs)
	assert.Equal(t, "You are helpful.", field(msgs[0], "content"))
	assert.Equal(t, "Let me look.", field(msgs[2], "content"))
	calls := field(msgs[2], "tool_calls").([]jsonv.Value)
	assert.Equal(t, `{"path": "/a.txt"`, field(field(calls[0], "function"), "arguments"), "arguments as the model sent them")
	assert.Equal(t, "a", field(msgs[3], "tool_call_id"))
	assert.Contains(t, field(msgs[3], "content"), "fs_read was not run: the arguments are not valid JSON")
	assert.Equal(t, "b", field(msgs[4], "tool_call_id"))
	assert.Equal(t, "alpha", field(msgs[4], "content"))
	calls = field(msgs[5], "tool_calls").([]jsonv.Value)
	assert.Equal(t, "{}", field(field(calls[1], "function"), "arguments"), `"" becomes {}`)
	assert.Equal(t, "c", field(msgs[6], "tool_call_id"))
	assert.Equal(t, "d", field(msgs[7], "tool_call_id"))
	assert.Equal(t, `{"error":"the tool was not run"}`, field(msgs[7], "content"))
	assert.Equal(t, "Copied.", field(msgs[8], "content"))

	rl := RL(e, "S")
	assert.Equal(t, "openai", field(rl, "agent"))
	assert.Nil(t, field(rl, "sample"))
	assert.Contains(t, field(rl, "error"), "the model went away")
	assert.Equal(t, 0.0, field(rl, "reward"))
}

func TestAtomicFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))
	a, err := CreateAtomic(path)
	require.NoError(t, err)
	require.NoError(t, a.WriteLine(jsonv.NewObject("x", int64(1))))
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old\n", string(b), "the old file stays until Commit")
	require.NoError(t, a.Commit())
	b, _ = os.ReadFile(path)
	assert.Equal(t, "{\"x\":1}\n", string(b))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	a, err = CreateAtomic(path)
	require.NoError(t, err)
	a.Abort()
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1)
}

// simTask has a simulated user who holds the budget; the reference asks for it before it writes.
const simTask = `
def _user(said, round):
    if "budget" in said.lower():
        return "We can spend 500 euros."
    return None

def _solve(agent):
    budget = agent.ask("What budget do we have?")
    agent.call("fs_write", path = "/plan.txt", content = budget)
    agent.reply("Planned within: " + budget)

task(name = "plan", tools = ["fs"], solution = _solve,
    prompt = simulated_user(opening = "Plan the team dinner.", persona = "Sam, team lead", goal = "a dinner plan",
        facts = {"budget": "500 euros"}, stand_in = _user),
    verify = lambda ws, ep: check(ws.fs.exists("/plan.txt") and "500" in ws.fs.read("/plan.txt"), "the plan has the budget"))
`

// The exchanges with a simulated user become messages: the question a solution asked and the
// user's answer in order, and the answer to the final reply (which the agent never saw) left
// out.
func TestSimulatedUserMessages(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, simTask)
	e := record(t, task, src, 0, episode.Oracle{}, "", "x/0.jsonl")
	require.True(t, e.Passed(), e.Error())
	msgs := e.Messages("S")
	assert.Equal(t, []string{"system", "user", "assistant", "user", "assistant", "tool", "assistant"}, roles(msgs))
	assert.Equal(t, "What budget do we have?", field(msgs[2], "content"))
	assert.Equal(t, "We can spend 500 euros.", field(msgs[3], "content"))
	assert.Equal(t, "Planned within: We can spend 500 euros.", field(msgs[6], "content"))
	// atif and inspect map the same conversation: no message is left without its events
	// (tool messages go with the assistant message they answer)
	conv := e.conversation("S")
	var got []string
	for _, it := range conv {
		got = append(got, fmt.Sprintf("%s/%d", it.role, len(it.tools)))
	}
	assert.Equal(t, []string{"system/0", "user/0", "assistant/0", "user/0", "assistant/1", "assistant/0"}, got)
	require.NotNil(t, conv[4].tools[0].result, "the call's result event is found")
	assert.Equal(t, `{"path":"/plan.txt"}`, conv[4].tools[0].result.Content)
}
