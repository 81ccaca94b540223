package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/leaktest"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

// bearer adds the token to every request of an MCP client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.base.RoundTrip(r)
}

// mcpConnect connects an MCP client to the session's MCP endpoint with the protocol version
// given ("" is the SDK's latest); the connection ends with the test.
func (c *client) mcpConnect(id, version string) *mcp.ClientSession {
	c.t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: c.url + "/sessions/" + id + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{c.token, c.http.Transport}}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(c.t, err)
	c.t.Cleanup(func() { cs.Close() })
	return cs
}

// mcpAct sends one act over MCP: a call of the task's tool, or the reply tool.
func mcpAct(t testing.TB, cs *mcp.ClientSession, a act) (*mcp.CallToolResult, session.Step, error) {
	t.Helper()
	params := &mcp.CallToolParams{Name: a.name, Arguments: json.RawMessage(jsonv.MustEncode(a.args))}
	if a.reply {
		params = &mcp.CallToolParams{Name: serve.ReplyTool, Arguments: map[string]any{"content": a.text}}
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		return nil, session.Step{}, err
	}
	return res, stepOf(t, res), nil
}

// stepOf is the step in a tool result's _meta.
func stepOf(t testing.TB, res *mcp.CallToolResult) session.Step {
	t.Helper()
	data, err := json.Marshal(res.Meta[serve.StepMeta])
	require.NoError(t, err)
	var st session.Step
	require.NoError(t, json.Unmarshal(data, &st), "%s", data)
	return st
}

// structuredIsText checks the MCP specification's advice: a result's structured content is the
// result its first text holds, serialised as JSON, and only a JSON object is (a list or a text is
// none: before 2026-07-28 structuredContent is an object). It reports whether there was one.
func structuredIsText(t testing.TB, res *mcp.CallToolResult) bool {
	t.Helper()
	text := texts(t, res)[0]
	v, err := jsonv.Decode([]byte(text))
	if _, isObject := v.(*jsonv.Object); err != nil || !isObject {
		assert.Nil(t, res.StructuredContent, "a result that is not a JSON object: %s", text)
		return false
	}
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	sc, err := jsonv.Decode(data)
	require.NoError(t, err)
	assert.True(t, jsonv.Equal(v, sc), "structuredContent %s is not the text %s", data, text)
	return true
}

// texts are a tool result's text contents.
func texts(t testing.TB, res *mcp.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		require.True(t, ok, "%T", c)
		out = append(out, tc.Text)
	}
	return out
}

// readJSON reads a resource of the session and decodes its JSON into v.
func readJSON(t testing.TB, cs *mcp.ClientSession, uri string, v any) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err)
	require.Len(t, res.Contents, 1)
	assert.Equal(t, "application/json", res.Contents[0].MIMEType)
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), v), "%s", res.Contents[0].Text)
}

// refusal is the API's error code in a refused MCP request.
func refusal(t testing.TB, err error) string {
	t.Helper()
	var werr *jsonrpc.Error
	require.True(t, errors.As(err, &werr), "%v", err)
	assert.Equal(t, int64(serve.MCPErrorCode), werr.Code)
	var data struct {
		Code string `json:"code"`
	}
	require.NoError(t, json.Unmarshal(werr.Data, &data))
	return data.Code
}

// A single-turn task, a two-turn task and a task whose user is simulated, driven over MCP (both
// the handshake of the SDK's latest protocol and the older initialize) with exactly the oracle's
// calls and replies: the tools are the task's, each turn's reward and the verdict are the
// oracle's, the result is readable at the end, and the trace replays.
func TestMCPOracle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, c := newServer(t, serve.Options{TraceDir: dir, Token: "t0k"})
	_, tasks := builtin()
	for _, version := range []string{"", "2025-11-25"} {
		for _, name := range []string{"fuel-surcharge-answer", "carrier-quote-award", "consult-vat-reverse-charge"} {
			t.Run(name+"/"+version, func(t *testing.T) {
				c.t = t
				task := tasks[name]
				acts, want := oracleActs(t, task, 5)
				cr := c.create(name, 5)
				cs := c.mcpConnect(cr.ID, version)
				assert.Equal(t, cr.System, cs.InitializeResult().Instructions)
				assert.Equal(t, trace.Version, cs.InitializeResult().ServerInfo.Version, "one version everywhere")

				// tools/list: the task's tools as their schemas say, and the reply tool (the SDK
				// lists them by name)
				list, err := cs.ListTools(context.Background(), nil)
				require.NoError(t, err)
				listed := map[string]*mcp.Tool{}
				for _, tool := range list.Tools {
					listed[tool.Name] = tool
				}
				require.Len(t, listed, len(task.Tools)+1)
				require.Contains(t, listed, serve.ReplyTool)
				for _, spec := range task.Tools {
					got := listed[spec.Name]
					require.NotNil(t, got, spec.Name)
					assert.Equal(t, spec.Description, got.Description)
					fn, _ := spec.Schema().Get("function")
					params, _ := fn.(*jsonv.Object).Get("parameters")
					data, err := json.Marshal(got.InputSchema)
					require.NoError(t, err)
					gotSchema, err := jsonv.Decode(data)
					require.NoError(t, err)
					assert.True(t, jsonv.Equal(params, gotSchema), "%s: %s", spec.Name, data)
				}

				// the conversation so far is the state resource's
				var st struct {
					ID string `json:"id"`
					session.Status
				}
				readJSON(t, cs, "coworkenv://session/"+cr.ID+"/state", &st)
				assert.Equal(t, cr.ID, st.ID)
				assert.Equal(t, cr.Messages, st.Messages)
				var result *session.Result
				readJSON(t, cs, "coworkenv://session/"+cr.ID+"/result", &result)
				assert.Nil(t, result, "no result before the end")

				var last session.Step
				var lastRes *mcp.CallToolResult
				objects := 0
				for i, turn := range acts {
					for k, a := range turn {
						res, step, err := mcpAct(t, cs, a)
						require.NoError(t, err, "turn %d act %d", i+1, k+1)
						if structuredIsText(t, res) {
							objects++
						}
						end := k == len(turn)-1
						require.Equal(t, end, step.TurnOver, "turn %d act %d", i+1, k+1)
						if a.reply {
							require.Len(t, res.Content, 1)
							if !step.Done {
								// the user's next message, within the turn or opening the next one
								assert.Equal(t, step.User, texts(t, res)[0])
								assert.NotEmpty(t, step.User)
							}
						} else {
							assert.Equal(t, []string{step.Content}, texts(t, res))
							assert.Equal(t, step.IsError, res.IsError)
						}
						if end {
							assert.Equal(t, want.Turns[i].Score, step.Reward, "turn %d reward", i+1)
						}
						last, lastRes = step, res
					}
				}
				require.True(t, last.Done)
				assert.Positive(t, objects, "results that are objects are structured content (the end's result is one)")
				assert.NotNil(t, lastRes.StructuredContent, "the end's result is structured content")
				assert.Equal(t, *trace.EndOf(want), last.Result.End)
				assert.True(t, last.Result.Passed)
				// the final reply's content is the result, as the resource has it
				var told session.Result
				require.NoError(t, json.Unmarshal([]byte(texts(t, lastRes)[0]), &told))
				assert.Equal(t, *last.Result, told)
				readJSON(t, cs, "coworkenv://session/"+cr.ID+"/result", &result)
				require.NotNil(t, result)
				assert.Equal(t, *last.Result, *result)
				assert.Equal(t, want.Score, result.Score)

				// the episode is over: an action is refused, and the session is still there
				_, _, err = mcpAct(t, cs, act{reply: true, text: "anything else?"})
				assert.Equal(t, serve.CodeEpisodeOver, refusal(t, err))
				var hs state
				status, _ := c.do("GET", "/sessions/"+cr.ID, nil, &hs)
				require.Equal(t, http.StatusOK, status)
				assert.True(t, hs.Done)
				assert.Equal(t, len(want.Calls), hs.Calls)

				r := replayFile(t, hs.Trace)
				assert.True(t, r.Matched(), "%v", r.Divergence)
				assert.Empty(t, r.Notes)
			})
		}
	}
}

// A bad argument is the tool error the model agent would show its model, recorded as the HTTP
// API records it; arguments the reply tool refuses send nothing; a tool the task does not have
// runs nothing. The session goes on through all of it.
func TestMCPBadArguments(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, serve.Options{})
	viaMCP, viaHTTP := c.create("fuel-surcharge-answer", 0), c.create("fuel-surcharge-answer", 0)
	cs := c.mcpConnect(viaMCP.ID, "")

	for _, args := range []string{`{"path": 7}`, `{"pth": "/"}`, `{}`, `["/"]`, `"text"`, `{"path": "/nowhere/at/all"}`} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs_read", Arguments: json.RawMessage(args)})
		require.NoError(t, err, args)
		status, data := c.do("POST", "/sessions/"+viaHTTP.ID+"/call", `{"name": "fs_read", "arguments": `+args+`}`, nil)
		require.Equal(t, http.StatusOK, status, "%s", data)
		var want session.Step
		require.NoError(t, json.Unmarshal(data, &want))
		assert.True(t, res.IsError, args)
		assert.Equal(t, []string{want.Content}, texts(t, res), args)
		assert.Equal(t, want, stepOf(t, res), args)
		assert.True(t, structuredIsText(t, res), "a tool error is an object: %s", args)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs_read", Arguments: json.RawMessage(`{"path": 7}`)})
	require.NoError(t, err)
	assert.Equal(t, conversation.ToolErrorContent(`argument "path": got integer, want string`, false), texts(t, res)[0])

	for args, want := range map[string]string{
		`{}`:                           conversation.ToolErrorContent(`missing required argument "content"`, false),
		`{"content": 3}`:               conversation.ToolErrorContent(`argument "content": got integer, want string`, false),
		`{"content": "hi", "to": "x"}`: conversation.ToolErrorContent(`unknown argument "to" (the arguments are: content)`, false),
		`[1]`:                          conversation.BadArgumentsContent(serve.ReplyTool, "the arguments must be a JSON object, not an array", `[1]`),
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: serve.ReplyTool, Arguments: json.RawMessage(args)})
		require.NoError(t, err, args)
		assert.True(t, res.IsError, args)
		assert.Equal(t, []string{want}, texts(t, res), args)
	}

	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	assert.ErrorContains(t, err, "no_such_tool")

	// the session went on: the calls ran (and only they), the replies sent nothing
	res, step, err := mcpAct(t, cs, act{name: "fs_list", args: jsonv.NewObject("path", "/")})
	require.NoError(t, err)
	assert.False(t, res.IsError, step.Content)
	var st state
	status, _ := c.do("GET", "/sessions/"+viaMCP.ID, nil, &st)
	require.Equal(t, http.StatusOK, status)
	assert.False(t, st.Done)
	assert.Equal(t, 6, st.Calls, "the six calls that ran; the two refused for their arguments did not")
	for _, m := range st.Messages {
		assert.False(t, m.Role == "assistant" && len(m.ToolCalls) == 0, "no message was sent: %+v", m)
	}
}

// The endpoint is the HTTP API's: its token, its sessions, its errors. A session's actions are
// one at a time whichever way they come, and input that is not MCP is refused without harm.
func TestMCPEndpoint(t *testing.T) {
	t.Parallel()
	entered, release := make(chan string), make(chan struct{})
	_, c := newServer(t, serve.Options{Token: "t0k", MaxBody: 4096, Sources: []serve.Source{waitSource()},
		Print: func(id string, _ syntax.Position, _ string) {
			entered <- id
			<-release
		}})
	cr := c.create("waits", 0)
	path := "/sessions/" + cr.ID + "/mcp"
	initialize := `{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "curl", "version": "1"}}}`

	c.token = ""
	status, data := c.do("POST", path, initialize, nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, serve.CodeUnauthorized, errorCode(t, data))
	c.token = "t0k"
	status, data = c.do("POST", "/sessions/nope/mcp", initialize, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, serve.CodeUnknownSession, errorCode(t, data))
	status, data = c.do("GET", path, nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, serve.CodeMethodNotAllowed, errorCode(t, data))

	// not MCP: refused by the SDK, and the server goes on
	for _, body := range []string{``, `{`, `[]`, `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": 7}`, `"` + strings.Repeat("x", 5000) + `"`} {
		req, err := http.NewRequest("POST", c.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer t0k")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := c.http.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Less(t, resp.StatusCode, 500, body)
	}

	// one action at a time: an MCP call while another runs is refused, as over HTTP
	cs := c.mcpConnect(cr.ID, "")
	got := make(chan error)
	go func() {
		_, _, err := mcpAct(t, cs, act{name: "wait", args: &jsonv.Object{}})
		got <- err
	}()
	assert.Equal(t, cr.ID, <-entered)
	_, _, err := mcpAct(t, cs, act{reply: true, text: "hi"})
	assert.Equal(t, serve.CodeSessionBusy, refusal(t, err))
	status, _, data = c.send(cr.ID, act{name: "fs_list", args: &jsonv.Object{}})
	assert.Equal(t, http.StatusConflict, status, "%s", data)
	release <- struct{}{}
	require.NoError(t, <-got)

	// a deleted session is gone for MCP too
	status, _ = c.do("DELETE", "/sessions/"+cr.ID, nil, nil)
	require.Equal(t, http.StatusOK, status)
	_, _, err = mcpAct(t, cs, act{reply: true, text: "hi"})
	assert.Error(t, err)
	status, data = c.do("POST", path, initialize, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, serve.CodeUnknownSession, errorCode(t, data))
}

// MCPServer serves a session over any transport: here the SDK's in-memory pair. The state
// resource names the session as given.
func TestMCPServerInMemory(t *testing.T) {
	t.Parallel()
	_, tasks := builtin()
	task := tasks["carrier-quote-award"]
	acts, want := oracleActs(t, task, 2)
	s, err := session.Create(context.Background(), task, 2, session.Options{})
	require.NoError(t, err)
	defer s.Close()

	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- serve.MCPServer("here", s).Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)

	var state struct {
		ID   string `json:"id"`
		Turn int    `json:"turn"`
	}
	readJSON(t, cs, "coworkenv://session/here/state", &state)
	assert.Equal(t, "here", state.ID)
	var last session.Step
	for _, turn := range acts {
		for _, a := range turn {
			_, step, err := mcpAct(t, cs, a)
			require.NoError(t, err)
			last = step
		}
	}
	require.True(t, last.Done)
	assert.Equal(t, *trace.EndOf(want), last.Result.End)
	require.NoError(t, cs.Close())
	assert.NoError(t, <-served)
}

// A task with a tool named reply keeps it; the reply tool is then reply-to-user.
func TestMCPReplyToolName(t *testing.T) {
	t.Parallel()
	src := strings.NewReplacer(`name = "wait"`, `name = "reply"`, `"fs", WAIT`, `WAIT`).Replace(waitTask)
	task := mcpTaskFrom(t, src, "waits")
	s, err := session.Create(context.Background(), task, 0, session.Options{})
	require.NoError(t, err)
	defer s.Close()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- serve.MCPServer("s1", s).Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	assert.ElementsMatch(t, []string{"reply", serve.ReplyToolAlt}, names)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reply", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.False(t, res.IsError, texts(t, res))
	assert.Equal(t, `{"ok":true}`, texts(t, res)[0], "the task's own tool ran")
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: serve.ReplyToolAlt, Arguments: map[string]any{"content": "Done."}})
	require.NoError(t, err)
	assert.True(t, stepOf(t, res).Done)
	require.NoError(t, cs.Close())
	assert.NoError(t, <-served)
}

// Nothing is left running once MCP requests are done and the server is closed: no goroutine of
// the SDK, of a session or of the server (those of the test's HTTP server end on their own).
func TestMCPNoGoroutineLeft(t *testing.T) {
	c0, _ := builtin()
	srv, err := serve.New(serve.Options{Sources: []serve.Source{{Corpus: c0, Files: []string{"tasks/mail/fuel_surcharge_answer.star"}}}, IdleTimeout: time.Hour})
	require.NoError(t, err)
	ts := httptest.NewServer(srv)
	c := &client{t: t, url: ts.URL, http: ts.Client()}
	for i := range 3 {
		cr := c.create("fuel-surcharge-answer", int64(i))
		for _, version := range []string{"", "2025-11-25"} {
			cs := c.mcpConnect(cr.ID, version)
			_, _, err := mcpAct(t, cs, act{name: "mail_list", args: &jsonv.Object{}})
			require.NoError(t, err)
			require.NoError(t, cs.Close())
		}
	}
	srv.Close()
	ts.Close()
	c.http.CloseIdleConnections()
	assert.Empty(t, leaktest.Leftover("serve_test.TestMCPNoGoroutineLeft(", ourPackages...))
}

// An episode closed while an MCP client is connected is over for the client.
func TestMCPClosedSession(t *testing.T) {
	t.Parallel()
	srv, c := newServer(t, serve.Options{})
	cr := c.create("fuel-surcharge-answer", 0)
	cs := c.mcpConnect(cr.ID, "")
	srv.Close()
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mail_list", Arguments: map[string]any{}})
	assert.Error(t, err)
}

// mcpTaskFrom loads a task from source.
func mcpTaskFrom(t *testing.T, src, name string) *dsl.Task {
	t.Helper()
	f := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "c").LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	for _, task := range f.Tasks {
		if task.Name == name {
			return task
		}
	}
	t.Fatalf("no task %s", name)
	return nil
}

// BenchmarkMCPSessionStep measures one call through the MCP endpoint, over HTTP on the loopback
// (BenchmarkSessionStep is the same call through the API).
func BenchmarkMCPSessionStep(b *testing.B) {
	_, c := newServer(b, serve.Options{Sources: []serve.Source{waitSource()}, MaxSessions: 4})
	call := act{name: "fs_list", args: jsonv.NewObject("path", "/")}
	var cs *mcp.ClientSession
	var id string
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if id == "" || n == 49 { // max_calls_per_turn is 50
			b.StopTimer()
			if id != "" {
				cs.Close()
				c.do("DELETE", "/sessions/"+id, nil, nil)
			}
			id, n = c.create("waits", 0).ID, 0
			cs = c.mcpConnect(id, "")
			b.StartTimer()
		}
		if _, _, err := mcpAct(b, cs, call); err != nil {
			b.Fatal(err)
		}
		n++
	}
}
