package episode_test

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/starargs/argstest"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

// membersOf lists the names Reference documents for a value ("ep", "agent"), sorted, as a
// Starlark list literal.
func membersOf(prefix string) string {
	var names []string
	for _, f := range episode.Reference {
		if name, ok := strings.CutPrefix(f.Name, prefix+"."); ok {
			names = append(names, starlark.String(name).String())
		}
	}
	sort.Strings(names)
	return "[" + strings.Join(names, ", ") + "]"
}

// What scripts can use of ep and agent is what the reference documents, and the methods bind
// their arguments as their signatures say: the name positionally, every keyword to the tool.
func TestEpAndAgentMembersAreTheReference(t *testing.T) {
	sigs := map[string]string{}
	for _, f := range episode.Reference {
		sigs[f.Name] = f.Signature()
	}
	assert.Equal(t, map[string]string{
		"ep.turn": "ep.turn", "ep.replies": "ep.replies", "ep.reply": "ep.reply", "ep.calls": "ep.calls", "ep.asks": "ep.asks",
		"ep.called":  "ep.called(name, /, **args)",
		"agent.call": "agent.call(name, /, **args)", "agent.reply": "agent.reply(text)", "agent.ask": "agent.ask(message)",
	}, sigs)

	src := fmt.Sprintf(`
def _greet(ws, name):
    return {"hello": name}

def _solve(agent):
    if dir(agent) != %s:
        fail("dir(agent) is %%s" %% dir(agent))
    r = agent.call("greet", name = "ann")
    agent.reply(r["hello"])

def _verify(ws, ep):
    check(dir(ep) == %s, "dir(ep) is %%s" %% dir(ep))
    check(ep.called("greet", name = "ann") == 1, "name is a tool argument")
    check(ep.reply == "ann", "reply")

task(name = "members", prompt = "p", solution = _solve, verify = _verify,
     tools = [tool(name = "greet", description = "Greets.", params = {"name": param("string")}, impl = _greet)])
`, membersOf("agent"), membersOf("ep"))
	r := run(t, load(t, src)["members"], episode.Oracle{})
	require.Nil(t, r.Err)
	assert.Equal(t, 1.0, r.Score, "%v", r.FailedItems())
}

// agent.* and ep.* report argument errors in the words of every builtin.
func TestMemberArgumentErrors(t *testing.T) {
	cases := map[string]string{
		`agent.call()`:                     "agent.call: missing required argument name",
		`agent.call("fs_list", "/")`:       "agent.call: got 2 positional arguments, want at most 1",
		`agent.call(1)`:                    "agent.call: name: got int, want string",
		`agent.reply(txt = "x")`:           `agent.reply: unexpected keyword argument txt (want text)`,
		`agent.reply(None)`:                "agent.reply: text: got NoneType, want string",
		`agent.call("fs_list", x = set())`: `agent.call: fs_list: argument "x": `,
	}
	for call, want := range cases {
		t.Run(call, func(t *testing.T) {
			src := "def _solve(agent):\n    " + call + "\n\ntask(name = \"e\", prompt = \"p\", tools = [\"fs\"], solution = _solve)\n"
			r := run(t, load(t, src)["e"], episode.Oracle{})
			require.NotNil(t, r.Err)
			assert.Equal(t, "solution-error", r.Err.Code)
			assert.Contains(t, r.Err.Message, want)
		})
	}
	src := "def _verify(ws, ep):\n    ep.called()\n\ntask(name = \"e\", prompt = \"p\", tools = [], verify = _verify, solution = lambda agent: None)\n"
	r := run(t, load(t, src)["e"], episode.Oracle{})
	require.NotNil(t, r.Err)
	assert.Contains(t, r.Err.Message, "ep.called: missing required argument name")
}

// Every method of ep and agent binds its arguments exactly as its signature in Reference says.
func TestEpAndAgentSignaturesAreTheirBinding(t *testing.T) {
	for _, f := range episode.Reference {
		if f.Params == nil {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			argstest.Check(t, f.Signature(), func(args starlark.Tuple, kwargs []starlark.Tuple) error {
				var parts []string
				for _, a := range args {
					parts = append(parts, a.String())
				}
				for _, kv := range kwargs {
					parts = append(parts, string(kv[0].(starlark.String))+" = "+kv[1].String())
				}
				call := f.Name + "(" + strings.Join(parts, ", ") + ")"
				src := "def _solve(agent):\n    " + call + "\n\ntask(name = \"e\", prompt = \"p\", tools = [\"fs\"], solution = _solve)\n"
				if strings.HasPrefix(f.Name, "ep.") {
					src = "def _verify(ws, ep):\n    " + call + "\n\ntask(name = \"e\", prompt = \"p\", tools = [\"fs\"], verify = _verify, solution = lambda agent: None)\n"
				}
				if r := run(t, load(t, src)["e"], episode.Oracle{}); r.Err != nil {
					return errors.New(r.Err.Message)
				}
				return nil
			})
		})
	}
}
