package export

import (
	"fmt"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
)

// Rows. `export sft` writes one JSON object a line, an episode each, in one of three formats
// that the training tools read (docs/training.md shows how to load each):
//
//   - openai: {"messages": [...], "tools": TOOLS}, the conversation as MessagesWith gives it
//     (TRL, axolotl's chat_template, LLaMA-Factory's openai formatting).
//   - sharegpt: {"conversations": [...], "tools": TOOLS}, the same messages with "role" renamed
//     "from" (system, human, gpt, tool) and "content" renamed "value"; every other field
//     (reasoning_content, tool_calls, tool_call_id, name) stays as it is.
//   - llamafactory: LLaMA-Factory's sharegpt rows, {"conversations": [...], "system": SYSTEM,
//     "tools": TOOLS as a JSON string}, with its roles human, gpt, function_call and observation
//     (see llamaFactoryConversation), and the dataset's entry in the dataset_info.json beside
//     the rows (SFTFile).
//
// TOOLS is the list of tool schemas, or by default a JSON string of it: the schemas of different
// tools are objects of different shapes, and Arrow (under the datasets library) would make them
// one struct holding every property of every tool, null where a tool lacks it. The same goes for
// the arguments of different calls, which are JSON objects by default (most chat templates
// encode them with tojson, or walk them as a mapping) and can be JSON strings (DeepSeek-V3's
// template concatenates them as text).

// The formats of `export sft`.
const (
	FormatOpenAI       = "openai"
	FormatShareGPT     = "sharegpt"
	FormatLlamaFactory = "llamafactory"
)

// SFTShape chooses how `export sft` writes an episode. The zero value is the row of earlier
// versions, {"messages", "tools"} with arguments as JSON strings and tools as a list (tool
// messages now name their tool, and calls not run get the messages the model was shown);
// DefaultSFTShape is what the command writes without flags.
type SFTShape struct {
	// Format is FormatOpenAI ("" too), FormatShareGPT or FormatLlamaFactory.
	Format string
	// ObjectArguments writes tool-call arguments as JSON objects rather than JSON strings.
	ObjectArguments bool
	// ToolsJSON writes "tools" as a JSON string of the list rather than the list.
	ToolsJSON bool
	// Reasoning keeps the model's recorded reasoning: "reasoning_content" on assistant messages
	// (in the llamafactory format, a <think> block opening the message).
	Reasoning bool
	// StrictIDs gives tool calls ids of exactly 9 letters and digits (MessageOptions.StrictIDs).
	StrictIDs bool
}

// DefaultSFTShape is the shape `export sft` writes without flags.
var DefaultSFTShape = SFTShape{Format: FormatOpenAI, ObjectArguments: true, ToolsJSON: true, Reasoning: true}

// objects reports whether rows of the shape hold arguments as objects (the llamafactory format
// always does).
func (s SFTShape) objects() bool { return s.ObjectArguments || s.Format == FormatLlamaFactory }

// messageOptions are the options of the conversation a row holds.
func (s SFTShape) messageOptions() MessageOptions {
	o := MessageOptions{ObjectArguments: s.objects(), ToolNames: true, Reasoning: s.Reasoning,
		StrictIDs: s.StrictIDs, RecordedNotRun: true}
	if s.Format == FormatLlamaFactory {
		o.StrictIDs = false // its rows have no ids
	}
	return o
}

// SFTOptions choose the episodes of `export sft` and the shape of their rows.
type SFTOptions struct {
	// MinScore keeps episodes whose score is at least *MinScore; nil keeps passed episodes.
	MinScore *float64
	// IncludeReference keeps traces of agents that are not models (the oracle's reference
	// demonstrations); by default only model traces are kept.
	IncludeReference bool
	// Shape is the shape of the rows: some episodes cannot be written in some shapes.
	Shape SFTShape
}

// SFTSkip says why an episode is not an SFT example, "" when it is one. Rows with arguments as
// objects never hold anything else: an episode with a call whose arguments are not a JSON object
// is always left out, and with ObjectArguments (or the llamafactory format) so is one whose
// arguments nest deeper than the engine accepts. The llamafactory format leaves out the episodes
// LLaMA-Factory's rows cannot hold (see llamaFactoryConversation).
func SFTSkip(e *Episode, o SFTOptions) string {
	if why := RLSkip(e); why != "" {
		return why
	}
	switch {
	case !e.FromModel() && !o.IncludeReference:
		return "not a model's episode (use --include-oracle)"
	case e.Error() != "":
		return "the episode ended with an error"
	case o.MinScore != nil && e.Score() < *o.MinScore-1e-9:
		return "score below --min-score"
	case o.MinScore == nil && !e.Passed():
		return "not passed"
	case !e.HasAssistant():
		return "no assistant message"
	case e.MalformedCalls() > 0:
		return "a tool call with malformed arguments"
	case o.Shape.objects() && e.DeepCalls() > 0:
		return fmt.Sprintf("a tool call with arguments nested deeper than %d levels", limits.ToolArgsDepth)
	}
	if o.Shape.Format == FormatLlamaFactory {
		if _, err := llamaFactoryConversation(e.MessagesWith("", o.Shape.messageOptions()), o.Shape.Reasoning); err != nil {
			return err.Error()
		}
	}
	return ""
}

// SFT is one line of `export sft` in the shape SFTShape{}: {"messages", "tools"}.
func SFT(e *Episode, system string) *jsonv.Object {
	row, _ := SFTRow(e, system, SFTShape{}) // the openai format cannot fail
	return row
}

// SFTRow is one line of `export sft` in the given shape. It fails only for an episode that
// SFTSkip leaves out of the llamafactory format.
func SFTRow(e *Episode, system string, s SFTShape) (*jsonv.Object, error) {
	var tools jsonv.Value = e.Tools()
	if s.ToolsJSON || s.Format == FormatLlamaFactory {
		tools = jsonv.MustEncode(tools)
	}
	switch s.Format {
	case FormatLlamaFactory:
		msgs := e.MessagesWith("", s.messageOptions())
		conv, err := llamaFactoryConversation(msgs, s.Reasoning)
		if err != nil {
			return nil, err
		}
		return jsonv.NewObject("conversations", conv, "system", system, "tools", tools), nil
	case FormatShareGPT:
		return jsonv.NewObject("conversations", shareGPT(e.MessagesWith(system, s.messageOptions())), "tools", tools), nil
	}
	return jsonv.NewObject("messages", e.MessagesWith(system, s.messageOptions()), "tools", tools), nil
}

// shareGPTRoles are the "from" of each role in the sharegpt format.
var shareGPTRoles = map[string]string{"system": "system", "user": "human", "assistant": "gpt", "tool": "tool"}

// shareGPT is a conversation with "role" and "content" renamed "from" and "value", in their
// places; the other fields stay.
func shareGPT(msgs []jsonv.Value) []jsonv.Value {
	out := make([]jsonv.Value, len(msgs))
	for i, m := range msgs {
		src := m.(*jsonv.Object)
		dst := &jsonv.Object{Members: make([]jsonv.Member, 0, len(src.Members))}
		for _, mem := range src.Members {
			switch mem.Key {
			case "role":
				role, _ := mem.Value.(string)
				dst.Members = append(dst.Members, jsonv.Member{Key: "from", Value: shareGPTRoles[role]})
			case "content":
				dst.Members = append(dst.Members, jsonv.Member{Key: "value", Value: mem.Value})
			default:
				dst.Members = append(dst.Members, mem)
			}
		}
		out[i] = dst
	}
	return out
}
