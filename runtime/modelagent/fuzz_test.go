package modelagent

import (
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// FuzzReadTextCalls feeds model text to the readers of tool calls written as text, in every
// format: whatever a model writes, they return (no panic), every call they take names one of the
// episode's tools with arguments that are one JSON object, and the text left over is no longer
// than the text given.
func FuzzReadTextCalls(f *testing.F) {
	for _, s := range []string{
		"<tool_call>{\"name\": \"ping\"}</tool_call>",
		"<tool_call><function=book><parameter=seats>2</parameter></function></tool_call>",
		"<|python_tag|>{\"name\": \"book\", \"parameters\": {\"title\": \"x\"}}",
		"[TOOL_CALLS][{\"name\": \"ping\", \"arguments\": {}}]",
		"[TOOL_CALLS]book[ARGS]{\"seats\": 3}",
		"<think>hmm</think>{\"name\": \"ping\"}",
		"[{\"name\": \"ping\"}; {\"name\": \"book\"}]",
		"<function=book><parameter=meta>{\"a\": [1,",
	} {
		f.Add(s)
	}
	schema := func(s string) *jsonv.Object {
		v, err := jsonv.DecodeString(s)
		if err != nil {
			panic(err)
		}
		return v.(*jsonv.Object)
	}
	ts := toolsetOf([]*jsonv.Object{
		schema(`{"type":"function","function":{"name":"book","parameters":{"type":"object","properties":{
			"title":{"type":"string"},"seats":{"type":"integer"},"price":{"type":"number"},"confirm":{"type":"boolean"},
			"tags":{"type":"array"},"meta":{"type":"object"}}}}}`),
		schema(`{"type":"function","function":{"name":"ping"}}`),
	})
	f.Fuzz(func(t *testing.T, text string) {
		for _, format := range []string{FormatAuto, FormatHermes, FormatQwenXML, FormatLlama, FormatMistral} {
			calls, rest, _, _ := readTextCalls(format, text, ts)
			if len(rest) > len(text) {
				t.Fatalf("%s: the rest (%d bytes) is longer than the text (%d)", format, len(rest), len(text))
			}
			for _, c := range calls {
				if c.name != "book" && c.name != "ping" {
					t.Fatalf("%s: a call of %q, not one of the tools", format, c.name)
				}
				v, err := jsonv.DecodeString(c.args)
				if _, ok := v.(*jsonv.Object); err != nil || !ok {
					t.Fatalf("%s: arguments %q are not one JSON object", format, c.args)
				}
			}
		}
		if content, thought, _ := SplitThink(text); len(content)+len(thought) > len(text) {
			t.Fatalf("SplitThink made %d+%d bytes of %d", len(content), len(thought), len(text))
		}
	})
}
