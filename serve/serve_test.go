package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/leaktest"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

// builtin is the built-in corpus, loaded once: its tasks by name.
var builtin = sync.OnceValues(func() (*dsl.Corpus, map[string]*dsl.Task) {
	c := corpus.Open()
	files, err := c.LoadAll(context.Background())
	if err != nil {
		panic(err)
	}
	tasks := map[string]*dsl.Task{}
	for _, f := range files {
		for _, t := range f.Tasks {
			tasks[t.Name] = t
		}
	}
	return c, tasks
})

// client talks to a test server.
type client struct {
	t     testing.TB
	url   string
	http  *http.Client
	token string
}

// newServer starts a server on the options (the built-in corpus unless they name sources) and
// a test HTTP server in front of it; both end with the test.
func newServer(t testing.TB, opts serve.Options) (*serve.Server, *client) {
	t.Helper()
	if opts.Sources == nil {
		c, _ := builtin()
		opts.Sources = []serve.Source{{Corpus: c}}
	}
	srv, err := serve.New(opts)
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return srv, &client{t: t, url: ts.URL, http: ts.Client(), token: opts.Token}
}

// do sends a request (body: a string as it is, anything else as JSON) and decodes the answer
// into out when it is not nil; it returns the status and the raw answer.
func (c *client) do(method, path string, body any, out any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(c.t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	require.NoError(c.t, err)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	assert.Equal(c.t, "application/json", resp.Header.Get("Content-Type"))
	if out != nil {
		require.NoError(c.t, json.Unmarshal(data, out), "%s", data)
	}
	return resp.StatusCode, data
}

// errorCode is the code of an error answer.
func errorCode(t testing.TB, data []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(data, &e), "%s", data)
	assert.NotEmpty(t, e.Error.Message)
	return e.Error.Code
}

type created struct {
	ID       string            `json:"id"`
	Task     string            `json:"task"`
	System   string            `json:"system"`
	User     string            `json:"user"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []session.Message `json:"messages"`
	Turn     int               `json:"turn"`
	Turns    int               `json:"turns"`
	Done     bool              `json:"done"`
	Trace    string            `json:"trace"`
}

type state struct {
	ID string `json:"id"`
	session.Status
	Trace      string `json:"trace"`
	TraceError string `json:"trace_error"`
}

func (c *client) create(task string, seed int64) created {
	c.t.Helper()
	var cr created
	status, data := c.do("POST", "/sessions", map[string]any{"task": task, "seed": seed}, &cr)
	require.Equal(c.t, http.StatusCreated, status, "%s", data)
	return cr
}

// act is one action of a client: a call, or a message (a question to a simulated user, or the
// turn's reply).
type act struct {
	reply      bool
	text, name string
	args       *jsonv.Object
}

// oracleActs runs the task's oracle in process and returns what a client must send to do what
// it did, turn by turn (its calls, faulted attempts included, and its questions in order, then
// its reply), and its result.
func oracleActs(t testing.TB, task *dsl.Task, seed int64) ([][]act, *episode.Result) {
	t.Helper()
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: seed})
	require.Nil(t, d)
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
	require.Nil(t, r.Err, "%s", task.Name)
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
				out[i] = append(out[i], act{name: c.Name, args: c.Args})
			}
		}
		for _, x := range asks {
			out[i] = append(out[i], act{reply: true, text: x.Said})
		}
		out[i] = append(out[i], act{reply: true, text: tr.Reply})
	}
	return out, r
}

// send sends one act of session id.
func (c *client) send(id string, a act) (int, session.Step, []byte) {
	c.t.Helper()
	var st session.Step
	var status int
	var data []byte
	if a.reply {
		status, data = c.do("POST", "/sessions/"+id+"/reply", map[string]any{"content": a.text}, nil)
	} else {
		status, data = c.do("POST", "/sessions/"+id+"/call", map[string]any{"name": a.name, "arguments": json.RawMessage(jsonv.MustEncode(a.args))}, nil)
	}
	if status == http.StatusOK {
		require.NoError(c.t, json.Unmarshal(data, &st), "%s", data)
	}
	return status, st, data
}

// replayFile replays a trace file against the built-in corpus.
func replayFile(t *testing.T, path string) *trace.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	c, tasks := builtin()
	r, err := trace.ReplayCorpus(context.Background(), events, func(file, name string) (*dsl.Task, *dsl.Corpus, error) {
		return tasks[name], c, nil
	})
	require.NoError(t, err)
	return r
}

// A single-turn task, a two-turn task and a task whose user is simulated, driven over HTTP with
// exactly the oracle's calls and replies: each turn's reward and the verdict are the oracle's,
// a question to the simulated user is answered within its turn, and the trace replays.
func TestOracleOverHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, c := newServer(t, serve.Options{TraceDir: dir})
	_, tasks := builtin()
	for _, name := range []string{"fuel-surcharge-answer", "carrier-quote-award", "consult-vat-reverse-charge"} {
		t.Run(name, func(t *testing.T) {
			c.t = t
			acts, want := oracleActs(t, tasks[name], 7)
			cr := c.create(name, 7)
			assert.Equal(t, want.Turns[0].User, cr.User)
			assert.Equal(t, len(want.Turns), cr.Turns)
			assert.Len(t, cr.Tools, len(tasks[name].Tools))
			require.Len(t, cr.Messages, 2)
			assert.Equal(t, session.Message{Role: "system", Content: cr.System}, cr.Messages[0])
			assert.Equal(t, filepath.Join(dir, cr.ID+".jsonl"), cr.Trace)
			questions := 0
			var last session.Step
			for i, turn := range acts {
				for k, a := range turn {
					status, st, data := c.send(cr.ID, a)
					require.Equal(t, http.StatusOK, status, "%s", data)
					end := k == len(turn)-1
					require.Equal(t, end, st.TurnOver, "turn %d act %d: %s", i+1, k+1, data)
					if a.reply && !end {
						// a question: the user's answer is the next user message of the turn
						questions++
						assert.Equal(t, i, st.Turn)
						assert.NotEmpty(t, st.User)
					}
					if end {
						assert.Equal(t, want.Turns[i].Score, st.Reward, "turn %d reward", i+1)
					}
					last = st
				}
			}
			if tasks[name].Turns[0].Sim != nil {
				assert.Positive(t, questions, "the oracle asks the simulated user")
			}
			require.True(t, last.Done)
			assert.Equal(t, *trace.EndOf(want), last.Result.End)
			assert.Equal(t, want.Score, last.Result.Score)
			assert.True(t, last.Result.Passed)

			var st state
			status, _ := c.do("GET", "/sessions/"+cr.ID, nil, &st)
			require.Equal(t, http.StatusOK, status)
			assert.True(t, st.Done)
			assert.Equal(t, len(want.Calls), st.Calls)
			assert.Equal(t, last.Result, st.Result)
			assert.Empty(t, st.TraceError)

			status, _, data := c.send(cr.ID, act{reply: true, text: "anything else?"})
			assert.Equal(t, http.StatusConflict, status)
			assert.Equal(t, serve.CodeEpisodeOver, errorCode(t, data))

			r := replayFile(t, cr.Trace)
			assert.True(t, r.Matched(), "%v", r.Divergence)
			assert.False(t, r.TaskChanged)
			assert.Empty(t, r.Notes)
		})
	}
}

// Every error answer: its status and code; none ends the session it names.
func TestErrors(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, serve.Options{MaxBody: 4096})
	cr := c.create("fuel-surcharge-answer", 0)
	path := "/sessions/" + cr.ID

	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"POST", "/sessions/nope/call", map[string]any{"name": "fs_list"}, 404, serve.CodeUnknownSession},
		{"POST", "/sessions/nope/reply", map[string]any{"content": "hi"}, 404, serve.CodeUnknownSession},
		{"GET", "/sessions/nope", nil, 404, serve.CodeUnknownSession},
		{"DELETE", "/sessions/nope", nil, 404, serve.CodeUnknownSession},
		{"POST", "/sessions", map[string]any{"task": "no-such-task"}, 404, serve.CodeUnknownTask},
		{"POST", "/sessions", map[string]any{}, 400, serve.CodeBadRequest},
		{"POST", "/sessions", `{"task": "fuel-surcharge-answer", "seed": "seven"}`, 400, serve.CodeBadRequest},
		{"POST", "/sessions", `{"task": "fuel-surcharge-answer", "sed": 1}`, 400, serve.CodeBadRequest},
		{"POST", "/sessions", `[1, 2]`, 400, serve.CodeBadRequest},
		{"POST", "/sessions", `{"task": `, 400, serve.CodeBadJSON},
		{"POST", "/sessions", `{"task": "x"} {}`, 400, serve.CodeBadJSON},
		{"POST", "/sessions", ``, 400, serve.CodeBadJSON},
		{"POST", "/sessions", `{task: 1}`, 400, serve.CodeBadJSON},
		{"POST", "/sessions", `{"task": "` + strings.Repeat("x", 5000) + `"}`, 413, serve.CodeBodyTooLarge},
		{"POST", path + "/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}, 404, serve.CodeUnknownTool},
		{"POST", path + "/call", map[string]any{"arguments": map[string]any{}}, 400, serve.CodeBadRequest},
		{"POST", path + "/call", map[string]any{"name": "fs_list", "id": strings.Repeat("i", 300)}, 400, serve.CodeBadRequest},
		{"POST", path + "/call", `{"name": "fs_list", "arguments": {"path": }}`, 400, serve.CodeBadJSON},
		{"POST", path + "/reply", map[string]any{"content": 3}, 400, serve.CodeBadRequest},
		{"GET", path + "/call", nil, 405, serve.CodeMethodNotAllowed},
		{"PUT", "/sessions", nil, 405, serve.CodeMethodNotAllowed},
		{"GET", "/nowhere", nil, 404, serve.CodeNotFound},
	} {
		status, data := c.do(tc.method, tc.path, tc.body, nil)
		assert.Equal(t, tc.status, status, "%s %s: %s", tc.method, tc.path, data)
		assert.Equal(t, tc.code, errorCode(t, data), "%s %s: %s", tc.method, tc.path, data)
	}

	// the session went on through all of it: nothing ran
	var st state
	status, _ := c.do("GET", path, nil, &st)
	require.Equal(t, http.StatusOK, status)
	assert.False(t, st.Done)
	assert.Zero(t, st.Calls)
	assert.Len(t, st.Messages, 2)

	// arguments of the wrong type are the tool's error, as a model would see it
	status, step, data := c.send(cr.ID, act{name: "fs_read", args: jsonv.NewObject("path", int64(7))})
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.True(t, step.IsError)
	assert.True(t, strings.HasPrefix(step.Content, `{"error":`), step.Content)
	// arguments that are not an object are refused as the model agent refuses them, given as a
	// value or as text
	for _, args := range []string{`["/"]`, `"[\"/\"]"`} {
		step = session.Step{}
		status, data = c.do("POST", path+"/call", `{"name": "fs_list", "arguments": `+args+`}`, &step)
		require.Equal(t, http.StatusOK, status, "%s", data)
		_, problem := conversation.ParseArguments(`["/"]`)
		assert.Equal(t, conversation.BadArgumentsContent("fs_list", problem, `["/"]`), step.Content)
		assert.True(t, step.IsError)
	}
	// arguments as text, as a model sends them
	step = session.Step{}
	status, data = c.do("POST", path+"/call", `{"id": "mine", "name": "fs_list", "arguments": "{\"path\": \"/\"}"}`, &step)
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.False(t, step.IsError, step.Content)
	assert.Equal(t, "mine", step.CallID)

	status, _ = c.do("GET", path, nil, &st)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, 2, st.Calls, "the refused arguments did not run")
	assert.False(t, st.Done)
}

// A server with a token refuses requests without it, except GET /health.
func TestToken(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, serve.Options{Token: "s3cret"})
	status, _ := c.do("GET", "/tasks", nil, nil)
	assert.Equal(t, http.StatusOK, status)

	for _, token := range []string{"", "wrong", "s3cret2"} {
		c.token = token
		for _, path := range []string{"/tasks", "/sessions/s1", "/nowhere"} {
			status, data := c.do("GET", path, nil, nil)
			assert.Equal(t, http.StatusUnauthorized, status, path)
			assert.Equal(t, serve.CodeUnauthorized, errorCode(t, data))
		}
		status, data := c.do("POST", "/sessions", map[string]any{"task": "fuel-surcharge-answer"}, nil)
		assert.Equal(t, http.StatusUnauthorized, status)
		assert.Equal(t, serve.CodeUnauthorized, errorCode(t, data))
		status, _ = c.do("GET", "/health", nil, nil)
		assert.Equal(t, http.StatusOK, status)
	}
}

// GET /tasks lists the corpus's tasks with their turns and capabilities.
func TestTasks(t *testing.T) {
	t.Parallel()
	srv, c := newServer(t, serve.Options{})
	var out struct {
		Tasks []struct {
			Name          string   `json:"name"`
			Capabilities  []string `json:"capabilities"`
			Turns         int      `json:"turns"`
			SimulatedUser bool     `json:"simulated_user"`
			Tools         []string `json:"tools"`
		} `json:"tasks"`
	}
	status, _ := c.do("GET", "/tasks", nil, &out)
	require.Equal(t, http.StatusOK, status)
	_, tasks := builtin()
	require.Len(t, out.Tasks, len(tasks))
	assert.Empty(t, srv.Skipped())
	for _, ti := range out.Tasks {
		task := tasks[ti.Name]
		require.NotNil(t, task, ti.Name)
		assert.Equal(t, len(task.Turns), ti.Turns)
		assert.Equal(t, task.Capabilities, ti.Capabilities)
		assert.Equal(t, task.Turns[0].Sim != nil, ti.SimulatedUser, ti.Name)
		assert.Len(t, ti.Tools, len(task.Tools))
	}
	var health map[string]any
	status, _ = c.do("GET", "/health", nil, &health)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "healthy", health["status"], "the status OpenEnv clients look for")

	// the Python client's README shows what the server says
	readme, err := os.ReadFile(filepath.Join("..", "clients", "python", "README.md"))
	require.NoError(t, err)
	m := regexp.MustCompile(`print\(client\.health\(\)\)\s*# (\{.*\})`).FindSubmatch(readme)
	require.NotNil(t, m, "clients/python/README.md shows health()")
	shown := regexp.MustCompile(`"(\w+)": ("?[\w.]+"?)`).FindAllSubmatch(m[1], -1)
	require.NotEmpty(t, shown)
	for _, kv := range shown {
		require.Contains(t, health, string(kv[1]), "README shows %s", m[1])
		if v := string(kv[2]); strings.HasPrefix(v, `"`) {
			assert.Equal(t, strings.Trim(v, `"`), health[string(kv[1])], "README shows %s", m[1])
		}
	}
}

// waitTask has a tool that prints: the tests hold a call there.
const waitTask = `
def _wait(ws):
    print("waiting")
    return {"ok": True}

WAIT = tool(name = "wait", description = "Waits.", params = {}, impl = _wait)

task(name = "waits", prompt = "Wait.", tools = ["fs", WAIT])
`

func waitSource() serve.Source {
	return serve.Source{Corpus: dsl.NewCorpus(fstest.MapFS{"wait.star": {Data: []byte(waitTask)}}, ".", "c")}
}

// An action while another of the same session runs is refused; other sessions go on.
func TestBusy(t *testing.T) {
	t.Parallel()
	entered, release := make(chan string), make(chan struct{})
	_, c := newServer(t, serve.Options{Sources: []serve.Source{waitSource()}, Print: func(id string, _ syntax.Position, _ string) {
		entered <- id
		<-release
	}})
	a, b := c.create("waits", 0), c.create("waits", 0)
	got := make(chan int)
	go func() {
		status, _, _ := c.send(a.ID, act{name: "wait", args: &jsonv.Object{}})
		got <- status
	}()
	assert.Equal(t, a.ID, <-entered)
	for _, x := range []act{{reply: true, text: "hi"}, {name: "fs_list", args: &jsonv.Object{}}} {
		status, _, data := c.send(a.ID, x)
		assert.Equal(t, http.StatusConflict, status)
		assert.Equal(t, serve.CodeSessionBusy, errorCode(t, data))
	}
	status, st, data := c.send(b.ID, act{name: "fs_list", args: jsonv.NewObject("path", "/")})
	assert.Equal(t, http.StatusOK, status, "%s", data)
	assert.False(t, st.IsError)
	release <- struct{}{}
	assert.Equal(t, http.StatusOK, <-got)
	status, st, _ = c.send(a.ID, act{reply: true, text: "done"})
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, st.Done)
}

// MaxSessions bounds the sessions kept; deleting one makes room.
func TestTooManySessions(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, serve.Options{MaxSessions: 2})
	a := c.create("fuel-surcharge-answer", 0)
	c.create("fuel-surcharge-answer", 1)
	status, data := c.do("POST", "/sessions", map[string]any{"task": "fuel-surcharge-answer"}, nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, serve.CodeTooManySessions, errorCode(t, data))

	var st state
	status, _ = c.do("DELETE", "/sessions/"+a.ID, nil, &st)
	require.Equal(t, http.StatusOK, status)
	assert.True(t, st.Done)
	assert.Equal(t, episode.Interrupted, st.Result.Error.Code)
	status, data = c.do("GET", "/sessions/"+a.ID, nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, serve.CodeUnknownSession, errorCode(t, data))
	cr := c.create("fuel-surcharge-answer", 2)
	assert.Equal(t, "s3", cr.ID)
}

// fakeClock is a clock the test moves.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// A session without an action for the idle timeout is closed at the reaper's next tick, its
// trace ended; one that acted meanwhile stays.
func TestIdleSessionsAreReaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	tick := make(chan time.Time)
	_, c := newServer(t, serve.Options{TraceDir: dir, IdleTimeout: time.Minute, Now: clock.now, Tick: tick})
	a, b := c.create("fuel-surcharge-answer", 0), c.create("fuel-surcharge-answer", 0)
	// sweep: the second send returns once the first sweep is done
	sweep := func() {
		tick <- time.Time{}
		tick <- time.Time{}
	}

	clock.advance(59 * time.Second)
	sweep()
	status, _, _ := c.send(b.ID, act{name: "fs_list", args: jsonv.NewObject("path", "/")})
	require.Equal(t, http.StatusOK, status)
	clock.advance(time.Second)
	sweep()

	status, data := c.do("GET", "/sessions/"+a.ID, nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, serve.CodeUnknownSession, errorCode(t, data))
	status, _ = c.do("GET", "/sessions/"+b.ID, nil, nil)
	assert.Equal(t, http.StatusOK, status)

	end := lastEvent(t, filepath.Join(dir, a.ID+".jsonl.partial"))
	assert.Equal(t, episode.Interrupted, end.Error.Code)

	clock.advance(time.Minute)
	sweep()
	status, _ = c.do("GET", "/sessions/"+b.ID, nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
}

// lastEvent reads a trace file and returns its end event.
func lastEvent(t *testing.T, path string) *trace.End {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err, "the trace is complete")
	end, ok := events[len(events)-1].Body.(*trace.End)
	require.True(t, ok)
	return end
}

// Close ends every session: each trace gets its end, and the server refuses what comes after.
func TestCloseEndsEveryTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, c := newServer(t, serve.Options{TraceDir: dir})
	var ids []string
	for i := range 3 {
		cr := c.create("carrier-quote-award", int64(i))
		ids = append(ids, cr.ID)
	}
	status, _, _ := c.send(ids[1], act{name: "mail_list", args: &jsonv.Object{}})
	require.Equal(t, http.StatusOK, status)
	srv.Close()
	for _, id := range ids {
		end := lastEvent(t, filepath.Join(dir, id+".jsonl.partial"))
		assert.Equal(t, episode.Interrupted, end.Error.Code, id)
		r := replayFile(t, filepath.Join(dir, id+".jsonl.partial"))
		assert.True(t, r.Matched(), "%s: %v", id, r.Divergence)
	}
	status, data := c.do("POST", "/sessions", map[string]any{"task": "carrier-quote-award"}, nil)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, serve.CodeShuttingDown, errorCode(t, data))
	status, data = c.do("GET", "/sessions/"+ids[0], nil, nil)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, serve.CodeShuttingDown, errorCode(t, data))
	status, _ = c.do("GET", "/health", nil, nil)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	srv.Close() // again: nothing left to do
}

// Session ids go past the traces already in the folder: a server started again never writes
// over one.
func TestIDsSkipExistingTraces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s1.jsonl"), []byte("old"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s2.jsonl.partial"), []byte("old"), 0o644))
	_, c := newServer(t, serve.Options{TraceDir: dir})
	assert.Equal(t, "s3", c.create("fuel-surcharge-answer", 0).ID)
	data, err := os.ReadFile(filepath.Join(dir, "s1.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "old", string(data))
}

// Every task of the built-in corpus at once, a session each, driven with its oracle's actions
// in parallel: each verdict is the one the oracle got in process.
func TestManySessionsInParallel(t *testing.T) {
	// not in parallel: a corpus-wide or load test, it keeps both cores busy on its own
	_, tasks := builtin()
	require.GreaterOrEqual(t, len(tasks), 50)
	_, c := newServer(t, serve.Options{MaxSessions: len(tasks)})
	type job struct {
		name string
		acts [][]act
		want *trace.End
	}
	var jobs []job
	for name, task := range tasks {
		acts, r := oracleActs(t, task, 3)
		jobs = append(jobs, job{name, acts, trace.EndOf(r)})
	}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr := c.create(j.name, 3)
			var last session.Step
			for _, turn := range j.acts {
				for _, a := range turn {
					status, st, data := c.send(cr.ID, a)
					if !assert.Equal(t, http.StatusOK, status, "%s: %s", j.name, data) {
						return
					}
					last = st
				}
			}
			if assert.True(t, last.Done, j.name) {
				assert.Equal(t, *j.want, last.Result.End, j.name)
			}
		}()
	}
	wg.Wait()
	var health struct {
		Sessions int `json:"sessions"`
	}
	c.do("GET", "/health", nil, &health)
	assert.Equal(t, len(tasks), health.Sessions, "finished sessions are kept until deleted")
}

// A task whose file does not load is left out, and said why.
func TestSkippedFiles(t *testing.T) {
	t.Parallel()
	src := serve.Source{Corpus: dsl.NewCorpus(fstest.MapFS{
		"ok.star":  {Data: []byte(waitTask)},
		"bad.star": {Data: []byte("task(name = 1)\n")},
		"dup.star": {Data: []byte(strings.ReplaceAll(waitTask, "WAIT", "W2"))},
	}, ".", "c")}
	srv, c := newServer(t, serve.Options{Sources: []serve.Source{src}})
	assert.Equal(t, []string{"waits"}, srv.Tasks())
	require.Len(t, srv.Skipped(), 2)
	assert.Contains(t, fmt.Sprint(srv.Skipped()), "bad.star")
	assert.Contains(t, fmt.Sprint(srv.Skipped()), "served from")
	c.create("waits", 0)
}

// BenchmarkSessionStep measures one call through the API, over HTTP on the loopback.
func BenchmarkSessionStep(b *testing.B) {
	_, c := newServer(b, serve.Options{Sources: []serve.Source{waitSource()}, MaxSessions: 4})
	call := act{name: "fs_list", args: jsonv.NewObject("path", "/")}
	var id string
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if id == "" || n == 49 { // max_calls_per_turn is 50
			b.StopTimer()
			if id != "" {
				c.do("DELETE", "/sessions/"+id, nil, nil)
			}
			id, n = c.create("waits", 0).ID, 0
			b.StartTimer()
		}
		status, _, data := c.send(id, call)
		if status != http.StatusOK {
			b.Fatalf("%d %s", status, data)
		}
		n++
	}
}

// Nothing is left running once the server and its HTTP front are closed: no session, no
// reaper.
func TestNoGoroutineLeft(t *testing.T) {
	c0, _ := builtin()
	srv, err := serve.New(serve.Options{Sources: []serve.Source{{Corpus: c0, Files: []string{"tasks/mail/fuel_surcharge_answer.star"}}}, IdleTimeout: time.Hour})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	c := &client{t: t, url: ts.URL, http: ts.Client()}
	for i := range 5 {
		cr := c.create("fuel-surcharge-answer", int64(i))
		status, _, _ := c.send(cr.ID, act{name: "mail_list", args: &jsonv.Object{}})
		require.Equal(t, http.StatusOK, status)
	}
	srv.Close()
	ts.Close()
	c.http.CloseIdleConnections()
	assert.Empty(t, leaktest.Leftover("serve_test.TestNoGoroutineLeft(", ourPackages...))
}

// ourPackages are the packages whose goroutines a closed server must not leave behind.
var ourPackages = []string{"coworkenv/serve.", "coworkenv/runtime/session.", "modelcontextprotocol/go-sdk", "coder/websocket"}
