// Package export turns traces into training and evaluation data (docs/training.md,
// docs/rewards.md, docs/interchange.md).
//
// Messages. An episode becomes a conversation in the OpenAI chat format: a system message, a
// user message per user event, assistant messages (with "tool_calls"), and a "tool" message with
// "tool_call_id" for every tool call, in the order of the calls. MessageOptions choose its shape:
// Messages (and `export rl`) writes arguments as JSON strings; `export sft` writes them as JSON
// objects by default, names the tool on every tool message, and adds the model's reasoning (see
// sft.go for the row formats).
//
//   - Model traces (they hold assistant events) keep what the model sent: one assistant message
//     per assistant event (its text, "" when it had none, its reasoning when asked, and its tool
//     calls with the ids the calls ran under). Each tool message holds what the agent showed the
//     model: the result's content, or for a tool error {"error": MESSAGE} (with "transient": true
//     for an injected fault), as runtime/modelagent does. A tool call the agent did not run has no
//     result: its tool message is the one the not_run event records (MessageOptions.RecordedNotRun)
//     or, for traces of older engines without them, is rebuilt: exactly for arguments that are
//     not a JSON object (the message modelagent sends), and as {"error": "the tool was not run"}
//     otherwise (a turn cut short by max_calls_per_turn or by the token limit). Arguments sent as
//     "" or null become "{}", and arguments that are not a string are encoded as one.
//   - Traces of agents that are not models (oracle, noop, replay) are rebuilt from their call,
//     result and reply events: one assistant message with one tool call per call event (the id
//     is the call's id, the arguments its args), a tool message per result as above, and the
//     reply as the turn's last assistant message ("" when the solution gave none).
//
// System message. A trace of a model records its system prompt in the start event; that is
// used. Other traces do not, so Systems rebuilds it as the model agent would have got it:
// modelagent.DefaultSystemPrompt with the user's mail address and the virtual time right after
// setup, found by loading the task and running its setup with the trace's seed. When the task
// cannot be loaded (the file moved or no longer declares the task) the conversation has no
// system message.
//
// Verification. A trace is only a file: text edited after it was recorded, or an episode of
// another version of the task's files, would go into the training data as it is. `coworkenv
// export` therefore replays every trace it would keep (trace.ReplayCorpus, as `coworkenv replay`
// does) and leaves it out when ReplaySkip says so: a trace recorded with other versions of the
// task file or of a file it loads, or one whose replay differs from it. What replay cannot check
// (the text of a model's message other than each turn's last, its token usage) cannot be
// verified this way either.
package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Episode is one trace.
type Episode struct {
	Path   string
	Events []trace.Event // as trace.Read returns them: start first, end last
}

// ReadFile reads a trace.
func ReadFile(path string) (*Episode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	return Decode(path, data)
}

// Decode reads the trace data read from path: the bytes that are replayed to verify it are then
// exactly those that are exported.
func Decode(path string, data []byte) (*Episode, error) {
	events, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return &Episode{Path: path, Events: events}, nil
}

func (e *Episode) start() *trace.Start { return e.Events[0].Body.(*trace.Start) }

// Start is the trace's start event.
func (e *Episode) Start() *trace.Start { return e.start() }
func (e *Episode) end() *trace.End     { return e.Events[len(e.Events)-1].Body.(*trace.End) }

// Task is the task's name.
func (e *Episode) Task() string { return e.start().Task }

// File is the task file as the trace records it.
func (e *Episode) File() string { return e.start().File }

// Agent is the agent's name.
func (e *Episode) Agent() string { return e.start().Agent }

// Seed is the run seed.
func (e *Episode) Seed() int64 { return e.start().Seed }

// Score is the end score, the reward.
func (e *Episode) Score() float64 { return e.end().Score }

// Passed is the end verdict.
func (e *Episode) Passed() bool { return e.end().Passed }

// Error is the message of the error that stopped or zeroed the episode, "" when none.
func (e *Episode) Error() string {
	f := e.end().Error
	if f == nil {
		return ""
	}
	if f.Message == "" {
		return "error"
	}
	return f.Message
}

// ErrorCode is the diagnostic code of the error that stopped or zeroed the episode, "" when
// none.
func (e *Episode) ErrorCode() string {
	if f := e.end().Error; f != nil {
		return f.Code
	}
	return ""
}

// FromModel reports whether a model made the episode: its trace holds assistant events (or its
// agent is openai).
func (e *Episode) FromModel() bool {
	if e.Agent() == "openai" {
		return true
	}
	for _, ev := range e.Events {
		if _, ok := ev.Body.(*trace.Assistant); ok {
			return true
		}
	}
	return false
}

// RecordedSystem is the system prompt the start event records ("" when none).
func (e *Episode) RecordedSystem() string { return e.start().System }

// Tools are the tool schemas the agent was shown.
func (e *Episode) Tools() []jsonv.Value {
	t := e.start().Tools
	if t == nil {
		t = []jsonv.Value{}
	}
	return t
}

// Sample is the sample number of a rollout trace (<sample>.jsonl), -1 for other names.
func (e *Episode) Sample() int {
	name := strings.TrimSuffix(filepath.Base(e.Path), ".jsonl")
	n, err := strconv.Atoi(name)
	if err != nil || n < 0 || strconv.Itoa(n) != name {
		return -1
	}
	return n
}

// MalformedCalls counts the model's tool calls whose arguments are not a JSON object.
func (e *Episode) MalformedCalls() int {
	n := 0
	for _, ev := range e.Events {
		a, ok := ev.Body.(*trace.Assistant)
		if !ok {
			continue
		}
		for _, c := range toolCalls(a) {
			if _, problem := modelagent.ParseArguments(c.args); problem != "" {
				n++
			}
		}
	}
	return n
}

// DeepCalls counts the tool calls of the conversation whose arguments nest deeper than the
// engine accepts (limits.ToolArgsDepth): the model's, or for other agents the call events'.
// MessageOptions.ObjectArguments leaves them strings.
func (e *Episode) DeepCalls() int {
	model := e.FromModel()
	n := 0
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.Assistant:
			for _, c := range toolCalls(b) {
				if args, problem := modelagent.ParseArguments(c.args); problem == "" && tooDeep(args) {
					n++
				}
			}
		case *trace.Call:
			if !model && tooDeep(b.Args) {
				n++
			}
		}
	}
	return n
}

// HasAssistant reports whether the conversation has an assistant message.
func (e *Episode) HasAssistant() bool {
	for _, ev := range e.Events {
		switch ev.Body.(type) {
		case *trace.Assistant, *trace.Call, *trace.Reply:
			return true
		}
	}
	return false
}

// MessageOptions choose the shape of a conversation. The zero value is the shape Messages gives
// (and `export rl` writes): arguments as JSON strings, the recorded ids, no tool names, no
// reasoning, and the tool message of a call not run rebuilt.
type MessageOptions struct {
	// ObjectArguments writes each tool call's arguments as a JSON object. Arguments that are not
	// one, or that nest deeper than the engine accepts (limits.ToolArgsDepth: it refused the
	// call), stay JSON strings; SFTSkip leaves the episodes that hold them out of rows that want
	// objects.
	ObjectArguments bool
	// ToolNames adds "name", the name of the tool called, to every tool message.
	ToolNames bool
	// Reasoning adds "reasoning_content" to an assistant message whose reasoning the trace
	// records.
	Reasoning bool
	// StrictIDs gives the tool calls new ids of exactly 9 letters and digits (see idMap); tool
	// messages keep answering their calls.
	StrictIDs bool
	// RecordedNotRun uses the not_run events of the trace for the tool messages of calls not run:
	// what the model agent sent. Traces of older engines have none; those messages are rebuilt.
	RecordedNotRun bool
}

// Messages is the conversation (see the package documentation) in the shape MessageOptions{}
// gives; system "" leaves the system message out.
func (e *Episode) Messages(system string) []jsonv.Value {
	return e.MessagesWith(system, MessageOptions{})
}

// MessagesWith is the conversation in the shape o chooses; system "" leaves the system message
// out.
func (e *Episode) MessagesWith(system string, o MessageOptions) []jsonv.Value {
	var msgs []jsonv.Value
	if system != "" {
		msgs = append(msgs, jsonv.NewObject("role", "system", "content", system))
	}
	if e.FromModel() {
		return e.modelMessages(msgs, o)
	}
	return e.rebuiltMessages(msgs, o)
}

func (e *Episode) modelMessages(msgs []jsonv.Value, o MessageOptions) []jsonv.Value {
	// the results and recorded not_run messages by call id, in order (ids are unique within an
	// episode, but do not rely on it)
	results := map[string][]*trace.CallResult{}
	notRun := map[string][]string{}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.CallResult:
			results[b.ID] = append(results[b.ID], b)
		case *trace.NotRun:
			if o.RecordedNotRun {
				notRun[b.ID] = append(notRun[b.ID], b.Content)
			}
		}
	}
	ids := newIDMap(o.StrictIDs)
	type pendingCall struct {
		modelCall
		msgID string // the id in the conversation
	}
	var pending []pendingCall // the tool calls of the last assistant message
	flush := func() {
		for _, c := range pending {
			var content string
			if rs := results[c.id]; len(rs) > 0 {
				results[c.id] = rs[1:]
				content = resultContent(rs[0])
			} else if ns := notRun[c.id]; len(ns) > 0 {
				notRun[c.id] = ns[1:]
				content = ns[0]
			} else {
				content = notRunContent(c.modelCall)
			}
			msgs = append(msgs, o.toolMessage(c.msgID, c.name, content))
		}
		pending = nil
	}
	user := e.userMessages()
	for i, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.User:
			flush()
			msgs = append(msgs, user())
		case *trace.SimUser:
			// the model's message without tool calls went to the simulated user, whose answer
			// continues the turn (the assistant event above holds the model's message)
			if answer, ok := e.simAnswer(i, b); ok {
				flush()
				msgs = append(msgs, jsonv.NewObject("role", "user", "content", answer))
			}
		case *trace.Assistant:
			flush()
			m := jsonv.NewObject("role", "assistant", "content", b.Content)
			if o.Reasoning && b.Reasoning != "" {
				m.Set("reasoning_content", b.Reasoning)
			}
			if calls := toolCalls(b); len(calls) > 0 {
				list := make([]jsonv.Value, len(calls))
				for i, c := range calls {
					id := ids.next(c.id)
					list[i] = jsonv.NewObject("id", id, "type", "function",
						"function", jsonv.NewObject("name", c.name, "arguments", o.modelArguments(c.args)))
					pending = append(pending, pendingCall{c, id})
				}
				m.Set("tool_calls", list)
			}
			msgs = append(msgs, m)
		case *trace.Reply, *trace.TurnEnd, *trace.End:
			flush()
		}
	}
	return msgs
}

// userMessages returns a function that gives the next user message as the model was shown it:
// with a note of the new time when the clock moved since the model was last told
// (modelagent.UserContent; the trace's start and user events record the times).
func (e *Episode) userMessages() func() *jsonv.Object {
	stated := e.start().Now
	next := 0
	return func() *jsonv.Object {
		for ; next < len(e.Events); next++ {
			if u, ok := e.Events[next].Body.(*trace.User); ok {
				next++
				content := modelagent.UserContent(u.Content, u.Now, stated)
				if u.Now != "" {
					stated = u.Now
				}
				return jsonv.NewObject("role", "user", "content", content)
			}
		}
		return nil
	}
}

// simAnswer is the answer of the simulated user in the sim_user event at index i as the agent saw
// it: none when the user was done, or when it answered the agent's final reply (the turn ended
// there: the agent never saw that answer).
func (e *Episode) simAnswer(i int, b *trace.SimUser) (string, bool) {
	if b.Done {
		return "", false
	}
	for _, ev := range e.Events[i+1:] {
		switch ev.Body.(type) {
		case *trace.Judge:
			continue
		case *trace.Reply, *trace.TurnEnd, *trace.End:
			return "", false
		}
		return b.Content, true
	}
	return "", false
}

func (e *Episode) rebuiltMessages(msgs []jsonv.Value, o MessageOptions) []jsonv.Value {
	ids := newIDMap(o.StrictIDs)
	// the conversation's id and the tool's name of each call, by the call's id, in order
	type callOf struct{ msgID, name string }
	calls := map[string][]callOf{}
	user := e.userMessages()
	for i, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.User:
			msgs = append(msgs, user())
		case *trace.SimUser:
			// a question the solution asked the simulated user (agent.ask), and its answer
			if answer, ok := e.simAnswer(i, b); ok {
				msgs = append(msgs, jsonv.NewObject("role", "assistant", "content", b.Said),
					jsonv.NewObject("role", "user", "content", answer))
			}
		case *trace.Call:
			id := ids.next(b.ID)
			calls[b.ID] = append(calls[b.ID], callOf{id, b.Name})
			args := b.Args
			if args == nil {
				args = &jsonv.Object{}
			}
			call := jsonv.NewObject("id", id, "type", "function",
				"function", jsonv.NewObject("name", b.Name, "arguments", o.recordedArguments(args)))
			msgs = append(msgs, jsonv.NewObject("role", "assistant", "content", "", "tool_calls", []jsonv.Value{call}))
		case *trace.CallResult:
			c := callOf{b.ID, ""}
			if cs := calls[b.ID]; len(cs) > 0 {
				c, calls[b.ID] = cs[0], cs[1:]
			}
			msgs = append(msgs, o.toolMessage(c.msgID, c.name, resultContent(b)))
		case *trace.Reply:
			msgs = append(msgs, jsonv.NewObject("role", "assistant", "content", b.Content))
		}
	}
	return msgs
}

// modelCall is a tool call of an assistant event: its id (the one it ran under), the tool's
// name and the arguments as a JSON string.
type modelCall struct{ id, name, args string }

// toolCalls are an assistant event's tool calls: arguments sent as "" or null become "{}", and
// arguments that are not a string are encoded as one; a call without an id gets the one the
// model agent gives it.
func toolCalls(a *trace.Assistant) []modelCall {
	out := make([]modelCall, 0, len(a.ToolCalls))
	for i, r := range a.ToolCalls {
		o, _ := r.(*jsonv.Object)
		fn, _ := o.Get("function")
		fo, _ := fn.(*jsonv.Object)
		id := str(o, "id")
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", a.Turn+1, i+1)
		}
		var args string
		switch a, _ := fo.Get("arguments"); x := a.(type) {
		case string:
			args = x
			if strings.TrimSpace(x) == "" {
				args = "{}"
			}
		case nil:
			args = "{}"
		default:
			args = jsonv.MustEncode(x)
		}
		out = append(out, modelCall{id: id, name: str(fo, "name"), args: args})
	}
	return out
}

// modelArguments are a model's arguments (a JSON string) as o writes them.
func (o MessageOptions) modelArguments(args string) jsonv.Value {
	if !o.ObjectArguments {
		return args
	}
	obj, problem := modelagent.ParseArguments(args)
	if problem != "" || tooDeep(obj) {
		return args
	}
	return obj
}

// recordedArguments are the arguments of a call event as o writes them.
func (o MessageOptions) recordedArguments(args *jsonv.Object) jsonv.Value {
	if o.ObjectArguments && !tooDeep(args) {
		return args
	}
	return jsonv.MustEncode(args)
}

// tooDeep reports whether arguments nest deeper than the engine accepts (limits.ToolArgsDepth,
// counted as it counts: the arguments object is the first level). Written as objects, they
// would make a line deeper than JSON readers accept.
func tooDeep(args jsonv.Value) bool {
	return depth(args, limits.ToolArgsDepth+1) > limits.ToolArgsDepth
}

// depth is how many arrays and objects v nests (0 for a scalar), counted up to stop.
func depth(v jsonv.Value, stop int) int {
	if stop <= 0 {
		return 0
	}
	deepest := 0
	switch x := v.(type) {
	case []jsonv.Value:
		for _, c := range x {
			deepest = max(deepest, depth(c, stop-1))
		}
	case *jsonv.Object:
		if x == nil {
			return 0
		}
		for _, m := range x.Members {
			deepest = max(deepest, depth(m.Value, stop-1))
		}
	default:
		return 0
	}
	return deepest + 1
}

// toolMessage is the tool message answering the call id of the tool name.
func (o MessageOptions) toolMessage(id, name, content string) *jsonv.Object {
	m := jsonv.NewObject("role", "tool", "tool_call_id", id)
	if o.ToolNames {
		m.Set("name", name)
	}
	m.Set("content", content)
	return m
}

// resultContent is what the agent shows the model for a result event.
func resultContent(r *trace.CallResult) string {
	if r.Error != nil {
		return modelagent.ToolErrorContent(*r.Error, r.Fault)
	}
	return r.Content
}

// notRunContent rebuilds the tool message of a call the model agent did not run, for traces
// without not_run events.
func notRunContent(c modelCall) string {
	if _, problem := modelagent.ParseArguments(c.args); problem != "" {
		return modelagent.BadArgumentsContent(c.name, problem, c.args)
	}
	return modelagent.ToolErrorContent("the tool was not run", false)
}

// idMap gives the tool calls of one conversation their ids: the recorded ones, or with strict
// set ids that the strictest chat templates accept. Mistral's refuse any id but exactly 9
// letters and digits; a strict id is 9 base-62 digits of a SHA-256 of the call's place in the
// conversation and its recorded id, so the same conversation always gets the same ids, and a
// repeat within the conversation is drawn again.
type idMap struct {
	strict bool
	n      int
	used   map[string]bool
}

func newIDMap(strict bool) *idMap { return &idMap{strict: strict, used: map[string]bool{}} }

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// next is the id of the conversation's next tool call, recorded with id.
func (m *idMap) next(id string) string {
	if !m.strict {
		return id
	}
	m.n++
	for draw := 0; ; draw++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%d\x00%s", m.n, draw, id)))
		x := binary.BigEndian.Uint64(sum[:8])
		var b [9]byte
		for i := range b {
			b[i] = base62[x%62]
			x /= 62
		}
		if s := string(b[:]); !m.used[s] {
			m.used[s] = true
			return s
		}
	}
}

func str(o *jsonv.Object, k string) string {
	v, _ := o.Get(k)
	s, _ := v.(string)
	return s
}

// The reasons ReplaySkip gives.
const (
	SkipChanged  = "task files changed since recorded"
	SkipDiverged = "diverged on replay"
)

// ReplaySkip says why an episode is left out after its trace was replayed (r is the replay's
// result), "" when it is kept: the task file or a file it loads is not the one the trace was
// recorded with (SkipChanged: the episode is not one of the task as it is), or the replay
// differs from the trace (SkipDiverged: the trace is not what the engine records for what the
// agent did, an edit after recording among other things). A replay that matched with notes (what
// it could not check) keeps the episode.
func ReplaySkip(r *trace.Result) string {
	switch {
	case r.TaskChanged:
		return SkipChanged
	case !r.Matched():
		return SkipDiverged
	}
	return ""
}

// AtomicFile is a JSON Lines file written to a temporary file beside its path and renamed onto
// it by Commit, so that the path never holds half a file.
type AtomicFile struct {
	f *atomicfile.File
}

// CreateAtomic starts writing path.
func CreateAtomic(path string) (*AtomicFile, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %v", filepath.Dir(path), pe.Err)
		}
		return nil, err
	}
	return &AtomicFile{f: f}, nil
}

// WriteLine writes one JSON object and a newline.
func (a *AtomicFile) WriteLine(o *jsonv.Object) error {
	b, err := jsonv.Encode(o)
	if err != nil {
		return err
	}
	_, err = a.f.Write(append(b, '\n'))
	return err
}

// Commit finishes the file and renames it onto its path.
func (a *AtomicFile) Commit() error { return a.f.Commit() }

// Abort drops the temporary file.
func (a *AtomicFile) Abort() { a.f.Abort() }
