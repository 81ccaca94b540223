package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A trace whose start event names a task file it was not recorded with (/etc/passwd), exported
// without verification, does not carry that path into the outputs: they name the recorded path
// only when it is relative and stays inside, else the file's path inside its corpus; a verified
// trace names the file it was checked against.
func TestExportWritesOnlyCheckedOrRelativeFiles(t *testing.T) {
	proj := writeFiles(t, map[string]string{"tasks/t.star": copyNoteTask})
	t.Chdir(proj)
	require.NoError(t, os.Mkdir("runs", 0o755))
	code, out, errs := cli(t, "run", "tasks/t.star", "--trace", filepath.Join("runs", "t.jsonl"))
	require.Equal(t, 0, code, out+errs)
	copyFile(t, filepath.Join("runs", "t.jsonl"), filepath.Join("forged", "t.jsonl"))
	editTrace(t, filepath.Join("forged", "t.jsonl"), `"file":"tasks/t.star"`, `"file":"/etc/passwd"`)

	for _, kind := range []string{"rl", "inspect", "atif"} {
		dst := filepath.Join(t.TempDir(), kind+".jsonl")
		if kind != "rl" {
			dst = filepath.Join(t.TempDir(), kind+".json")
		}
		if kind == "atif" {
			dst = filepath.Join(t.TempDir(), "atif")
		}
		code, out, errs := cli(t, "export", kind, "forged", "--out", dst, "--no-verify")
		require.Equal(t, 0, code, "%s: %s%s", kind, out, errs)
		data := readOutput(t, dst)
		assert.NotContains(t, data, "/etc/passwd", kind)
		assert.Contains(t, data, `"t.star"`, "%s: the path inside its corpus", kind)

		code, out, errs = cli(t, "export", kind, "runs", "--out", dst)
		require.Equal(t, 0, code, "%s: %s%s", kind, out, errs)
		data = readOutput(t, dst)
		assert.NotContains(t, data, "/etc/passwd", kind)
		assert.Contains(t, data, `"tasks/t.star"`, "%s: the file it was checked against", kind)
	}
}

// readOutput is the text of an export's output: a file, or every file of a folder.
func readOutput(t *testing.T, path string) string {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(data)
	}
	var all string
	require.NoError(t, filepath.Walk(path, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			all += string(data)
		}
		return err
	}))
	return all
}
