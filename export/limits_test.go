package export

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every size the engine accepts, it writes and reads back: the tests below run the largest
// tool result and the largest and deepest arguments an episode accepts through a trace, its
// reader, replay and export, and the sizes one past them, which are errors the agent sees.

// big(8388607) is 8,388,607 backslashes, whose JSON text ("\\\\…") is limits.ToolResult bytes
// and doubles again in a trace line; big(8388607, "x") is one byte more. echo takes an object,
// as large and as deep as a call's arguments may be (nest(99) sits one level below the
// arguments object). And fs_search over the largest file of "x" lines: 4,194,304 matches.
const limitsTask = `
def _setup(ws):
    ws.fs.write("/big.txt", "x\n" * (4 * 1024 * 1024))

def _big(ws, n, extra = ""):
    return "\\" * n + extra

BIG = tool(name = "big", description = "A result of n backslashes.", params = {"n": param("integer"), "extra": param("string", default = "")}, impl = _big)

def _echo(ws, data):
    return "ok"

ECHO = tool(name = "echo", description = "Takes an object.", params = {"data": param("object")}, impl = _echo)

def nest(n):
    v = 1
    for i in range(n):
        v = {"a": v}
    return v

def _solve(agent):
    agent.call("big", n = 8388607)
    agent.call("echo", data = nest(99))
    agent.call("fs_search", query = "x")
    agent.reply("Done.")

def _verify(ws, ep):
    ok = [c for c in ep.calls if c.error == None]
    check([c for c in ok if c.name == "big" and len(c.result) == 8388607] != [], "the largest result comes back")
    check([c for c in ok if c.name == "echo"] != [], "the deepest arguments run")
    check([c for c in ok if c.name == "fs_search" and c.result["truncated"] and c.result["total"] == 4194304] != [], "fs_search is capped and says so")

task(
    name = "limits",
    prompt = "Test the limits.",
    tools = ["fs", BIG, ECHO],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

// run records an episode of task as a trace and returns its bytes.
func run(t *testing.T, task *dsl.Task, src []byte, agent episode.Agent) ([]byte, *episode.Result) {
	t.Helper()
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, trace.StartOf(p, src, 0, agent.Name()))
	res := p.Run(context.Background(), agent, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(res))
	return buf.Bytes(), res
}

// readBack reads a trace, replays it (it must match) and returns its episode and lines.
func readBack(t *testing.T, data []byte, task *dsl.Task, src []byte) (*Episode, []string) {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	r, err := trace.Replay(context.Background(), events, func(string, string) (*dsl.Task, []byte, error) { return task, src, nil })
	require.NoError(t, err)
	require.True(t, r.Matched(), "%v", r.Divergence)
	return &Episode{Path: "x/limits.jsonl", Events: events}, strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

// exportLines writes the episode's SFT and RL lines to a file and reads them back.
func exportLines(t *testing.T, e *Episode, o SFTOptions) []*jsonv.Object {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	f, err := CreateAtomic(path)
	require.NoError(t, err)
	require.Equal(t, "", SFTSkip(e, o))
	require.NoError(t, f.WriteLine(SFT(e, "S")))
	require.NoError(t, f.WriteLine(RL(e, "S")))
	require.NoError(t, f.Commit())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []*jsonv.Object
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4*limits.TraceLine)
	for sc.Scan() {
		v, err := jsonv.Decode(sc.Bytes())
		require.NoError(t, err)
		out = append(out, v.(*jsonv.Object))
	}
	require.NoError(t, sc.Err())
	require.Len(t, out, 2)
	return out
}

// toolMessages are the contents of the tool messages of an export line.
func toolMessages(line *jsonv.Object) []string {
	msgs, _ := line.Get("messages")
	var out []string
	for _, m := range msgs.([]jsonv.Value) {
		if field(m, "role") == "tool" {
			out = append(out, field(m, "content").(string))
		}
	}
	return out
}

// resultLines are the result lines of a trace by call id, and checks that no line is too long.
func resultLines(t *testing.T, lines []string) map[string]string {
	out := map[string]string{}
	for _, l := range lines {
		require.LessOrEqual(t, len(l), limits.TraceLine)
		if strings.Contains(l, `"event":"result"`) {
			id := l[strings.Index(l, `"id":"`)+6:]
			out[id[:strings.IndexByte(id, '"')]] = l
		}
	}
	return out
}

// The oracle's calls at the limits: the largest result, the deepest arguments, fs_search over
// 4,194,304 matching lines.
func TestLargestAcceptedValuesRoundTrip(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, limitsTask)
	data, res := run(t, task, src, episode.Oracle{})
	require.Nil(t, res.Err)
	require.True(t, res.Passed, "%+v", res.Items)

	e, lines := readBack(t, data, task, src)
	results := resultLines(t, lines)
	assert.Greater(t, len(results["call_1"]), 2*limits.ToolResult, "the largest result, doubled by escaping, in one line")
	assert.Less(t, len(results["call_3"]), 2*limits.ListBytes, "fs_search over 4,194,304 matching lines")

	for _, line := range exportLines(t, e, SFTOptions{IncludeReference: true}) {
		tm := toolMessages(line)
		require.Len(t, tm, 3)
		assert.Len(t, tm[0], (limits.ToolResult-2)/2, "the largest result (a string: its text)")
		assert.Equal(t, "ok", tm[1])
	}
}

// limitsModel is a model that asks for the largest accepted values and one past each: a result
// one byte too long, arguments one level too deep, 1000 levels deep (its JSON reader accepts
// them), and one byte too long. Calls past a limit are errors the model sees; their arguments
// are recorded as {}, so that every line reads back.
type limitsModel struct{}

func (limitsModel) Name() string { return "openai" }

func nestJSON(levels int) string { // an object levels deep: {"a":{"a":…1}}
	return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
}

func fillJSON(size int) string { // arguments of echo, size bytes of JSON
	frame := `{"data":{"s":""}}`
	return `{"data":{"s":"` + strings.Repeat("y", size-len(frame)) + `"}}`
}

var limitCalls = []jsonv.Value{
	call("c1", "big", `{"n":8388607}`),
	call("c2", "big", `{"n":8388607,"extra":"x"}`),
	call("c3", "echo", `{"data":`+nestJSON(limits.ToolArgsDepth-1)+`}`),
	call("c4", "echo", `{"data":`+nestJSON(limits.ToolArgsDepth)+`}`),
	call("c5", "echo", `{"data":`+nestJSON(jsonv.MaxDepth-1)+`}`),
	call("c6", "echo", fillJSON(limits.ToolArgs)),
	call("c7", "echo", fillJSON(limits.ToolArgs+1)),
	call("c8", "fs_search", `{"query":"x"}`),
}

func (limitsModel) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	tc.Assistant(episode.AssistantMessage{Content: "", ToolCalls: limitCalls, Usage: nil})
	for _, c := range limitCalls {
		fn, _ := c.(*jsonv.Object).Get("function")
		args, problem := conversation.ParseArguments(field(fn, "arguments").(string))
		if problem != "" {
			return "", fmt.Errorf("arguments: %s", problem)
		}
		if _, err := tc.Call(field(c, "id").(string), field(fn, "name").(string), args); err != nil {
			return "", err
		}
	}
	tc.Assistant(episode.AssistantMessage{Content: "Done.", ToolCalls: nil, Usage: nil})
	return "Done.", nil
}

func TestValuesPastTheLimitsAreErrors(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, limitsTask)
	data, res := run(t, task, src, limitsModel{})
	require.Nil(t, res.Err)
	require.True(t, res.Passed, "%+v", res.Items)
	require.Len(t, res.Calls, len(limitCalls))
	errs := make([]string, len(res.Calls))
	for i, c := range res.Calls {
		errs[i] = c.Error
	}
	const deep = "the arguments are nested deeper than 100 levels, the limit of a tool call's arguments"
	assert.Equal(t, []string{"",
		"the result of big is 16777217 bytes of JSON, over the 16 MiB limit of a tool result; ask for less",
		"", deep, deep, "",
		"the arguments are more than 16 MiB of JSON, the limit of a tool call's arguments", ""}, errs)

	e, lines := readBack(t, data, task, src)
	results := resultLines(t, lines)
	assert.Greater(t, len(results["c1"]), 2*limits.ToolResult)
	for _, id := range []string{"c2", "c4", "c5", "c7"} {
		assert.Less(t, len(results[id]), 1<<10, "%s: an error, not a result", id)
	}
	for _, l := range lines {
		if strings.Contains(l, `"event":"call"`) {
			refused := strings.Contains(l, `"id":"c4"`) || strings.Contains(l, `"id":"c5"`) || strings.Contains(l, `"id":"c7"`)
			assert.Equal(t, refused, strings.Contains(l, `"args":{}`), "arguments over a limit are not recorded: %.80s", l)
			if strings.Contains(l, `"id":"c6"`) {
				assert.Greater(t, len(l), limits.ToolArgs, "the largest arguments are")
			}
		}
	}

	for _, line := range exportLines(t, e, SFTOptions{}) {
		tm := toolMessages(line)
		require.Len(t, tm, len(limitCalls))
		assert.Len(t, tm[0], (limits.ToolResult-2)/2, "the largest result (a string: its text)")
		assert.Contains(t, tm[1], "over the 16 MiB limit of a tool result")
		assert.Equal(t, "ok", tm[2])
		assert.Contains(t, tm[3], "nested deeper than 100 levels")
		assert.Contains(t, tm[4], "nested deeper than 100 levels")
		assert.Equal(t, "ok", tm[5])
		assert.Contains(t, tm[6], "more than 16 MiB of JSON")
	}
}
