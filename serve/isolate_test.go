package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

// The test binary is its own worker: a pool re-executes it with the worker command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == isolate.WorkerCommand {
		os.Exit(isolate.WorkerMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func newPool(t testing.TB, opts isolate.Options) *isolate.Pool {
	t.Helper()
	p, err := isolate.NewPool(opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// A session whose task runs in a worker is the session in this process: the same first
// message, tools and system prompt, the same steps for the oracle's actions (a two-turn task, and
// one whose user is simulated), the same state and result, and byte for byte the same trace.
func TestIsolatedSessionIsTheSessionHere(t *testing.T) {
	t.Parallel()
	c, tasks := builtin()
	names := []string{"carrier-quote-award", "consult-vat-reverse-charge"}
	var files []string
	for _, name := range names {
		files = append(files, tasks[name].Rel)
	}
	pool := newPool(t, isolate.Options{Workers: 2})
	hereDir, thereDir := t.TempDir(), t.TempDir()
	var printed []string
	_, here := newServer(t, serve.Options{TraceDir: hereDir, Sources: []serve.Source{{Corpus: c, Files: files}}})
	_, there := newServer(t, serve.Options{TraceDir: thereDir, Sources: []serve.Source{{Corpus: c, Files: files, Pool: pool}},
		Print: func(id string, pos syntax.Position, msg string) { printed = append(printed, msg) }})

	var hereTasks, thereTasks map[string]any
	here.do("GET", "/tasks", nil, &hereTasks)
	there.do("GET", "/tasks", nil, &thereTasks)
	assert.Equal(t, hereTasks, thereTasks)

	for _, name := range names {
		acts, _ := oracleActs(t, tasks[name], 3)
		a, b := here.create(name, 3), there.create(name, 3)
		require.Equal(t, filepath.Join(thereDir, b.ID+".jsonl"), b.Trace)
		a.Trace, b.Trace = "", ""
		require.True(t, assert.ObjectsAreEqual(a, b), "the created sessions differ")
		for _, turn := range acts {
			for _, x := range turn {
				sa, stepA, dataA := here.send(a.ID, x)
				sb, stepB, dataB := there.send(b.ID, x)
				require.Equal(t, http.StatusOK, sa, "%s", dataA)
				require.Equal(t, sa, sb, "%s", dataB)
				require.Equal(t, stepA, stepB)
				require.Equal(t, string(dataA), string(dataB))
			}
		}
		var stA, stB state
		here.do("GET", "/sessions/"+a.ID, nil, &stA)
		there.do("GET", "/sessions/"+b.ID, nil, &stB)
		require.True(t, stB.Done)
		require.True(t, stB.Result.Passed)
		stA.Trace, stB.Trace = "", ""
		assert.Equal(t, stA, stB)

		// refusals are the same too
		for _, x := range []act{{reply: true, text: "more?"}, {name: "nope", args: &jsonv.Object{}}} {
			sa, _, dataA := here.send(a.ID, x)
			sb, _, dataB := there.send(b.ID, x)
			assert.Equal(t, sa, sb)
			assert.Equal(t, errorCode(t, dataA), errorCode(t, dataB))
		}

		traceA, err := os.ReadFile(filepath.Join(hereDir, a.ID+".jsonl"))
		require.NoError(t, err)
		traceB, err := os.ReadFile(filepath.Join(thereDir, b.ID+".jsonl"))
		require.NoError(t, err)
		assert.Equal(t, string(traceA), string(traceB))
	}
}

// hostileTask has a tool that runs for ages in one step (== between deeply nested lists, which no
// in-process guard reaches into), one that builds a huge string, and one that does its job.
const hostileTask = `
def _spin(ws):
    x = [1]
    for i in range(8):
        x = [x] * 200
    return {"same": x == x}

def _hog(ws):
    s = "x"
    for i in range(40):
        s = s + s
    return {"n": len(s)}

def _note(ws, text):
    ws.fs.write("/note.txt", text)
    return {"ok": True}

def _verify(ws, ep):
    check(ws.fs.exists("/note.txt"), "the note is written")

task(name = "hostile", prompt = "Write a note.", tools = [
    tool(name = "spin", description = "Spins.", params = {}, impl = _spin),
    tool(name = "hog", description = "Hogs.", params = {}, impl = _hog),
    tool(name = "note", description = "Writes a note.", params = {"text": param("string", description = "The note.")}, impl = _note),
], verify = _verify)
`

func hostileSource(pool *isolate.Pool) serve.Source {
	return serve.Source{Corpus: dsl.NewCorpus(fstest.MapFS{"hostile.star": {Data: []byte(hostileTask)}}, ".", "gen"), Pool: pool}
}

// newHostileServer serves hostileTask, its sessions in workers of a pool of opts.
func newHostileServer(t *testing.T, opts isolate.Options, traces string) *client {
	t.Helper()
	srv, c := newServer(t, serve.Options{TraceDir: traces, Sources: []serve.Source{hostileSource(newPool(t, opts))}})
	require.Empty(t, srv.Skipped())
	return c
}

// A tool call that runs past the worker's time limit, or past its memory, ends its own session
// only: the action gets the end of the episode with the error, the trace ends with it, and
// another session of the same server goes on to its verdict.
func TestIsolatedRunawayEndsOnlyItsSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tool, code string
		opts       isolate.Options
	}{
		{"spin", "timeout", isolate.Options{Workers: 2, TimeLimit: 1500 * time.Millisecond}},
		// the clock is only a backstop here, generous for a loaded machine
		{"hog", "memory-limit", isolate.Options{Workers: 2, MemoryLimit: 256 << 20, TimeLimit: 20 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			if tc.code == "memory-limit" && raceBuild {
				t.Skip("memory limits under the race detector")
			}
			dir := t.TempDir()
			c := newHostileServer(t, tc.opts, dir)
			a, b := c.create("hostile", 0), c.create("hostile", 0)

			status, st, data := c.send(a.ID, act{name: tc.tool, args: &jsonv.Object{}})
			require.Equal(t, http.StatusOK, status, "%s", data)
			require.True(t, st.Done, "%s", data)
			require.NotNil(t, st.Result.Error, "%s", data)
			assert.Equal(t, tc.code, st.Result.Error.Code)
			assert.Contains(t, st.Result.Error.Message, "the session")
			assert.False(t, st.Result.Passed)
			assert.Equal(t, tc.code, lastEvent(t, filepath.Join(dir, a.ID+".jsonl")).Error.Code)
			status, _, data = c.send(a.ID, act{reply: true, text: "hello?"})
			assert.Equal(t, http.StatusConflict, status)
			assert.Equal(t, serve.CodeEpisodeOver, errorCode(t, data))

			status, st, data = c.send(b.ID, act{name: "note", args: jsonv.NewObject("text", "hi")})
			require.Equal(t, http.StatusOK, status, "%s", data)
			assert.False(t, st.IsError, "%s", data)
			status, st, data = c.send(b.ID, act{reply: true, text: "Done."})
			require.Equal(t, http.StatusOK, status, "%s", data)
			require.True(t, st.Done)
			assert.True(t, st.Result.Passed, "%s", data)

			// and the server makes new sessions on a fresh worker
			cr := c.create("hostile", 0)
			assert.False(t, cr.Done)
		})
	}
}

// MCP over a session in a worker: a tool call's round trip, and a runaway call that ends the
// session with its error.
func TestIsolatedMCP(t *testing.T) {
	t.Parallel()
	opts := isolate.Options{Workers: 2, TimeLimit: 1500 * time.Millisecond}
	c := newHostileServer(t, opts, "")
	pool := newPool(t, opts)
	cr := c.create("hostile", 0)
	cs := c.mcpConnect(cr.ID, "")
	res, st, err := mcpAct(t, cs, act{name: "note", args: jsonv.NewObject("text", "hi")})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, `{"ok":true}`, texts(t, res)[0])
	assert.False(t, st.Done)
	res, st, err = mcpAct(t, cs, act{reply: true, text: "Done."})
	require.NoError(t, err)
	require.True(t, st.Done)
	assert.True(t, st.Result.Passed)
	var result session.Result
	readJSON(t, cs, "coworkenv://session/"+cr.ID+"/result", &result)
	assert.Equal(t, *st.Result, result)

	// the in-memory server of a session in a worker, as `coworkenv mcp` serves it
	spec := isolate.SessionSpec{Display: "gen", Files: map[string][]byte{"hostile.star": []byte(hostileTask)}, File: "hostile.star"}
	sess, err := pool.Session(context.Background(), spec, isolate.SessionHost{})
	require.NoError(t, err)
	defer sess.Close()
	ct, stt := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go serve.MCPServer("s1", sess).Run(ctx, stt)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mc, err := client.Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer mc.Close()
	res, st, err = mcpAct(t, mc, act{name: "spin", args: &jsonv.Object{}})
	require.NoError(t, err)
	require.True(t, st.Done)
	assert.Equal(t, "timeout", st.Result.Error.Code)
	_, _, err = mcpAct(t, mc, act{name: "note", args: jsonv.NewObject("text", "hi")})
	assert.Equal(t, serve.CodeEpisodeOver, refusal(t, err))
}

// POST /episodes of a task that runs in a worker is the episode here: the same answer (reward,
// parts, checks, the conversation the model was sent, the tools) and the same trace, the model's
// requests sent from the server's process.
func TestIsolatedEpisodeIsTheEpisodeHere(t *testing.T) {
	t.Parallel()
	c, tasks := builtin()
	name := "carrier-quote-award"
	pool := newPool(t, isolate.Options{Workers: 1})
	_, here := newServer(t, serve.Options{Sources: []serve.Source{{Corpus: c, Files: []string{tasks[name].Rel}}}})
	_, there := newServer(t, serve.Options{Sources: []serve.Source{{Corpus: c, Files: []string{tasks[name].Rel}, Pool: pool}}})
	acts, _ := oracleActs(t, tasks[name], 5)
	var answers [2][]byte
	model := oracleModel(t, acts)
	for i, cl := range []*client{here, there} {
		status, ea, data := cl.runEpisode(map[string]any{"task": name, "seed": 5, "model": "policy", "base_url": model.BaseURL()})
		require.Equal(t, http.StatusOK, status, "%s", data)
		require.True(t, ea.Passed, "%s", data)
		require.NotEmpty(t, ea.Messages)
		answers[i] = data
	}
	var a, b map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(answers[0], &a))
	require.NoError(t, json.Unmarshal(answers[1], &b))
	for k := range a {
		assert.Equal(t, string(a[k]), string(b[k]), "%s", k)
	}
	assert.Len(t, b, len(a))
}
