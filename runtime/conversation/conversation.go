// Package conversation is the conversation between a model and the tools of an episode, written
// once. A Conversation keeps the message history of one episode, as the model is shown it, and
// its Turn runs one turn of the protocol; every agent that speaks for a model feeds it the
// model's messages through a Source:
//
//   - runtime/modelagent: the model over HTTP;
//   - runtime/session: a served session's client, one action at a time;
//   - runtime/trace: the messages a trace recorded, for replay (against a live episode) and for
//     History (the conversation of a trace, which export writes).
//
// so that a served episode, a model's episode, its replay and its export are the same
// conversation by construction. The episode side is an Env: a live turn (Live), or a trace.
//
// One turn. The user message opens it (with a note of the time when the virtual clock moved
// since the model was last told: UserContent). Then the source gives the model's messages one by
// one (Answer), each reported (Env.Assistant) and kept:
//
//   - A message without tool calls ends the turn with the turn's last non-empty text as the
//     reply, unless the turn's user is simulated and the message has text: then the text goes to
//     the user (Env.Ask) and, while the user answers rather than saying it is done, the answer is
//     the next user message and the turn goes on.
//   - A message's tool calls run in order, each under its id: the model's, or call_<turn>_<n>
//     (the n-th call of the turn, both from 1) when it gave none or one used before. Each gets a
//     tool message: the call's result (ResultContent: a result that is a string is its text,
//     any other its JSON), or ToolErrorContent for a tool error or an injected fault. Arguments that are not a JSON object (ParseArguments) are not run: the tool message
//     says why (BadArgumentsContent), and the attempt counts towards the turn's
//     max_calls_per_turn, so that a model that never gets them right still ends its turn.
//   - A call past max_calls_per_turn is not run and ends the turn as truncated (NotRunLimit); so
//     does an answer cut off at the token limit (Answer.Cut: none of its calls run, NotRunCut).
//     The calls of the message after the one that ended the turn are not run either
//     (NotRunEnded). The reply is the last text.
//
// Every call that does not run still gets its tool message (chat servers reject a history
// without one), and the episode is told (Env.NotRun, the trace's not_run event). The history
// keeps the arguments as the model sent them; HistoryArgs is what goes back to a model.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// The tool messages of calls that did not run.
const (
	// NotRun is the tool message's error of a call that did not run, when why is not known (a
	// trace of an older engine, which recorded no tool message for it).
	NotRun = "the tool was not run"
	// NotRunLimit: the call is past the turn's max_calls_per_turn.
	NotRunLimit = NotRun + ": the turn reached its limit of tool calls"
	// NotRunEnded: a call before it in the same message ended the turn.
	NotRunEnded = NotRun + ": the turn ended before it"
	// NotRunCut: the answer was cut off at the token limit (finish_reason length).
	NotRunCut = NotRun + ": the answer was cut off at the token limit"
)

// The roles of messages.
const (
	System    = "system"
	User      = "user"
	Assistant = "assistant"
	Tool      = "tool"
)

// Call is a tool call: in an Answer as the model sent it, in a Message with the id it ran under.
type Call struct {
	ID   string `json:"id"`
	Type string `json:"type,omitempty"` // as sent; "" is "function"
	Name string `json:"name"`
	// Arguments are the JSON text the model sent, as it sent it.
	Arguments string `json:"arguments"`
}

// Message is one message of the history. Its JSON is the history's own form (the tests compare
// histories by it); each agent writes the messages in the shape its model or client takes.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is an assistant message's reasoning as the model sent it ("" when none).
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are an assistant message's tool calls, with the ids they ran under.
	ToolCalls []Call `json:"tool_calls,omitempty"`
	// ToolCallID and Name are a tool message's call and tool; IsError says its content is an
	// error (a tool error, an injected fault, or a call that did not run), NotRun that the call
	// did not run.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	NotRun     bool   `json:"not_run,omitempty"`
	// Turn is the turn the message belongs to (0 for the system message).
	Turn int `json:"turn"`
	// From is what an assistant message was made of (Answer.From), nil for a live one.
	From any `json:"-"`
}

// Answer is one message of the model, as a Source gives it.
type Answer struct {
	// Text is the message's text (without reasoning, and without tool calls the source read out
	// of it); Reasoning its reasoning.
	Text, Reasoning string
	// Calls are its tool calls as the model sent them; an id "" (or one used before) is given one.
	Calls []Call
	// Cut says the answer was cut off at the token limit (finish_reason length): none of its
	// calls runs, and the turn ends as truncated.
	Cut bool
	// Report holds what Env.Assistant reports beside the text, the reasoning and the calls (token
	// usage, finish reason, the raw content...); its Content, Reasoning and ToolCalls are the
	// machine's.
	Report episode.AssistantMessage
	// Stopped, for a recorded answer: the turn stopped after Ran of its calls ran (the episode
	// was interrupted, or the trace shows no more of them running); the calls after those are not
	// run, and the source is asked for what comes next.
	Stopped bool
	Ran     int
	// From is kept in the message (Message.From): what the answer was made of.
	From any
}

// Source gives the model's messages of a turn.
type Source interface {
	// Next is the model's next message; c is the conversation so far. An error ends the turn
	// with it, except ErrTruncated.
	Next(ctx context.Context, c *Conversation) (Answer, error)
}

// ErrTruncated, from a Source, ends the turn as truncated with the last text as its reply: a
// recorded turn that ends there.
var ErrTruncated = errors.New("the turn ends here, truncated")

// Env is the episode's side of a turn: a live episode (Live) or a recorded one.
type Env interface {
	// Index is the turn (0-based); User its user message; Now the virtual time ("" when not known).
	Index() int
	User() string
	Now() string
	// MaxCalls is the task's max_calls_per_turn.
	MaxCalls() int
	// Simulated says the turn's user is simulated; Ask sends it the model's message.
	Simulated() bool
	Ask(said string) (answer string, done bool, err error)
	// Call runs a tool call (episode.ErrTruncated once the turn is full).
	Call(id, name string, args *jsonv.Object) (*episode.Call, error)
	// NotRun tells of a call that did not run and returns the tool message's content: content,
	// or the one a record holds.
	NotRun(c Call, content string) string
	// Truncate ends the turn as truncated.
	Truncate()
	// Assistant reports a model's message.
	Assistant(m episode.AssistantMessage)
}

// Live is the Env of a turn of a running episode.
func Live(tc *episode.TurnContext) Env { return live{tc} }

type live struct{ tc *episode.TurnContext }

func (l live) Index() int                           { return l.tc.Index }
func (l live) User() string                         { return l.tc.User }
func (l live) Now() string                          { return l.tc.Now() }
func (l live) MaxCalls() int                        { return l.tc.Task().MaxCallsPerTurn }
func (l live) Simulated() bool                      { return l.tc.Simulated() }
func (l live) Ask(s string) (string, bool, error)   { return l.tc.Ask(s) }
func (l live) Truncate()                            { l.tc.Truncate() }
func (l live) Assistant(m episode.AssistantMessage) { l.tc.Assistant(m) }
func (l live) Call(id, name string, args *jsonv.Object) (*episode.Call, error) {
	return l.tc.Call(id, name, args)
}
func (l live) NotRun(c Call, content string) string {
	l.tc.NotRun(c.ID, content)
	return content
}

// Conversation is the history of one episode. Its methods are safe to call from any goroutine;
// Turn runs one turn at a time.
type Conversation struct {
	mu     sync.Mutex
	msgs   []Message
	used   map[string]bool // the call ids given out
	stated string          // the virtual time the model was last told
	zone   *time.Location  // the user's time zone, nil for UTC
}

// New starts a conversation with its system message; now is the virtual time the system message
// states ("" when not known).
func New(system, now string) *Conversation {
	return &Conversation{msgs: []Message{{Role: System, Content: system}}, used: map[string]bool{}, stated: now}
}

// InZone sets the user's time zone (task(timezone = ...), nil for UTC), in which the notes of
// the time are written, and returns c. Call it before the first turn.
func (c *Conversation) InZone(loc *time.Location) *Conversation {
	c.zone = loc
	return c
}

// Messages returns a copy of the history, system message first.
func (c *Conversation) Messages() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return clone(c.msgs)
}

// Since returns a copy of the messages from the i-th on.
func (c *Conversation) Since(i int) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i > len(c.msgs) {
		i = len(c.msgs)
	}
	return clone(c.msgs[i:])
}

// Len is the number of messages.
func (c *Conversation) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

func clone(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	copy(out, msgs)
	for i := range out {
		out[i].ToolCalls = append([]Call(nil), out[i].ToolCalls...)
	}
	return out
}

func (c *Conversation) add(m Message) {
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
}

// turn is the state of one turn.
type turn struct {
	env    Env
	n      int    // tool calls the model made
	issued int    // tool calls handled (run, or refused for their arguments)
	last   string // the last non-empty text of the model
}

// Turn runs one turn: see the package documentation. It returns the reply, or the error that
// ended the turn (the source's, a simulated user's, or a call's that was not the turn's limit).
func (c *Conversation) Turn(ctx context.Context, env Env, src Source) (string, error) {
	now := env.Now()
	c.add(Message{Role: User, Content: UserContentIn(env.User(), now, c.stated, c.zone), Turn: env.Index()})
	if now != "" {
		c.stated = now
	}
	t := &turn{env: env}
	for {
		a, err := src.Next(ctx, c)
		if errors.Is(err, ErrTruncated) {
			env.Truncate()
			return t.last, nil
		}
		if err != nil {
			return "", err
		}
		calls := c.assign(t, a.Calls)
		env.Assistant(report(a, calls))
		c.add(Message{Role: Assistant, Content: a.Text, Reasoning: a.Reasoning, ToolCalls: calls, Turn: env.Index(), From: a.From})
		if a.Text != "" {
			t.last = a.Text
		}
		if a.Cut {
			env.Truncate()
			c.notRun(t, calls, NotRunCut)
			return t.last, nil
		}
		if len(calls) == 0 {
			if env.Simulated() && a.Text != "" {
				answer, done, err := env.Ask(a.Text)
				if err != nil {
					return "", err
				}
				if !done {
					c.add(Message{Role: User, Content: answer, Turn: env.Index()})
					continue
				}
			}
			return t.last, nil
		}
		ran := 0
		for i, call := range calls {
			if a.Stopped && ran >= a.Ran {
				c.notRun(t, calls[i:], NotRunEnded)
				break
			}
			over, run, err := c.call(ctx, t, call)
			if run {
				ran++
			}
			if err != nil || over {
				c.notRun(t, calls[i+1:], NotRunEnded)
				if err != nil {
					return "", err
				}
				return t.last, nil
			}
		}
	}
}

// assign gives the calls the ids they run under.
func (c *Conversation) assign(t *turn, calls []Call) []Call {
	if len(calls) == 0 {
		return nil
	}
	out := make([]Call, len(calls))
	for i, call := range calls {
		t.n++
		id := call.ID
		if id == "" || c.used[id] {
			id = fmt.Sprintf("call_%d_%d", t.env.Index()+1, t.n)
			for k := 2; c.used[id]; k++ {
				id = fmt.Sprintf("call_%d_%d_%d", t.env.Index()+1, t.n, k)
			}
		}
		c.used[id] = true
		call.ID = id
		out[i] = call
	}
	return out
}

// report is the message as Env.Assistant reports it: the calls with their ids and the
// arguments as sent.
func report(a Answer, calls []Call) episode.AssistantMessage {
	m := a.Report
	m.Content, m.Reasoning, m.ToolCalls = a.Text, a.Reasoning, nil
	for _, call := range calls {
		typ := call.Type
		if typ == "" {
			typ = "function"
		}
		m.ToolCalls = append(m.ToolCalls, jsonv.NewObject("id", call.ID, "type", typ,
			"function", jsonv.NewObject("name", call.Name, "arguments", call.Arguments)))
	}
	return m
}

// call handles one tool call. over says the turn is over; run that the call went to the
// episode.
func (c *Conversation) call(ctx context.Context, t *turn, call Call) (over, run bool, err error) {
	env := t.env
	args, problem := ParseArguments(call.Arguments)
	if problem != "" {
		if t.issued >= env.MaxCalls() {
			env.Truncate()
			c.notRun(t, []Call{call}, NotRunLimit)
			return true, false, nil
		}
		t.issued++
		c.notRunWith(t, call, BadArgumentsContent(call.Name, problem, call.Arguments))
		return false, false, nil
	}
	t.issued++
	res, err := env.Call(call.ID, call.Name, args)
	switch {
	case errors.Is(err, episode.ErrTruncated):
		c.notRun(t, []Call{call}, NotRunLimit)
		return true, true, nil
	case err != nil:
		c.notRun(t, []Call{call}, NotRun+": "+err.Error())
		if cerr := ctx.Err(); cerr != nil {
			return true, true, cerr
		}
		return true, true, err
	case res.IsError:
		c.add(Message{Role: Tool, Content: ToolErrorContent(res.Error, res.Fault), ToolCallID: call.ID, Name: call.Name, IsError: true, Turn: env.Index()})
	default:
		c.add(Message{Role: Tool, Content: ResultContent(res.Content), ToolCallID: call.ID, Name: call.Name, Turn: env.Index()})
	}
	return false, true, nil
}

// notRun answers calls that did not run, each with the error why.
func (c *Conversation) notRun(t *turn, calls []Call, why string) {
	for _, call := range calls {
		c.notRunWith(t, call, ToolErrorContent(why, false))
	}
}

func (c *Conversation) notRunWith(t *turn, call Call, content string) {
	content = t.env.NotRun(call, content)
	c.add(Message{Role: Tool, Content: content, ToolCallID: call.ID, Name: call.Name, IsError: true, NotRun: true, Turn: t.env.Index()})
}

// UserContent is UserContentIn for a user whose time zone is UTC.
func UserContent(user, now, stated string) string { return UserContentIn(user, now, stated, nil) }

// UserContentIn is the user message as the model is shown it: when the virtual clock no longer
// shows the time the model was last told (stated: the system prompt's, then each note's), the
// message starts with a note of the new time in the user's time zone loc (Local), so that a
// model knows a day has passed between turns.
func UserContentIn(user, now, stated string, loc *time.Location) string {
	if now == "" || stated == "" || now == stated {
		return user
	}
	return "(It is now " + Local(now, loc) + ".)\n\n" + user
}

// Local is a virtual time (RFC 3339, as the clock shows it) as a model is told it: the weekday
// and the time in the user's time zone loc (nil for UTC), such as "Monday,
// 2026-01-05T10:00:00+01:00"; the system prompt and the notes of the time say it so. A time
// that does not parse is given as it is.
func Local(now string, loc *time.Location) string {
	t, err := time.Parse(time.RFC3339, now)
	if err != nil {
		return now
	}
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	return t.Weekday().String() + ", " + t.Format(time.RFC3339)
}

// ZoneName names a time zone as the system prompt and a trace's start event do: "UTC" (also for
// nil), or its offset from UTC such as "+01:00" (the fixed zones of task(timezone = ...)).
func ZoneName(loc *time.Location) string {
	if loc == nil || loc == time.UTC {
		return "UTC"
	}
	_, off := time.Unix(0, 0).In(loc).Zone()
	if off == 0 {
		return "UTC"
	}
	return time.Unix(0, 0).In(loc).Format("-07:00")
}

// ResultContent is the tool message of a call that succeeded, from its result as JSON text (the
// episode's Call.Content, a trace's result event): a result that is a string reaches the model as
// that text (a file fs_read read, as it is, not a JSON string with its newlines escaped); any
// other result (an object, a list, a number, null) as its JSON. Errors are always a JSON object
// (ToolErrorContent). Every tool follows this one rule, for every agent, session, replay and
// export.
func ResultContent(result string) string {
	if strings.HasPrefix(result, `"`) {
		if v, err := jsonv.DecodeString(result); err == nil {
			if s, ok := v.(string); ok {
				return s
			}
		}
	}
	return result
}

// ParseArguments decodes a model's tool-call arguments: "" and null are {}, anything but a JSON
// object is a problem, which says why the call cannot run.
func ParseArguments(s string) (args *jsonv.Object, problem string) {
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

// HistoryArgs are the arguments of a past tool call as they go back to a model: "{}" unless
// they are a JSON object (vLLM parses the arguments of past calls and refuses a request whose
// arguments it cannot parse).
func HistoryArgs(s string) string {
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

// BadArgumentsContent is the tool message of a call that was not run because its arguments are
// not a JSON object (problem as ParseArguments says it).
func BadArgumentsContent(name, problem, args string) string {
	return ToolErrorContent(fmt.Sprintf("%s was not run: %s. The arguments were: %s. Send them as one JSON object with the tool's parameters.",
		name, problem, Clip(args, 200)), false)
}

// FaultRetry is what the tool message of an injected fault says about retrying it.
const FaultRetry = "the call was not applied and changed nothing; call it again now with the same arguments (no wait is needed; another attempt may fail the same way)"

// ToolErrorContent is the tool message of a failed call: {"error": msg}; for an injected fault
// also "transient": true, "applied": false (a fault fails the attempt before the tool runs, so
// nothing of it is applied) and "retry" (FaultRetry: when and how to try again).
func ToolErrorContent(msg string, transient bool) string {
	o := jsonv.NewObject("error", msg)
	if transient {
		o.Set("transient", true)
		o.Set("applied", false)
		o.Set("retry", FaultRetry)
	}
	return jsonv.MustEncode(o)
}

// Clip shortens s to about n bytes, on a rune boundary, with "..." where it was cut: how the
// messages quote what a model sent.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
