// Package export turns traces into training and evaluation data (docs/training.md,
// docs/rewards.md, docs/interchange.md).
//
// Messages. An episode becomes a conversation in the OpenAI chat format: the history the
// conversation machine keeps (runtime/conversation), made again from the trace by trace.History,
// the machine the model agent, a served session and replay run; this package only writes it out.
// It has a system message, a user message per user event (with the time note the model was
// shown) and per answer of a simulated user the agent saw, assistant messages (with
// "tool_calls"), and a "tool" message with "tool_call_id" for every tool call, in the order of
// the calls. MessageOptions choose its shape: Messages (and `export rl`) writes arguments as JSON
// strings; `export sft` writes them as JSON objects by default, names the tool on every tool
// message, and adds the model's reasoning (see sft.go for the row formats).
//
//   - Model traces (they hold assistant events) keep what the model sent: one assistant message
//     per assistant event (its text, "" when it had none, its reasoning when asked, and its tool
//     calls with the ids the calls ran under, arguments as sent). Each tool message holds what the
//     agent showed the model: the result's content, or for a tool error {"error": MESSAGE} (with
//     "transient": true for an injected fault). A tool call the agent did not run has no result:
//     its tool message is the one the not_run event records (MessageOptions.RecordedNotRun) or,
//     for traces of older engines without them, is rebuilt: exactly for arguments that are not a
//     JSON object, and as {"error": "the tool was not run"} otherwise (a turn cut short by
//     max_calls_per_turn or by the token limit). Arguments sent as "" or null become "{}", and
//     arguments that are not a string are encoded as one.
//   - Traces of agents that are not models (oracle, noop, replay) are made as if a model had
//     sent each call event as a message with that one call (the id is the call's id, the
//     arguments its args), each question to a simulated user whose answer the agent saw as a
//     message of its text, and the reply as the turn's last assistant message ("" when the
//     solution gave none).
//
// System message. A trace of a model records its system prompt in the start event; that is
// used. Other traces do not, so Systems rebuilds it as the model agent would have got it:
// modelagent.SystemPromptOf: the default prompt with the user's mail address, the virtual time
// right after setup and the task's time zone, found by loading the task and running its setup
// with the trace's seed. When the task cannot be loaded (the file moved or no longer declares the task) the conversation has no
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
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Episode is one trace.
type Episode struct {
	Path   string
	Events []trace.Event // as trace.Read returns them: start first, end last
	// checked is the task file the trace was verified against (replayed), as shown; "" when it
	// was not (SetChecked).
	checked string
}

// SetChecked says that the trace was verified against the task file at path (as replay shows
// it), which the outputs then name (OutFile).
func (e *Episode) SetChecked(path string) { e.checked = path }

// OutFile is the task file as the outputs name it (their "file"): the file the trace was verified
// against; for a trace that was not verified (--no-verify), the path the trace records only
// when it is a relative path that stays inside its folder (tasks/t.star), else the task file's
// path inside its corpus when that is one, else nil. A path the trace records is not otherwise
// trusted: a forged /etc/passwd is not copied into training data.
func (e *Episode) OutFile() jsonv.Value {
	if e.checked != "" {
		return e.checked
	}
	for _, p := range []string{e.File(), e.start().TaskPath()} {
		if localPath(p) {
			return p
		}
	}
	return nil
}

// localPath reports whether p is a plain slash-separated relative path that stays inside its
// folder (no "..", not absolute, no backslash, drive or control character).
func localPath(p string) bool {
	if !fs.ValidPath(p) || p == "." || strings.ContainsAny(p, `\:`) {
		return false
	}
	for _, r := range p {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}

// ReadFile reads a trace.
func ReadFile(path string) (*Episode, error) {
	data, err := trace.ReadFile(path)
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
func (e *Episode) FromModel() bool { return trace.FromModel(e.Events) }

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
	for _, c := range e.toolCalls() {
		if _, problem := conversation.ParseArguments(c.Arguments); problem != "" {
			n++
		}
	}
	return n
}

// DeepCalls counts the tool calls of the conversation whose arguments nest deeper than the
// engine accepts (limits.ToolArgsDepth): the model's, or for other agents the call events'.
// MessageOptions.ObjectArguments leaves them strings.
func (e *Episode) DeepCalls() int {
	n := 0
	for _, c := range e.toolCalls() {
		if args, problem := conversation.ParseArguments(c.Arguments); problem == "" && tooDeep(args) {
			n++
		}
	}
	return n
}

// toolCalls are the tool calls of the conversation, in order.
func (e *Episode) toolCalls() []conversation.Call {
	var out []conversation.Call
	for _, m := range e.History(false) {
		out = append(out, m.ToolCalls...)
	}
	return out
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
	return o.render(system, e.History(o.RecordedNotRun))
}

// History is the conversation the trace records as the conversation machine keeps it
// (trace.History): with recordedNotRun, a call not run has the tool message the trace records.
func (e *Episode) History(recordedNotRun bool) []conversation.Message {
	return trace.History(e.Events, recordedNotRun)
}

// render writes a history in the shape o chooses, one message for each of hist after its system
// message, which system (when not "") replaces.
func (o MessageOptions) render(system string, hist []conversation.Message) []jsonv.Value {
	var msgs []jsonv.Value
	if system != "" {
		msgs = append(msgs, jsonv.NewObject("role", "system", "content", system))
	}
	if len(hist) == 0 {
		return msgs
	}
	ids := newIDMap(o.StrictIDs)
	named := map[string]string{} // the conversation's id of each call
	for _, m := range hist[1:] {
		switch m.Role {
		case conversation.Assistant:
			a := jsonv.NewObject("role", "assistant", "content", m.Content)
			if o.Reasoning && m.Reasoning != "" {
				a.Set("reasoning_content", m.Reasoning)
			}
			if len(m.ToolCalls) > 0 {
				list := make([]jsonv.Value, len(m.ToolCalls))
				for i, c := range m.ToolCalls {
					id := ids.next(c.ID)
					named[c.ID] = id
					list[i] = jsonv.NewObject("id", id, "type", "function",
						"function", jsonv.NewObject("name", c.Name, "arguments", o.modelArguments(c.Arguments)))
				}
				a.Set("tool_calls", list)
			}
			msgs = append(msgs, a)
		case conversation.Tool:
			msgs = append(msgs, o.toolMessage(named[m.ToolCallID], m.Name, m.Content))
		default:
			msgs = append(msgs, jsonv.NewObject("role", m.Role, "content", m.Content))
		}
	}
	return msgs
}

// modelArguments are a model's arguments (a JSON string) as o writes them: "" is "{}".
func (o MessageOptions) modelArguments(args string) jsonv.Value {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if !o.ObjectArguments {
		return args
	}
	obj, problem := conversation.ParseArguments(args)
	if problem != "" || tooDeep(obj) {
		return args
	}
	return obj
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
