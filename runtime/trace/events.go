package trace

import (
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// The events of a trace, one type per kind. These types are the one description of the format:
// the Writer encodes them, Read decodes and checks them, and the schemas that do both are
// derived from their fields (codec.go); nothing else lists the fields.
//
// A line is {"event": KIND, ...the fields in their order}: the JSON name is the json tag's, the
// JSON type follows from the Go type. A field is required unless tagged omitempty (not written
// when zero) or trace:"optional" (always written, but absent from traces of older engines);
// trace:"null" lets it be null (a nil pointer or slice). An int field named turn is the 0-based
// turn the event belongs to.

// Body is the content of one line: *Start, *User, *Assistant, *Call, *CallResult, *NotRun, *Reply,
// *TurnEnd or *End.
type Body interface {
	// Kind is the line's "event".
	Kind() string
}

// bodies are the event types, in the order they first appear in a trace.
var bodies = []Body{(*Start)(nil), (*User)(nil), (*Assistant)(nil), (*Call)(nil), (*CallResult)(nil),
	(*NotRun)(nil), (*SimUser)(nil), (*Reply)(nil), (*Judge)(nil), (*TurnEnd)(nil), (*End)(nil)}

// Start is the first line: the episode the trace records.
type Start struct {
	Format     string        `json:"format"` // NewWriter writes the constant Format
	Task       string        `json:"task"`
	File       string        `json:"file"` // path as given
	FileSHA256 string        `json:"file_sha256"`
	Seed       int64         `json:"seed"`   // the run seed (--seed)
	Engine     string        `json:"engine"` // NewWriter writes the constant Engine
	Agent      string        `json:"agent"`
	Tools      []jsonv.Value `json:"tools"` // the tool schemas the agent was shown
	State      string        `json:"state"` // hash after setup
	// System is the system prompt a model agent was given (training data export needs
	// it). Empty for the oracle and noop agents, and then not written.
	System string `json:"system,omitempty"`
	// Now is the virtual clock right after setup (with the user events' "now",
	// it tells what time a model was told).
	Now string `json:"now,omitempty"`
	// TimeZone is the user's time zone (task(timezone = ...)) when it is not UTC, as its offset
	// ("+01:00", conversation.ZoneName): the notes of the time in the model's conversation are
	// written in it. Absent for UTC and from traces of older engines.
	TimeZone string `json:"timezone,omitempty"`
	// Rand is the first 64-bit draw of the random source right after setup, as 16 hex digits.
	// The state hash leaves the random source out, so this is what shows
	// a changed seed on replay in a task that never draws from ws.rand and injects no faults.
	// Absent from traces of older engines.
	Rand string `json:"rand,omitempty"`
	// Sources are the task file (first) and every file it loads, directly or not, with their
	// SHA-256: replay names a loaded file that changed. StartOf cannot
	// read the corpus, so the caller sets them (Sources); absent from traces of older engines.
	Sources []Source `json:"sources,omitempty"`
	// Model is the model of a model agent's episode: its name, endpoint and the settings every
	// request carried. Absent for other agents and from traces of older engines.
	Model *Model `json:"model,omitempty"`
	// Split is the split of its corpus the task is in (package split), when the run was asked
	// for one (rollout --split); export sft and rl refuse an episode of the test split.
	Split *Split `json:"split,omitempty"`
}

// Split is where a task stands in a split of its corpus into train, dev and test.
type Split struct {
	Name   string `json:"name"`   // train, dev or test
	Family string `json:"family"` // the family that keeps it with its siblings
	Ratio  string `json:"ratio"`  // TRAIN,DEV,TEST, as --split-ratio takes it
	Seed   int64  `json:"seed"`   // --split-seed
}

// Model describes the model behind a model agent.
type Model struct {
	Name string `json:"name"`
	// BaseURL is the endpoint without user info, query or fragment (they may hold secrets).
	BaseURL string `json:"base_url"`
	// Request are the fields every request set besides model, messages and tools, as sent:
	// temperature, top_p, max_tokens (or max_completion_tokens), stop and the extra body.
	Request *jsonv.Object `json:"request"`
	// Headers are the names of the extra headers sent (their values may be secrets).
	Headers []jsonv.Value `json:"headers,omitempty"`
	// ToolCallFormat and ReasoningHistory are the agent's settings for tool calls written as text
	// and for reasoning in the history it sends back.
	ToolCallFormat   string `json:"tool_call_format"`
	ReasoningHistory string `json:"reasoning_history"`
	// ToolChoice is the tool_choice sent on every request that carried tools (--tool-choice);
	// absent when none was sent.
	ToolChoice string `json:"tool_choice,omitempty"`
}

// Source is one file of a task's source in a start event.
type Source struct {
	Path   string `json:"path"` // relative to the corpus root
	SHA256 string `json:"sha256"`
}

// User is the user's message that opens a turn.
type User struct {
	Turn    int    `json:"turn"`
	Content string `json:"content"`
	State   string `json:"state"` // hash when the user speaks
	Now     string `json:"now" trace:"optional"`
}

// Assistant is a model's message.
type Assistant struct {
	Turn    int    `json:"turn"`
	Content string `json:"content" trace:"null"`
	// ToolCalls are the tool calls as the model sent them (chat-completions shape), nil for none.
	ToolCalls []jsonv.Value `json:"tool_calls" trace:"null"`
	Usage     *jsonv.Object `json:"usage" trace:"null"` // token usage, nil when unknown
	// The fields below are those of episode.AssistantMessage, written when not empty (absent
	// from traces of older engines).
	Reasoning          string        `json:"reasoning,omitempty"`
	Raw                string        `json:"raw,omitempty"`
	CallsFrom          string        `json:"calls_from,omitempty"`
	FinishReason       string        `json:"finish_reason,omitempty"`
	Logprobs           *jsonv.Object `json:"logprobs,omitempty"`
	PromptTokenIDs     []jsonv.Value `json:"prompt_token_ids,omitempty"`
	CompletionTokenIDs []jsonv.Value `json:"completion_token_ids,omitempty"`
	Note               string        `json:"note,omitempty"`
}

// assistantOf is the assistant event of a model's message.
func assistantOf(turn int, m *episode.AssistantMessage) *Assistant {
	return &Assistant{Turn: turn, Content: m.Content, ToolCalls: m.ToolCalls, Usage: m.Usage,
		Reasoning: m.Reasoning, Raw: m.Raw, CallsFrom: m.CallsFrom, FinishReason: m.FinishReason,
		Logprobs: m.Logprobs, PromptTokenIDs: m.PromptTokenIDs, CompletionTokenIDs: m.CompletionTokenIDs, Note: m.Note}
}

// Message is the model's message an assistant event records.
func (a *Assistant) Message() episode.AssistantMessage {
	return episode.AssistantMessage{Content: a.Content, ToolCalls: a.ToolCalls, Usage: a.Usage,
		Reasoning: a.Reasoning, Raw: a.Raw, CallsFrom: a.CallsFrom, FinishReason: a.FinishReason,
		Logprobs: a.Logprobs, PromptTokenIDs: a.PromptTokenIDs, CompletionTokenIDs: a.CompletionTokenIDs, Note: a.Note}
}

// Call is a tool call, before it runs.
type Call struct {
	Turn int           `json:"turn"`
	ID   string        `json:"id"`
	Name string        `json:"name"`
	Args *jsonv.Object `json:"args"`
}

// CallResult is what a call gave (a result event).
type CallResult struct {
	Turn    int     `json:"turn"`
	ID      string  `json:"id"`                 // the call's
	Content string  `json:"content"`            // the result's JSON text (the model is shown conversation.ResultContent of it)
	Error   *string `json:"error" trace:"null"` // the tool error, nil when the call succeeded
	Fault   bool    `json:"fault"`              // an injected transient error
	State   string  `json:"state"`              // hash after the call
}

// NotRun is the tool message a model agent sent for a tool call of the model it did not run:
// arguments that are not a JSON object, or a turn that ended before the call (absent from traces
// of older engines, whose exports rebuild it).
type NotRun struct {
	Turn    int    `json:"turn"`
	ID      string `json:"id"`      // the tool call's
	Content string `json:"content"` // the tool message's content, as the model was shown it
}

// SimUser is one exchange with a simulated user within a turn (episode.UserAsk): the agent's
// message, the user's answer, and the hash of the request a user model was (or would have been)
// sent. Replay gives the recorded answer back while the request is the same.
type SimUser struct {
	Turn          int    `json:"turn"`
	Round         int    `json:"round"`
	Said          string `json:"said"`
	RequestSHA256 string `json:"request_sha256"`
	Content       string `json:"content"`
	Done          bool   `json:"done"`
	Source        string `json:"source"` // stand-in, model or rounds
	Model         string `json:"model,omitempty"`
	// Request is the request a user model was sent (the chat messages, system first); only
	// written for Source "model" (the stand-ins' requests follow from the task).
	Request []jsonv.Value `json:"request,omitempty"`
}

// Judge is one verdict of a judge in a verifier (episode.JudgeCall). It comes before the
// turn_end (or end) event of the verifier that asked.
type Judge struct {
	Turn          *int    `json:"turn" trace:"null"` // nil for the task's final verifier
	Rubric        string  `json:"rubric"`
	Text          string  `json:"text"`
	RequestSHA256 string  `json:"request_sha256"`
	Passed        bool    `json:"passed"`
	Score         float64 `json:"score"`
	Reason        string  `json:"reason"`
	Source        string  `json:"source"` // stand-in or model
	Model         string  `json:"model,omitempty"`
	// Request is the request a judge model was sent; only written for Source "model".
	Request []jsonv.Value `json:"request,omitempty"`
}

// simUserOf is the sim_user event of an exchange.
func simUserOf(x *episode.UserAsk) *SimUser {
	e := &SimUser{Turn: x.Turn, Round: x.Round, Said: x.Said, RequestSHA256: x.RequestSHA256, Content: x.Content,
		Done: x.Done, Source: x.Source, Model: x.Model}
	if x.Source == "model" {
		e.Request = x.Request
	}
	return e
}

// judgeOf is the judge event of a verdict.
func judgeOf(j *episode.JudgeCall) *Judge {
	e := &Judge{Turn: j.Turn, Rubric: j.Rubric, Text: j.Text, RequestSHA256: j.RequestSHA256, Passed: j.Passed,
		Score: j.Score, Reason: j.Reason, Source: j.Source, Model: j.Model}
	if j.Source == "model" {
		e.Request = j.Request
	}
	return e
}

// Reply is the agent's answer that ends its turn.
type Reply struct {
	Turn    int    `json:"turn"`
	Content string `json:"content"`
}

// TurnEnd is a turn's verdict.
type TurnEnd struct {
	Turn      int      `json:"turn"`
	Score     *float64 `json:"score" trace:"null"` // nil for a turn without a verifier
	Truncated bool     `json:"truncated"`
	Checks    []Check  `json:"checks"`
	// Rounds is how many answers a simulated user gave in the turn (absent for other users).
	Rounds int `json:"rounds,omitempty"`
}

// End is the last line: the episode's verdict. `coworkenv run --json` prints it too.
type End struct {
	Score      float64  `json:"score"`
	Passed     bool     `json:"passed"`
	Completion float64  `json:"completion"`
	Safety     float64  `json:"safety"`
	Robustness float64  `json:"robustness"`
	Checks     []Check  `json:"checks"`
	State      string   `json:"state"`           // the final state hash
	Error      *Failure `json:"error,omitempty"` // what stopped the episode or zeroed its score
}

// Check is one rubric item of a turn_end or end event.
type Check struct {
	Kind    string   `json:"kind"` // check or safety
	Message string   `json:"message"`
	Weight  *float64 `json:"weight" trace:"null"` // nil for safety items
	Passed  bool     `json:"passed"`
	Turn    *int     `json:"turn" trace:"null"` // nil for the task's final verifier
}

// Failure is the error of an end event.
type Failure struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	File    *string `json:"file" trace:"null"`
	Line    *int    `json:"line" trace:"null"` // line and col are nil when the position is unknown
	Col     *int    `json:"col" trace:"null"`
}

func (*Start) Kind() string      { return "start" }
func (*User) Kind() string       { return "user" }
func (*Assistant) Kind() string  { return "assistant" }
func (*Call) Kind() string       { return "call" }
func (*CallResult) Kind() string { return "result" }
func (*NotRun) Kind() string     { return "not_run" }
func (*SimUser) Kind() string    { return "sim_user" }
func (*Judge) Kind() string      { return "judge" }
func (*Reply) Kind() string      { return "reply" }
func (*TurnEnd) Kind() string    { return "turn_end" }
func (*End) Kind() string        { return "end" }

// Checks is the trace form of rubric items.
func Checks(items []dsl.CheckItem) []Check {
	out := make([]Check, len(items))
	for i, it := range items {
		c := Check{Kind: it.Kind, Message: it.Message, Passed: it.Passed, Turn: it.Turn}
		if it.Kind != "safety" {
			c.Weight = &it.Weight
		}
		out[i] = c
	}
	return out
}

// failureOf is the trace form of a diagnostic; nil for nil.
func failureOf(d *dsl.Diagnostic) *Failure {
	if d == nil {
		return nil
	}
	f := &Failure{Code: d.Code, Message: d.Message}
	if d.File != "" {
		f.File = &d.File
	}
	if d.Line > 0 {
		f.Line, f.Col = &d.Line, &d.Col
	}
	return f
}

// Diagnostic is the diagnostic a failure records (its severity from the code's registration).
func (f *Failure) Diagnostic() dsl.Diagnostic {
	d := dsl.Diagnostic{Code: f.Code, Message: f.Message}
	if f.File != nil {
		d.File = *f.File
	}
	if f.Line != nil {
		d.Line = *f.Line
	}
	if f.Col != nil {
		d.Col = *f.Col
	}
	if c, ok := dsl.CodeByID(f.Code); ok {
		d.Severity = c.Severity
	}
	return d
}
