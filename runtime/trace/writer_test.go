package trace_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeEveryKind drives a Writer through every event kind, with every optional field both set
// and not, null and not, and text that JSON escapes.
func writeEveryKind(t *testing.T) []byte {
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, trace.Start{Task: "every-kind", File: "dir/t.star", FileSHA256: trace.FileSHA256([]byte("x")),
		Seed: -7, Agent: "openai", State: "s0", System: "You are <helpful> & \"kind\"\n\x01 é \u2028", Now: "2026-01-05T08:00:00Z",
		Tools: []jsonv.Value{jsonv.NewObject("type", "function", "function", jsonv.NewObject("name", "fs_read", "parameters", jsonv.NewObject()))}})
	w.OnUser(0, "hi <b>\t", "s0", "2026-01-05T08:00:00Z")
	w.OnAssistant(0, &episode.AssistantMessage{})
	w.OnAssistant(0, &episode.AssistantMessage{Content: "text", ToolCalls: []jsonv.Value{jsonv.NewObject("id", "x", "type", "function",
		"function", jsonv.NewObject("name", "fs_read", "arguments", `{"path":"/a"}`))},
		Usage: jsonv.NewObject("prompt_tokens", int64(10), "completion_tokens", int64(3))})
	w.OnAssistant(0, &episode.AssistantMessage{Content: "more", ToolCalls: []jsonv.Value{}, Usage: jsonv.NewObject(),
		Reasoning: "think <b>", Raw: "<think>think <b></think>more", CallsFrom: "hermes", FinishReason: "stop",
		Logprobs:       jsonv.NewObject("content", []jsonv.Value{jsonv.NewObject("token", "more", "logprob", -0.5)}),
		PromptTokenIDs: []jsonv.Value{int64(1), int64(2)}, CompletionTokenIDs: []jsonv.Value{int64(3)}, Note: "why"})
	w.OnNotRun(0, "x", `{"error":"not run"}`)
	ok := &episode.Call{Turn: 0, ID: "call_1", Name: "fs_read", Args: jsonv.NewObject("path", "/a", "n", 1.5, "m", int64(2), "z", 1.0)}
	w.OnCall(ok)
	ok.Content, ok.State = `{"a":1}`, "s1"
	w.OnResult(ok)
	fault := &episode.Call{Turn: 0, ID: "x", Name: "fs_write", Args: jsonv.NewObject()}
	w.OnCall(fault)
	fault.Content, fault.Error, fault.IsError, fault.Fault, fault.State = "null", "boom", true, true, "s2"
	w.OnResult(fault)
	empty := &episode.Call{Turn: 0, ID: "y", Name: "fs_write", Args: jsonv.NewObject()}
	w.OnCall(empty)
	empty.Content, empty.IsError, empty.State = "null", true, "s2"
	w.OnResult(empty)
	w.OnReply(0, "done")
	one, half := 1.0, 0.5
	t0, t1 := 0, 1
	items := []dsl.CheckItem{{Kind: "check", Message: "a", Weight: 1, Passed: true, Turn: &t0},
		{Kind: "safety", Message: "b", Weight: 1}, {Kind: "check", Message: "c", Weight: 2.5, Turn: &t1}}
	w.OnTurnEnd(&episode.TurnResult{Index: 0, Score: &one, Items: items})
	w.OnUser(1, "", "s2", "")
	w.OnReply(1, "")
	w.OnTurnEnd(&episode.TurnResult{Index: 1, Score: &half, Truncated: true})
	w.OnUser(2, "again", "s2", "2026-01-05T09:00:00Z")
	w.OnTurnEnd(&episode.TurnResult{Index: 2})
	require.NoError(t, w.End(&episode.Result{Score: 0.25, Completion: 0.5, Safety: 1, Robustness: 1, Items: items, FinalState: "s3",
		Err: &dsl.Diagnostic{Code: "solution-error", Message: "m", File: "t.star", Line: 3, Col: 4}}))
	return buf.Bytes()
}

var update = flag.Bool("update", false, "rewrite testdata/every_kind.jsonl (when the format changes on purpose)")

// The Writer's bytes are those of testdata/every_kind.jsonl, which the engine wrote before the
// events were typed (with the assistant fields and the not_run event added since, and the format
// version moved to 2 with the state hash): the format does not move.
func TestWriterBytes(t *testing.T) {
	t.Parallel()
	got := writeEveryKind(t)
	if *update {
		require.NoError(t, os.WriteFile("testdata/every_kind.jsonl", got, 0o644))
	}
	want, err := os.ReadFile("testdata/every_kind.jsonl")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	_, err = trace.Read(bytes.NewReader(got))
	require.NoError(t, err)
}

// `run --json` prints the end event: without an error, and with one whose position is unknown.
func TestEndObject(t *testing.T) {
	t.Parallel()
	got := jsonv.MustEncode(trace.Object(trace.EndOf(&episode.Result{Score: 1, Passed: true, Completion: 1, Safety: 1, Robustness: 1, FinalState: "s"})))
	assert.Equal(t, `{"event":"end","score":1.0,"passed":true,"completion":1.0,"safety":1.0,"robustness":1.0,"checks":[],"state":"s"}`, got)
	got = jsonv.MustEncode(trace.Object(trace.EndOf(&episode.Result{FinalState: "s", Err: &dsl.Diagnostic{Code: "timeout", Message: "t"}})))
	assert.Equal(t, `{"event":"end","score":0.0,"passed":false,"completion":0.0,"safety":0.0,"robustness":0.0,"checks":[],"state":"s","error":{"code":"timeout","message":"t","file":null,"line":null,"col":null}}`, got)
}
