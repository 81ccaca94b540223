package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP per session. A session's MCP server offers the task's tools, each call running through
// session.Call exactly as POST /sessions/{id}/call runs it; a tool to reply to the user (ReplyTool),
// which runs session.Reply; and the session's state and result as resources. The HTTP API serves
// it at /sessions/{id}/mcp (streamable HTTP, stateless: the session lives in the server, not in
// the MCP connection); MCPServer serves a session over any other transport, such as stdio.
//
// The arguments of a call are checked against the tool's schema by the episode itself, before
// the tool runs (the SDK leaves a tool added with Server.AddTool unchecked): a bad argument is
// the tool error the model agent would show its model, recorded in the trace like any call.

// ReplyTool is the name of the MCP tool that sends the agent's message to the user, unless the
// task has a tool of that name: the tool is then ReplyToolAlt, which no task's tool can be named.
const (
	ReplyTool    = "reply"
	ReplyToolAlt = "reply-to-user"
)

// MCPErrorCode is the JSON-RPC error code of a refused action (the session is busy, the episode
// is over, the session is gone, the server is shutting down); the error's data is
// {"code": ...}, the HTTP API's error code.
const MCPErrorCode = -32000

// replySpec is the reply tool's parameters: its schema and the check of its arguments, as a
// task's tool has them.
var replySpec = &tools.Tool{
	Name: ReplyTool,
	Description: "Send your message to the user: your answer, or a question. It ends your turn, unless " +
		"the user answers within it. The result is the user's next message, or, when the conversation is " +
		"over, its result.",
	Params: []tools.Param{{Name: "content", Type: tools.TypeString, Required: true,
		Description: "The message, as the user will read it."}},
}

// mcpSession is what an MCP server of a session serves.
type mcpSession struct {
	id string
	s  Live
	// act runs one action of the session (the HTTP API marks the session busy meanwhile).
	act func(do func(Live) (session.Step, error)) (session.Step, error)
	// state is the session's state resource.
	state func() (any, error)
}

// MCPServer returns an MCP server of one session: its tools, the reply tool and its resources
// (docs/serve.md, "MCP"); id names the session in the resources' URIs. The caller runs the server
// on a transport (Server.Run) and closes the session when done.
func MCPServer(id string, s Live) *mcp.Server {
	return newMCPServer(&mcpSession{id: id, s: s,
		act: func(do func(Live) (session.Step, error)) (session.Step, error) { return do(s) },
		state: func() (any, error) {
			return struct {
				ID string `json:"id"`
				session.Status
			}{id, s.State()}, nil
		}})
}

// mcpFront is the front end of /sessions/{id}/mcp, the MCP server of a session over streamable
// HTTP.
type mcpFront struct {
	*front
	// handlers keeps the MCP handler of each live session, so that a request does not make the
	// session's MCP server again: adding a tool costs the SDK a pass over its schema. A handler
	// is forgotten when its session's episode ends; a request to a finished session has one made
	// for it.
	handlers sync.Map // Live → http.Handler
}

func (a *mcpFront) routes(m *http.ServeMux) {
	m.HandleFunc("/sessions/{id}/mcp", a.route(true, map[string]http.HandlerFunc{http.MethodPost: a.serveMCP}))
}

// serveMCP answers one MCP request of a session.
func (a *mcpFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	e, err := a.reg.lookup(r.PathValue("id"))
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	if h, ok := a.handlers.Load(e.s); ok {
		h.(http.Handler).ServeHTTP(w, r)
		return
	}
	h := a.handler(e.id, e.s)
	select {
	case <-e.s.Done():
	default:
		if _, loaded := a.handlers.LoadOrStore(e.s, h); !loaded {
			// the episode ends at the latest when the session is closed, as every session is
			go func() {
				<-e.s.Done()
				a.handlers.Delete(e.s)
			}()
		}
	}
	h.ServeHTTP(w, r)
}

// handler makes the streamable HTTP handler of a session, stateless: the session holds the
// episode, and any request of any client may come next.
func (a *mcpFront) handler(id string, sess Live) http.Handler {
	srv := newMCPServer(&mcpSession{id: id, s: sess,
		act: func(do func(Live) (session.Step, error)) (session.Step, error) { return a.reg.act(id, do) },
		state: func() (any, error) {
			e, err := a.reg.lookup(id)
			if err != nil {
				return nil, err
			}
			return stateOf(e, e.s.State()), nil
		}})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: a.maxBody})
}

// newMCPServer makes the MCP server of a session.
func newMCPServer(ms *mcpSession) *mcp.Server {
	task := ms.s.Task()
	srv := mcp.NewServer(&mcp.Implementation{Name: "coworkenv", Title: "coworkenv: task " + task.Name, Version: trace.Version},
		&mcp.ServerOptions{Instructions: ms.s.System(),
			// the tools and resources never change; logging is not offered
			Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}},
			// what a session's server answers is the session's own
			SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.CacheScope = "private" }})
	reply := ReplyTool
	for _, t := range ms.s.Tools() {
		fn, _ := t.Get("function")
		f, _ := fn.(*jsonv.Object)
		name, _ := f.Get("name")
		desc, _ := f.Get("description")
		params, _ := f.Get("parameters")
		n, _ := name.(string)
		d, _ := desc.(string)
		if n == ReplyTool {
			reply = ReplyToolAlt
		}
		srv.AddTool(&mcp.Tool{Name: n, Description: d, InputSchema: json.RawMessage(jsonv.MustEncode(params))}, ms.call(n))
	}
	params, _ := replySpec.Schema().Get("function")
	schema, _ := params.(*jsonv.Object).Get("parameters")
	srv.AddTool(&mcp.Tool{Name: reply, Description: replySpec.Description, InputSchema: json.RawMessage(jsonv.MustEncode(schema))}, ms.reply(reply))

	base := "coworkenv://session/" + ms.id + "/"
	srv.AddResource(&mcp.Resource{URI: base + "state", Name: "state", MIMEType: "application/json",
		Description: "Where the session stands: its turn, the conversation so far, the last answer, and the result once the episode is over."},
		ms.resource(func() (any, error) { return ms.state() }))
	srv.AddResource(&mcp.Resource{URI: base + "result", Name: "result", MIMEType: "application/json",
		Description: "The episode's result (score, passed, the checks, each turn's reward) once it is over; null until then."},
		ms.resource(func() (any, error) { return ms.s.State().Result, nil }))
	return srv
}

// call is the handler of a task's tool: the call goes to the session as it is. The result's
// content is the tool message a model would be shown (IsError for an error); when the call ended
// the turn (a call past max_calls_per_turn), the user's next message or the result follows it.
func (ms *mcpSession) call(name string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := argumentsText(req.Params.Arguments)
		if err != nil {
			// the SDK hands over only arguments that are JSON; this is a safeguard
			args = string(req.Params.Arguments)
		}
		st, err := ms.act(func(s Live) (session.Step, error) { return s.Call("", name, args) })
		if err != nil {
			return nil, ms.error(err)
		}
		content := []mcp.Content{&mcp.TextContent{Text: st.Content}}
		if st.TurnOver {
			content = append(content, &mcp.TextContent{Text: next(st)})
		}
		return &mcp.CallToolResult{Content: content, IsError: st.IsError, StructuredContent: structured(st.Content),
			Meta: stepMeta(st)}, nil
	}
}

// reply is the handler of the reply tool. Its arguments are checked as a task's tool's are;
// arguments that do not pass are an error result, and nothing is sent to the session.
func (ms *mcpSession) reply(name string) mcp.ToolHandler {
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := argumentsText(req.Params.Arguments)
		if err != nil {
			text = string(req.Params.Arguments)
		}
		args, problem := conversation.ParseArguments(text)
		if problem != "" {
			return toolError(conversation.BadArgumentsContent(name, problem, text)), nil
		}
		checked, err := replySpec.CheckArgs(args)
		if err != nil {
			return toolError(conversation.ToolErrorContent(err.Error(), false)), nil
		}
		content, _ := checked.Get("content")
		msg, _ := content.(string)
		st, err := ms.act(func(s Live) (session.Step, error) { return s.Reply(msg) })
		if err != nil {
			return nil, ms.error(err)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: next(st)}}, Meta: stepMeta(st)}
		if st.Done {
			res.StructuredContent = structured(next(st)) // the result; a user's message is text
		}
		return res, nil
	}
}

// StepMeta is the key of a tool result's _meta under which the step is, as POST
// /sessions/{id}/call (or /reply) answers it: the turn, whether it is over, its reward, whether
// the episode is done, and its result.
const StepMeta = "coworkenv/step"

// stepMeta is a tool result's _meta: the step.
func stepMeta(st session.Step) mcp.Meta { return mcp.Meta{StepMeta: rawJSON(st)} }

// structured is a tool result's structured content: the result the text holds, when the text is
// a JSON object (the text is then its serialised JSON, as the MCP specification recommends); nil
// (none) for any other text. Only an object: before the protocol's version 2026-07-28,
// structuredContent is an object, and a client of any version may connect.
func structured(text string) any {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return nil
	}
	return json.RawMessage(t)
}

// next is what follows an action that ended a turn or was answered by the user: the user's
// message, or, at the end of the episode, the result's JSON.
func next(st session.Step) string {
	if st.Done {
		return string(rawJSON(st.Result))
	}
	return st.User
}

func toolError(content string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: content}}, IsError: true}
}

// resource is the handler of a JSON resource. Its answer is stale at once (a TTL of 0): the
// session moves on.
func (ms *mcpSession) resource(get func() (any, error)) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v, err := get()
		if err != nil {
			return nil, ms.error(err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(rawJSON(v))}}}, nil
	}
}

// error is a refused action as a JSON-RPC error, with the HTTP API's code in its data.
func (ms *mcpSession) error(err error) error {
	e := sessionError(err)
	if e.code == CodeEpisodeOver {
		e.message = "the episode is over; its result is the resource coworkenv://session/" + ms.id + "/result"
	}
	return &jsonrpc.Error{Code: MCPErrorCode, Message: fmt.Sprintf("%s: %s", e.code, e.message),
		Data: json.RawMessage(jsonv.MustEncode(jsonv.NewObject("code", e.code)))}
}

// rawJSON is v's JSON as the HTTP API writes it (HTML characters as they are).
func rawJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// the values here are the API's own, which encode; should one not, say so rather than fail
		return json.RawMessage(jsonv.MustEncode(jsonv.NewObject("error", err.Error())))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
