package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// export sft's selection: --per-task caps each task, --distinct drops repeated call sequences,
// --mix drops capabilities it does not name; the summary counts each rule's drops.
func TestExportSFTSelection(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	runs := filepath.Join(t.TempDir(), "runs")
	code, stdout, errs := cli(t, "rollout", corpus, "--model", "fake-model", "--base-url", f.url(), "--samples", "3", "--out", runs)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	export := func(args ...string) string {
		t.Helper()
		code, stdout, errs := cli(t, append([]string{"export", "sft", runs, "--out", out, "--corpus", corpus}, args...)...)
		require.Equal(t, 0, code, "%s%s", stdout, errs)
		return stdout
	}
	stdout = export("--per-task", "2")
	assert.Contains(t, stdout, "wrote 2 episodes")
	assert.Contains(t, stdout, "selected from 3; skipped 1: 1 selected out: beyond --per-task")
	assert.Len(t, readLines(t, out), 2)

	stdout = export("--distinct")
	assert.Contains(t, stdout, "wrote 1 episode ")
	assert.Contains(t, stdout, "2 selected out: same tool calls as a better episode of the task")

	// no mail.reply episode: a share of nothing is nothing, and an export of nothing exits 1
	code, stdout, errs = cli(t, "export", "sft", runs, "--out", out, "--corpus", corpus, "--mix", "files.organize=1,mail.reply=1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "wrote 0 episodes")
	assert.Contains(t, errs, "3 selected out: over its capability's share")
	stdout = export("--mix", "files.organize=1", "--per-capability", "1")
	assert.Contains(t, stdout, "wrote 1 episode ")
	assert.Contains(t, stdout, "2 selected out: over its capability's share")

	code, _, errs = cli(t, "export", "sft", runs, "--out", out, "--mix", "files.organize")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--mix")
	code, _, errs = cli(t, "export", "rl", runs, "--out", out, "--per-task", "2")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--per-task: only for export sft")
}
