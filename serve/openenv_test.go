package serve_test

// The OpenEnv wire protocol, as read in OpenEnv's source (github.com/meta-pytorch/OpenEnv at
// commit 685de411e5f77286b0fd94798d42c4467cf8a1bc):
//
//   - src/openenv/core/env_server/types.py: the messages a client sends on /ws,
//     WSResetMessage {"type": "reset", "data": {...reset kwargs: seed, episode_id, ...}},
//     WSStepMessage {"type": "step", "data": {...the action}}, WSStateMessage {"type": "state"}
//     and WSCloseMessage {"type": "close"}; the answers, WSObservationResponse
//     {"type": "observation", "data": ...}, WSStateResponse {"type": "state", "data": ...} and
//     WSErrorResponse {"type": "error", "data": {"message", "code", ...}} with the codes of
//     WSErrorCode (INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR,
//     CAPACITY_REACHED, FACTORY_ERROR, SESSION_ERROR); State {"episode_id", "step_count", ...};
//     HealthResponse {"status": "healthy"}; SchemaResponse {"action", "observation", "state"};
//     EnvironmentMetadata {"name", "description", "version", ...}.
//   - src/openenv/core/env_server/serialization.py: an observation's data is
//     {"observation": {...}, "reward": number or null, "done": bool}, the observation's own
//     fields without reward, done and metadata.
//   - src/openenv/core/env_server/http_server.py: one environment per connection, made when it
//     opens; close ends the loop without an answer; errors keep the connection open.
//   - src/openenv/core/env_server/mcp_types.py: CallToolAction {"type": "call_tool",
//     "tool_name", "arguments"}, ListToolsAction {"type": "list_tools"}, CallToolObservation
//     {"tool_name", "result", "error"}, ListToolsObservation {"tools": [{"name", "description",
//     "input_schema"}]}.
//   - src/openenv/core/env_client.py, generic_client.py and mcp_client.py: what clients send
//     and how they read the answers (mcp_client.py takes an observation with "tools" for a
//     ListToolsObservation and one with "tool_name" for a CallToolObservation).
//
// This server implements those, with a reset's data {"task", "seed", "episode_id" (ignored)},
// the actions call_tool {"tool_name" or "name", "arguments", "call_id"}, reply {"content" or
// "message"} and list_tools, and an error's data {"code" (OpenEnv's), "reason" (this API's
// code), "message"}. OpenEnv's providers (src/openenv/core/containers/runtime/providers.py and
// uv_provider.py) poll GET /health for status 200, which the server's health answers already.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/leaktest"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openEnvServer is a test server for WebSocket clients.
type openEnvServer struct {
	srv  *serve.Server
	http *client
	ws   string // the /ws URL
	// ended receives a value each time a request to /ws has been served to its end: its session
	// is closed and its trace ended by then.
	ended chan struct{}
}

// newOpenEnvServer starts a server on the options (the built-in corpus unless they name
// sources) and a test HTTP server in front of it; both end with the test.
func newOpenEnvServer(t testing.TB, opts serve.Options) *openEnvServer {
	t.Helper()
	if opts.Sources == nil {
		c, _ := builtin()
		opts.Sources = []serve.Source{{Corpus: c}}
	}
	srv, err := serve.New(opts)
	require.NoError(t, err)
	ended := make(chan struct{}, 64)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		if r.URL.Path == "/ws" {
			ended <- struct{}{}
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return &openEnvServer{srv: srv, http: &client{t: t, url: ts.URL, http: ts.Client(), token: opts.Token},
		ws: "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws", ended: ended}
}

// openEnvConn is a WebSocket client of the test server.
type openEnvConn struct {
	t    testing.TB
	conn *websocket.Conn
}

// dial opens a connection with the token (none when "").
func (s *openEnvServer) dial(t testing.TB, token string) *openEnvConn {
	t.Helper()
	conn, resp, err := s.tryDial(token)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	conn.SetReadLimit(16 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	return &openEnvConn{t: t, conn: conn}
}

func (s *openEnvServer) tryDial(token string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return websocket.Dial(context.Background(), s.ws, &websocket.DialOptions{HTTPHeader: h})
}

// message is one message from the server.
type message struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// send sends a message: a string as it is, anything else as JSON.
func (c *openEnvConn) send(msg any) {
	c.t.Helper()
	data, ok := msg.(string)
	if !ok {
		b, err := json.Marshal(msg)
		require.NoError(c.t, err)
		data = string(b)
	}
	require.NoError(c.t, c.conn.Write(context.Background(), websocket.MessageText, []byte(data)))
}

func (c *openEnvConn) recv() message {
	c.t.Helper()
	typ, data, err := c.conn.Read(context.Background())
	require.NoError(c.t, err)
	assert.Equal(c.t, websocket.MessageText, typ)
	var m message
	require.NoError(c.t, json.Unmarshal(data, &m), "%s", data)
	return m
}

func (c *openEnvConn) roundTrip(msg any) message {
	c.t.Helper()
	c.send(msg)
	return c.recv()
}

// closeStatus reads until the connection closes and returns the close's status.
func (c *openEnvConn) closeStatus() websocket.StatusCode {
	c.t.Helper()
	for {
		_, _, err := c.conn.Read(context.Background())
		if err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// obs is an observation message's data.
type obs struct {
	Observation struct {
		Task   string `json:"task"`
		System string `json:"system"`
		Tools  []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolName   string          `json:"tool_name"`
		CallID     string          `json:"call_id"`
		Result     *string         `json:"result"`
		IsError    bool            `json:"is_error"`
		User       string          `json:"user"`
		Turn       int             `json:"turn"`
		Turns      int             `json:"turns"`
		TurnOver   bool            `json:"turn_over"`
		TurnReward *float64        `json:"turn_reward"`
		Verdict    *session.Result `json:"verdict"`
	} `json:"observation"`
	Reward *float64 `json:"reward"`
	Done   bool     `json:"done"`
	// keys are the observation's keys, checked against GET /schema.
	keys map[string]json.RawMessage
}

// observation decodes an observation message; it must be one.
func observation(t testing.TB, m message) obs {
	t.Helper()
	require.Equal(t, "observation", m.Type, "%s", m.Data)
	var o obs
	require.NoError(t, json.Unmarshal(m.Data, &o), "%s", m.Data)
	var raw struct {
		Observation map[string]json.RawMessage `json:"observation"`
		Reward      json.RawMessage            `json:"reward"`
		Done        json.RawMessage            `json:"done"`
	}
	require.NoError(t, json.Unmarshal(m.Data, &raw))
	require.NotNil(t, raw.Reward, "reward is always there, null or a number: %s", m.Data)
	require.NotNil(t, raw.Done, "%s", m.Data)
	o.keys = raw.Observation
	return o
}

// wsErr is an error message's data.
type wsErr struct {
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func errorOf(t testing.TB, m message) wsErr {
	t.Helper()
	require.Equal(t, "error", m.Type, "%s", m.Data)
	var e wsErr
	require.NoError(t, json.Unmarshal(m.Data, &e), "%s", m.Data)
	assert.NotEmpty(t, e.Message)
	return e
}

// wsState is a state message's data.
type wsState struct {
	EpisodeID *string `json:"episode_id"`
	StepCount int     `json:"step_count"`
	Seed      int64   `json:"seed"`
	session.Status
	Trace      string `json:"trace"`
	TraceError string `json:"trace_error"`
	keys       map[string]json.RawMessage
}

func (c *openEnvConn) state() wsState {
	c.t.Helper()
	m := c.roundTrip(map[string]any{"type": "state"})
	require.Equal(c.t, "state", m.Type, "%s", m.Data)
	var st wsState
	require.NoError(c.t, json.Unmarshal(m.Data, &st), "%s", m.Data)
	require.NoError(c.t, json.Unmarshal(m.Data, &st.keys))
	return st
}

func reset(task string, seed int64) map[string]any {
	return map[string]any{"type": "reset", "data": map[string]any{"task": task, "seed": seed}}
}

func step(action map[string]any) map[string]any {
	return map[string]any{"type": "step", "data": action}
}

// schemaProps are the properties of the observation and state schemas of GET /schema.
func schemaProps(t testing.TB, c *client) (observation, state map[string]json.RawMessage) {
	t.Helper()
	var schema map[string]struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	status, data := c.do("GET", "/schema", nil, &schema)
	require.Equal(t, http.StatusOK, status, "%s", data)
	require.NotEmpty(t, schema["observation"].Properties)
	require.NotEmpty(t, schema["state"].Properties)
	return schema["observation"].Properties, schema["state"].Properties
}

// assertKnown checks that every key is one the schema declares.
func assertKnown(t testing.TB, props, keys map[string]json.RawMessage, what string) {
	t.Helper()
	for k := range keys {
		assert.Contains(t, props, k, "%s has %q, which GET /schema does not declare", what, k)
	}
}

// A single-turn task, a two-turn task and a task whose user is simulated, driven over a
// WebSocket as an OpenEnv client drives an environment, with exactly the oracle's calls and
// replies (in each of the ways an action may be spelt): the first user message and the tools on
// reset, each turn's reward when it ends, the oracle's score as the last reward, the verdict,
// the state, and a trace that replays.
func TestOpenEnvOracle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newOpenEnvServer(t, serve.Options{TraceDir: dir})
	obsProps, stateProps := schemaProps(t, s.http)
	_, tasks := builtin()
	for i, name := range []string{"fuel-surcharge-answer", "carrier-quote-award", "consult-vat-reverse-charge"} {
		t.Run(name, func(t *testing.T) {
			task := tasks[name]
			acts, want := oracleActs(t, task, 7)
			c := s.dial(t, "")

			r := observation(t, c.roundTrip(reset(name, 7)))
			assertKnown(t, obsProps, r.keys, "the reset's observation")
			assert.False(t, r.Done)
			assert.Nil(t, r.Reward)
			assert.Equal(t, name, r.Observation.Task)
			assert.Equal(t, want.Turns[0].User, r.Observation.User)
			assert.NotEmpty(t, r.Observation.System)
			assert.Equal(t, len(want.Turns), r.Observation.Turns)
			require.Len(t, r.Observation.Tools, len(task.Tools))
			for k, tool := range task.Tools {
				assert.Equal(t, tool.Name, r.Observation.Tools[k].Name)
				assert.Equal(t, tool.Description, r.Observation.Tools[k].Description)
				params, _ := tool.Schema().Get("function")
				p, _ := params.(*jsonv.Object).Get("parameters")
				assert.JSONEq(t, jsonv.MustEncode(p), string(r.Observation.Tools[k].InputSchema))
			}

			questions, steps := 0, 0
			var last obs
			for turn, turnActs := range acts {
				for k, a := range turnActs {
					action := map[string]any{}
					switch {
					case a.reply && i == 1:
						action = map[string]any{"type": "reply", "message": a.text}
					case a.reply:
						action = map[string]any{"type": "reply", "content": a.text}
					case i == 1:
						action = map[string]any{"type": "call_tool", "name": a.name, "arguments": json.RawMessage(jsonv.MustEncode(a.args))}
					case i == 2:
						action = map[string]any{"type": "call_tool", "tool_name": a.name, "arguments": jsonv.MustEncode(a.args)}
					default:
						action = map[string]any{"type": "call_tool", "tool_name": a.name, "arguments": json.RawMessage(jsonv.MustEncode(a.args))}
					}
					o := observation(t, c.roundTrip(step(action)))
					assertKnown(t, obsProps, o.keys, "a step's observation")
					steps++
					end := k == len(turnActs)-1
					require.Equal(t, end, o.Observation.TurnOver, "turn %d act %d", turn+1, k+1)
					if !a.reply {
						assert.Equal(t, a.name, o.Observation.ToolName)
						assert.NotEmpty(t, o.Observation.CallID)
						require.NotNil(t, o.Observation.Result)
						assert.NotEmpty(t, *o.Observation.Result)
					} else {
						assert.Empty(t, o.Observation.ToolName)
						assert.Nil(t, o.Observation.Result)
					}
					if a.reply && !end {
						// a question: the simulated user's answer is the next user message of the turn
						questions++
						assert.Equal(t, turn, o.Observation.Turn)
						assert.NotEmpty(t, o.Observation.User)
					}
					switch {
					case end && turn == len(acts)-1:
						require.True(t, o.Done)
						require.NotNil(t, o.Reward)
						assert.Equal(t, want.Score, *o.Reward, "the last reward is the episode's score")
					case end:
						assert.False(t, o.Done)
						assert.Equal(t, want.Turns[turn].Score, o.Reward, "turn %d reward", turn+1)
						assert.Equal(t, turn+1, o.Observation.Turn)
						// the next turn's message, after a note of the time when the clock moved
						assert.True(t, strings.HasSuffix(o.Observation.User, want.Turns[turn+1].User), o.Observation.User)
					default:
						assert.False(t, o.Done)
						assert.Nil(t, o.Reward)
					}
					if end {
						assert.Equal(t, want.Turns[turn].Score, o.Observation.TurnReward, "turn %d reward", turn+1)
					}
					last = o
				}
			}
			if task.Turns[0].Sim != nil {
				assert.Positive(t, questions, "the oracle asks the simulated user")
			}
			require.NotNil(t, last.Observation.Verdict)
			assert.Equal(t, *trace.EndOf(want), last.Observation.Verdict.End)
			assert.True(t, last.Observation.Verdict.Passed)

			st := c.state()
			assertKnown(t, stateProps, st.keys, "the state")
			require.NotNil(t, st.EpisodeID)
			assert.Equal(t, steps, st.StepCount)
			assert.Equal(t, int64(7), st.Seed)
			assert.Equal(t, name, st.Task)
			assert.True(t, st.Done)
			assert.Equal(t, len(want.Calls), st.Calls)
			assert.Equal(t, last.Observation.Verdict, st.Result)
			assert.Equal(t, filepath.Join(dir, *st.EpisodeID+".jsonl"), st.Trace)
			assert.Empty(t, st.TraceError)

			// the episode is over: an action is refused, and the connection goes on
			e := errorOf(t, c.roundTrip(step(map[string]any{"type": "reply", "content": "anything else?"})))
			assert.Equal(t, "SESSION_ERROR", e.Code)
			assert.Equal(t, serve.CodeEpisodeOver, e.Reason)
			assert.Equal(t, steps, c.state().StepCount)

			// close: no answer, the session is forgotten, the connection closes normally
			c.send(map[string]any{"type": "close"})
			assert.Equal(t, websocket.StatusNormalClosure, c.closeStatus())
			<-s.ended
			status, data := s.http.do("GET", "/sessions/"+*st.EpisodeID, nil, nil)
			assert.Equal(t, http.StatusNotFound, status)
			assert.Equal(t, serve.CodeUnknownSession, errorCode(t, data))

			rp := replayFile(t, st.Trace)
			assert.True(t, rp.Matched(), "%v", rp.Divergence)
			assert.False(t, rp.TaskChanged)
			assert.Empty(t, rp.Notes)
		})
	}
}

// Bad messages and refused actions are answered with an error message; the connection and the
// session go on as they were.
func TestOpenEnvErrors(t *testing.T) {
	t.Parallel()
	s := newOpenEnvServer(t, serve.Options{})
	c := s.dial(t, "")

	// before the first reset
	st := c.state()
	assert.Nil(t, st.EpisodeID)
	assert.Zero(t, st.StepCount)
	assert.Len(t, st.keys, 2, "only episode_id and step_count")
	for _, action := range []map[string]any{
		{"type": "call_tool", "tool_name": "fs_list"},
		{"type": "reply", "content": "hi"},
		{"type": "list_tools"},
	} {
		e := errorOf(t, c.roundTrip(step(action)))
		assert.Equal(t, "SESSION_ERROR", e.Code)
		assert.Equal(t, serve.CodeNoEpisode, e.Reason)
	}

	bad := []struct {
		msg          string
		code, reason string
	}{
		{`not json`, "INVALID_JSON", serve.CodeBadJSON},
		{`{"type": "reset"`, "INVALID_JSON", serve.CodeBadJSON},
		{`[1, 2]`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": 5}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "state", "extra": 1}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{}`, "UNKNOWN_TYPE", serve.CodeBadRequest},
		{`{"type": "dance"}`, "UNKNOWN_TYPE", serve.CodeBadRequest},
		{`{"type": "mcp", "data": {}}`, "UNKNOWN_TYPE", serve.CodeBadRequest},
		{`{"type": "reset", "data": {}}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "reset"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "reset", "data": {"task": "no-such-task"}}`, "VALIDATION_ERROR", serve.CodeUnknownTask},
		{`{"type": "reset", "data": {"task": "fuel-surcharge-answer", "sed": 1}}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "reset", "data": {"task": "fuel-surcharge-answer", "seed": "seven"}}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "reset", "data": [1]}`, "VALIDATION_ERROR", serve.CodeBadRequest},
	}
	for _, b := range bad {
		e := errorOf(t, c.roundTrip(b.msg))
		assert.Equal(t, b.code, e.Code, "%s: %s", b.msg, e.Message)
		assert.Equal(t, b.reason, e.Reason, "%s: %s", b.msg, e.Message)
	}
	assert.Nil(t, c.state().EpisodeID, "no reset succeeded")

	r := observation(t, c.roundTrip(map[string]any{"type": "reset", "data": map[string]any{"task": "fuel-surcharge-answer", "episode_id": "mine"}}))
	assert.False(t, r.Done)
	for _, b := range []struct {
		action       string
		code, reason string
	}{
		{`null`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"tool_name": "fs_list"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "fly"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "call_tool"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "call_tool", "tool_name": "fs_list", "name": "fs_read"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "call_tool", "tool_name": "fs_list", "content": "hi"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "call_tool", "tool_name": "fs_list", "call_id": "` + strings.Repeat("i", 300) + `"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "call_tool", "tool_name": "fs_list", "path": "/"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "call_tool", "tool_name": "no_such_tool", "arguments": {}}`, "VALIDATION_ERROR", serve.CodeUnknownTool},
		{`{"type": "reply", "tool_name": "fs_list"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "reply", "content": "a", "message": "b"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "reply", "content": 3}`, "VALIDATION_ERROR", serve.CodeBadRequest},
		{`{"type": "list_tools", "content": "x"}`, "VALIDATION_ERROR", serve.CodeBadRequest},
	} {
		e := errorOf(t, c.roundTrip(`{"type": "step", "data": `+b.action+`}`))
		assert.Equal(t, b.code, e.Code, "%s: %s", b.action, e.Message)
		assert.Equal(t, b.reason, e.Reason, "%s: %s", b.action, e.Message)
	}
	e := errorOf(t, c.roundTrip(`{"type": "step", "data": {"type": "call_tool", "tool_name": "fs_list", "arguments": {"path": }}}`))
	assert.Equal(t, "INVALID_JSON", e.Code)

	// nothing ran
	st = c.state()
	assert.Zero(t, st.StepCount)
	assert.Zero(t, st.Calls)
	assert.False(t, st.Done)
	assert.Len(t, st.Messages, 2)
	assert.NotEqual(t, "mine", *st.EpisodeID, "the episode's id is the session's")

	// the tools, as OpenEnv's ListToolsAction asks for them: not an action of the episode
	lt := observation(t, c.roundTrip(step(map[string]any{"type": "list_tools", "metadata": map[string]any{}})))
	_, tasks := builtin()
	assert.Len(t, lt.Observation.Tools, len(tasks["fuel-surcharge-answer"].Tools))
	assert.Nil(t, lt.Reward)
	assert.False(t, lt.Done)
	assert.Zero(t, c.state().StepCount)

	// arguments of the wrong type are the tool's error, and arguments that are not an object
	// are refused, as the model agent refuses them: the model is shown why
	o := observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "fs_read", "arguments": map[string]any{"path": 7}})))
	assert.True(t, o.Observation.IsError)
	assert.True(t, strings.HasPrefix(*o.Observation.Result, `{"error":`), *o.Observation.Result)
	o = observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "fs_list", "arguments": []any{"/"}})))
	assert.True(t, o.Observation.IsError)
	assert.Contains(t, *o.Observation.Result, "was not run")
	// a call of OpenEnv's GenericEnvClient (a CallToolAction's model_dump), with a call id
	o = observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "fs_list", "arguments": map[string]any{"path": "/"}, "metadata": map[string]any{}, "call_id": "mine"})))
	assert.False(t, o.Observation.IsError, *o.Observation.Result)
	assert.Equal(t, "mine", o.Observation.CallID)
	assert.False(t, o.Observation.TurnOver)
	assert.Nil(t, o.Reward)

	st = c.state()
	assert.Equal(t, 3, st.StepCount)
	assert.Equal(t, 2, st.Calls, "the refused arguments did not run")
	assert.False(t, st.Done)
}

// A connection that drops closes its session: the session is forgotten and its trace ends as
// interrupted, and replays.
func TestOpenEnvDroppedConnection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newOpenEnvServer(t, serve.Options{TraceDir: dir})
	c := s.dial(t, "")
	observation(t, c.roundTrip(reset("carrier-quote-award", 1)))
	observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "mail_list", "arguments": map[string]any{}})))
	id := *c.state().EpisodeID

	c.conn.CloseNow()
	<-s.ended
	status, data := s.http.do("GET", "/sessions/"+id, nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, serve.CodeUnknownSession, errorCode(t, data))
	var health struct {
		Sessions int `json:"sessions"`
	}
	s.http.do("GET", "/health", nil, &health)
	assert.Zero(t, health.Sessions)

	path := filepath.Join(dir, id+".jsonl.partial")
	end := lastEvent(t, path)
	require.NotNil(t, end.Error)
	assert.Equal(t, episode.Interrupted, end.Error.Code)
	r := replayFile(t, path)
	assert.True(t, r.Matched(), "%v", r.Divergence)
}

// A message over MaxBody closes the connection with StatusMessageTooBig, and its session; a
// message of MaxBody bytes is read.
func TestOpenEnvMessageTooLarge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newOpenEnvServer(t, serve.Options{TraceDir: dir, MaxBody: 4096})
	c := s.dial(t, "")
	observation(t, c.roundTrip(reset("fuel-surcharge-answer", 0)))
	msg := `{"type": "state"` + strings.Repeat(" ", 4096-len(`{"type": "state"}`)) + `}`
	require.Len(t, msg, 4096)
	st := c.state()
	m := c.roundTrip(msg)
	assert.Equal(t, "state", m.Type, "%s", m.Data)

	c.send(`{"type": "step", "data": {"type": "reply", "content": "` + strings.Repeat("x", 5000) + `"}}`)
	assert.Equal(t, websocket.StatusMessageTooBig, c.closeStatus())
	<-s.ended
	status, _ := s.http.do("GET", "/sessions/"+*st.EpisodeID, nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
	end := lastEvent(t, filepath.Join(dir, *st.EpisodeID+".jsonl.partial"))
	assert.Equal(t, episode.Interrupted, end.Error.Code, "the reply was not taken")
}

// WebSocket sessions count towards MaxSessions with the HTTP ones; a reset ends the episode
// before it (its place is free again); an idle session is reaped, and its connection is told
// so at its next action and may reset again.
func TestOpenEnvSessionLimitAndIdle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := &fakeClock{}
	clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	tick := make(chan time.Time)
	s := newOpenEnvServer(t, serve.Options{TraceDir: dir, MaxSessions: 1, IdleTimeout: time.Minute, Now: clock.now, Tick: tick})
	sweep := func() {
		tick <- time.Time{}
		tick <- time.Time{}
	}
	a, b := s.dial(t, ""), s.dial(t, "")
	observation(t, a.roundTrip(reset("fuel-surcharge-answer", 0)))
	first := *a.state().EpisodeID

	status, data := s.http.do("POST", "/sessions", map[string]any{"task": "fuel-surcharge-answer"}, nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, serve.CodeTooManySessions, errorCode(t, data))
	e := errorOf(t, b.roundTrip(reset("fuel-surcharge-answer", 0)))
	assert.Equal(t, "CAPACITY_REACHED", e.Code)
	assert.Equal(t, serve.CodeTooManySessions, e.Reason)
	assert.Nil(t, b.state().EpisodeID, "b goes on without an episode")

	// a reset again: the first episode ends, interrupted, and the new one takes its place
	observation(t, a.roundTrip(reset("fuel-surcharge-answer", 1)))
	second := *a.state().EpisodeID
	assert.NotEqual(t, first, second)
	end := lastEvent(t, filepath.Join(dir, first+".jsonl.partial"))
	assert.Equal(t, episode.Interrupted, end.Error.Code)

	// idle: reaped at the reaper's next tick
	clock.advance(time.Minute)
	sweep()
	e = errorOf(t, a.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "fs_list", "arguments": map[string]any{"path": "/"}})))
	assert.Equal(t, "SESSION_ERROR", e.Code)
	assert.Equal(t, serve.CodeUnknownSession, e.Reason)
	st := a.state()
	assert.True(t, st.Done)
	assert.Equal(t, episode.Interrupted, st.Result.Error.Code)
	end = lastEvent(t, filepath.Join(dir, second+".jsonl.partial"))
	assert.Equal(t, episode.Interrupted, end.Error.Code)

	// the place is free: b resets; then a's reset is the one refused
	observation(t, b.roundTrip(reset("fuel-surcharge-answer", 0)))
	e = errorOf(t, a.roundTrip(reset("fuel-surcharge-answer", 0)))
	assert.Equal(t, "CAPACITY_REACHED", e.Code)
}

// The server's Close ends every connection (StatusGoingAway) and its session.
func TestOpenEnvServerClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := newOpenEnvServer(t, serve.Options{TraceDir: dir})
	c := s.dial(t, "")
	observation(t, c.roundTrip(reset("carrier-quote-award", 0)))
	id := *c.state().EpisodeID
	s.srv.Close()
	assert.Equal(t, websocket.StatusGoingAway, c.closeStatus())
	<-s.ended
	end := lastEvent(t, filepath.Join(dir, id+".jsonl.partial"))
	assert.Equal(t, episode.Interrupted, end.Error.Code)

	_, resp, err := s.tryDial("")
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

// /ws, /schema and /metadata need the token; /health does not. A request to /ws that is not a
// WebSocket is told so, and a web page of another origin is refused.
func TestOpenEnvToken(t *testing.T) {
	t.Parallel()
	s := newOpenEnvServer(t, serve.Options{Token: "s3cret"})
	for _, token := range []string{"", "wrong"} {
		_, resp, err := s.tryDial(token)
		require.Error(t, err)
		require.NotNil(t, resp)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		s.http.token = token
		for _, path := range []string{"/schema", "/metadata", "/ws"} {
			status, data := s.http.do("GET", path, nil, nil)
			assert.Equal(t, http.StatusUnauthorized, status, path)
			assert.Equal(t, serve.CodeUnauthorized, errorCode(t, data))
		}
		status, _ := s.http.do("GET", "/health", nil, nil)
		assert.Equal(t, http.StatusOK, status)
	}
	c := s.dial(t, "s3cret")
	observation(t, c.roundTrip(reset("fuel-surcharge-answer", 0)))

	s.http.token = "s3cret"
	status, data := s.http.do("GET", "/ws", nil, nil)
	assert.Equal(t, http.StatusUpgradeRequired, status)
	assert.Equal(t, serve.CodeBadRequest, errorCode(t, data))
	status, data = s.http.do("POST", "/ws", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, serve.CodeMethodNotAllowed, errorCode(t, data))

	// a web page of another origin may not open one
	h := http.Header{"Authorization": {"Bearer s3cret"}, "Origin": {"http://example.com"}}
	_, resp, err := websocket.Dial(context.Background(), s.ws, &websocket.DialOptions{HTTPHeader: h})
	require.Error(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// GET /schema and GET /metadata in OpenEnv's shapes; GET /health answers 200, which OpenEnv's
// providers wait for.
func TestOpenEnvSchemaAndMetadata(t *testing.T) {
	t.Parallel()
	s := newOpenEnvServer(t, serve.Options{})
	var schema map[string]map[string]any
	status, data := s.http.do("GET", "/schema", nil, &schema)
	require.Equal(t, http.StatusOK, status, "%s", data)
	require.Len(t, schema, 3)
	for _, k := range []string{"action", "observation", "state"} {
		assert.NotEmpty(t, schema[k], k)
	}
	var types []string
	for _, alt := range schema["action"]["oneOf"].([]any) {
		props := alt.(map[string]any)["properties"].(map[string]any)
		types = append(types, props["type"].(map[string]any)["const"].(string))
	}
	assert.Equal(t, []string{"call_tool", "reply", "list_tools"}, types)

	var meta struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Tasks       []struct {
			Name  string `json:"name"`
			Turns int    `json:"turns"`
		} `json:"tasks"`
	}
	status, data = s.http.do("GET", "/metadata", nil, &meta)
	require.Equal(t, http.StatusOK, status, "%s", data)
	assert.Equal(t, "coworkenv", meta.Name)
	assert.NotEmpty(t, meta.Description)
	assert.Equal(t, "coworkenv/"+meta.Version, trace.Engine)
	_, tasks := builtin()
	require.Len(t, meta.Tasks, len(tasks))
	for _, ti := range meta.Tasks {
		require.Contains(t, tasks, ti.Name)
		assert.Equal(t, len(tasks[ti.Name].Turns), ti.Turns)
	}

	status, _ = s.http.do("GET", "/health", nil, nil)
	assert.Equal(t, http.StatusOK, status)
}

// A server of one task resets without data, as OpenEnv's reset() with no arguments does.
func TestOpenEnvResetWithoutTask(t *testing.T) {
	t.Parallel()
	s := newOpenEnvServer(t, serve.Options{Sources: []serve.Source{waitSource()}})
	c := s.dial(t, "")
	r := observation(t, c.roundTrip(map[string]any{"type": "reset", "data": map[string]any{}}))
	assert.Equal(t, "waits", r.Observation.Task)
	assert.Equal(t, "Wait.", r.Observation.User)
	o := observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "wait"})))
	assert.Equal(t, `{"ok":true}`, *o.Observation.Result)
	o = observation(t, c.roundTrip(step(map[string]any{"type": "reply", "content": "Done."})))
	assert.True(t, o.Done)
	require.NotNil(t, o.Reward)
	assert.Equal(t, o.Observation.Verdict.Score, *o.Reward)
}

// A connection that sends nothing for the idle timeout is told so and closed.
func TestOpenEnvIdleConnection(t *testing.T) {
	t.Parallel()
	s := newOpenEnvServer(t, serve.Options{IdleTimeout: time.Nanosecond, Tick: make(chan time.Time)})
	c := s.dial(t, "")
	assert.Equal(t, websocket.StatusPolicyViolation, c.closeStatus())
	<-s.ended
}

// Nothing of a connection is left running once it has ended, however it ended: the client
// closed it, dropped it, or the server closed.
func TestOpenEnvNoGoroutineLeft(t *testing.T) {
	c0, _ := builtin()
	srv, err := serve.New(serve.Options{Sources: []serve.Source{{Corpus: c0, Files: []string{"tasks/mail/fuel_surcharge_answer.star"}}}, IdleTimeout: time.Hour})
	require.NoError(t, err)
	ended := make(chan struct{}, 3)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		ended <- struct{}{}
	}))
	s := &openEnvServer{srv: srv, ws: "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"}
	// the connections' goroutines (the server's reaper runs until it closes)
	connPackages := []string{"coworkenv/runtime/session.", "coder/websocket", "serve.(*Server).openEnv", "serve.(*wsConn)"}
	var conns []*openEnvConn
	for i := range 3 {
		c := s.dial(t, "")
		observation(t, c.roundTrip(reset("fuel-surcharge-answer", int64(i))))
		observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "mail_list"})))
		conns = append(conns, c)
	}
	conns[0].send(map[string]any{"type": "close"})
	assert.Equal(t, websocket.StatusNormalClosure, conns[0].closeStatus())
	<-ended
	conns[1].conn.CloseNow()
	<-ended
	conns[2].send(map[string]any{"type": "close"})
	assert.Equal(t, websocket.StatusNormalClosure, conns[2].closeStatus())
	<-ended
	assert.Empty(t, leaktest.Leftover("serve_test.TestOpenEnvNoGoroutineLeft(", connPackages...), "the connections left nothing behind")

	c := s.dial(t, "")
	observation(t, c.roundTrip(reset("fuel-surcharge-answer", 3)))
	srv.Close()
	assert.Equal(t, websocket.StatusGoingAway, c.closeStatus())
	<-ended
	ts.Close()
	assert.Empty(t, leaktest.Leftover("serve_test.TestOpenEnvNoGoroutineLeft(", ourPackages...))
}

// step_count is the episode's actions, as the docs say, not the connection's: an action taken in
// the session through the HTTP API counts too.
func TestOpenEnvStepCountIsTheEpisodes(t *testing.T) {
	t.Parallel()
	s := newOpenEnvServer(t, serve.Options{})
	c := s.dial(t, "")
	observation(t, c.roundTrip(reset("fuel-surcharge-answer", 7)))
	o := observation(t, c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "fs_list", "arguments": map[string]any{"path": "/"}})))
	require.False(t, o.Observation.IsError)
	st := c.state()
	require.Equal(t, 1, st.StepCount)
	status, _, body := s.http.send(*st.EpisodeID, act{name: "fs_list", args: jsonv.NewObject("path", "/")})
	require.Equal(t, http.StatusOK, status, string(body))
	st = c.state()
	assert.Equal(t, 2, st.StepCount, "the call over HTTP is a step of the episode")
	assert.Equal(t, 2, st.Calls)
}
