// Package modelagent is the `openai` agent: a model behind any OpenAI-compatible
// chat-completions endpoint (hosted APIs, vLLM, Ollama, llama.cpp, SGLang), called through
// github.com/sashabaranov/go-openai with the task's tools.
//
// An Agent holds the conversation of one episode across its turns. Create one with New for
// every episode and drop it afterwards; never share one between episodes or goroutines (Turn
// refuses an agent that already ran another episode).
//
// One turn: the user message is appended and the model is called. Each answer is reported to
// TurnContext.Assistant (text, tool calls, token usage, reasoning, finish reason, logprobs and
// token ids when the server sent them, and a note when the answer gave nothing usable). Its
// tool calls run in order through TurnContext.Call, and each gets a `tool` message: the call's
// content (the JSON text the tools return), or for a tool error the object {"error": MESSAGE},
// with "transient": true when the error was an injected fault worth retrying. The first answer
// without tool calls ends the turn with its text as the reply, unless the turn's user is a
// simulated one (TurnContext.Simulated): then the text goes to the user (TurnContext.Ask), and
// while the user answers rather than saying it is done, its answer is appended as a user message
// and the model is called again; the text the user is done with is the reply (an answer without
// text is the reply as it is, and the engine shows it to the user). The turn also ends:
//   - when the turn reaches max_calls_per_turn (ErrTruncated): the reply is the last text the
//     model wrote in this turn, "" if none;
//   - on finish_reason "length": TurnContext.Truncate is called, the answer's tool calls are not
//     run, and the reply is the last text.
//
// The tool calls of an answer are its tool_calls; without any, its legacy function_call (one
// call); without that, the calls it wrote as text in its content, or else in its reasoning, in
// one of the formats of Config.ToolCallFormat (textcalls.go says how they are read). Calls read
// from text or from function_call are numbered call_<turn>_<n>, have their arguments as the
// text of a JSON object, and go back to the model as tool_calls; the text keeps what is left
// when their markup is taken out.
//
// What differs between servers is absorbed here: tool_calls null or [] (no call), content null
// (""), a missing or repeated tool-call id (replaced by call_<turn>_<n>, both 1-based: the n-th
// tool call of that turn), arguments "" or null ({}), arguments sent as a JSON object instead of
// a string. Arguments that are not a JSON object are not run: the model gets a tool error naming
// the problem, and the attempt counts towards max_calls_per_turn so a model that never gets them
// right still ends the turn. In the history sent back, such arguments become "{}" (vLLM parses
// the arguments of past tool calls and rejects the whole request otherwise), and an assistant
// message with tool calls has "content": "" rather than none.
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
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
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
	msgs     []openai.ChatCompletionMessage
	usedIDs  map[string]bool
	stated   string // the virtual time the model was last told
}

// New checks cfg, fills in its defaults and returns an agent for one episode.
func New(cfg Config) (*Agent, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	a := &Agent{cfg: cfg, usedIDs: map[string]bool{}}
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
	out := make([]openai.ChatCompletionMessage, len(a.msgs))
	copy(out, a.msgs)
	for i := range out {
		out[i].ToolCalls = append([]openai.ToolCall(nil), out[i].ToolCalls...)
	}
	return out
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
		a.msgs = append(a.msgs, openai.ChatCompletionMessage{
			Role:    openai.ChatMessageRoleSystem,
			Content: a.cfg.systemPrompt(tc.Address(), tc.SetupNow()),
		})
		a.stated = tc.SetupNow()
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

// turn is the state of one turn.
type turn struct {
	tc     *episode.TurnContext
	n      int    // tool calls the model made in this turn
	issued int    // tool calls handled in this turn (run or refused for their arguments)
	last   string // the last non-empty text of the model in this turn
}

// Turn runs one turn of the episode: see the package documentation.
func (a *Agent) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if err := a.begin(tc); err != nil {
		return "", err
	}
	a.msgs = append(a.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: UserContent(tc.User, tc.Now(), a.stated)})
	a.stated = tc.Now()
	t := &turn{tc: tc}
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		choice, usage, extras, err := a.complete(ctx)
		if err != nil {
			return "", err
		}
		r := a.read(t, choice)
		tc.Assistant(episode.AssistantMessage{Content: r.text, ToolCalls: r.reported, Usage: usage,
			Reasoning: r.reasoning, Raw: r.raw, CallsFrom: r.from, FinishReason: string(choice.FinishReason),
			Logprobs: extras.logprobs, PromptTokenIDs: extras.promptIDs, CompletionTokenIDs: extras.completionIDs, Note: r.note})
		hist := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: r.text}
		if a.cfg.ReasoningHistory == ReasoningKeep {
			hist.ReasoningContent = r.reasoning
		}
		calls := r.calls
		for _, c := range calls {
			c.Function.Arguments = historyArgs(c.Function.Arguments)
			hist.ToolCalls = append(hist.ToolCalls, c)
		}
		a.msgs = append(a.msgs, hist)
		if r.text != "" {
			t.last = r.text
		}
		if choice.FinishReason == openai.FinishReasonLength {
			tc.Truncate()
			a.notRun(tc, calls, "the tool was not run: the answer was cut off at the token limit")
			return t.last, nil
		}
		if len(calls) == 0 {
			if tc.Simulated() && r.text != "" {
				answer, done, err := tc.Ask(r.text)
				if err != nil {
					return "", err
				}
				if !done {
					a.msgs = append(a.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: answer})
					continue
				}
			}
			return t.last, nil
		}
		for i, c := range calls {
			done, err := a.runCall(ctx, t, c)
			if err != nil || done {
				a.notRun(tc, calls[i+1:], "the tool was not run: the turn ended before it")
				if err != nil {
					return "", err
				}
				return t.last, nil
			}
		}
	}
}

// runCall runs one tool call and appends its tool message. done means the turn is over (the
// call was not run and has its tool message).
func (a *Agent) runCall(ctx context.Context, t *turn, c openai.ToolCall) (done bool, err error) {
	tc := t.tc
	name := c.Function.Name
	args, problem := parseArgs(c.Function.Arguments)
	if problem != "" {
		if t.issued >= tc.Task().MaxCallsPerTurn {
			tc.Truncate()
			a.notRun(tc, []openai.ToolCall{c}, "the tool was not run: the turn reached its limit of tool calls")
			return true, nil
		}
		t.issued++
		content := BadArgumentsContent(name, problem, c.Function.Arguments)
		a.toolMessage(c.ID, content)
		tc.NotRun(c.ID, content)
		return false, nil
	}
	t.issued++
	call, err := tc.Call(c.ID, name, args)
	if errors.Is(err, episode.ErrTruncated) {
		a.notRun(tc, []openai.ToolCall{c}, "the tool was not run: the turn reached its limit of tool calls")
		return true, nil
	}
	if err != nil {
		a.notRun(tc, []openai.ToolCall{c}, "the tool was not run: "+err.Error())
		if cerr := ctx.Err(); cerr != nil {
			return true, cerr
		}
		return true, err
	}
	if call.IsError {
		a.toolMessage(c.ID, ToolErrorContent(call.Error, call.Fault))
	} else {
		a.toolMessage(c.ID, call.Content)
	}
	return false, nil
}

// request is a chat-completions request with the configured model and token limit (sent as
// max_completion_tokens to the models that refuse max_tokens).
func (a *Agent) request(msgs []openai.ChatCompletionMessage, tools []openai.Tool) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: a.cfg.Model, Messages: msgs, Tools: tools}
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
	resp, err := a.client.CreateChatCompletion(rctx, a.request(a.msgs, a.tools))
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
	calls     []openai.ToolCall
	reported  []jsonv.Value
	note      string
}

// read reads an answer: its text and reasoning, and its tool calls with the ids they run under
// (see the package documentation).
func (a *Agent) read(t *turn, choice openai.ChatCompletionChoice) reading {
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
	r.calls = a.assignIDs(t, raw)
	r.reported = reported(raw, r.calls)
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

// assignIDs returns the tool calls with the ids they are known by: the model's, or
// call_<turn>_<n> when the model gave none or repeated one.
func (a *Agent) assignIDs(t *turn, raw []openai.ToolCall) []openai.ToolCall {
	out := make([]openai.ToolCall, len(raw))
	for i, c := range raw {
		t.n++
		id := c.ID
		if id == "" || a.usedIDs[id] {
			id = fmt.Sprintf("call_%d_%d", t.tc.Index+1, t.n)
			for k := 2; a.usedIDs[id]; k++ {
				id = fmt.Sprintf("call_%d_%d_%d", t.tc.Index+1, t.n, k)
			}
		}
		a.usedIDs[id] = true
		out[i] = openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: c.Function}
	}
	return out
}

// reported is the tool calls for TurnContext.Assistant: names and arguments as the model sent
// them, with the ids the calls run under.
func reported(raw, calls []openai.ToolCall) []jsonv.Value {
	if len(raw) == 0 {
		return nil
	}
	out := make([]jsonv.Value, len(raw))
	for i, c := range raw {
		typ := string(c.Type)
		if typ == "" {
			typ = string(openai.ToolTypeFunction)
		}
		out[i] = jsonv.NewObject(
			"id", calls[i].ID,
			"type", typ,
			"function", jsonv.NewObject("name", c.Function.Name, "arguments", c.Function.Arguments),
		)
	}
	return out
}

// ParseArguments decodes a model's tool-call arguments as the agent does: "" and null are {},
// anything but a JSON object is a problem, which says why the call cannot run.
func ParseArguments(s string) (args *jsonv.Object, problem string) { return parseArgs(s) }

// parseArgs decodes tool-call arguments; problem says why they cannot be used.
func parseArgs(s string) (args *jsonv.Object, problem string) {
	if strings.TrimSpace(s) == "" {
		return &jsonv.Object{}, ""
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return nil, fmt.Sprintf("the arguments are not valid JSON (%v)", err)
	}
	switch x := v.(type) {
	case *jsonv.Object:
		return x, ""
	case nil:
		return &jsonv.Object{}, ""
	}
	return nil, fmt.Sprintf("the arguments must be a JSON object, not %s", article(jsonv.TypeName(v)))
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// historyArgs are the arguments of a past tool call as sent back to the model: "{}" unless
// they are a JSON object.
func historyArgs(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	if v, err := jsonv.DecodeString(s); err == nil {
		if _, ok := v.(*jsonv.Object); ok {
			return s
		}
	}
	return "{}"
}

// clip shortens s to about n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// errorContent is the tool message of a failed call.
// BadArgumentsContent is the tool message of a call the agent did not run because its arguments
// are not a JSON object (problem as ParseArguments says it).
func BadArgumentsContent(name, problem, args string) string {
	return ToolErrorContent(fmt.Sprintf("%s was not run: %s. The arguments were: %s. Send them as one JSON object with the tool's parameters.",
		name, problem, clip(args, 200)), false)
}

// ToolErrorContent is the tool message of a failed call: {"error": msg}, with "transient": true
// for an injected fault. export sft writes the same, so training data says what the model saw.
func ToolErrorContent(msg string, transient bool) string {
	o := jsonv.NewObject("error", msg)
	if transient {
		o.Set("transient", true)
	}
	return jsonv.MustEncode(o)
}

func (a *Agent) toolMessage(id, content string) {
	a.msgs = append(a.msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: content})
}

// notRun answers tool calls that will not run, so that every tool call in the history has its
// tool message (OpenAI rejects a history without).
func (a *Agent) notRun(tc *episode.TurnContext, calls []openai.ToolCall, why string) {
	for _, c := range calls {
		content := ToolErrorContent(why, false)
		a.toolMessage(c.ID, content)
		tc.NotRun(c.ID, content)
	}
}
