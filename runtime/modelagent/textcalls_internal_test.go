package modelagent

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testTools has a tool with parameters of every type, and one without parameters.
func testTools(t *testing.T) toolset {
	t.Helper()
	schema := func(s string) *jsonv.Object {
		v, err := jsonv.DecodeString(s)
		require.NoError(t, err)
		return v.(*jsonv.Object)
	}
	return toolsetOf([]*jsonv.Object{
		schema(`{"type":"function","function":{"name":"book","parameters":{"type":"object","properties":{
			"title":{"type":"string"},"seats":{"type":"integer"},"price":{"type":"number"},"confirm":{"type":"boolean"},
			"tags":{"type":"array"},"meta":{"type":"object"},"note":{"type":["string","null"]},
			"when":{"anyOf":[{"type":"integer"},{"type":"null"}]}}}}}`),
		schema(`{"type":"function","function":{"name":"ping"}}`),
	})
}

type readCase struct {
	text   string
	calls  string // "name args; name args"
	rest   string
	from   string
	prblem string
}

func (c readCase) check(t *testing.T, format string, ts toolset) {
	t.Helper()
	calls, rest, from, problem := readTextCalls(format, c.text, ts)
	var got []string
	for _, cl := range calls {
		got = append(got, cl.name+" "+cl.args)
	}
	assert.Equal(t, c.calls, strings.Join(got, "; "), "calls of %q", c.text)
	assert.Equal(t, c.rest, rest, "rest of %q", c.text)
	assert.Equal(t, c.from, from, "format of %q", c.text)
	if c.prblem == "" {
		assert.Equal(t, "", problem, c.text)
	} else {
		assert.True(t, strings.HasPrefix(problem, c.prblem), "problem of %q: %q", c.text, problem)
	}
}

func TestReadTextCalls(t *testing.T) {
	ts := testTools(t)
	for _, c := range []readCase{
		// hermes: several blocks, the last left open, arguments as a string or absent
		{"A.\n<tool_call>\n{\"name\": \"ping\"}\n</tool_call>\nB.\n<tool_call>{\"name\": \"book\", \"arguments\": \"{\\\"seats\\\": 2}\"}",
			`ping {}; book {"seats": 2}`, "A.\n\nB.", "hermes", ""},
		{`<tool_call>{"name": "book", "parameters": {"title": "x"}}</tool_call>`, `book {"title":"x"}`, "", "hermes", ""},
		{`<tool_call>{"name": "ping"}</tool_call><tool_call>{"name": "nope"}</tool_call>`, "", `<tool_call>{"name": "ping"}</tool_call><tool_call>{"name": "nope"}</tool_call>`, "",
			`looks like a hermes tool call but names "nope"`},
		{`<tool_call>["ping"]</tool_call>`, "", `<tool_call>["ping"]</tool_call>`, "", "looks like a hermes tool call but is not a JSON object"},
		// qwen-xml: types from the schema, without the outer tags, an unclosed parameter
		{"Booking.\n<tool_call>\n<function=book>\n<parameter=title>\nLunch {at} noon\n</parameter>\n<parameter=seats>\n4\n</parameter>\n" +
			"<parameter=price>\n12.5\n</parameter>\n<parameter=confirm>\nTrue\n</parameter>\n<parameter=tags>\n[\"a\"]\n</parameter>\n" +
			"<parameter=meta>\n{\"k\": 1}\n</parameter>\n<parameter=note>\n7\n</parameter>\n<parameter=when>\nnull\n</parameter>\n</function>\n</tool_call>",
			`book {"title":"Lunch {at} noon","seats":4,"price":12.5,"confirm":true,"tags":["a"],"meta":{"k":1},"note":"7","when":null}`, "Booking.", "qwen-xml", ""},
		{"<function=book><parameter=seats>four</parameter><parameter=extra>\n\n two lines\n\n</parameter></function>",
			`book {"seats":"four","extra":"\n two lines\n"}`, "", "qwen-xml", ""},
		{"<function=book>\n<parameter=title>\nA\n<parameter=seats>\n2\n</function>", `book {"title":"A","seats":2}`, "", "qwen-xml", ""},
		{"<tool_call>\n<function=ping>\n</function>\n</tool_call>\n<tool_call>\n<function=ping>\n</tool_call>", "ping {}; ping {}", "", "qwen-xml", ""},
		{"<function=ping>hello</function>", "", "<function=ping>hello</function>", "", "looks like a qwen-xml tool call but has text that is not a parameter"},
		// llama: a list, several separated by ;, "arguments", the text before <|python_tag|>
		{`[{"name": "ping", "parameters": {}}, {"name": "book", "arguments": {"seats": 1}}]`, `ping {}; book {"seats":1}`, "", "llama", ""},
		{`{"name": "ping", "parameters": {}}; {"type": "function", "name": "ping", "parameters": null}`, "ping {}; ping {}", "", "llama", ""},
		{"Let me check.<|python_tag|>{\"name\": \"ping\"}", "ping {}", "Let me check.", "llama", ""},
		{"<|python_tag|>brave_search.call(query=\"x\")", "", "<|python_tag|>brave_search.call(query=\"x\")", "", "looks like a llama tool call but is not JSON"},
		{`{"name": "ping", "parameters": {}`, "", `{"name": "ping", "parameters": {}`, "", "looks like a llama tool call but is not valid JSON"},
		{`{"name": "ping", "parameters": {}, "reason": "x"}`, "", `{"name": "ping", "parameters": {}, "reason": "x"}`, "", ""},
		{`{"a": 1} trailing`, "", `{"a": 1} trailing`, "", ""},
		// mistral: both forms, several calls, call ids, text around
		{`Sure. [TOOL_CALLS][{"name": "ping", "arguments": {}}, {"name": "book", "arguments": {"seats": 3}, "id": "abc123def"}] Done.`,
			`ping {}; book {"seats":3}`, "Sure. Done.", "mistral", ""},
		{`[TOOL_CALLS]ping[ARGS]{}[TOOL_CALLS]book[CALL_ID]x1[ARGS]{"title": "a]b"}`, `ping {}; book {"title":"a]b"}`, "", "mistral", ""},
		{`[TOOL_CALLS]book[ARGS]{"title": "x"`, "", `[TOOL_CALLS]book[ARGS]{"title": "x"`, "", "looks like a mistral tool call but has arguments that are not a JSON object"},
		{`[TOOL_CALLS][{"name": "nope", "arguments": {}}]`, "", `[TOOL_CALLS][{"name": "nope", "arguments": {}}]`, "", `looks like a mistral tool call but names "nope"`},
		// plain text
		{"All done.", "", "All done.", "", ""},
		{"", "", "", "", ""},
	} {
		c.check(t, FormatAuto, ts)
	}
}

// A named format reads only its own markup; native reads nothing.
func TestReadTextCallsNamed(t *testing.T) {
	ts := testTools(t)
	hermes := `<tool_call>{"name": "ping"}</tool_call>`
	readCase{hermes, "ping {}", "", "hermes", ""}.check(t, FormatHermes, ts)
	readCase{hermes, "", hermes, "", ""}.check(t, FormatNative, ts)
	readCase{hermes, "", hermes, "", ""}.check(t, FormatLlama, ts)
	readCase{hermes, "", hermes, "", ""}.check(t, FormatMistral, ts)
	qwen := "<tool_call>\n<function=ping>\n</function>\n</tool_call>"
	readCase{qwen, "", qwen, "", "looks like a hermes tool call but is not a JSON object"}.check(t, FormatHermes, ts)
	readCase{qwen, "ping {}", "", "qwen-xml", ""}.check(t, FormatQwenXML, ts)
}

// The agent reads a bounded number of calls from bounded text.
func TestReadTextCallsBounded(t *testing.T) {
	ts := testTools(t)
	many := strings.Repeat(`<tool_call>{"name": "ping"}</tool_call>`, maxTextCalls+1)
	calls, rest, _, problem := readTextCalls(FormatAuto, many, ts)
	assert.Empty(t, calls)
	assert.Equal(t, many, rest)
	assert.Equal(t, "looks like a hermes tool call but has more than 128 calls", problem)
	calls, _, _, _ = readTextCalls(FormatAuto, many[:len(many)/(maxTextCalls+1)*maxTextCalls], ts)
	assert.Len(t, calls, maxTextCalls)

	big := `<tool_call>{"name": "ping", "arguments": {"x": "` + strings.Repeat("a", maxCallText) + `"}}</tool_call>`
	calls, _, _, problem = readTextCalls(FormatAuto, big, ts)
	assert.Empty(t, calls)
	assert.Contains(t, problem, "over the 16 MiB the agent reads tool calls from")
	calls, _, _, problem = readTextCalls(FormatAuto, strings.Repeat("a", maxCallText+1), ts)
	assert.Empty(t, calls)
	assert.Equal(t, "", problem)
}

// Text that never closes what it opens ends every scan.
func TestReadTextCallsUnclosed(t *testing.T) {
	ts := testTools(t)
	for _, s := range []string{"<tool_call>", "<tool_call>{", "<function=", "<function=book", "<function=book><parameter=", "<function=book><parameter=x",
		"[TOOL_CALLS]", "[TOOL_CALLS][", "[TOOL_CALLS]ping[ARGS]", `[TOOL_CALLS]ping[ARGS]{"a": "\`, "<|python_tag|>", `{"name": "ping", "parameters": {"a": "}`,
		strings.Repeat("[", 10000), strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000)} {
		calls, _, _, _ := readTextCalls(FormatAuto, s, ts)
		assert.Empty(t, calls, s)
	}
}

// Long texts of parameters or calls are read in one pass each (searched once per marker, not
// once per parameter or call: these would take hours otherwise).
func TestReadTextCallsLinear(t *testing.T) {
	ts := testTools(t)
	calls, _, _, _ := readTextCalls(FormatAuto, "<function=book>"+strings.Repeat("<parameter=title>x", 200000)+"junk", ts)
	require.Len(t, calls, 1)
	assert.Equal(t, `{"title":"xjunk"}`, calls[0].args, "an open parameter ends at the next one; the last one wins")
	_, _, _, problem := readTextCalls(FormatAuto, strings.Repeat("<function=ping>\n", 200000), ts)
	assert.Contains(t, problem, "has text that is not a parameter")
	_, _, _, problem = readTextCalls(FormatAuto, strings.Repeat("[TOOL_CALLS]ping[ARGS]{}", 200000), ts)
	assert.Contains(t, problem, "has more than 128 calls")
	_, _, _, problem = readTextCalls(FormatAuto, strings.Repeat("<tool_call>", 200000), ts)
	assert.Contains(t, problem, "is not a JSON object")
}

func TestSplitThink(t *testing.T) {
	for _, c := range []struct{ in, content, thought string }{
		{"<think>a</think>b", "b", "a"},
		{"  <think>\na\n</think>\n\nb ", "b", "a"},
		{"a</think>b", "b", "a"},
		{"<think>a", "", "a"},
		{"no thinking", "no thinking", ""},
		{"b <think>a</think>", "b <think>a</think>", ""},
	} {
		content, thought, _ := SplitThink(c.in)
		assert.Equal(t, c.content, content, c.in)
		assert.Equal(t, c.thought, thought, c.in)
	}
}

func TestKeepsReasoning(t *testing.T) {
	for name, want := range map[string]bool{
		"deepseek-reasoner": true, "deepseek-ai/DeepSeek-V4-Pro": true, "kimi-k2.5": true, "moonshotai/Kimi-K2-Thinking": true,
		"accounts/fireworks/models/kimi-k2p5": true, "deepseek-chat": true, "deepseek-flash": true, "kimi-k2-instruct": false, "gpt-4o": false, "qwen3-8b": false,
	} {
		assert.Equal(t, want, KeepsReasoning(name), name)
	}
}
