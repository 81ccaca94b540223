package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Paths and names from input reach diagnostics with their control and bidirectional characters
// escaped: a U+202E in a file name would turn the rest of the line around in a terminal or CI log.
func TestDiagnosticsEscapePaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bad := "a\u202eb.star"
	require.NoError(t, os.WriteFile(bad, []byte("task(\n"), 0o644))
	require.NoError(t, os.WriteFile("notes\x1b[2J.star", []byte("x = 1\n"), 0o644))
	require.NoError(t, os.Mkdir("runs", 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("runs", "t\u2067.jsonl"), []byte("{}\n"), 0o644))
	for _, args := range [][]string{{"validate", "."}, {"run", bad}, {"replay", "runs"}, {"export", "sft", "runs", "--out", filepath.Join(t.TempDir(), "x.jsonl")}} {
		_, out, errs := cli(t, args...)
		all := out + errs
		assert.NotContains(t, all, "\u202e", args)
		assert.NotContains(t, all, "\u2067", args)
		assert.NotContains(t, all, "\x1b", args)
		switch args[0] {
		case "validate":
			assert.Contains(t, all, `a\u202eb.star:2:1: error[syntax]`)
			assert.Contains(t, all, `notes\x1b[2J.star: error[no-task]`)
		case "run":
			assert.Contains(t, all, `a\u202eb.star:2:1`)
		default:
			assert.Contains(t, all, `t\u2067.jsonl`, args)
		}
	}
}
