package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A project of task files without a corpus (tasks/t.star) with its traces beside them
// (runs/t.jsonl), moved to another folder, replays from anywhere: the task file is looked for
// at its recorded path (tasks/t.star) under the trace's folder and those above it, not only by
// its name inside its corpus (t.star), in a worker and in this process.
func TestReplayFindsATaskBesideItsTraces(t *testing.T) {
	proj := writeFiles(t, map[string]string{"tasks/t.star": copyNoteTask})
	require.NoError(t, os.Mkdir(filepath.Join(proj, "runs"), 0o755))
	t.Chdir(proj)
	code, out, errs := cli(t, "run", "tasks/t.star", "--trace", filepath.Join("runs", "t.jsonl"))
	require.Equal(t, 0, code, out+errs)
	code, out, errs = cli(t, "run", filepath.Join(proj, "tasks", "t.star"), "--trace", filepath.Join("runs", "abs.jsonl"))
	require.Equal(t, 0, code, out+errs)
	assert.Equal(t, "t.star", traceStart(t, filepath.Join("runs", "t.jsonl")).TaskPath(), "a file of no corpus is its own root")

	t.Chdir(t.TempDir())
	moved := filepath.Join(t.TempDir(), "elsewhere", "moved")
	require.NoError(t, os.MkdirAll(filepath.Dir(moved), 0o755))
	require.NoError(t, os.Rename(proj, moved))
	for _, where := range [][]string{nil, {"--in-process"}} {
		for _, name := range []string{"t.jsonl", "abs.jsonl"} {
			code, out, errs := cli(t, append([]string{"replay", filepath.Join(moved, "runs", name)}, where...)...)
			assert.Equal(t, 0, code, "%s %v: %s%s", name, where, out, errs)
			assert.Contains(t, out+errs, filepath.ToSlash(filepath.Join(moved, "tasks", "t.star")), "says where it found the file")
		}
	}
}

// The folders tried for a task file of no corpus are the plain folders its recorded path has
// above it, nearest first; a file of a corpus gets none, and ".." ends the list.
func TestRecordedDirs(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"tasks"}, recordedDirs("tasks/t.star", "t.star"))
	assert.Equal(t, []string{"tasks", "proj/tasks", "a/proj/tasks"}, recordedDirs("/a/proj/tasks/t.star", "t.star"))
	assert.Equal(t, []string{"tasks"}, recordedDirs("../x/../tasks/t.star", "t.star"))
	assert.Equal(t, []string{"tasks"}, recordedDirs("../../tasks/t.star", "t.star"))
	assert.Nil(t, recordedDirs("t.star", "t.star"))
	assert.Nil(t, recordedDirs("tasks/copy.star", "tasks/copy.star"), "a file of a corpus")
	assert.Nil(t, recordedDirs("tasks/other.star", "t.star"), "not the same file")
	assert.Len(t, recordedDirs("/a/b/c/d/e/f/g/h/i/j/t.star", "t.star"), maxRecordedDirs)
}
