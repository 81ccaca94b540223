package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyFile copies the file src to dst, making dst's folder.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(t, os.WriteFile(dst, data, 0o644))
}

// editTrace rewrites the trace at path: each from becomes its to, and must be there.
func editTrace(t *testing.T, path string, pairs ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(data)
	for i := 0; i < len(pairs); i += 2 {
		require.Contains(t, s, pairs[i])
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
}

// movedCorpus records two oracle traces of helperCorpus's task in its folder runs, one from
// inside the corpus (the trace names the file relative to it) and one naming the file by its
// absolute path, then moves the corpus, traces and all, to another folder, and makes the
// current folder one that has nothing to do with either. It returns the corpus's new folder.
func movedCorpus(t *testing.T) string {
	t.Helper()
	c := helperCorpus(t)
	require.NoError(t, os.Mkdir(filepath.Join(c, "runs"), 0o755))
	t.Chdir(c)
	code, out, errs := cli(t, "run", "tasks/copy.star", "--trace", filepath.Join("runs", "rel.jsonl"))
	require.Equal(t, 0, code, out+errs)
	code, out, errs = cli(t, "run", filepath.Join(c, "tasks", "copy.star"), "--trace", filepath.Join("runs", "abs.jsonl"))
	require.Equal(t, 0, code, out+errs)
	assert.Equal(t, "tasks/copy.star", traceStart(t, filepath.Join(c, "runs", "rel.jsonl")).File)
	assert.Equal(t, filepath.ToSlash(filepath.Join(c, "tasks", "copy.star")), traceStart(t, filepath.Join(c, "runs", "abs.jsonl")).File)

	t.Chdir(t.TempDir())
	moved := filepath.Join(t.TempDir(), "moved")
	require.NoError(t, os.Rename(c, moved))
	return moved
}

// A trace moved with its corpus, replayed from another folder, finds its task file by the path
// it records inside the corpus, under the trace's own folder or one above it, in a worker and
// in this process; a file at that path with other bytes in the current folder (the default
// --corpus) is passed over for the one with the recorded bytes.
func TestReplayFindsAMovedCorpus(t *testing.T) {
	moved := movedCorpus(t)
	task := filepath.ToSlash(filepath.Join(moved, "tasks", "copy.star"))
	// a decoy: the corpus, with the task file edited, where the trace names it relative to the
	// current folder
	for _, f := range []string{"capabilities.star", "tasks/copy.star", "lib/notes.star"} {
		copyFile(t, filepath.Join(moved, filepath.FromSlash(f)), filepath.FromSlash(f))
	}
	data, err := os.ReadFile(filepath.Join("tasks", "copy.star"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("tasks", "copy.star"), append(data, "# edited\n"...), 0o644))

	for _, where := range [][]string{nil, {"--in-process"}} {
		for _, name := range []string{"rel.jsonl", "abs.jsonl"} {
			tr := filepath.Join(moved, "runs", name)
			code, out, errs := cli(t, append([]string{"replay", tr}, where...)...)
			assert.Equal(t, 0, code, "%v %s: %s%s", where, name, out, errs)
			assert.Contains(t, out, tr+": matched (copy-note)", where)
			assert.Contains(t, out, tr+": the task file is "+task+" (the trace names ", where)
			assert.NotContains(t, out, "warning", where)
		}
		code, out, errs := cli(t, append([]string{"replay", filepath.Join(moved, "runs"), "--json"}, where...)...)
		require.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		var got struct {
			Traces []struct {
				Matched     bool    `json:"matched"`
				TaskChanged bool    `json:"task_changed"`
				Found       *string `json:"found"`
			} `json:"traces"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		require.Len(t, got.Traces, 2)
		for _, g := range got.Traces {
			assert.True(t, g.Matched, where)
			assert.False(t, g.TaskChanged, where)
			require.NotNil(t, g.Found, where)
			assert.Equal(t, task, *g.Found, where)
		}
	}

	// the trace moved away from its corpus too: --corpus names the corpus
	lone := filepath.Join(t.TempDir(), "rel.jsonl")
	copyFile(t, filepath.Join(moved, "runs", "rel.jsonl"), lone)
	code, out, errs := cli(t, "replay", lone, "--corpus", moved)
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, lone+": matched (copy-note)")
	assert.NotContains(t, out, "warning")
	// without it, the only file found is the decoy: it is replayed, and the change is named
	code, out, errs = cli(t, "replay", lone)
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, lone+": warning: task file tasks/copy.star changed since the trace was recorded")
	assert.Contains(t, out, lone+": matched (copy-note)")
	assert.NotContains(t, out, "the task file is", "the decoy is where the trace names it")

	// a helper edited in the moved corpus: the task file is found, and the helper named
	editNote(t, moved, "checked")
	tr := filepath.Join(moved, "runs", "abs.jsonl")
	code, out, errs = cli(t, "replay", tr)
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, tr+": the task file is "+task)
	assert.Contains(t, out, tr+": warning: helper file lib/notes.star changed since the trace was recorded")
}

// export verifies traces by the same search: traces moved with their corpus, exported from
// another folder with --corpus naming the corpus, are kept by sft --include-oracle and by rl.
func TestExportKeepsTracesOfAMovedCorpus(t *testing.T) {
	moved := movedCorpus(t)
	runs := filepath.Join(moved, "runs")
	// with --corpus naming the moved corpus, and without (found beside the traces)
	for _, corpusArgs := range [][]string{{"--corpus", moved}, nil} {
		for _, where := range [][]string{nil, {"--in-process"}} {
			args := append(append([]string{}, corpusArgs...), where...)
			sft := filepath.Join(t.TempDir(), "sft.jsonl")
			code, out, errs := cli(t, append([]string{"export", "sft", runs, "--include-oracle", "--out", sft}, args...)...)
			require.Equal(t, 0, code, "%v: %s%s", args, out, errs)
			assert.Contains(t, out, "wrote 2 episodes to "+sft+" from 2 traces", args)
			assert.NotContains(t, out, "skipped", args)
			assert.NotContains(t, out, "without a system message", args)
			assert.NotContains(t, errs, "leaving out", args)
			lines := readLines(t, sft)
			require.Len(t, lines, 2, args)
			for _, l := range lines {
				msgs, _ := l["messages"].([]any)
				require.NotEmpty(t, msgs, args)
				first, _ := msgs[0].(map[string]any)
				assert.Equal(t, "system", first["role"], args)
			}

			rl := filepath.Join(t.TempDir(), "rl.jsonl")
			code, out, errs = cli(t, append([]string{"export", "rl", runs, "--out", rl}, args...)...)
			require.Equal(t, 0, code, "%v: %s%s", args, out, errs)
			assert.Contains(t, out, "wrote 2 episodes to "+rl+" from 2 traces", args)
			assert.NotContains(t, out, "skipped", args)
			assert.NotContains(t, out, "without a system message", args)
		}
	}
}

// A trace of a task file with the bytes of one of the built-in corpus (and of every file it
// loads) finds it there when its own corpus is gone.
func TestReplayFindsABuiltInTaskByItsBytes(t *testing.T) {
	t.Parallel()
	const rel = "tasks/mail/fuel_surcharge_answer.star"
	dir := t.TempDir()
	files := []string{"capabilities.star", rel}
	libs, err := fs.Glob(corpus.FS(), "lib/*.star")
	require.NoError(t, err)
	for _, f := range append(files, libs...) {
		data, err := fs.ReadFile(corpus.FS(), f)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(filepath.FromSlash(f))), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(f)), data, 0o644))
	}
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out, errs := cli(t, "run", filepath.Join(dir, filepath.FromSlash(rel)), "--trace", tr)
	require.Equal(t, 0, code, out+errs)
	require.NoError(t, os.RemoveAll(dir))

	code, out, errs = cli(t, "replay", tr)
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, tr+": the task file is "+path.Join("corpus", rel))
	assert.Contains(t, out, tr+": matched (fuel-surcharge-answer)")
	assert.NotContains(t, out, "warning")
}

// A trace whose task file is nowhere says where replay looked and how to name the corpus.
func TestReplayTaskNotFoundSaysWhereItLooked(t *testing.T) {
	moved := movedCorpus(t)
	lone := filepath.Join(t.TempDir(), "rel.jsonl")
	copyFile(t, filepath.Join(moved, "runs", "rel.jsonl"), lone)
	code, out, errs := cli(t, "replay", lone)
	assert.Equal(t, 1, code, "the trace was read; its task file is not found: "+out+errs)
	assert.Equal(t, lone+": error: the traced task file tasks/copy.star is not there; nor is tasks/copy.star in the corpus folder . (--corpus) "+
		"or the trace's folder "+filepath.Dir(lone)+" and those above it; name the folder of its corpus with --corpus\n", out)

	// a trace of the built-in corpus looks there too
	builtin := filepath.Join(t.TempDir(), "builtin.jsonl")
	copyFile(t, lone, builtin)
	editTrace(t, builtin, `"file":"tasks/copy.star"`, `"file":"corpus/tasks/nope.star"`, `"path":"tasks/copy.star"`, `"path":"tasks/nope.star"`)
	code, out, errs = cli(t, "replay", builtin, "--json")
	assert.Equal(t, 1, code, "the trace was read; its task file is not found: "+out+errs)
	assert.Contains(t, out, `"error":"the traced task file corpus/tasks/nope.star is not there; nor is tasks/nope.star in the corpus folder . (--corpus), `+
		`the trace's folder `+filepath.Dir(builtin)+` and those above it, or the built-in corpus; name the folder of its corpus with --corpus"`)
}

// Paths a trace records are looked up only inside the places searched: a recorded path inside
// the corpus that climbs out or is absolute is refused, and so is a task file that is a link out
// of its corpus root, even when the file outside has the recorded bytes (it would match).
func TestReplayRefusesRecordedPathsThatLeave(t *testing.T) {
	moved := movedCorpus(t)
	base := filepath.Dir(moved)
	// outside every corpus the search may take: a copy of the corpus, with the recorded bytes
	outside := filepath.Join(t.TempDir(), "outside")
	for _, f := range []string{"capabilities.star", "tasks/copy.star", "lib/notes.star"} {
		copyFile(t, filepath.Join(moved, filepath.FromSlash(f)), filepath.Join(outside, filepath.FromSlash(f)))
	}
	outsideTask := filepath.ToSlash(filepath.Join(outside, "tasks", "copy.star"))
	rel, err := filepath.Rel(base, outsideTask)
	require.NoError(t, err)
	climbing := filepath.ToSlash(filepath.Join("..", rel))
	require.True(t, strings.HasPrefix(climbing, "../../"), climbing)

	for _, tc := range []struct{ name, path, want string }{
		{"climbs", climbing, "the trace names its task file " + climbing + " inside its corpus, which is not a relative path to a task file"},
		{"absolute", outsideTask, "the trace names its task file " + outsideTask + " inside its corpus, which is not a relative path to a task file"},
		{"passwd", "../../../../../../../../etc/passwd", "the trace names its task file ../../../../../../../../etc/passwd inside its corpus"},
	} {
		tr := filepath.Join(moved, "runs", tc.name+".jsonl")
		copyFile(t, filepath.Join(moved, "runs", "abs.jsonl"), tr)
		editTrace(t, tr, `"path":"tasks/copy.star"`, `"path":"`+tc.path+`"`)
		code, out, errs := cli(t, "replay", tr, "--corpus", moved)
		assert.Equal(t, 1, code, "a refused task file: "+"%s: %s%s", tc.name, out, errs)
		assert.Contains(t, out, "refused: "+tc.want, tc.name)
		assert.NotContains(t, out, "matched", tc.name)
		assert.NotContains(t, out, "root:x:0", tc.name)
	}

	// the task file a link out of the corpus root, to the file with the recorded bytes
	task := filepath.Join(moved, "tasks", "copy.star")
	require.NoError(t, os.Remove(task))
	link, err := filepath.Rel(filepath.Dir(task), filepath.FromSlash(outsideTask))
	require.NoError(t, err)
	require.NoError(t, os.Symlink(link, task))
	for _, name := range []string{"rel.jsonl", "abs.jsonl"} {
		tr := filepath.Join(moved, "runs", name)
		code, out, errs := cli(t, "replay", tr)
		assert.Equal(t, 1, code, "a refused task file: %s: %s%s", name, out, errs)
		assert.Contains(t, out, "refused: "+filepath.ToSlash(task)+": tasks/copy.star is a symbolic link that leads out of the corpus root", name)
		assert.NotContains(t, out, "matched", name)
	}
	// --corpus naming the folder the link leads to is the one way to replay it
	code, out, errs := cli(t, "replay", filepath.Join(moved, "runs", "abs.jsonl"), "--corpus", outside)
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "matched (copy-note)")
}

// A result whose text was edited after recording, even only in its whitespace, diverges at its
// line, in replay and in the replay that verifies an export.
func TestReplayComparesResultTextsByteForByte(t *testing.T) {
	moved := movedCorpus(t)
	tr := filepath.Join(moved, "runs", "rel.jsonl")
	for _, edit := range [][2]string{
		{`"content":"{\"path\":\"/notes/done.txt\"}"`, `"content":"{\"path\": \"/notes/done.txt\"}"`},
		{`"content":"{\"path\":\"/notes/done.txt\"}"`, `"content":"{\"path\":\"/notes/dune.txt\"}"`},
	} {
		data, err := os.ReadFile(tr)
		require.NoError(t, err)
		var line int
		for i, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, edit[0]) {
				line = i + 1
			}
		}
		require.NotZero(t, line)
		tampered := filepath.Join(t.TempDir(), "runs", "t.jsonl")
		copyFile(t, tr, tampered)
		editTrace(t, tampered, edit[0], edit[1])

		code, out, errs := cli(t, "replay", tampered, "--corpus", moved)
		assert.Equal(t, 1, code, out+errs)
		assert.Contains(t, out, tampered+": diverged (copy-note) at event "+strconv.Itoa(line)+` (result, turn 0, fs_write {"path":"/notes/done.txt","content":"call the bank"}) differs:`)
		assert.Contains(t, out, "  content: differs at byte ", edit[1])

		sft := filepath.Join(t.TempDir(), "sft.jsonl")
		code, out, errs = cli(t, "export", "sft", tampered, "--include-oracle", "--out", sft, "--corpus", moved)
		assert.Equal(t, 1, code, "a trace left out as diverged: %s%s", out, errs)
		assert.Contains(t, out, "wrote 0 episodes to "+sft+" from 1 trace; skipped 1: 1 diverged on replay", edit[1])
		assert.Contains(t, errs, "leaving out "+tampered+": diverged on replay: event "+strconv.Itoa(line)+" (result", edit[1])
	}
}
