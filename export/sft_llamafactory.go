package export

import (
	"errors"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// LLaMA-Factory reads a sharegpt row as messages of alternating roles: human or observation
// first, then gpt or function_call, and so on, ending with gpt or function_call
// (src/llamafactory/data/converter.py, SharegptDatasetConverter: a row that breaks this is
// skipped with a warning). It has no ids, and a function_call message holds only JSON: the
// formatter parses its value as one call {"name", "arguments"} or a list of them, with the
// arguments as an object (src/llamafactory/data/formatter.py, FunctionFormatter). Since
// LLaMA-Factory 0.9.4 (December 2025) the formatter also finds the JSON between the template's
// tool_call_words, <tool_call> and </tool_call> for all but a few templates, and keeps the text
// around it: that is how the text beside tool calls is kept here.
//
// So a conversation becomes:
//
//   - a user message: {"from": "human", "value": TEXT};
//   - an assistant message without tool calls: {"from": "gpt", "value": THINK + TEXT};
//   - an assistant message with tool calls: {"from": "function_call", "value": CALLS} when it has
//     no text and no kept reasoning, else THINK + TEXT + "\n" (only when TEXT is not "") +
//     "<tool_call>" + CALLS + "</tool_call>". CALLS is the JSON list of the calls, each
//     {"name": NAME, "arguments": {...}};
//   - the tool messages answering one assistant message: one {"from": "observation", "value":
//     RESULTS}, the results joined by "\n</tool_response>\n<tool_response>\n" (as LLaMA-Factory
//     joins the tool messages of its openai formatting, so that templates that wrap an
//     observation in <tool_response> show each result in its own).
//
// THINK is "<think>\n" + REASONING + "\n</think>\n\n" (LLaMA-Factory's default thought words)
// when the reasoning is kept and was recorded, "" otherwise. The system message goes in the
// row's "system" field.

// observationSep joins the results of one observation.
const observationSep = "\n</tool_response>\n<tool_response>\n"

// The reasons an episode cannot be a row of the llamafactory format.
var (
	errLFTurnEndsOnResults = errors.New("a turn that ends on tool results (LLaMA-Factory needs an answer after them)")
	errLFRoles             = errors.New("roles that do not alternate as LLaMA-Factory needs")
	errLFToolCallText      = errors.New("<tool_call> in the text beside tool calls (LLaMA-Factory would read it as the calls)")
	errLFSeparator         = errors.New("a tool result holding the separator of LLaMA-Factory's joined results")
	errLFArguments         = errors.New("a tool call whose arguments are not a JSON object")
)

// llamaFactoryConversation is the "conversations" of a row of the llamafactory format, from a
// conversation without its system message whose arguments are objects (see above).
func llamaFactoryConversation(msgs []jsonv.Value, reasoning bool) ([]jsonv.Value, error) {
	var conv []jsonv.Value
	add := func(from, value string) { conv = append(conv, jsonv.NewObject("from", from, "value", value)) }
	var results []string // the tool messages not yet added
	flush := func() error {
		if len(results) == 0 {
			return nil
		}
		if len(results) > 1 {
			for _, r := range results {
				if strings.Contains(r, observationSep) {
					return errLFSeparator
				}
			}
		}
		add("observation", strings.Join(results, observationSep))
		results = nil
		return nil
	}
	for _, v := range msgs {
		m := v.(*jsonv.Object)
		role, content := str(m, "role"), str(m, "content")
		if role == "tool" {
			results = append(results, content)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		switch role {
		case "user":
			add("human", content)
		case "assistant":
			think := ""
			if r := str(m, "reasoning_content"); reasoning && r != "" {
				think = "<think>\n" + r + "\n</think>\n\n"
			}
			calls, _ := m.Get("tool_calls")
			list, _ := calls.([]jsonv.Value)
			if len(list) == 0 {
				add("gpt", think+content)
				continue
			}
			js, err := callsJSON(list)
			if err != nil {
				return nil, err
			}
			text := think + content
			switch {
			case text == "":
				add("function_call", js)
			case strings.Contains(text, "<tool_call>") || strings.Contains(text, "</tool_call>"):
				return nil, errLFToolCallText
			default:
				if content != "" {
					text += "\n"
				}
				add("function_call", text+"<tool_call>"+js+"</tool_call>")
			}
		default:
			return nil, errLFRoles
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return conv, checkAlternation(conv)
}

// callsJSON is the JSON list of the calls of an assistant message, each {"name", "arguments"}.
func callsJSON(calls []jsonv.Value) (string, error) {
	list := make([]jsonv.Value, len(calls))
	for i, c := range calls {
		fn, _ := c.(*jsonv.Object).Get("function")
		fo, _ := fn.(*jsonv.Object)
		args, _ := fo.Get("arguments")
		if _, ok := args.(*jsonv.Object); !ok {
			return "", errLFArguments
		}
		list[i] = jsonv.NewObject("name", str(fo, "name"), "arguments", args)
	}
	return jsonv.MustEncode(list), nil
}

// checkAlternation checks the roles of a conversation as LLaMA-Factory's sharegpt converter
// does: human or observation at even places, gpt or function_call at odd ones, an even count.
func checkAlternation(conv []jsonv.Value) error {
	for i, v := range conv {
		from := str(v.(*jsonv.Object), "from")
		ok := from == "human" || from == "observation"
		if i%2 == 1 {
			ok = from == "gpt" || from == "function_call"
		}
		if !ok {
			if i > 0 && from == "human" && str(conv[i-1].(*jsonv.Object), "from") == "observation" {
				return errLFTurnEndsOnResults
			}
			return errLFRoles
		}
	}
	switch {
	case len(conv) == 0:
		return errLFRoles
	case len(conv)%2 == 1:
		if str(conv[len(conv)-1].(*jsonv.Object), "from") == "observation" {
			return errLFTurnEndsOnResults
		}
		return errLFRoles
	}
	return nil
}
