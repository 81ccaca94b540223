package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const dayLaterTask = `
def _setup(ws):
    ws.mail.address = "ana@acme.example"
    ws.fs.write("/notes.md", "monday notes")

def _verify(ws, ep):
    check("notes" in (ep.reply or ""), "the agent answers")

task(
    name = "day-later",
    turns = [
        turn(user = "What is in my notes?"),
        turn(user = "And today, anything new?", advance = "1d"),
    ],
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
)
`

// The SFT messages exported from a model's trace are the conversation the model was sent,
// including the note of the new time after a turn moved the clock.
func TestExportMatchesWhatTheModelSaw(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, func(msgs []map[string]any) string {
		switch len(msgs) {
		case 2: // system, user 1
			return chatCalls("", chatCall("c1", "fs_read", `{"path":"/notes.md"}`))
		case 4: // ... assistant, tool
			return chatSay("Your notes say: monday notes.")
		default: // turn 2
			return chatSay("No new notes since yesterday.")
		}
	})
	dir := writeFiles(t, map[string]string{"day.star": dayLaterTask})
	tr := filepath.Join(dir, "runs", "day.jsonl")
	require.NoError(t, osMkdirAll(filepath.Dir(tr)))
	code, out, errs := cli(t, "run", filepath.Join(dir, "day.star"), "--agent", "openai", "--model", "m", "--base-url", f.url(), "--trace", tr)
	require.Equal(t, 0, code, "%s%s", out, errs)

	sft := filepath.Join(dir, "sft.jsonl")
	code, out, errs = cli(t, "export", "sft", tr, "--out", sft, "--corpus", dir)
	require.Equal(t, 0, code, "%s%s", out, errs)
	lines := readLines(t, sft)
	require.Len(t, lines, 1)
	exported := lines[0]["messages"].([]any)

	reqs := f.requests()
	last := reqs[len(reqs)-1]["messages"].([]any)
	require.Len(t, exported, len(last)+1, "the exported episode is the last request plus the final answer")
	for i := range last {
		// go-openai leaves out an empty content beside tool calls; export writes "" (the same)
		if m := last[i].(map[string]any); m["role"] == "assistant" && m["content"] == nil {
			m["content"] = ""
		}
		// export sft writes the arguments as objects, and names the tool on tool messages
		if calls, ok := last[i].(map[string]any)["tool_calls"].([]any); ok {
			for _, c := range calls {
				fn := c.(map[string]any)["function"].(map[string]any)
				var args any
				require.NoError(t, json.Unmarshal([]byte(fn["arguments"].(string)), &args))
				fn["arguments"] = args
			}
		}
		if m := exported[i].(map[string]any); m["role"] == "tool" {
			assert.Equal(t, "fs_read", m["name"])
			delete(m, "name")
		}
		want, _ := json.Marshal(last[i])
		got, _ := json.Marshal(exported[i])
		assert.JSONEq(t, string(want), string(got), "message %d", i)
	}
	turn2 := last[len(last)-1].(map[string]any)
	assert.Equal(t, "(It is now Tuesday, 2026-01-06T09:00:00Z.)\n\nAnd today, anything new?", turn2["content"])
}

func osMkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }
