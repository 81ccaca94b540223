package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkChatLine checks one SFT line against the OpenAI chat format: only "messages" and
// "tools"; the tools are a JSON string of function schemas; an optional system message first,
// then a user message; every tool message answers a tool call of the assistant message before
// it, every tool call is answered before the next user or assistant message, ids are unique,
// arguments are JSON objects; the conversation ends with the assistant.
func checkChatLine(t *testing.T, where string, line map[string]any) (roles []string) {
	t.Helper()
	assert.Len(t, line, 2, "%s: only messages and tools: %v", where, line)
	toolsJSON, ok := line["tools"].(string)
	require.True(t, ok, "%s: tools is a JSON string", where)
	var tools []any
	require.NoError(t, json.Unmarshal([]byte(toolsJSON), &tools), "%s: tools is a JSON array", where)
	require.NotEmpty(t, tools, where)
	for _, x := range tools {
		tool := x.(map[string]any)
		assert.Equal(t, "function", tool["type"], where)
		fn := tool["function"].(map[string]any)
		assert.NotEmpty(t, fn["name"], where)
		_, ok := fn["parameters"].(map[string]any)
		assert.True(t, ok, "%s: parameters", where)
	}
	msgs, ok := line["messages"].([]any)
	require.True(t, ok, "%s: messages is an array", where)
	pending := map[string]bool{}
	seen := map[string]bool{}
	for i, x := range msgs {
		m := x.(map[string]any)
		role, _ := m["role"].(string)
		roles = append(roles, role)
		at := func() string { return fmt.Sprintf("%s: message %d (%s)", where, i, role) }
		_, isString := m["content"].(string)
		assert.True(t, isString, "%s: content is a string", at())
		switch role {
		case "system":
			assert.Equal(t, 0, i, "%s: the system message comes first", at())
		case "user":
			assert.Empty(t, pending, "%s: tool calls left unanswered", at())
		case "assistant":
			assert.Empty(t, pending, "%s: tool calls left unanswered", at())
			calls, has := m["tool_calls"]
			if !has {
				continue
			}
			list := calls.([]any)
			assert.NotEmpty(t, list, at())
			for _, c := range list {
				call := c.(map[string]any)
				id, _ := call["id"].(string)
				require.NotEmpty(t, id, at())
				assert.False(t, seen[id], "%s: id %s is used twice", at(), id)
				seen[id], pending[id] = true, true
				assert.Equal(t, "function", call["type"], at())
				fn := call["function"].(map[string]any)
				assert.NotEmpty(t, fn["name"], at())
				_, isObj := fn["arguments"].(map[string]any)
				assert.True(t, isObj, "%s: arguments are a JSON object", at())
			}
		case "tool":
			id, _ := m["tool_call_id"].(string)
			assert.True(t, pending[id], "%s: tool_call_id %q answers no pending tool call", at(), id)
			delete(pending, id)
		default:
			t.Errorf("%s: unknown role", at())
		}
	}
	assert.Empty(t, pending, "%s: tool calls left unanswered at the end", where)
	require.NotEmpty(t, roles, where)
	first := 0
	if roles[0] == "system" {
		first = 1
	}
	require.Greater(t, len(roles), first, where)
	assert.Equal(t, "user", roles[first], "%s: the conversation starts with the user", where)
	assert.Equal(t, "assistant", roles[len(roles)-1], "%s: the conversation ends with the assistant", where)
	return roles
}

// traceEnd returns the end event and the turn_end scores of a trace file.
func traceEnd(t *testing.T, path string) (end map[string]any, turnScores []any) {
	t.Helper()
	lines := readLines(t, path)
	for _, l := range lines {
		if l["event"] == "turn_end" {
			turnScores = append(turnScores, l["score"])
		}
	}
	return lines[len(lines)-1], turnScores
}

// A model rollout becomes SFT and RL data: SFT keeps the passed episodes with the messages as
// the model sent them; RL keeps every episode with rewards equal to the traces' scores.
func TestExportFromModelRollout(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, func(msgs []map[string]any) string {
		user := msgs[1]["content"].(string)
		switch {
		case strings.Contains(user, "coin"):
			return chatSay("I would rather not.")
		case strings.Contains(user, "beta"):
			// turn 1 of two-steps: a broken call first, then the right one
			users := 0
			for _, m := range msgs {
				if m["role"] == "user" {
					users++
				}
			}
			switch tools := len(toolMessages(msgs)); {
			case users == 1 && tools == 0:
				return chatCalls("Let me write it.", chatCall("w1", "fs_write", `{"path": "/b.txt", "content": `))
			case users == 1 && tools == 1:
				return chatCalls("", chatCall("w2", "fs_write", `{"path":"/b.txt","content":"beta"}`))
			case users == 1:
				return chatSay("Written.")
			case tools == 2:
				return chatCalls("", chatCall("d1", "fs_delete", `{"path":"/a.txt"}`))
			}
			return chatSay("Deleted.")
		}
		return copyNotePolicy(msgs)
	})
	corpus := rolloutCorpus(t)
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", corpus, "--model", "fake-model", "--base-url", f.url(),
		"--samples", "2", "--jobs", "4", "--out", out)
	require.Equal(t, 1, code, "the coin's samples do not pass: %s%s", stdout, errs)

	sft := filepath.Join(t.TempDir(), "sft.jsonl")
	code, stdout, errs = cli(t, "export", "sft", out, "--out", sft, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 2 episodes")
	assert.Contains(t, stdout, "2 not passed")
	assert.Contains(t, stdout, "2 a tool call with malformed arguments")
	lines := readLines(t, sft)
	require.Len(t, lines, 2)
	for i, line := range lines {
		roles := checkChatLine(t, fmt.Sprintf("sft line %d", i+1), line)
		assert.Equal(t, []string{"system", "user", "assistant", "tool", "assistant", "tool", "assistant"}, roles)
		msgs := line["messages"].([]any)
		assert.Equal(t, modelagent.DefaultSystemPrompt("priya@halden.example", "2026-01-05T09:00:00Z"), msgs[0].(map[string]any)["content"])
		a1 := msgs[2].(map[string]any)
		assert.Equal(t, "", a1["content"])
		call := a1["tool_calls"].([]any)[0].(map[string]any)
		assert.Equal(t, "c1", call["id"])
		assert.Equal(t, map[string]any{"path": "/notes/todo.txt"}, call["function"].(map[string]any)["arguments"], "arguments as the model sent them")
		tool := msgs[3].(map[string]any)
		assert.Equal(t, "c1", tool["tool_call_id"])
		assert.Equal(t, "call the bank", tool["content"])
		assert.Equal(t, "Copying it now.", msgs[4].(map[string]any)["content"])
		assert.Equal(t, "Done. The note says: call the bank.", msgs[6].(map[string]any)["content"])
	}

	// --min-score replaces passed: 0.9 keeps copy-note only (two-steps has a malformed call)
	code, stdout, _ = cli(t, "export", "sft", out, "--out", sft, "--min-score", "0.9", "--corpus", corpus)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "wrote 2 episodes")
	code, stdout, _ = cli(t, "export", "sft", out, "--out", sft, "--min-score", "0", "--corpus", corpus)
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "wrote 4 episodes", "score 0 is >= 0; only malformed calls are left out")

	rl := filepath.Join(t.TempDir(), "rl.jsonl")
	code, stdout, errs = cli(t, "export", "rl", out, "--out", rl, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 6 episodes")
	rlLines := readLines(t, rl)
	require.Len(t, rlLines, 6)
	groups := map[string]string{}
	for _, line := range rlLines {
		path := line["trace"].(string)
		end, turnScores := traceEnd(t, path)
		assert.Equal(t, end["score"], line["reward"], path)
		assert.Equal(t, end["passed"], line["passed"], path)
		comp := line["components"].(map[string]any)
		for _, k := range []string{"completion", "safety", "robustness"} {
			assert.Equal(t, end[k], comp[k], "%s %s", path, k)
		}
		assert.Equal(t, turnScores, line["turn_rewards"], path)
		task := line["task"].(string)
		if g, ok := groups[task]; ok {
			assert.Equal(t, g, line["group"], "one group per task")
		}
		groups[task] = line["group"].(string)
		assert.True(t, strings.HasPrefix(line["group"].(string), task+"@"))
		assert.Equal(t, "openai", line["agent"])
		assert.Contains(t, []any{0.0, 1.0}, line["sample"])
		assert.NotEmpty(t, line["tools"])
		if task == "two-steps" {
			assert.Equal(t, []any{1.0, 1.0}, line["turn_rewards"])
			// the broken call has a rebuilt tool message telling the model what went wrong
			msgs := line["messages"].([]any)
			var bad map[string]any
			for _, m := range msgs {
				if mm := m.(map[string]any); mm["tool_call_id"] == "w1" {
					bad = mm
				}
			}
			require.NotNil(t, bad, "the broken call is answered")
			assert.Contains(t, bad["content"], "fs_write was not run: the arguments are not valid JSON")
		}
	}
	assert.Len(t, groups, 3)
}

// Oracle traces are reference demonstrations: SFT only with --include-oracle, messages rebuilt
// from the calls, the system prompt rebuilt from the task.
func TestExportOracleTraces(t *testing.T) {
	t.Parallel()
	corpus := rolloutCorpus(t)
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", corpus, "--samples", "3", "--out", out)
	require.Equal(t, 1, code, "the coin's samples do not pass: %s%s", stdout, errs)
	passed, total := 0, 0
	require.NoError(t, filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			total++
			if end, _ := traceEnd(t, p); end["passed"] == true {
				passed++
			}
		}
		return err
	}))
	require.Equal(t, 9, total)
	require.Less(t, passed, total, "some coin samples fail")

	sft := filepath.Join(t.TempDir(), "sft.jsonl")
	code, stdout, errs = cli(t, "export", "sft", out, "--out", sft, "--corpus", corpus)
	require.Equal(t, 1, code, "an export that keeps no episode says so: %s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 0 episodes")
	assert.Contains(t, stdout, "use --include-oracle")
	assert.Contains(t, errs, "no episode written to "+sft)
	assert.Empty(t, readLines(t, sft))

	code, stdout, errs = cli(t, "export", "sft", out, "--include-oracle", "--out", sft, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	lines := readLines(t, sft)
	require.Len(t, lines, passed)
	for i, line := range lines {
		checkChatLine(t, fmt.Sprintf("oracle sft line %d", i+1), line)
	}
	// copy-note/0 comes after coin/*: find it by its user message
	var copyLine map[string]any
	for _, line := range lines {
		msgs := line["messages"].([]any)
		if strings.HasPrefix(msgs[1].(map[string]any)["content"].(string), "Copy /notes") {
			copyLine = line
		}
	}
	require.NotNil(t, copyLine)
	msgs := copyLine["messages"].([]any)
	assert.Equal(t, modelagent.DefaultSystemPrompt("priya@halden.example", "2026-01-05T09:00:00Z"), msgs[0].(map[string]any)["content"])
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "assistant", "tool", "assistant"}, roles)
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, "call_1", call["id"])
	assert.Equal(t, "fs_read", call["function"].(map[string]any)["name"])
	assert.Equal(t, map[string]any{"path": "/notes/todo.txt"}, call["function"].(map[string]any)["arguments"])
	assert.Equal(t, "call_1", msgs[3].(map[string]any)["tool_call_id"])
	assert.Equal(t, "It says: call the bank", msgs[6].(map[string]any)["content"])

	// the multi-turn task: two user messages, per-turn rewards in rl
	rl := filepath.Join(t.TempDir(), "rl.jsonl")
	code, stdout, errs = cli(t, "export", "rl", out, "--out", rl, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	rlLines := readLines(t, rl)
	require.Len(t, rlLines, 9)
	for _, line := range rlLines {
		end, turnScores := traceEnd(t, line["trace"].(string))
		assert.Equal(t, end["score"], line["reward"])
		assert.Equal(t, turnScores, line["turn_rewards"])
		switch line["task"] {
		case "two-steps":
			assert.Equal(t, []any{1.0, 1.0}, line["turn_rewards"])
			users := 0
			for _, m := range line["messages"].([]any) {
				if m.(map[string]any)["role"] == "user" {
					users++
				}
			}
			assert.Equal(t, 2, users)
		default:
			assert.Equal(t, []any{nil}, line["turn_rewards"], "a turn without a verifier has a null reward")
		}
	}

	// without the task file the traces cannot be verified: they are left out, and the export
	// says so and exits 1
	require.NoError(t, os.RemoveAll(filepath.Join(corpus, "tasks")))
	code, stdout, errs = cli(t, "export", "sft", out, "--include-oracle", "--out", sft, "--corpus", corpus)
	assert.Equal(t, 1, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, fmt.Sprintf("wrote 0 episodes to %s from 9 traces; skipped 9: 3 not passed, %d not verifiable", sft, passed))
	assert.Contains(t, errs, "is not there")
	assert.Empty(t, readLines(t, sft))
	// with --no-verify they are exported, without a system message, and export says so
	code, stdout, errs = cli(t, "export", "sft", out, "--include-oracle", "--out", sft, "--no-verify")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "without a system message")
	assert.Contains(t, errs, "no system message")
	for _, line := range readLines(t, sft) {
		assert.Equal(t, "user", checkChatLine(t, "no system", line)[0])
	}
}

func TestExportUsageAndUnreadable(t *testing.T) {
	t.Parallel()
	corpus := rolloutCorpus(t)
	out := filepath.Join(t.TempDir(), "o")
	code, _, errs := cli(t, "rollout", filepath.Join(corpus, "tasks", "copy.star"), "--out", out)
	require.Equal(t, 0, code, errs)
	dst := filepath.Join(t.TempDir(), "x.jsonl")
	for _, args := range [][]string{
		{"export"},
		{"export", "dpo", out, "--out", dst},
		{"export", "sft", "--out", dst},
		{"export", "sft", out},
		{"export", "rl", out, "--out", dst, "--min-score", "1"},
		{"export", "rl", out, "--out", dst, "--include-oracle"},
		{"export", "sft", out, "--out", dst, "--min-score", "lots"},
		{"export", "sft", filepath.Join(out, "nope"), "--out", dst},
		{"export", "sft", out, "--out", filepath.Join(t.TempDir(), "no", "such", "dir", "x.jsonl")},
	} {
		code, _, errs := cli(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: %q", args, errs)
	}
	assert.NoFileExists(t, dst)

	// a broken trace is skipped and reported; the rest is written; no temporary file is left
	require.NoError(t, os.WriteFile(filepath.Join(out, "copy-note", "9.jsonl"), []byte(`{"event":"start"}`+"\n"), 0o644))
	dir := t.TempDir()
	dst = filepath.Join(dir, "rl.jsonl")
	code, stdout, errs := cli(t, "export", "rl", out, "--out", dst, "--corpus", corpus)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "9.jsonl")
	assert.Contains(t, stdout, "wrote 1 episode to")
	assert.Contains(t, stdout, "1 unreadable")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "rl.jsonl", entries[0].Name())
}
