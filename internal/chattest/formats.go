package chattest

import (
	"encoding/json"
	"strings"
)

// Answers in the shapes servers really send besides the plain one: reasoning beside the text,
// the legacy function_call, tool calls written as text in the formats of the model families,
// and fields servers add (logprobs, token ids).

// WithReasoning is an assistant message's JSON with text and reasoning under field
// ("reasoning_content", or "reasoning" as vLLM 0.17 and later send it).
func WithReasoning(text, field, reasoning string) string {
	return `{"role":"assistant","content":` + Quote(text) + `,` + Quote(field) + `:` + Quote(reasoning) + `}`
}

// WithFunctionCall is an assistant message's JSON with the legacy function_call and no
// tool_calls; args is the arguments' text.
func WithFunctionCall(text, name, args string) string {
	content := "null"
	if text != "" {
		content = Quote(text)
	}
	return `{"role":"assistant","content":` + content + `,"function_call":{"name":` + Quote(name) + `,"arguments":` + Quote(args) + `}}`
}

// Hermes is a tool call as Hermes and Qwen2.5 models write it in text; args is a JSON object's
// text.
func Hermes(name, args string) string {
	return "<tool_call>\n{\"name\": " + Quote(name) + ", \"arguments\": " + args + "}\n</tool_call>"
}

// QwenXML is a tool call as Qwen3-Coder writes it in text; params are the parameters' names and
// values, in order.
func QwenXML(name string, params ...[2]string) string {
	var b strings.Builder
	b.WriteString("<tool_call>\n<function=" + name + ">\n")
	for _, p := range params {
		b.WriteString("<parameter=" + p[0] + ">\n" + p[1] + "\n</parameter>\n")
	}
	b.WriteString("</function>\n</tool_call>")
	return b.String()
}

// Llama is a tool call as Llama 3.x writes it: {"name": ..., "parameters": ...}; args is a JSON
// object's text.
func Llama(name, args string) string {
	return `{"name": ` + Quote(name) + `, "parameters": ` + args + `}`
}

// MistralList is tool calls as older Mistral models write them: [TOOL_CALLS] and a JSON list;
// each call is a {"name", "arguments"} object's text (MistralCall).
func MistralList(calls ...string) string {
	return "[TOOL_CALLS][" + strings.Join(calls, ", ") + "]"
}

// MistralCall is one call of MistralList; args is a JSON object's text.
func MistralCall(name, args string) string {
	return `{"name": ` + Quote(name) + `, "arguments": ` + args + `}`
}

// MistralArgs is a tool call as newer Mistral models write it: [TOOL_CALLS]NAME[ARGS]{...}.
func MistralArgs(name, args string) string {
	return "[TOOL_CALLS]" + name + "[ARGS]" + args
}

// AddFields is a completion body with fields added: top at the top level, choice in its first
// choice. Values are JSON texts. The body is re-encoded with its keys sorted.
func AddFields(body string, top, choice map[string]string) string {
	var o map[string]any
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		panic("chattest.AddFields: the body is not a JSON object: " + err.Error())
	}
	set := func(dst map[string]any, fields map[string]string) {
		for k, v := range fields {
			dst[k] = json.RawMessage(v)
		}
	}
	set(o, top)
	if choices, _ := o["choices"].([]any); len(choices) > 0 {
		if c, ok := choices[0].(map[string]any); ok {
			set(c, choice)
		}
	}
	out, err := json.Marshal(o)
	if err != nil {
		panic("chattest.AddFields: " + err.Error())
	}
	return string(out)
}
