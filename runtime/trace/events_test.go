package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// everyKind is a trace with every event kind, and every field that may be null or absent both
// ways. Whole numbers in float fields (1.0) read back as integers and must come back as floats.
func everyKind() []Body {
	checks := []Check{
		{Kind: "check", Message: "a <b> & \"c\"", Weight: ptr(1.0), Passed: true, Turn: ptr(0)},
		{Kind: "safety", Message: "s", Passed: false},
	}
	return []Body{
		&Start{Format: Format, Task: "t", File: "dir/t.star", FileSHA256: "ab12", Seed: -3, Engine: Engine, Agent: "openai",
			Tools: []jsonv.Value{jsonv.NewObject("type", "function", "n", 1.5, "m", int64(2))}, State: "s0",
			System: "system\n\x01 é", Now: "2026-01-05T08:00:00Z", Rand: "00ff00ff00ff00ff",
			Sources: []Source{{Path: "dir/t.star", SHA256: "ab12"}, {Path: "lib/x.star", SHA256: "cd34"}},
			Model: &Model{Name: "m", BaseURL: "http://127.0.0.1:1/v1", Request: jsonv.NewObject("temperature", 0.5),
				Headers: []jsonv.Value{"X-Session"}, ToolCallFormat: "auto", ReasoningHistory: "keep"}},
		&User{Turn: 0, Content: "hi", State: "s0", Now: "2026-01-05T08:00:00Z"},
		&Assistant{Turn: 0, Content: "", ToolCalls: nil, Usage: nil},
		&Assistant{Turn: 0, Content: "calling", ToolCalls: []jsonv.Value{jsonv.NewObject("id", "x")},
			Usage: jsonv.NewObject("prompt_tokens", int64(10))},
		&Assistant{Turn: 0, Content: "none", ToolCalls: []jsonv.Value{}, Usage: &jsonv.Object{}},
		&Call{Turn: 0, ID: "call_1", Name: "fs_read", Args: jsonv.NewObject("path", "/a")},
		&CallResult{Turn: 0, ID: "call_1", Content: `{"a":1}`, Error: nil, Fault: false, State: "s1"},
		&Call{Turn: 0, ID: "x", Name: "fs_write", Args: &jsonv.Object{}},
		&CallResult{Turn: 0, ID: "x", Content: "null", Error: ptr("boom"), Fault: true, State: "s2"},
		&Reply{Turn: 0, Content: "done"},
		&TurnEnd{Turn: 0, Score: ptr(1.0), Truncated: false, Checks: checks},
		&User{Turn: 1, Content: "", State: "s2", Now: ""},
		&Assistant{Turn: 1, Content: "none", ToolCalls: []jsonv.Value{}, Usage: &jsonv.Object{},
			Reasoning: "r", Raw: "<think>r</think>none", CallsFrom: "hermes", FinishReason: "stop",
			Logprobs: jsonv.NewObject("content", []jsonv.Value{}), PromptTokenIDs: []jsonv.Value{int64(1)},
			CompletionTokenIDs: []jsonv.Value{int64(2)}, Note: "n"},
		&NotRun{Turn: 1, ID: "y", Content: `{"error":"e"}`},
		&SimUser{Turn: 1, Round: 0, Said: "Which one?", RequestSHA256: "ab", Content: "The blue one.", Done: false, Source: "model",
			Model: "u", Request: []jsonv.Value{jsonv.NewObject("role", "user", "content", "Which one?")}},
		&Judge{Turn: ptr(1), Rubric: "r", Text: "t", RequestSHA256: "cd", Passed: true, Score: 0.5, Reason: "ok", Source: "stand-in"},
		&TurnEnd{Turn: 1, Score: nil, Truncated: true, Checks: []Check{}},
		&End{Score: 1, Passed: true, Completion: 0.5, Safety: 1, Robustness: 0, Checks: checks, State: "s3",
			Error: &Failure{Code: "timeout", Message: "m", File: ptr("t.star"), Line: ptr(3), Col: ptr(4)}},
	}
}

func encodeAll(t *testing.T, events []Body) []byte {
	var buf bytes.Buffer
	for _, b := range events {
		line, err := Encode(b)
		require.NoError(t, err)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// Every event kind written and read back is equal to what was written, and written again gives
// the same bytes.
func TestEventsRoundTrip(t *testing.T) {
	t.Parallel()
	variants := [][]Body{everyKind()}
	// the other way for the fields that are absent when empty: start without system, now, rand
	// and sources, end without error, and a failure without a position
	short := everyKind()
	st := short[0].(*Start)
	st.System, st.Now, st.Rand, st.Sources, st.Model = "", "", "", nil, nil
	short[len(short)-1].(*End).Error = nil
	failure := everyKind()
	failure[len(failure)-1].(*End).Error = &Failure{Code: "solution-error", Message: ""}
	variants = append(variants, short, failure)

	seen := map[string]bool{}
	for _, want := range variants {
		data := encodeAll(t, want)
		got, err := Read(bytes.NewReader(data))
		require.NoError(t, err)
		require.Len(t, got, len(want))
		back := make([]Body, len(got))
		for i, ev := range got {
			assert.Equal(t, i+1, ev.Line)
			assert.Equal(t, want[i].Kind(), ev.Kind)
			assert.Equal(t, want[i], ev.Body, "line %d", i+1)
			back[i] = ev.Body
			seen[ev.Kind] = true
		}
		assert.Equal(t, string(data), string(encodeAll(t, back)))
	}
	for _, b := range bodies {
		assert.True(t, seen[b.Kind()], "no %s event in the round trip", b.Kind())
	}
	assert.NotContains(t, string(encodeAll(t, short)), `"system"`)
	assert.NotContains(t, string(encodeAll(t, short)), `"sources"`)
	assert.NotContains(t, string(encodeAll(t, short)), `"rand"`)
	assert.NotContains(t, string(encodeAll(t, short)), `"error":{`)
}

// The generic accessors read the typed fields under their JSON names.
func TestEventAccessors(t *testing.T) {
	t.Parallel()
	events, err := Read(bytes.NewReader(encodeAll(t, everyKind())))
	require.NoError(t, err)
	start, end := events[0], events[len(events)-1]
	assert.Equal(t, "openai", start.Str("agent"))
	assert.Equal(t, int64(-3), start.Int("seed"))
	assert.Equal(t, -1, start.Turn())
	assert.Equal(t, 1, events[11].Turn())
	assert.True(t, end.Bool("passed"))
	assert.Equal(t, 1.0, end.Value("score"))
	assert.Nil(t, events[2].Value("usage"), "a nil object is an untyped nil")
	assert.Nil(t, events[6].Value("error"))
	assert.Equal(t, "boom", events[8].Value("error"))
	assert.Nil(t, end.Value("nothing"))
	assert.Equal(t, "end", end.Str("event"))
}

// A missing or mistyped field, at the top or inside checks or the error, is an error that names
// the line and the field; so is a turn that cannot be.
func TestReadRejectsBadFields(t *testing.T) {
	t.Parallel()
	lines := strings.SplitAfter(string(encodeAll(t, everyKind())), "\n")
	cases := []struct {
		line     int // 1-based
		from, to string
		want     string
	}{
		{2, `"content":"hi",`, ``, `line 2: user event: missing field "content"`},
		{2, `"turn":0`, `"turn":"0"`, `line 2: user event: field "turn" is string, want integer`},
		{2, `"turn":0`, `"turn":0.5`, `line 2: user event: field "turn" is number, want integer`},
		{2, `"now":"2026-01-05T08:00:00Z"`, `"now":7`, `line 2: user event: field "now" is integer, want string`},
		{1, `"seed":-3`, `"seed":null`, `line 1: start event: field "seed" is null, want integer`},
		{1, `"system":"system\n\u0001 é"`, `"system":[]`, `line 1: start event: field "system" is array, want string`},
		{1, `"path":"lib/x.star",`, ``, `line 1: start event: missing field "sources[1].path"`},
		{1, `"rand":"00ff00ff00ff00ff"`, `"rand":255`, `line 1: start event: field "rand" is integer, want string`},
		{4, `"usage":{"prompt_tokens":10}`, `"usage":[]`, `line 4: assistant event: field "usage" is array, want object or null`},
		{6, `"args":{"path":"/a"}`, `"args":null`, `line 6: call event: field "args" is null, want object`},
		{9, `"fault":true`, `"fault":"yes"`, `line 9: result event: field "fault" is string, want boolean`},
		{9, `"error":"boom"`, `"error":false`, `line 9: result event: field "error" is boolean, want string or null`},
		{11, `"weight":1.0`, `"weight":"1"`, `line 11: turn_end event: field "checks[0].weight" is string, want number or null`},
		{11, `"passed":false,"turn":null}`, `"turn":null}`, `line 11: turn_end event: missing field "checks[1].passed"`},
		{11, `"checks":[{`, `"checks":[7,{`, `line 11: turn_end event: field "checks[0]" is integer, want object`},
		{18, `"code":"timeout",`, ``, `line 18: end event: missing field "error.code"`},
		{18, `"line":3`, `"line":"3"`, `line 18: end event: field "error.line" is string, want integer or null`},
		{18, `"score":1.0`, `"score":true`, `line 18: end event: field "score" is boolean, want number`},
		{1, `"headers":["X-Session"]`, `"headers":"X"`, `line 1: start event: field "model.headers" is string, want array`},
		{13, `"prompt_token_ids":[1]`, `"prompt_token_ids":{}`, `line 13: assistant event: field "prompt_token_ids" is object, want array`},
		{14, `"id":"y"`, `"id":5`, `line 14: not_run event: field "id" is integer, want string`},
		{10, `"turn":0`, `"turn":-1`, `line 10: reply event: turn -1 is out of range`},
		{10, `"turn":0`, `"turn":9000000000000000000`, `line 10: reply event: turn 9000000000000000000 is out of range`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			ls := append([]string(nil), lines...)
			require.Contains(t, ls[c.line-1], c.from)
			ls[c.line-1] = strings.Replace(ls[c.line-1], c.from, c.to, 1)
			_, err := Read(strings.NewReader(strings.Join(ls, "")))
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}
