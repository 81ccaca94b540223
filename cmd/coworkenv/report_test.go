package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `report --help` describes every kind of input and exits 0.
func TestReportHelp(t *testing.T) {
	t.Parallel()
	code, out, _ := cli(t, "report", "--help")
	assert.Equal(t, 0, code)
	for _, s := range []string{"--out", "a trace", "a rollout folder", "validate --json", "generation run", "FILE-episodes", "Exit status"} {
		assert.Contains(t, out, s)
	}
}

// Bad usage and unreadable input exit 2 with one line that names the argument or the file,
// before anything is written.
func TestReportUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	text := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(text, []byte("hello\n"), 0o644))
	cut := filepath.Join(dir, "cut.jsonl")
	require.NoError(t, os.WriteFile(cut, []byte(`{"event":"start","format":"coworkenv-trace/1"}`+"\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--out", out}, "want one or more PATHs"},
		{[]string{"report", text}, "--out FILE.html is required"},
		{[]string{"report", filepath.Join(dir, "missing.jsonl"), "--out", out}, "missing.jsonl: no such file or directory"},
		{[]string{"report", text, "--out", out}, "notes.txt: not a trace"},
		{[]string{"report", cut, "--out", out}, "cut.jsonl: line 1"},
		{[]string{"report", cut, "--out", dir}, "is a folder"},
		{[]string{"report", text, "--out", text}, "also an input"},
		{[]string{"report", text, "--out", out, "--jobs", "0"}, "--jobs"},
	} {
		code, _, errs := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errs, c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
		assert.NoFileExists(t, out)
	}
}

// A trace that `run` writes, a rollout folder, a validation report and a mix of kinds.
func TestReportKinds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	code, _, errs := cli(t, "run", "fuel-surcharge-answer", "--trace", tr)
	require.Equal(t, 0, code, errs)

	// the trace: its task is found in the built-in corpus, so each call has its changes
	page := filepath.Join(dir, "episode.html")
	code, out, errs := cli(t, "report", tr, "--out", page)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "wrote "+page+" (an episode report)")
	html := read(t, page)
	assert.True(t, strings.Contains(html, "every state matched the hashes the trace records"), "the replay did not match")
	assert.True(t, strings.Contains(html, `<span class="chg add">added</span> m6`), "the reply is not shown as added")

	// a rollout folder, with its episode views beside the report
	runs := filepath.Join(dir, "runs")
	code, _, errs = cli(t, "rollout", "fuel-surcharge-answer", "--agent", "noop", "--samples", "2", "--out", runs)
	require.Equal(t, 1, code, errs) // every sample fails
	page = filepath.Join(dir, "rollout.html")
	code, out, errs = cli(t, "report", runs, "--out", page)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "a rollout report")
	assert.True(t, strings.Contains(read(t, page), `"n":"fuel-surcharge-answer"`), "the task is not in the rollout's data")
	assert.FileExists(t, filepath.Join(dir, "rollout-episodes", "fuel-surcharge-answer", "1.html"))
	// a file where the episodes' folder belongs is refused before anything is written
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blocked-episodes"), nil, 0o644))
	code, _, errs = cli(t, "report", runs, "--out", filepath.Join(dir, "blocked.html"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "blocked-episodes is a file")
	assert.NoFileExists(t, filepath.Join(dir, "blocked.html"))

	// a validation report
	task := writeTask(t, helloTask)
	code, vjson, _ := cli(t, "validate", "--json", task)
	require.Equal(t, 0, code)
	vpath := filepath.Join(dir, "v.json")
	require.NoError(t, os.WriteFile(vpath, []byte(vjson), 0o644))
	page = filepath.Join(dir, "validation.html")
	code, out, errs = cli(t, "report", vpath, "--out", page)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "a validation report")
	assert.True(t, strings.Contains(read(t, page), `"t":"hello-again"`), "the task is not in the validation's data")

	// inputs of two kinds
	code, _, errs = cli(t, "report", tr, vpath, "--out", filepath.Join(dir, "mixed.html"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "give inputs of one kind")
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
