package serve

// The OpenEnv wire protocol (docs/serve.md, "OpenEnv"), so that OpenEnv's clients, and the
// trainers built on them, drive sessions as they drive any OpenEnv environment:
//
//   - GET /ws is a WebSocket; each connection has at most one session at a time. The client sends
//     {"type": "reset" | "step" | "state" | "close", "data": {...}} and gets
//     {"type": "observation" | "state" | "error", "data": {...}} back, one answer per message
//     (close has none: the connection closes).
//   - GET /schema gives the JSON schemas of the actions, the observations and the state;
//     GET /metadata the engine's name, description and version and the tasks served.
//
// A session made over a WebSocket is an ordinary session of the server: it counts towards
// MaxSessions, is closed when idle, and writes its trace. It ends when the client resets again,
// sends close, or goes away.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// CodeNoEpisode refuses a WebSocket step before the connection's first reset.
const CodeNoEpisode = "no_episode"

// OpenEnv's error codes (its WSErrorCode), the code of an error message on the WebSocket. The
// message's reason is the finer code of this API.
const (
	openEnvInvalidJSON = "INVALID_JSON"
	openEnvUnknownType = "UNKNOWN_TYPE"
	openEnvValidation  = "VALIDATION_ERROR"
	openEnvExecution   = "EXECUTION_ERROR"
	openEnvCapacity    = "CAPACITY_REACHED"
	openEnvFactory     = "FACTORY_ERROR"
	openEnvSession     = "SESSION_ERROR"
)

// The action types of a step.
const (
	wsCallTool  = "call_tool"
	wsReply     = "reply"
	wsListTools = "list_tools"
)

// openEnv is the front end of OpenEnv's protocol.
type openEnv struct{ *front }

func (a *openEnv) routes(m *http.ServeMux) {
	m.HandleFunc("/ws", a.route(true, map[string]http.HandlerFunc{http.MethodGet: a.socket}))
	m.HandleFunc("/schema", a.route(true, map[string]http.HandlerFunc{http.MethodGet: a.schema}))
	m.HandleFunc("/metadata", a.route(true, map[string]http.HandlerFunc{http.MethodGet: a.metadata}))
}

// metadata answers GET /metadata: OpenEnv's EnvironmentMetadata, with the tasks.
func (a *openEnv) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"name": "coworkenv",
		"description": "Episodes of coworkenv tasks: an assistant works for a user in a simulated workspace " +
			"(files, mail, calendar, records, contacts, chat) through tool calls, turn by turn, and is scored by " +
			"the task's verifiers. Reset with data.task and data.seed; step with call_tool and reply actions.",
		"version": trace.Version,
		"tasks":   a.tasks.infos(),
	})
}

// schema answers GET /schema: OpenEnv's SchemaResponse.
func (a *openEnv) schema(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]json.RawMessage{
		"action":      json.RawMessage(openEnvActionSchema),
		"observation": json.RawMessage(openEnvObservationSchema),
		"state":       json.RawMessage(openEnvStateSchema),
	})
}

// The schemas of GET /schema. The tests check every observation and state they get against
// the properties here.
const openEnvActionSchema = `{
  "title": "Action",
  "description": "The data of a step message: a tool call, a message of the agent, or a request for the tools (which is not an action of the episode).",
  "oneOf": [
    {
      "title": "CallToolAction",
      "type": "object",
      "properties": {
        "type": {"const": "call_tool"},
        "tool_name": {"type": "string", "description": "The tool to call."},
        "name": {"type": "string", "description": "The same as tool_name; give one of them."},
        "arguments": {"type": ["object", "string", "null"], "description": "The arguments: a JSON object, or its text as a model sent it. Absent or null is {}."},
        "call_id": {"type": "string", "maxLength": 256, "description": "The call's id; absent, or one used already, has call_<turn>_<n> assigned."},
        "metadata": {"type": "object", "description": "Ignored."}
      },
      "required": ["type"],
      "additionalProperties": false
    },
    {
      "title": "ReplyAction",
      "type": "object",
      "properties": {
        "type": {"const": "reply"},
        "content": {"type": "string", "description": "The agent's message without tool calls. It ends the turn, unless a simulated user answers it."},
        "message": {"type": "string", "description": "The same as content; give at most one of them."},
        "metadata": {"type": "object", "description": "Ignored."}
      },
      "required": ["type"],
      "additionalProperties": false
    },
    {
      "title": "ListToolsAction",
      "type": "object",
      "properties": {
        "type": {"const": "list_tools"},
        "metadata": {"type": "object", "description": "Ignored."}
      },
      "required": ["type"],
      "additionalProperties": false
    }
  ]
}`

const openEnvObservationSchema = `{
  "title": "Observation",
  "description": "What a model is shown: data.observation of an observation message. data.reward is the turn's reward when a turn ends, the episode's score when it ends, and null otherwise; data.done says the episode is over.",
  "type": "object",
  "properties": {
    "task": {"type": "string", "description": "The task (reset)."},
    "system": {"type": "string", "description": "The system prompt (reset)."},
    "tools": {
      "type": "array",
      "description": "The tools (reset and list_tools).",
      "items": {
        "type": "object",
        "properties": {
          "name": {"type": "string"},
          "description": {"type": "string"},
          "input_schema": {"type": "object", "description": "The JSON Schema of the arguments."}
        },
        "required": ["name", "description", "input_schema"]
      }
    },
    "tool_name": {"type": "string", "description": "The tool called (call_tool)."},
    "call_id": {"type": "string", "description": "The id the call ran under (call_tool)."},
    "result": {"type": "string", "description": "The tool message's content, as a model would get it (call_tool)."},
    "is_error": {"type": "boolean", "description": "The result is an error: a tool error, an injected fault (retry it), arguments that were refused, or a call that was not run."},
    "user": {"type": "string", "description": "The user's next message: the first turn's (reset), the next turn's, or a simulated user's answer within the turn."},
    "turn": {"type": "integer", "description": "The turn the episode is in (0-based)."},
    "turns": {"type": "integer", "description": "How many turns the task has."},
    "turn_over": {"type": "boolean", "description": "The action ended a turn."},
    "turn_reward": {"type": ["number", "null"], "description": "The ended turn's score from its verifier, when it has one."},
    "verdict": {"type": "object", "description": "The episode's result when it is over: score, passed, completion, safety, robustness, checks, state, error and each turn's reward (docs/serve.md)."}
  }
}`

const openEnvStateSchema = `{
  "title": "State",
  "description": "Where the connection's session stands: data of a state message. Before the first reset only episode_id (null) and step_count (0).",
  "type": "object",
  "properties": {
    "episode_id": {"type": ["string", "null"], "description": "The session's id; its trace is <id>.jsonl."},
    "step_count": {"type": "integer", "description": "The actions (call_tool and reply) taken in the episode, through this connection or any other front end (the HTTP API, MCP)."},
    "seed": {"type": "integer"},
    "task": {"type": "string"},
    "turn": {"type": "integer"},
    "turns": {"type": "integer"},
    "done": {"type": "boolean"},
    "calls": {"type": "integer", "description": "The tool calls that ran."},
    "last": {"type": "object", "description": "The last answer, as the HTTP API gives it."},
    "messages": {"type": "array", "description": "The conversation so far in the chat-completions shape, system message first."},
    "result": {"type": "object", "description": "The verdict, once the episode is over."},
    "trace": {"type": "string"},
    "trace_error": {"type": "string"}
  }
}`

// socket serves one WebSocket connection until it closes.
func (a *openEnv) socket(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		writeError(w, &apiError{http.StatusUpgradeRequired, CodeBadRequest,
			"GET /ws opens a WebSocket (OpenEnv's protocol); connect with a WebSocket client"})
		return
	}
	if _, closed := a.reg.count(); closed {
		writeError(w, sessionError(errShuttingDown))
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered the request
	}
	conn.SetReadLimit(a.maxBody)
	c := &wsConn{s: a, conn: conn}
	c.serve()
}

// wsConn is one WebSocket connection and its session.
type wsConn struct {
	s    *openEnv
	conn *websocket.Conn
	ctx  context.Context // ends with the connection

	e    *entry // the episode; nil before the first reset
	seed int64
}

// wsError is the data of an error message: OpenEnv's code, this API's code (reason), and what
// went wrong.
type wsError struct {
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// wsAnswer is one message to the client.
type wsAnswer struct {
	Type string `json:"type"` // observation, state or error
	Data any    `json:"data"`
}

// wsStepData is the data of an observation message, as OpenEnv's serialize_observation makes it.
type wsStepData struct {
	Observation any      `json:"observation"`
	Reward      *float64 `json:"reward"`
	Done        bool     `json:"done"`
}

// wsObservation is what a model is shown after a reset or an action.
type wsObservation struct {
	Task   string        `json:"task,omitempty"`
	System string        `json:"system,omitempty"`
	Tools  []openEnvTool `json:"tools,omitempty"`

	ToolName string  `json:"tool_name,omitempty"`
	CallID   string  `json:"call_id,omitempty"`
	Result   *string `json:"result,omitempty"`
	IsError  bool    `json:"is_error,omitempty"`

	User       string          `json:"user,omitempty"`
	Turn       int             `json:"turn"`
	Turns      int             `json:"turns"`
	TurnOver   bool            `json:"turn_over"`
	TurnReward *float64        `json:"turn_reward,omitempty"`
	Verdict    *session.Result `json:"verdict,omitempty"`
}

// openEnvTool is a tool as OpenEnv's MCP types describe one.
type openEnvTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// wsState is the data of a state message: OpenEnv's State and where the session stands.
type wsState struct {
	EpisodeID *string `json:"episode_id"`
	StepCount int     `json:"step_count"`
	Seed      *int64  `json:"seed,omitempty"`
	*session.Status
	Trace      string `json:"trace,omitempty"`
	TraceError string `json:"trace_error,omitempty"`
}

// serve reads and answers the client's messages until the connection ends, then closes the
// session. It returns once nothing of the connection runs any more.
func (c *wsConn) serve() {
	ctx, cancel := context.WithCancel(context.Background())
	c.ctx = ctx
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-c.s.reg.stopping():
			c.conn.Close(websocket.StatusGoingAway, "the server is shutting down")
		case <-ctx.Done():
		}
	}()
	status, reason := c.loop()
	// The session ends before the connection does: a client that sees the close can count on
	// the session's place being free and its trace ended.
	c.endEpisode()
	if status != 0 {
		c.conn.Close(status, reason)
	} else {
		c.conn.CloseNow()
	}
	cancel()
	<-watched
}

// loop answers messages until the connection ends, and says how to close it: with a close
// handshake when the client sent close (StatusNormalClosure) or a message over the size limit
// (StatusMessageTooBig); 0 when the connection is over already (the client went away, or it was
// closed for idleness or for the server's shutdown).
func (c *wsConn) loop() (websocket.StatusCode, string) {
	for {
		data, err := c.read()
		switch {
		case errors.Is(err, websocket.ErrMessageTooBig):
			return websocket.StatusMessageTooBig, fmt.Sprintf("a message is at most %d bytes", c.s.maxBody)
		case err != nil:
			return 0, ""
		}
		answer, closing := c.handle(data)
		if closing {
			return websocket.StatusNormalClosure, ""
		}
		if err := c.write(answer); err != nil {
			return 0, ""
		}
	}
}

// read waits for the client's next message. A client that sends nothing for the idle timeout
// is told so and the connection closed.
func (c *wsConn) read() ([]byte, error) {
	if c.s.reg.idle > 0 {
		idle := time.AfterFunc(c.s.reg.idle, func() {
			c.conn.Close(websocket.StatusPolicyViolation, "no message for the idle timeout")
		})
		defer idle.Stop()
	}
	_, data, err := c.conn.Read(c.ctx)
	return data, err
}

// write sends an answer; a client that does not take it within the idle timeout (the default
// one when sessions are kept however long they are idle) is dropped.
func (c *wsConn) write(v wsAnswer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	timeout := c.s.reg.idle
	if timeout <= 0 {
		timeout = DefaultIdleTimeout
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// endEpisode closes the connection's session, if any, and forgets it: its trace ends, as
// interrupted when the episode had not finished.
func (c *wsConn) endEpisode() {
	if c.e == nil {
		return
	}
	c.s.reg.remove(c.e.id) // an error is a session already reaped, or a server shutting down
	c.e.s.Close()
	c.e = nil
}

// handle answers one message; closing says the client sent close.
func (c *wsConn) handle(data []byte) (answer wsAnswer, closing bool) {
	if !json.Valid(data) {
		return wsFail(openEnvInvalidJSON, CodeBadJSON, "the message is not JSON; send {\"type\": ..., \"data\": {...}}"), false
	}
	var msg struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if problem := wsDecode(data, &msg); problem != "" {
		return wsFail(openEnvValidation, CodeBadRequest, "the message "+problem), false
	}
	switch msg.Type {
	case "reset":
		return c.reset(msg.Data), false
	case "step":
		return c.step(msg.Data), false
	case "state":
		return c.state(), false
	case "close":
		return wsAnswer{}, true
	}
	return wsFail(openEnvUnknownType, CodeBadRequest,
		fmt.Sprintf("unknown message type %q; the types are reset, step, state and close", wsClip(msg.Type))), false
}

func wsFail(code, reason, message string) wsAnswer {
	return wsAnswer{Type: "error", Data: wsError{Code: code, Reason: reason, Message: message}}
}

// wsSessionFail is the error message of an error of the server or a session.
func wsSessionFail(err error) wsAnswer {
	e := sessionError(err)
	msg := e.message
	switch e.code {
	case CodeUnknownSession:
		msg = "the episode was closed (no action for the idle timeout, or deleted over HTTP); send reset to start another"
	case CodeEpisodeOver:
		msg = "the episode is over; send state for its result, or reset to start another"
	}
	return wsFail(openEnvCode(e.code), e.code, msg)
}

// openEnvCode is OpenEnv's error code for a code of this API.
func openEnvCode(code string) string {
	switch code {
	case CodeBadJSON:
		return openEnvInvalidJSON
	case CodeBadRequest, CodeUnknownTask, CodeUnknownTool:
		return openEnvValidation
	case CodeTooManySessions:
		return openEnvCapacity
	case CodeSetupFailed:
		return openEnvFactory
	case CodeNoEpisode, CodeUnknownSession, CodeEpisodeOver, CodeShuttingDown:
		return openEnvSession
	}
	return openEnvExecution
}

// reset ends the connection's episode, if any, and starts one of data.task (which may be left
// out when the server serves one task) with data.seed.
func (c *wsConn) reset(data json.RawMessage) wsAnswer {
	var req struct {
		Task string `json:"task"`
		Seed *int64 `json:"seed"`
		// EpisodeID is OpenEnv's; the episode's id is the session's all the same.
		EpisodeID *string `json:"episode_id"`
	}
	if problem := wsDecodeData(data, &req); problem != "" {
		return wsFail(openEnvValidation, CodeBadRequest, "reset's data "+problem)
	}
	var t *task
	switch {
	case req.Task != "":
		var ok bool
		if t, ok = c.s.tasks.byName[req.Task]; !ok {
			return wsFail(openEnvValidation, CodeUnknownTask,
				fmt.Sprintf("no task %q; GET /metadata lists the %d tasks", wsClip(req.Task), len(c.s.tasks.order)))
		}
	case len(c.s.tasks.order) == 1:
		t = c.s.tasks.order[0]
	default:
		return wsFail(openEnvValidation, CodeBadRequest,
			fmt.Sprintf("reset needs data.task: the name of one of the %d tasks (GET /metadata lists them)", len(c.s.tasks.order)))
	}
	var seed int64
	if req.Seed != nil {
		seed = *req.Seed
	}
	// The episode before ends first, so that its place is free for the new one.
	c.endEpisode()
	e, err := c.s.reg.create(c.ctx, t, seed)
	if err != nil {
		return wsSessionFail(err)
	}
	c.e, c.seed = e, seed
	first := e.s.First()
	obs := wsObservation{Task: t.task.Name, System: e.s.System(), Tools: openEnvTools(e.s),
		User: first.User, Turn: first.Turn, Turns: len(t.task.Turns), Verdict: first.Result}
	return wsObserve(obs, first)
}

// openEnvTools are the session's tools in OpenEnv's shape.
func openEnvTools(sess Live) []openEnvTool {
	out := make([]openEnvTool, 0, len(sess.Tools()))
	for _, schema := range sess.Tools() {
		var t openEnvTool
		fn, _ := schema.Get("function")
		if f, ok := fn.(*jsonv.Object); ok {
			name, _ := f.Get("name")
			desc, _ := f.Get("description")
			params, _ := f.Get("parameters")
			t.Name, _ = name.(string)
			t.Description, _ = desc.(string)
			t.InputSchema = json.RawMessage(jsonv.MustEncode(params))
		}
		out = append(out, t)
	}
	return out
}

// wsObserve wraps an observation with the step's reward and done: the turn's reward when a turn
// ended, the episode's score when it ended.
func wsObserve(obs wsObservation, st session.Step) wsAnswer {
	var reward *float64
	switch {
	case st.Done && st.Result != nil:
		score := st.Result.Score
		reward = &score
	case st.TurnOver:
		reward = st.Reward
	}
	return wsAnswer{Type: "observation", Data: wsStepData{Observation: obs, Reward: reward, Done: st.Done}}
}

// wsAction is the data of a step message.
type wsAction struct {
	Type      string          `json:"type"`
	ToolName  string          `json:"tool_name"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	CallID    string          `json:"call_id"`
	Content   *string         `json:"content"`
	Message   *string         `json:"message"`
	// Metadata is OpenEnv's Action's; it is ignored.
	Metadata json.RawMessage `json:"metadata"`
}

// step runs one action.
func (c *wsConn) step(data json.RawMessage) wsAnswer {
	if wsNull(data) {
		return wsFail(openEnvValidation, CodeBadRequest,
			"step needs data: the action, {\"type\": \"call_tool\", \"tool_name\": ..., \"arguments\": {...}} or {\"type\": \"reply\", \"content\": ...}")
	}
	var a wsAction
	if problem := wsDecode(data, &a); problem != "" {
		return wsFail(openEnvValidation, CodeBadRequest, "the action "+problem)
	}
	if problem := a.check(); problem != "" {
		return wsFail(openEnvValidation, CodeBadRequest, problem)
	}
	if c.e == nil {
		return wsFail(openEnvSession, CodeNoEpisode, "there is no episode yet; send reset first")
	}
	if a.Type == wsListTools {
		return wsAnswer{Type: "observation", Data: wsStepData{
			Observation: map[string]any{"tools": openEnvTools(c.e.s)}, Done: c.e.s.State().Done}}
	}
	var args string
	if a.Type == wsCallTool {
		var err error
		if args, err = argumentsText(a.Arguments); err != nil {
			return wsFail(openEnvValidation, CodeBadRequest, "the action's arguments: "+err.Error())
		}
	}
	st, err := c.s.reg.act(c.e.id, func(s Live) (session.Step, error) {
		if a.Type == wsCallTool {
			return s.Call(a.CallID, a.tool(), args)
		}
		return s.Reply(a.text())
	})
	if err != nil {
		return wsSessionFail(err)
	}
	obs := wsObservation{Turns: len(c.e.s.Task().Turns)}
	if a.Type == wsCallTool {
		obs.ToolName, obs.CallID, obs.Result, obs.IsError = a.tool(), st.CallID, &st.Content, st.IsError
	}
	obs.User, obs.Turn, obs.TurnOver, obs.TurnReward, obs.Verdict = st.User, st.Turn, st.TurnOver, st.Reward, st.Result
	return wsObserve(obs, st)
}

// check says what is wrong with an action's fields, "" when nothing is.
func (a *wsAction) check() string {
	call := a.ToolName != "" || a.Name != "" || a.Arguments != nil || a.CallID != ""
	text := a.Content != nil || a.Message != nil
	switch a.Type {
	case wsCallTool:
		switch {
		case a.tool() == "":
			return "a call_tool action needs tool_name: the tool to call"
		case a.ToolName != "" && a.Name != "" && a.ToolName != a.Name:
			return "the action's tool_name and name differ; give one of them"
		case text:
			return "a call_tool action has no content or message; send the message as a reply action"
		case len(a.CallID) > maxCallID:
			return fmt.Sprintf("call_id is %d bytes long; at most %d", len(a.CallID), maxCallID)
		}
	case wsReply:
		switch {
		case call:
			return "a reply action has no tool_name, name, arguments or call_id; call the tool with a call_tool action"
		case a.Content != nil && a.Message != nil:
			return "the action has both content and message; give one of them"
		}
	case wsListTools:
		if call || text {
			return "a list_tools action has no other fields"
		}
	case "":
		return "the action needs type: call_tool, reply or list_tools"
	default:
		return fmt.Sprintf("unknown action type %q; the types are call_tool, reply and list_tools", wsClip(a.Type))
	}
	return ""
}

func (a *wsAction) tool() string {
	if a.ToolName != "" {
		return a.ToolName
	}
	return a.Name
}

func (a *wsAction) text() string {
	switch {
	case a.Content != nil:
		return *a.Content
	case a.Message != nil:
		return *a.Message
	}
	return ""
}

// episodeSteps are the actions taken in the episode, through any front end: each is one
// assistant message of its conversation (a call is a message with one tool call, a reply one
// without).
func episodeSteps(st session.Status) int {
	n := 0
	for _, m := range st.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// state answers a state message.
func (c *wsConn) state() wsAnswer {
	if c.e == nil {
		return wsAnswer{Type: "state", Data: wsState{}}
	}
	st := c.e.s.State()
	id, seed := c.e.id, c.seed
	out := wsState{EpisodeID: &id, StepCount: episodeSteps(st), Seed: &seed, Status: &st, Trace: c.e.tr.path}
	if err := c.e.tr.getErr(); err != nil {
		out.TraceError = err.Error()
	}
	return wsAnswer{Type: "state", Data: out}
}

// wsDecode decodes one JSON object into v, refusing fields v does not have; the problem
// completes a sentence about the value ("the action has ...").
func wsDecode(data []byte, v any) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return "has something after its JSON value"
		}
		return ""
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return fmt.Sprintf("is a JSON %s; it must be an object", te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("has %s as a JSON %s; it must be a %s", te.Field, te.Value, typeName(te.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "has the unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "is not JSON: " + err.Error()
}

// wsDecodeData decodes data that may be absent or null (as {}).
func wsDecodeData(data json.RawMessage, v any) string {
	if wsNull(data) {
		return ""
	}
	return wsDecode(data, v)
}

func wsNull(data json.RawMessage) bool {
	d := bytes.TrimSpace(data)
	return len(d) == 0 || string(d) == "null"
}

// clip shortens a name the client sent for an error message.
func wsClip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
