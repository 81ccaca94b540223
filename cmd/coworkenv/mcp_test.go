package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mainEnv makes the test binary the command: a test starts it with os/exec to speak to
// `coworkenv mcp` over its real stdin and stdout.
const mainEnv = "COWORKENV_TEST_MAIN"

func init() {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
}

// mcpAction is one action of a client: a call of the task's tool, or a reply.
type mcpAction struct {
	reply bool
	name  string
	args  *jsonv.Object
	text  string
}

// oracleActions runs the task's oracle in process and returns its calls and replies turn by turn,
// and its result. The tasks here have no simulated user.
func oracleActions(t *testing.T, arg string, seed int64) ([][]mcpAction, *episode.Result) {
	t.Helper()
	tg, err := locateTask(context.Background(), arg)
	require.NoError(t, err)
	task, _, err := tg.load(context.Background())
	require.NoError(t, err)
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: seed})
	require.Nil(t, d)
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
	require.Nil(t, r.Err)
	out := make([][]mcpAction, len(r.Turns))
	for _, c := range r.Calls {
		out[c.Turn] = append(out[c.Turn], mcpAction{name: c.Name, args: c.Args})
	}
	for i, tr := range r.Turns {
		out[i] = append(out[i], mcpAction{reply: true, text: tr.Reply})
	}
	return out, r
}

// do sends one action and returns its result and step.
func (a mcpAction) do(t *testing.T, cs *mcp.ClientSession) (*mcp.CallToolResult, session.Step) {
	t.Helper()
	params := &mcp.CallToolParams{Name: a.name, Arguments: json.RawMessage(jsonv.MustEncode(a.args))}
	if a.reply {
		params = &mcp.CallToolParams{Name: serve.ReplyTool, Arguments: map[string]any{"content": a.text}}
	}
	res, err := cs.CallTool(context.Background(), params)
	require.NoError(t, err)
	data, err := json.Marshal(res.Meta[serve.StepMeta])
	require.NoError(t, err)
	var st session.Step
	require.NoError(t, json.Unmarshal(data, &st), "%s", data)
	return res, st
}

// mcpCommand starts `coworkenv mcp ARGS` in process on an in-memory transport and connects a
// client to it; wait closes the client and returns the exit status and stderr.
func mcpCommand(t *testing.T, args ...string) (cs *mcp.ClientSession, wait func() (int, string)) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	var stdout, stderr bytes.Buffer
	codes := make(chan int, 1)
	go func() { codes <- mcpServe(context.Background(), args, st, &stdout, &stderr) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	return cs, func() (int, string) {
		require.NoError(t, cs.Close())
		code := <-codes
		assert.Empty(t, stdout.String(), "stdout is the protocol's")
		return code, stderr.String()
	}
}

// `coworkenv mcp` serves a single-turn and a two-turn built-in task; driven with the oracle's
// calls and replies, the score is the oracle's, the result is readable, and the trace, in place
// when the episode ends, replays.
func TestMCPCommand(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fuel-surcharge-answer", "carrier-quote-award"} {
		t.Run(name, func(t *testing.T) {
			acts, want := oracleActions(t, name, 4)
			tr := filepath.Join(t.TempDir(), "t.jsonl")
			cs, wait := mcpCommand(t, name, "--seed", "4", "--trace", tr)

			list, err := cs.ListTools(context.Background(), nil)
			require.NoError(t, err)
			tg, err := locateTask(context.Background(), name)
			require.NoError(t, err)
			task, _, err := tg.load(context.Background())
			require.NoError(t, err)
			var wantNames, names []string
			for _, spec := range task.Tools {
				wantNames = append(wantNames, spec.Name)
			}
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			assert.ElementsMatch(t, append(wantNames, serve.ReplyTool), names)

			var state struct {
				ID       string            `json:"id"`
				Messages []session.Message `json:"messages"`
			}
			res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "coworkenv://session/s1/state"})
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &state))
			assert.Equal(t, "s1", state.ID)
			require.Len(t, state.Messages, 2)
			assert.Equal(t, want.Turns[0].User, state.Messages[1].Content)
			assert.Equal(t, state.Messages[0].Content, cs.InitializeResult().Instructions, "the instructions are the system prompt")

			var last session.Step
			for i, turn := range acts {
				for _, a := range turn {
					_, last = a.do(t, cs)
				}
				assert.Equal(t, want.Turns[i].Score, last.Reward, "turn %d", i+1)
			}
			require.True(t, last.Done)
			assert.Equal(t, *trace.EndOf(want), last.Result.End)
			_, err = os.Stat(tr)
			assert.NoError(t, err, "the trace is in place as soon as the episode ends")

			res, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "coworkenv://session/s1/result"})
			require.NoError(t, err)
			var result session.Result
			require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &result))
			assert.Equal(t, *last.Result, result)

			code, errs := wait()
			assert.Equal(t, 0, code, errs)
			assert.Contains(t, errs, "· passed")
			code, out, _ := cli(t, "replay", tr)
			assert.Equal(t, 0, code, out)
			assert.Contains(t, out, "matched")
		})
	}
}

// A bad argument is the tool error a model would see, and the episode goes on; a client that
// leaves before the end leaves an interrupted trace, and the status says the episode did not
// pass.
func TestMCPCommandBadArgumentAndLeaving(t *testing.T) {
	t.Parallel()
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	cs, wait := mcpCommand(t, "fuel-surcharge-answer", "--trace", tr)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs_read", Arguments: map[string]any{"path": 7}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	require.Len(t, res.Content, 1)
	assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, `argument \"path\": got integer, want string`)
	res, _ = mcpAction{name: "fs_list", args: jsonv.NewObject("path", "/")}.do(t, cs)
	assert.False(t, res.IsError)

	code, errs := wait()
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "· interrupted")
	assert.Contains(t, errs, tr+".partial")
	data, err := os.ReadFile(tr + ".partial")
	require.NoError(t, err)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err, "the trace has its end")
	end := events[len(events)-1].Body.(*trace.End)
	assert.Equal(t, episode.Interrupted, end.Error.Code)
	calls := 0
	for _, ev := range events {
		if _, ok := ev.Body.(*trace.Call); ok {
			calls++
		}
	}
	assert.Equal(t, 2, calls)
}

// The command itself, started as a harness starts it: the task file's episode over the process's
// stdin and stdout, its oracle's score, exit status 0 once the client closes stdin, and a trace
// that replays.
func TestMCPCommandOverStdio(t *testing.T) {
	t.Parallel()
	p := writeTask(t, helloTask)
	tr := filepath.Join(t.TempDir(), "hello.jsonl")
	cmd := exec.Command(os.Args[0], "mcp", p+":hello", "--trace", tr)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)

	acts, want := oracleActions(t, p+":hello", 0)
	require.Len(t, acts, 1)
	var last session.Step
	for _, a := range acts[0] {
		_, last = a.do(t, cs)
	}
	require.True(t, last.Done)
	assert.Equal(t, want.Score, last.Result.Score)
	assert.True(t, last.Result.Passed)
	require.NoError(t, cs.Close(), stderr.String())
	require.NotNil(t, cmd.ProcessState, "closing the client waits for the command")
	assert.Equal(t, 0, cmd.ProcessState.ExitCode(), stderr.String())
	assert.Contains(t, stderr.String(), "serving over stdio")
	assert.Contains(t, stderr.String(), "· passed")

	code, out, _ := cli(t, "replay", tr, "--corpus", filepath.Dir(p))
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "matched")
}

func TestMCPUsageErrors(t *testing.T) {
	t.Parallel()
	p := writeTask(t, helloTask)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want one TASK"},
		{[]string{"a", "b"}, "want one TASK"},
		{[]string{"no-such-task"}, "no-such-task"},
		{[]string{p + ":hello", "--trace", t.TempDir()}, "--trace"},
		{[]string{p + ":hello", "--trace", p}, "also an input"},
		{[]string{p + ":nope"}, "nope"},
		{[]string{p + ":hello", "--seed", "x"}, "-seed"},
	} {
		code, out, errs := cli(t, append([]string{"mcp"}, tc.args...)...)
		assert.Equal(t, 2, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Contains(t, errs, tc.want, tc.args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	}
}

// spinTask has a tool that writes a note and one that runs for ages in one step (== between
// deeply nested lists: no in-process guard reaches inside it).
const spinTask = `
def _note(ws, text):
    ws.fs.write("/note.txt", text)
    return {"ok": True}

def _spin(ws):
    x = [1]
    for i in range(8):
        x = [x] * 200
    return {"same": x == x}

def _verify(ws, ep):
    check(ws.fs.exists("/note.txt"), "the note is written")

task(name = "spin", prompt = "Write a note.", verify = _verify, tools = [
    tool(name = "note", description = "Writes a note.", params = {"text": param("string", description = "The note.")}, impl = _note),
    tool(name = "spin", description = "Spins.", params = {}, impl = _spin),
])
`

// A task file from disk runs in a worker by default: a tool call's round trip, then a call that
// runs past the worker's time limit ends the episode with timeout, its trace with it, and the
// command exits 1. The limits are refused where no worker runs.
func TestMCPCommandIsolated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "spin.star")
	require.NoError(t, os.WriteFile(file, []byte(spinTask), 0o644))
	tr := filepath.Join(dir, "t.jsonl")
	cs, wait := mcpCommand(t, file, "--time-limit", "1500ms", "--trace", tr)
	res, st := mcpAction{name: "note", args: jsonv.NewObject("text", "hi")}.do(t, cs)
	assert.False(t, res.IsError)
	assert.False(t, st.Done)
	_, st = mcpAction{name: "spin", args: &jsonv.Object{}}.do(t, cs)
	require.True(t, st.Done)
	require.NotNil(t, st.Result.Error)
	assert.Equal(t, "timeout", st.Result.Error.Code)
	code, errs := wait()
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "timeout")
	data, err := os.ReadFile(tr)
	require.NoError(t, err, "the trace is in place")
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	end, ok := events[len(events)-1].Body.(*trace.End)
	require.True(t, ok)
	assert.Equal(t, "timeout", end.Error.Code)

	for _, args := range [][]string{{file, "--in-process", "--time-limit", "1s"}, {"fuel-surcharge-answer", "--memory-limit", "100"}} {
		code, out, errs := cli(t, append([]string{"mcp"}, args...)...)
		assert.Equal(t, 2, code, "%v: %s%s", args, out, errs)
	}
}
