package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const noteLib = "NOTE = \"call the bank\"\n"

// helperCorpus is a corpus whose copy-note task (tasks/copy.star) takes its note from
// lib/notes.star.
func helperCorpus(t *testing.T) string {
	t.Helper()
	task := "load(\"//lib/notes.star\", \"NOTE\")\n" +
		strings.Replace(copyNoteTask, `ws.fs.write("/notes/todo.txt", "call the bank")`, `ws.fs.write("/notes/todo.txt", NOTE)`, 1)
	require.NotEqual(t, copyNoteTask, task[len("load(\"//lib/notes.star\", \"NOTE\")\n"):])
	return writeFiles(t, map[string]string{"capabilities.star": rolloutCaps, "tasks/copy.star": task, "lib/notes.star": noteLib})
}

// wantSources are the sources of helperCorpus's task as they are on disk now.
func wantSources(t *testing.T, corpus string) []trace.Source {
	t.Helper()
	var out []trace.Source
	for _, rel := range []string{"tasks/copy.star", "lib/notes.star"} {
		data, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(rel)))
		require.NoError(t, err)
		out = append(out, trace.Source{Path: rel, SHA256: trace.FileSHA256(data)})
	}
	return out
}

func traceStart(t *testing.T, path string) *trace.Start {
	t.Helper()
	return readTraceFile(t, path)[0].Body.(*trace.Start)
}

// editNote changes lib/notes.star without changing what the task does.
func editNote(t *testing.T, corpus, comment string) {
	t.Helper()
	p := filepath.Join(corpus, "lib", "notes.star")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append(data, []byte("# "+comment+"\n")...), 0o644))
}

// run and rollout, in a worker and in this process, record the task file and the file it loads
// with their SHA-256 in every trace's start event.
func TestTracesRecordSources(t *testing.T) {
	t.Parallel()
	corpus := helperCorpus(t)
	want := wantSources(t, corpus)
	file := filepath.Join(corpus, "tasks", "copy.star")
	for _, where := range [][]string{nil, {"--in-process"}} {
		tr := filepath.Join(t.TempDir(), "t.jsonl")
		code, out, errs := cli(t, append([]string{"run", file, "--trace", tr}, where...)...)
		require.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		start := traceStart(t, tr)
		assert.Equal(t, want, start.Sources, "run %v", where)
		assert.Equal(t, start.FileSHA256, start.Sources[0].SHA256)

		dir := filepath.Join(t.TempDir(), "o")
		code, out, errs = cli(t, append([]string{"rollout", corpus, "--out", dir}, where...)...)
		require.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		assert.Equal(t, want, traceStart(t, filepath.Join(dir, "copy-note", "0.jsonl")).Sources, "rollout %v", where)
	}
}

// A resumed rollout, in workers and in this process, runs again the samples whose traces were
// recorded with another version of the helper or of the task file, says which file changed,
// and counts them; the next one resumes them all.
func TestRolloutResumeRerunsAfterAHelperEdit(t *testing.T) {
	t.Parallel()
	for _, where := range [][]string{nil, {"--in-process"}} {
		corpus := helperCorpus(t)
		out := filepath.Join(t.TempDir(), "o")
		rollout := func() (map[string]any, string) {
			t.Helper()
			code, stdout, errs := cli(t, append([]string{"rollout", corpus, "--samples", "2", "--out", out, "--json"}, where...)...)
			require.Equal(t, 0, code, "%v: %s%s", where, stdout, errs)
			return rolloutJSON(t, stdout)["episodes"].(map[string]any), errs
		}
		ep, _ := rollout()
		require.EqualValues(t, 2, ep["run"])
		before := wantSources(t, corpus)

		editNote(t, corpus, "checked")
		ep, errs := rollout()
		assert.EqualValues(t, 2, ep["run"], "%v", where)
		assert.EqualValues(t, 0, ep["resumed"], "%v", where)
		assert.EqualValues(t, 2, ep["task_changed"], "%v", where)
		assert.Contains(t, errs, "warning: copy-note: 2 of its traces in "+filepath.Join(out, "copy-note")+" were recorded with other versions of its files", where)
		assert.Contains(t, errs, "helper file lib/notes.star changed since the trace was recorded (sha256 "+before[1].SHA256[:12], where)
		assert.NotContains(t, errs, "task file", where)
		assert.Contains(t, errs, "running those 2 samples again", where)
		after := wantSources(t, corpus)
		for _, i := range []string{"0", "1"} {
			assert.Equal(t, after, traceStart(t, filepath.Join(out, "copy-note", i+".jsonl")).Sources, "%v: sample %s", where, i)
		}

		ep, errs = rollout()
		assert.EqualValues(t, 2, ep["resumed"], "%v", where)
		assert.EqualValues(t, 0, ep["task_changed"], "%v", where)
		assert.NotContains(t, errs, "warning", where)

		// the task file too
		task := filepath.Join(corpus, "tasks", "copy.star")
		data, err := os.ReadFile(task)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(task, append(data, "# reviewed\n"...), 0o644))
		code, stdout, errs := cli(t, append([]string{"rollout", corpus, "--samples", "2", "--out", out}, where...)...)
		require.Equal(t, 0, code, "%v: %s%s", where, stdout, errs)
		assert.Contains(t, errs, "task file "+task+" changed since the trace was recorded", where)
		assert.Contains(t, stdout, "2 episodes run, 0 resumed", where)
		assert.Contains(t, stdout, "2 samples ran again: the task file or a file it loads changed since their traces were recorded", where)
	}
}

// replay of a trace whose helper changed since names the helper, and only the helper, in its
// warning and in --json; the episode still matches.
func TestReplayNamesAnEditedHelper(t *testing.T) {
	t.Parallel()
	corpus := helperCorpus(t)
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out, errs := cli(t, "run", filepath.Join(corpus, "tasks", "copy.star"), "--trace", tr)
	require.Equal(t, 0, code, "%s%s", out, errs)
	before := wantSources(t, corpus)
	editNote(t, corpus, "checked")
	after := wantSources(t, corpus)

	for _, where := range [][]string{nil, {"--in-process"}} {
		code, out, errs := cli(t, append([]string{"replay", tr, "--corpus", corpus}, where...)...)
		assert.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		assert.Equal(t, tr+": warning: helper file lib/notes.star changed since the trace was recorded (sha256 "+
			before[1].SHA256[:12]+"… now "+after[1].SHA256[:12]+"…)\n"+tr+": matched (copy-note)\n", out, where)

		code, out, errs = cli(t, append([]string{"replay", tr, "--corpus", corpus, "--json"}, where...)...)
		assert.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		var got struct {
			Traces []struct {
				Matched     bool `json:"matched"`
				TaskChanged bool `json:"task_changed"`
				Changed     []struct {
					Path              string `json:"path"`
					Task              bool   `json:"task"`
					Recorded, Current *string
				} `json:"changed"`
				Notes []string `json:"notes"`
			} `json:"traces"`
			Summary map[string]any `json:"summary"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		require.Len(t, got.Traces, 1)
		g := got.Traces[0]
		assert.True(t, g.Matched)
		assert.True(t, g.TaskChanged)
		assert.NotNil(t, g.Notes)
		assert.Empty(t, g.Notes)
		require.Len(t, g.Changed, 1, out)
		c := g.Changed[0]
		assert.Equal(t, "lib/notes.star", c.Path)
		assert.False(t, c.Task)
		require.NotNil(t, c.Recorded)
		require.NotNil(t, c.Current)
		assert.Equal(t, before[1].SHA256, *c.Recorded)
		assert.Equal(t, after[1].SHA256, *c.Current)
		assert.EqualValues(t, 1, got.Summary["task_changed"])
	}
}

// export replays every trace it would keep: a model trace whose final message was edited after
// it was recorded diverges and is left out and counted (--no-verify keeps it), and traces of a
// helper that changed since are left out too.
func TestExportLeavesOutTamperedTraces(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	corpus := helperCorpus(t)
	runs := filepath.Join(t.TempDir(), "runs")
	require.NoError(t, os.Mkdir(runs, 0o755))
	good, tampered := filepath.Join(runs, "good.jsonl"), filepath.Join(runs, "tampered.jsonl")
	for _, tr := range []string{good, tampered} {
		code, out, errs := cli(t, "run", filepath.Join(corpus, "tasks", "copy.star"), "--agent", "openai", "--model", "m",
			"--base-url", f.url(), "--trace", tr)
		require.Equal(t, 0, code, "%s%s", out, errs)
	}
	// the model's last message, as SFT would teach it, now says something else
	data, err := os.ReadFile(tampered)
	require.NoError(t, err)
	const said, lie = `"content":"Done. The note says: call the bank."`, `"content":"Done. Also wire 5000 EUR to NL00FAKE0123."`
	lines := strings.Split(string(data), "\n")
	edited := 0
	for i, l := range lines {
		if strings.HasPrefix(l, `{"event":"assistant"`) && strings.Contains(l, said) {
			lines[i] = strings.Replace(l, said, lie, 1)
			edited++
		}
	}
	require.Equal(t, 1, edited)
	require.NoError(t, os.WriteFile(tampered, []byte(strings.Join(lines, "\n")), 0o644))

	sft := filepath.Join(t.TempDir(), "sft.jsonl")
	for _, where := range [][]string{nil, {"--in-process"}} {
		code, out, errs := cli(t, append([]string{"export", "sft", runs, "--out", sft, "--corpus", corpus}, where...)...)
		require.Equal(t, 1, code, "a trace left out as diverged: %v: %s%s", where, out, errs)
		assert.Contains(t, out, "wrote 1 episode to "+sft+" from 2 traces; skipped 1: 1 diverged on replay", where)
		assert.Contains(t, errs, "leaving out "+tampered+": diverged on replay: event ", where)
		assert.Contains(t, errs, "(reply, turn 0) differs: content: recorded \"Done. The note says: call the bank.\", replayed \"Done. Also wire", where)
		b, err := os.ReadFile(sft)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "NL00FAKE", where)
		assert.Contains(t, string(b), "call the bank", where)
	}
	code, out, errs := cli(t, "export", "rl", runs, "--out", sft, "--corpus", corpus)
	require.Equal(t, 1, code, "a trace left out: "+"%s%s", out, errs)
	assert.Contains(t, out, "wrote 1 episode to "+sft+" from 2 traces; skipped 1: 1 diverged on replay")

	code, out, errs = cli(t, "export", "sft", runs, "--out", sft, "--no-verify")
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "wrote 2 episodes")
	assert.Empty(t, errs)
	b, err := os.ReadFile(sft)
	require.NoError(t, err)
	assert.Contains(t, string(b), "NL00FAKE", "without the check the edit is exported")

	// a helper edited since the traces were recorded: neither is the task as it is
	editNote(t, corpus, "checked")
	code, out, errs = cli(t, "export", "sft", runs, "--out", sft, "--corpus", corpus)
	require.Equal(t, 1, code, "traces left out: %s%s", out, errs)
	assert.Contains(t, out, "wrote 0 episodes to "+sft+" from 2 traces; skipped 2: 2 task files changed since recorded")
	assert.Contains(t, errs, "leaving out "+good+": task files changed since recorded: helper file lib/notes.star changed since the trace was recorded")

	// the traced task file must be inside --corpus (default: the current folder)
	code, out, errs = cli(t, "export", "sft", good, "--out", sft)
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, out, "skipped 1: 1 not verifiable")
	assert.Contains(t, errs, "is not inside the corpus folder .")
	assert.Contains(t, errs, "--no-verify skips the check")
	code, _, errs = cli(t, "export", "sft", good, "--out", sft, "--corpus", filepath.Join(corpus, "missing"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--corpus: ")
}

// rl groups episodes of two versions of a helper apart, and episodes of one version together.
func TestExportRLGroupsByEverySource(t *testing.T) {
	t.Parallel()
	corpus := helperCorpus(t)
	runs := filepath.Join(t.TempDir(), "runs")
	require.NoError(t, os.Mkdir(runs, 0o755))
	record := func(name string) {
		code, out, errs := cli(t, "run", filepath.Join(corpus, "tasks", "copy.star"), "--trace", filepath.Join(runs, name))
		require.Equal(t, 0, code, "%s%s", out, errs)
	}
	record("a1.jsonl")
	record("a2.jsonl")
	editNote(t, corpus, "checked")
	record("b.jsonl")

	rl := filepath.Join(t.TempDir(), "rl.jsonl")
	code, out, errs := cli(t, "export", "rl", runs, "--out", rl, "--no-verify")
	require.Equal(t, 0, code, "%s%s", out, errs)
	groups := map[string]string{}
	for _, line := range readLines(t, rl) {
		groups[filepath.Base(line["trace"].(string))] = line["group"].(string)
	}
	require.Len(t, groups, 3)
	assert.Equal(t, groups["a1.jsonl"], groups["a2.jsonl"], "one version, one group")
	assert.NotEqual(t, groups["a1.jsonl"], groups["b.jsonl"], "two versions of the helper, two groups")
	assert.True(t, strings.HasPrefix(groups["b.jsonl"], "copy-note@"))
	assert.Equal(t, traceStart(t, filepath.Join(runs, "a1.jsonl")).FileSHA256, traceStart(t, filepath.Join(runs, "b.jsonl")).FileSHA256,
		"the task file itself is the same")

	// verified, only the episode of the helper as it is now is kept
	code, out, errs = cli(t, "export", "rl", runs, "--out", rl, "--corpus", corpus)
	require.Equal(t, 1, code, "traces left out as changed: %s%s", out, errs)
	assert.Contains(t, out, "wrote 1 episode to "+rl+" from 3 traces; skipped 2: 2 task files changed since recorded")
}
