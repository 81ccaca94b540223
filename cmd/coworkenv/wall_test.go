package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/wall holds what lies outside every corpus folder of these tests: a file whose first
// line a syntax error would quote (passwd), a task (outside.star), and traces that name a task
// file outside the corpus folder (dotdot, absolute) or through a link (link).
func wallFile(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "wall", name))
	require.NoError(t, err)
	return p
}

// A task file that links out of its corpus root is refused by validate and run, naming the file,
// and no line of the target reaches the output.
func TestValidateTaskLinkOutQuotesNothing(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"ok.star": helloTask})
	evil := filepath.Join(dir, "evil.star")
	require.NoError(t, os.Symlink(wallFile(t, "passwd"), evil))

	code, out, errs := cli(t, "validate", evil)
	assert.Equal(t, 1, code, out+errs)
	assert.Contains(t, out, "evil.star: error[load]: evil.star is a symbolic link that leads out of the corpus root")
	assert.NotContains(t, out+errs, "root:x:0")

	code, out, errs = cli(t, "validate", dir)
	assert.Equal(t, 2, code, out+errs)
	assert.Contains(t, errs, "evil.star is a symbolic link that leads out of the corpus root")
	assert.NotContains(t, out+errs, "root:x:0")

	code, out, errs = cli(t, "run", evil)
	assert.Equal(t, 2, code, out+errs)
	assert.Contains(t, errs, "evil.star is a symbolic link that leads out of the corpus root")
	assert.NotContains(t, out+errs, "root:x:0")
}

// replay runs only task files inside the corpus folder: a traced path that climbs out, an
// absolute one elsewhere and a link out are refused before the file is read; a relative path
// and a link that stay inside replay.
func TestReplayRefusesTaskFilesOutsideCorpus(t *testing.T) {
	traces := []struct{ name, want string }{
		{"dotdot.jsonl", "the traced task file ../../etc/x.star is not inside the corpus folder ."},
		{"absolute.jsonl", "the traced task file /etc/x.star is not inside the corpus folder ."},
		{"link.jsonl", "the traced task file link.star is refused: link.star is a symbolic link that leads out of the corpus root"},
	}
	for i := range traces {
		traces[i].name = wallFile(t, traces[i].name)
	}
	dotdot, link := wallFile(t, "dotdot.jsonl"), wallFile(t, "link.jsonl")
	dir := writeFiles(t, map[string]string{"inside.star": helloTask})
	require.NoError(t, os.Symlink(wallFile(t, "outside.star"), filepath.Join(dir, "link.star")))
	require.NoError(t, os.Symlink("inside.star", filepath.Join(dir, "alias.star")))
	t.Chdir(dir) // the traces name their files relative to the folder they were recorded in

	for _, tr := range traces {
		code, out, errs := cli(t, "replay", tr.name)
		assert.Equal(t, 1, code, "the trace was read; its replay could not run: %s: %s%s", tr.name, out, errs)
		assert.Contains(t, out, tr.want, tr.name)
		assert.NotContains(t, out, "matched", tr.name)
	}

	for _, file := range []string{"inside.star", "alias.star"} {
		tr := filepath.Join(t.TempDir(), "t.jsonl")
		code, out, errs := cli(t, "run", file+":hello", "--trace", tr)
		require.Equal(t, 0, code, out+errs)
		code, out, errs = cli(t, "replay", tr)
		assert.Equal(t, 0, code, "%s: %s%s", file, out, errs)
		assert.Contains(t, out, "matched", file)
	}

	// --corpus names the folder: with "/", ../../etc/x.star is inside it (and not there)
	code, out, errs := cli(t, "replay", dotdot, "--corpus", "/")
	assert.NotContains(t, out, "not inside the corpus folder", out+errs)
	assert.Equal(t, 1, code, "and /etc/x.star is not there: %s%s", out, errs)
	assert.Contains(t, out, "is not there")

	code, _, errs = cli(t, "replay", link, "--corpus", "missing")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--corpus: missing")
}
