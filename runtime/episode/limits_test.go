package episode_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	lim "github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const limitsSrc = `
def _big(ws, n):
    ws.fs.write("/touched.txt", "x")
    return "x" * n

def _loud(ws, n):
    fail("é" * n)

task(
    name = "limits",
    prompt = "p",
    tools = [
        tool(name = "big", description = "d", params = {"n": param("integer")}, impl = _big),
        tool(name = "loud", description = "d", params = {"n": param("integer")}, impl = _loud),
    ],
    verify = lambda ws, ep: check(True, "ok"),
    solution = lambda agent: agent.reply("ok"),
)
`

// A result over lim.ToolResult is the call's error, which names the limit, and the call
// changes nothing; the largest is a result. A tool error is cut at lim.ToolError bytes;
// arguments over their limits never reach the tool.
func TestCallLimits(t *testing.T) {
	task := load(t, limitsSrc)["limits"]
	var calls []*episode.Call
	res := run(t, task, agentFn(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		for _, a := range []struct {
			name string
			args *jsonv.Object
		}{
			{"big", obj("n", int64(lim.ToolResult-2))},
			{"big", obj("n", int64(lim.ToolResult-1))},
			{"loud", obj("n", int64(lim.ToolError))},
			{"big", obj("n", int64(1), "pad", strings.Repeat("p", lim.ToolArgs))},
		} {
			c, err := tc.Call("", a.name, a.args)
			require.NoError(t, err)
			calls = append(calls, c)
		}
		return "done", nil
	}))
	require.Nil(t, res.Err)
	require.Len(t, calls, 4)

	assert.False(t, calls[0].IsError)
	assert.Len(t, calls[0].Content, lim.ToolResult)

	assert.True(t, calls[1].IsError)
	assert.Equal(t, "the result of big is 16777217 bytes of JSON, over the 16 MiB limit of a tool result; ask for less", calls[1].Error)
	assert.False(t, calls[1].Changed, "a result over the limit changes nothing")

	assert.LessOrEqual(t, len(calls[2].Error), lim.ToolError)
	assert.Regexp(t, `^éé.*é… \(\d+ more bytes not shown\)$`, calls[2].Error)

	assert.Equal(t, "the arguments are more than 16 MiB of JSON, the limit of a tool call's arguments", calls[3].Error)
	assert.Equal(t, 0, calls[3].Args.Len(), "arguments over a limit are not kept")
	assert.False(t, calls[3].Changed)
}
