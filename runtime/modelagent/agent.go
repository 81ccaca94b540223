// Package modelagent is the `openai` agent: a model behind any OpenAI-compatible
// chat-completions endpoint (hosted APIs, vLLM, Ollama, llama.cpp, SGLang), called through
// github.com/sashabaranov/go-openai with the task's tools.
//
// An Agent holds the conversation of one episode across its turns. Create one with New for
// every episode and drop it afterwards; never share one between episodes or goroutines (Turn
// refuses an agent that already ran another episode).
//
// The conversation itself (the history, the call ids, the call budget, arguments that are not
// a JSON object, calls not run, the simulated user's round trip, the time notes) is
// runtime/conversation's, which a served session and a trace's replay run too: the agent is its
// Source, the model over HTTP. Each answer is reported to TurnContext.Assistant (text, tool
// calls, token usage, reasoning, finish reason, logprobs and token ids when the server sent them,
// and a note when the answer gave nothing usable); finish_reason "length" is a cut-off answer
// (conversation.Answer.Cut). The history goes back to the model with the arguments of past calls
// as conversation.HistoryArgs gives them, and an assistant message with tool calls has
// "content": "" rather than none.
//
// The tool calls of an answer are its tool_calls; without any, its legacy function_call (one
// call); without that, the calls it wrote as text in its content, or else in its reasoning, in
// one of the formats of Config.ToolCallFormat (textcalls.go says how they are read). Calls read
// from text or from function_call are numbered call_<turn>_<n>, have their arguments as the
// text of a JSON object, and go back to the model as tool_calls; the text keeps what is left
// when their markup is taken out.
//
// What differs between servers is absorbed here: tool_calls null or [] (no call), content null
// (""), arguments sent as a JSON object instead of a string; a missing or repeated tool-call id
// (replaced by call_<turn>_<n>) and arguments "" or null ({}) are the conversation's.
//
// Reasoning comes as reasoning_content (DeepSeek, SGLang, older vLLM), as reasoning (vLLM 0.17
// and later, Ollama), or as a <think> block at the start of the content (a server without a
// reasoning parser); the block is taken out of the text. Whether the reasoning of past answers
// is sent back, as reasoning_content, is Config.ReasoningHistory: by default only for the models
// known to need it (KeepsReasoning: DeepSeek's thinking mode refuses a past tool-call message
// without it), since some servers refuse it and most templates drop it. The trace keeps what the model sent either way.
package modelagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	openai "github.com/sashabaranov/go-openai"
)

// Agent is a model acting in one episode. See the package documentation.
type Agent struct {
	cfg      Config
	client   *openai.Client
	tr       *transport
	maxCompl bool // send MaxTokens as max_completion_tokens
	task     *dsl.Task
	nextTurn int
	tools    []openai.Tool
	toolset  toolset // the tools' names and parameter schemas, for calls written as text
	conv     *conversation.Conversation
	sent     []openai.ChatCompletionMessage // the history as sent, so far
}

// New checks cfg, fills in its defaults and returns an agent for one episode.
func New(cfg Config) (*Agent, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg}
	a.tr = newTransport(&a.cfg)
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	oc.HTTPClient = a.tr
	a.client = openai.NewClientWithConfig(oc)
	if cfg.MaxTokens > 0 {
		probe := openai.ChatCompletionRequest{Model: cfg.Model, MaxTokens: cfg.MaxTokens}
		err := openai.NewReasoningValidator().Validate(probe)
		a.maxCompl = errors.Is(err, openai.ErrReasoningModelMaxTokensDeprecated)
	}
	a.tr.fields = a.requestFields()
	return a, nil
}

// Name is the agent's name in results and traces.
func (a *Agent) Name() string { return "openai" }

// Messages returns a copy of the conversation so far, system message first, as it is sent to
// the model.
func (a *Agent) Messages() []openai.ChatCompletionMessage {
	if a.conv == nil {
		return []openai.ChatCompletionMessage{}
	}
	hist := a.conv.Messages()
	out := make([]openai.ChatCompletionMessage, len(hist))
	for i, m := range hist {
		out[i] = a.wire(m)
	}
	return out
}

// History is the conversation so far as the conversation machine keeps it (nil before the
// first turn).
func (a *Agent) History() []conversation.Message {
	if a.conv == nil {
		return nil
	}
	return a.conv.Messages()
}

// wire is a message of the history as it is sent to the model: the arguments of past calls as
// conversation.HistoryArgs gives them, the reasoning only when Config.ReasoningHistory keeps it.
func (a *Agent) wire(m conversation.Message) openai.ChatCompletionMessage {
	w := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	if m.Role != conversation.Assistant {
		return w
	}
	if a.cfg.ReasoningHistory == ReasoningKeep {
		w.ReasoningContent = m.Reasoning
	}
	for _, c := range m.ToolCalls {
		w.ToolCalls = append(w.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: conversation.HistoryArgs(c.Arguments)}})
	}
	return w
}

// sentMessages is the history as it goes to the model, its new messages made once.
func (a *Agent) sentMessages() []openai.ChatCompletionMessage {
	for _, m := range a.conv.Since(len(a.sent)) {
		a.sent = append(a.sent, a.wire(m))
	}
	return a.sent
}

// RequestError is a model request that failed for good: an answer that is not worth a retry
// (400, 401, 404...), or the last of the retries. An episode it stops ends with the code
// model-error.
type RequestError struct {
	Model    string
	URL      string // the base URL
	Status   string // "400 Bad Request"; "" when no HTTP answer came
	Code     int    // HTTP status code; 0 when no HTTP answer came
	Message  string // the server's error message, or the transport error
	Attempts int
	Err      error // from go-openai or the transport
}

func (e *RequestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s at %s: ", e.Model, e.URL)
	if e.Status != "" {
		fmt.Fprintf(&b, "HTTP %s: ", e.Status)
	}
	b.WriteString(e.Message)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

func (e *RequestError) Unwrap() error { return e.Err }

// DiagCode is the diagnostic code of an episode the error stopped: episode.ModelError, not the
// solution-error of an agent's own failure (it implements episode.CodedError).
func (e *RequestError) DiagCode() string { return episode.ModelError }

func (a *Agent) requestError(err error) error {
	re := &RequestError{Model: a.cfg.Model, URL: a.cfg.BaseURL, Message: err.Error(), Attempts: a.tr.lastAttempts(), Err: err}
	var ae *openai.APIError
	var rq *openai.RequestError
	switch {
	case errors.As(err, &ae):
		re.Status, re.Code, re.Message = ae.HTTPStatus, ae.HTTPStatusCode, ae.Message
	case errors.As(err, &rq):
		re.Status, re.Code, re.Message = rq.HTTPStatus, rq.HTTPStatusCode, bodyMessage(rq.Body)
	}
	if re.Message == "" {
		re.Message = "no error message"
	}
	return re
}

// bodyMessage finds the error message in a body go-openai could not read as an OpenAI error
// ({"message"} from vLLM, {"error": "..."} from Ollama), or shows the start of the body.
func bodyMessage(body []byte) string {
	if v, err := jsonv.Decode(body); err == nil {
		if o, ok := v.(*jsonv.Object); ok {
			for _, k := range []string{"message", "error", "detail"} {
				if s, ok := o.Get(k); ok {
					if str, ok := s.(string); ok && str != "" {
						return str
					}
				}
			}
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// begin binds the agent to the episode on its first turn.
func (a *Agent) begin(tc *episode.TurnContext) error {
	if a.task != nil && (a.task != tc.Task() || tc.Index != a.nextTurn) {
		return errors.New("modelagent: this agent already ran another episode; create one agent with New per episode")
	}
	if a.task == nil {
		if tc.Index != 0 {
			return fmt.Errorf("modelagent: the agent joined an episode at turn %d; create it before the first turn", tc.Index)
		}
		a.task = tc.Task()
		a.toolset = toolsetOf(tc.Tools())
		for _, s := range tc.Tools() {
			t, err := toolOf(s)
			if err != nil {
				return err
			}
			a.tools = append(a.tools, t)
		}
		a.conv = conversation.New(a.cfg.systemPrompt(tc.Address(), tc.SetupNow(), a.task.Location), tc.SetupNow()).InZone(a.task.Location)
	}
	a.nextTurn = tc.Index + 1
	return nil
}

// toolOf turns a schema from TurnContext.Tools into a go-openai tool; the parameters keep their
// key order.
func toolOf(s *jsonv.Object) (openai.Tool, error) {
	fn, _ := s.Get("function")
	fo, ok := fn.(*jsonv.Object)
	if !ok {
		return openai.Tool{}, fmt.Errorf("modelagent: tool schema without a function: %s", jsonv.MustEncode(s))
	}
	name, _ := fo.Get("name")
	desc, _ := fo.Get("description")
	def := &openai.FunctionDefinition{}
	def.Name, _ = name.(string)
	def.Description, _ = desc.(string)
	params, ok := fo.Get("parameters")
	if !ok {
		params = jsonv.NewObject("type", "object", "properties", &jsonv.Object{})
	}
	raw, err := jsonv.Encode(params)
	if err != nil {
		return openai.Tool{}, fmt.Errorf("modelagent: tool %s: %v", def.Name, err)
	}
	def.Parameters = json.RawMessage(raw)
	return openai.Tool{Type: openai.ToolTypeFunction, Function: def}, nil
}

// Turn runs one turn of the episode: see the package documentation.
func (a *Agent) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if err := a.begin(tc); err != nil {
		return "", err
	}
	return a.conv.Turn(ctx, conversation.Live(tc), source{a})
}

// source gives the conversation machine the model's answers.
type source struct{ a *Agent }

func (s source) Next(ctx context.Context, _ *conversation.Conversation) (conversation.Answer, error) {
	if err := ctx.Err(); err != nil {
		return conversation.Answer{}, err
	}
	a := s.a
	choice, usage, extras, err := a.complete(ctx)
	if err != nil {
		return conversation.Answer{}, err
	}
	r := a.read(choice)
	return conversation.Answer{Text: r.text, Reasoning: r.reasoning, Calls: r.calls, Cut: choice.FinishReason == openai.FinishReasonLength,
		Report: episode.AssistantMessage{Usage: usage, Raw: r.raw, CallsFrom: r.from, FinishReason: string(choice.FinishReason),
			Logprobs: extras.logprobs, PromptTokenIDs: extras.promptIDs, CompletionTokenIDs: extras.completionIDs, Note: r.note}}, nil
}

// request is a chat-completions request with the configured model and token limit (sent as
// max_completion_tokens to the models that refuse max_tokens), and the configured tool choice
// when it carries tools (a tool_choice without tools is an error to OpenAI and vLLM).
func (a *Agent) request(msgs []openai.ChatCompletionMessage, tools []openai.Tool) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: a.cfg.Model, Messages: msgs, Tools: tools}
	if len(tools) > 0 && a.cfg.ToolChoice != "" {
		req.ToolChoice = a.cfg.ToolChoice
	}
	if a.cfg.MaxTokens > 0 {
		if a.maxCompl {
			req.MaxCompletionTokens = a.cfg.MaxTokens
		} else {
			req.MaxTokens = a.cfg.MaxTokens
		}
	}
	return req
}

// complete asks the model for the next message: the first choice (index 0), its usage and what
// the server sent beside the message.
func (a *Agent) complete(ctx context.Context) (openai.ChatCompletionChoice, *jsonv.Object, choiceExtras, error) {
	rctx, held := withExtras(ctx)
	resp, err := a.client.CreateChatCompletion(rctx, a.request(a.sentMessages(), a.tools))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return openai.ChatCompletionChoice{}, nil, choiceExtras{}, cerr
		}
		return openai.ChatCompletionChoice{}, nil, choiceExtras{}, a.requestError(err)
	}
	if len(resp.Choices) == 0 {
		return openai.ChatCompletionChoice{}, nil, choiceExtras{}, &RequestError{Model: a.cfg.Model, URL: a.cfg.BaseURL,
			Message: "the answer has no choices", Attempts: a.tr.lastAttempts()}
	}
	pos := 0
	for i, c := range resp.Choices {
		if c.Index == 0 {
			pos = i
			break
		}
	}
	var usage *jsonv.Object
	if u := resp.Usage; u.PromptTokens != 0 || u.CompletionTokens != 0 || u.TotalTokens != 0 {
		usage = jsonv.NewObject("prompt_tokens", int64(u.PromptTokens), "completion_tokens", int64(u.CompletionTokens), "total_tokens", int64(u.TotalTokens))
	}
	return resp.Choices[pos], usage, held.get().choice(pos), nil
}

// reading is an answer as the agent reads it.
type reading struct {
	text      string // the content without a <think> block and without the calls read from it
	reasoning string // without the calls read from it
	raw       string // the content as sent, when text is not that
	from      string // where the calls were read from when not tool_calls (AssistantMessage.CallsFrom)
	calls     []conversation.Call
	note      string
}

// read reads an answer: its text and reasoning, and its tool calls as the model sent them (see
// the package documentation).
func (a *Agent) read(choice openai.ChatCompletionChoice) reading {
	msg := choice.Message
	sent := messageText(msg)
	text, thought, _ := SplitThink(sent)
	r := reading{text: text, reasoning: joinReasoning(msg.ReasoningContent, thought)}
	raw, problem := msg.ToolCalls, ""
	switch {
	case len(msg.ToolCalls) > 0:
	case msg.FunctionCall != nil && msg.FunctionCall.Name != "":
		raw = []openai.ToolCall{{Type: openai.ToolTypeFunction, Function: *msg.FunctionCall}}
		r.from = "function_call"
	default:
		calls, rest, from, inText := readTextCalls(a.cfg.ToolCallFormat, r.text, a.toolset)
		if len(calls) > 0 {
			r.text, r.from = rest, from
		} else {
			var inReasoning string
			calls, rest, from, inReasoning = readTextCalls(a.cfg.ToolCallFormat, r.reasoning, a.toolset)
			switch {
			case len(calls) > 0:
				r.reasoning, r.from = rest, from+" in reasoning"
			case inText != "":
				problem = "the text " + inText
			case inReasoning != "":
				problem = "the reasoning " + inReasoning
			}
		}
		raw = nil
		for _, c := range calls {
			raw = append(raw, openai.ToolCall{Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.name, Arguments: c.args}})
		}
	}
	if r.text != sent {
		r.raw = sent
	}
	for _, c := range raw {
		r.calls = append(r.calls, conversation.Call{ID: c.ID, Type: string(c.Type), Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	r.note = noteOf(choice.FinishReason, r, problem)
	return r
}

// noteOf says why an answer gave nothing the agent could use ("" when it did): problem is why
// text that looks like a tool call gave none.
func noteOf(finish openai.FinishReason, r reading, problem string) string {
	switch {
	case finish == openai.FinishReasonLength:
		note := "the answer was cut off at the token limit (finish_reason length)"
		if len(r.calls) == 0 && problem != "" {
			note += "; " + problem
		}
		return note
	case len(r.calls) > 0:
		return ""
	case problem != "":
		return problem
	case r.text != "":
		return ""
	case finish == openai.FinishReasonContentFilter:
		return "the server's content filter stopped the answer (finish_reason content_filter)"
	case r.reasoning != "":
		return "the answer had only reasoning, no text and no tool call"
	}
	return "the answer had no text and no tool call"
}

// messageText is the text of an answer: content, the text parts of a content array, or a
// refusal.
func messageText(m openai.ChatCompletionMessage) string {
	if m.Content != "" {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText || (p.Type == "" && p.Text != "") {
			parts = append(parts, p.Text)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "")
	}
	return m.Refusal
}
