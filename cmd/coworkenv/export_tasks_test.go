package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/export"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task whose setup fails: it has no row.
const brokenSetupTask = `
def _setup(ws):
    fail("the setup breaks")

def _verify(ws, ep):
    check(True, "nothing to check")

def _solve(agent):
    agent.reply("ok")

task(name = "broken-setup", capabilities = ["luck"], prompt = "Anything.", tools = ["fs"],
     setup = _setup, verify = _verify, solution = _solve)
`

// Two built-in tasks, two seeds: four rows, task by task and seed by seed, with the fields of
// export.TaskRowFields; the same command writes the same bytes again.
func TestExportTasksBuiltin(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "tasks.jsonl")
	args := []string{"export", "tasks", "fuel-surcharge-answer", "carrier-quote-award", "--seeds", "2", "--out", out}
	code, stdout, errs := cli(t, args...)
	require.Equal(t, 0, code, stdout+errs)
	assert.Contains(t, stdout, "wrote 4 rows (2 tasks, 2 seeds each) to "+out)
	first, err := os.ReadFile(out)
	require.NoError(t, err)

	rows := readLines(t, out)
	require.Len(t, rows, 4)
	for i, want := range []struct {
		task string
		seed float64
	}{{"fuel-surcharge-answer", 0}, {"fuel-surcharge-answer", 1}, {"carrier-quote-award", 0}, {"carrier-quote-award", 1}} {
		row := rows[i]
		assert.Len(t, row, len(export.TaskRowFields))
		for _, f := range export.TaskRowFields {
			assert.Contains(t, row, f)
		}
		assert.Equal(t, want.task, row["task"])
		assert.Equal(t, want.seed, row["seed"])
		assert.Equal(t, map[string]any{"task": want.task, "seed": want.seed}, row["session"])
		assert.Equal(t, float64(i), row["extra_info"].(map[string]any)["index"])
		prompt := row["prompt"].([]any)
		require.Len(t, prompt, 2)
		assert.Equal(t, "system", prompt[0].(map[string]any)["role"])
		assert.Equal(t, "user", prompt[1].(map[string]any)["role"])
		var tools []any
		require.NoError(t, json.Unmarshal([]byte(row["tools"].(string)), &tools))
		assert.NotEmpty(t, tools)
	}

	code, _, errs = cli(t, args...)
	require.Equal(t, 0, code, errs)
	again, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(again), "deterministic")
}

// Task files from disk give the same rows in a worker as in this process; a task whose setup
// fails has no row, which stderr names and the exit status says; seeds of a task whose setup
// draws from the seed fall in different groups.
func TestExportTasksFromDisk(t *testing.T) {
	t.Parallel()
	corpus := rolloutCorpus(t)
	dir := t.TempDir()
	isolated, here := filepath.Join(dir, "isolated.jsonl"), filepath.Join(dir, "here.jsonl")
	code, stdout, errs := cli(t, "export", "tasks", corpus, "--seeds", "3", "--out", isolated)
	require.Equal(t, 0, code, stdout+errs)
	assert.Contains(t, stdout, "wrote 9 rows (3 tasks, 3 seeds each)")
	code, stdout, errs = cli(t, "export", "tasks", corpus, "--seeds", "3", "--out", here, "--in-process")
	require.Equal(t, 0, code, stdout+errs)
	a, err := os.ReadFile(isolated)
	require.NoError(t, err)
	b, err := os.ReadFile(here)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))

	groups := map[string]bool{}
	for _, row := range readLines(t, here) {
		if row["task"] == "coin" {
			groups[row["group"].(string)] = true
			assert.Equal(t, []any{"luck", "files.organize"}, row["capabilities"])
			assert.Equal(t, "luck", row["ability"])
		}
	}
	assert.Greater(t, len(groups), 1, "the coin's seeds start from different states")

	require.NoError(t, os.WriteFile(filepath.Join(corpus, "tasks", "broken.star"), []byte(brokenSetupTask), 0o644))
	out := filepath.Join(dir, "with-broken.jsonl")
	code, stdout, errs = cli(t, "export", "tasks", corpus, "--out", out)
	assert.Equal(t, 1, code, stdout+errs)
	assert.Contains(t, stdout, "wrote 3 rows (4 tasks, 1 seed each)")
	assert.Contains(t, stdout, "1 without a row")
	assert.Contains(t, errs, "broken-setup seed 0: no row")
	assert.Contains(t, errs, "the setup breaks")
	assert.Len(t, readLines(t, out), 3)
}

// The output is written whole or not at all: a refused command leaves the file as it was, and
// no temporary file is left beside it.
func TestExportTasksAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(out, []byte("old\n"), 0o644))
	for _, args := range [][]string{
		{"export", "tasks", "no-such-task", "--out", out},
		{"export", "tasks", "fuel-surcharge-answer", "--seeds", "0", "--out", out},
		{"export", "tasks", "fuel-surcharge-answer"},
		{"export", "tasks", "fuel-surcharge-answer", "--out", dir},
		{"export", "tasks", "fuel-surcharge-answer", "--out", out, "--in-process", "--isolate"},
		{"export", "tasks", "fuel-surcharge-answer", "--out", out, "--reward", "score"},
	} {
		code, stdout, errs := cli(t, args...)
		assert.Equal(t, 2, code, "%v: %s%s", args, stdout, errs)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, "old\n", string(data), "%v", args)
	}
	code, stdout, errs := cli(t, "export", "tasks", "fuel-surcharge-answer", "--out", out)
	require.Equal(t, 0, code, stdout+errs)
	assert.Len(t, readLines(t, out), 1)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing but the output")
	assert.Equal(t, "tasks.jsonl", entries[0].Name())

	code, stdout, _ = cli(t, "export", "tasks", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "Usage: coworkenv export tasks")
	code, stdout, _ = cli(t, "export", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "export tasks [TASKS...] --out FILE")
}
