package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sftTraces records copy-note twice, by a scripted model (text beside its second call) and by the
// oracle, into dir/runs, and returns dir (the corpus) and the traces folder.
func sftTraces(t *testing.T) (dir, runs string) {
	t.Helper()
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	dir = writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	runs = filepath.Join(dir, "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	code, out, errs := cli(t, "run", filepath.Join(dir, "copy.star"), "--model", "m", "--base-url", f.url(),
		"--trace", filepath.Join(runs, "model.jsonl"))
	require.Equal(t, 0, code, "%s%s", out, errs)
	code, out, errs = cli(t, "run", filepath.Join(dir, "copy.star"), "--trace", filepath.Join(runs, "oracle.jsonl"))
	require.Equal(t, 0, code, "%s%s", out, errs)
	return dir, runs
}

// callsOf are the tool calls of the assistant messages of a line, in order.
func callsOf(msgs []any) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if calls, ok := m.(map[string]any)["tool_calls"].([]any); ok {
			for _, c := range calls {
				out = append(out, c.(map[string]any))
			}
		}
	}
	return out
}

// export sft writes, by default, arguments as objects, the tools as a JSON string and the tool's
// name on tool messages; each flag changes what it says and nothing else.
func TestExportSFTShapes(t *testing.T) {
	dir, runs := sftTraces(t)
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	export := func(args ...string) []map[string]any {
		t.Helper()
		code, stdout, errs := cli(t, append([]string{"export", "sft", runs, "--out", out, "--corpus", dir, "--include-oracle"}, args...)...)
		require.Equal(t, 0, code, "%s%s", stdout, errs)
		assert.Contains(t, stdout, "wrote 2 episodes")
		return readLines(t, out)
	}

	for _, line := range export() {
		checkChatLine(t, "default", line)
		msgs := line["messages"].([]any)
		for _, m := range msgs {
			if mm := m.(map[string]any); mm["role"] == "tool" {
				assert.Contains(t, []any{"fs_read", "fs_write"}, mm["name"])
			}
		}
		assert.Equal(t, map[string]any{"path": "/notes/todo.txt"}, callsOf(msgs)[0]["function"].(map[string]any)["arguments"])
	}

	for _, line := range export("--arguments", "string", "--tools", "list") {
		_, isList := line["tools"].([]any)
		assert.True(t, isList, "--tools list")
		args := callsOf(line["messages"].([]any))[0]["function"].(map[string]any)["arguments"]
		assert.Equal(t, `{"path":"/notes/todo.txt"}`, args, "--arguments string")
	}

	strict := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
	for _, line := range export("--ids", "strict") {
		checkChatLine(t, "--ids strict", line) // every tool message answers its call
		for _, c := range callsOf(line["messages"].([]any)) {
			assert.Regexp(t, strict, c["id"])
		}
	}

	lines := export("--format", "sharegpt")
	for _, line := range lines {
		conv := line["conversations"].([]any)
		assert.Len(t, line, 2)
		var froms []any
		for _, m := range conv {
			froms = append(froms, m.(map[string]any)["from"])
		}
		assert.Equal(t, []any{"system", "human", "gpt", "tool", "gpt", "tool", "gpt"}, froms)
	}
}

// --format llamafactory writes LLaMA-Factory's rows (the text beside a call kept before it) and
// merges the dataset's entry into the dataset_info.json beside them.
func TestExportSFTLlamaFactory(t *testing.T) {
	dir, runs := sftTraces(t)
	outDir := t.TempDir()
	info := filepath.Join(outDir, "dataset_info.json")
	require.NoError(t, os.WriteFile(info, []byte(`{"mine": {"file_name": "mine.json"}}`), 0o644))
	out := filepath.Join(outDir, "coworkenv_sft.jsonl")
	code, stdout, errs := cli(t, "export", "sft", runs, "--out", out, "--corpus", dir, "--format", "llamafactory")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 1 episode")

	lines := readLines(t, out)
	require.Len(t, lines, 1)
	line := lines[0]
	assert.Contains(t, line["system"], "priya@halden.example")
	_, isString := line["tools"].(string)
	assert.True(t, isString)
	conv := line["conversations"].([]any)
	var froms []string
	for _, m := range conv {
		froms = append(froms, m.(map[string]any)["from"].(string))
	}
	assert.Equal(t, []string{"human", "function_call", "observation", "function_call", "observation", "gpt"}, froms)
	assert.Equal(t, `[{"name":"fs_read","arguments":{"path":"/notes/todo.txt"}}]`, conv[1].(map[string]any)["value"])
	second := conv[3].(map[string]any)["value"].(string)
	assert.True(t, strings.HasPrefix(second, "Copying it now.\n<tool_call>[{\"name\":\"fs_write\""), second)
	assert.True(t, strings.HasSuffix(second, "}]</tool_call>"), second)
	assert.Equal(t, "Done. The note says: call the bank.", conv[5].(map[string]any)["value"])

	var entries map[string]any
	b, err := os.ReadFile(info)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &entries))
	assert.Equal(t, map[string]any{"file_name": "mine.json"}, entries["mine"])
	entry := entries["coworkenv_sft"].(map[string]any)
	assert.Equal(t, "coworkenv_sft.jsonl", entry["file_name"])
	assert.Equal(t, "sharegpt", entry["formatting"])
	assert.Equal(t, map[string]any{"messages": "conversations", "system": "system", "tools": "tools"}, entry["columns"])

	// a dataset_info.json that is not LLaMA-Factory's is refused before anything is written
	require.NoError(t, os.WriteFile(info, []byte(`["not", "an", "object"]`), 0o644))
	require.NoError(t, os.Remove(out))
	code, _, errs = cli(t, "export", "sft", runs, "--out", out, "--corpus", dir, "--format", "llamafactory")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "dataset_info.json: not a JSON object")
	assert.NoFileExists(t, out)
}

func TestExportSFTFlagErrors(t *testing.T) {
	dir, runs := sftTraces(t)
	out := filepath.Join(t.TempDir(), "x.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sft", "--format", "alpaca"}, "want openai or sharegpt or llamafactory"},
		{[]string{"sft", "--arguments", "dict"}, "want object or string"},
		{[]string{"sft", "--tools", "yaml"}, "want json or list"},
		{[]string{"sft", "--reasoning", "hide"}, "want keep or drop"},
		{[]string{"sft", "--ids", "short"}, "want keep or strict"},
		{[]string{"sft", "--format", "llamafactory", "--arguments", "string"}, "--arguments string: not with --format llamafactory"},
		{[]string{"sft", "--format", "llamafactory", "--tools", "list"}, "--tools list: not with --format llamafactory"},
		{[]string{"sft", "--format", "llamafactory", "--ids", "strict"}, "--ids strict: not with --format llamafactory"},
		{[]string{"rl", "--format", "openai"}, "--format: only for export sft"},
		{[]string{"rl", "--arguments", "object"}, "--arguments: only for export sft"},
	} {
		args := append([]string{"export", c.args[0], runs, "--out", out, "--corpus", dir}, c.args[1:]...)
		code, _, errs := cli(t, args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errs, c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: %q", c.args, errs)
	}
	assert.NoFileExists(t, out)
	assert.NoFileExists(t, filepath.Join(filepath.Dir(out), "dataset_info.json"))
}

// docs/training.md's advice runs: every flag set its model-family table recommends is one
// export sft takes; the TRL example's model gets the flags its row recommends in the export
// command the page gives for TRL; and DeepSeek-V3, trained with the example's
// assistant_only_loss=True (TRL's training copy of its template prints arguments | tojson), is
// advised the default object arguments, which the default export writes.
func TestTrainingDocsAdviceRuns(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "training.md"))
	require.NoError(t, err)
	doc := string(b)
	start := strings.Index(doc, "## What each model family needs")
	require.GreaterOrEqual(t, start, 0)
	section := doc[start:]
	section = section[:strings.Index(section, "\n## SFT with TRL")]
	rows := map[string]string{} // family -> flags cell
	var families []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "¦"), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 4 || strings.HasPrefix(line, "| model family") || strings.HasPrefix(line, "| ---") {
			continue
		}
		family := strings.TrimPrefix(cells[0], "| ")
		rows[family] = cells[1]
		families = append(families, family)
	}
	require.GreaterOrEqual(t, len(rows), 8, "the table is read")
	flagSpan := regexp.MustCompile("`(--[^`]+)`")
	flagsOf := func(cell string) [][]string {
		var sets [][]string
		for _, m := range flagSpan.FindAllStringSubmatch(cell, -1) {
			sets = append(sets, strings.Fields(m[1]))
		}
		return sets
	}

	dir, runs := sftTraces(t)
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	exportWith := func(flags ...string) []map[string]any {
		t.Helper()
		code, stdout, errs := cli(t, append([]string{"export", "sft", runs, "--out", out, "--corpus", dir, "--include-oracle"}, flags...)...)
		require.Equal(t, 0, code, "%v: %s%s", flags, stdout, errs)
		return readLines(t, out)
	}
	for _, family := range families {
		for _, flags := range flagsOf(rows[family]) {
			assert.NotEmpty(t, exportWith(flags...), "%s: %v", family, flags)
		}
	}

	// the TRL example: its model's row, and the export command the page gives for TRL
	trl := doc[strings.Index(doc, "## SFT with TRL"):]
	trl = trl[:strings.Index(trl, "\n## LLaMA-Factory")]
	model := regexp.MustCompile(`model="[^/"]+/([^"]+)"`).FindStringSubmatch(trl)
	require.NotNil(t, model, "the TRL example names its model")
	row := ""
	for _, family := range families {
		for _, name := range strings.Split(family, ", ") {
			if strings.HasPrefix(model[1], name+"-") && len(name) > len(row) {
				row = family
			}
		}
	}
	require.NotEmpty(t, row, "a row of the table covers %s", model[1])
	var trlCommand []string
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "coworkenv export sft") && strings.Contains(line, "# TRL") {
			trlCommand = strings.Fields(line[:strings.Index(line, "#")])
		}
	}
	require.NotEmpty(t, trlCommand, "the page gives the export command for TRL")
	var given []string
	for i := 4; i < len(trlCommand); i++ { // after "coworkenv export sft FOLDER"
		if trlCommand[i] == "--out" {
			i++
			continue
		}
		given = append(given, trlCommand[i])
	}
	var want []string
	for _, flags := range flagsOf(rows[row]) {
		want = append(want, flags...)
	}
	assert.Equal(t, want, given, "the TRL command has the flags the %s row recommends", row)

	assert.Contains(t, trl, "assistant_only_loss=True")
	deepseek := rows["DeepSeek-V3"]
	assert.True(t, strings.HasPrefix(deepseek, "defaults with TRL's `assistant_only_loss=True`"),
		"with assistant_only_loss=True TRL trains DeepSeek-V3 on its copy, which wants objects: %q", deepseek)
	for _, line := range exportWith() {
		for _, c := range callsOf(line["messages"].([]any)) {
			assert.IsType(t, map[string]any{}, c["function"].(map[string]any)["arguments"], "the defaults write objects")
		}
	}
}
