package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeHelperFiles writes helperFiles under dir.
func writeHelperFiles(t *testing.T, dir string) string {
	t.Helper()
	for rel, text := range helperFiles {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

func startOf(t *testing.T, data []byte) *trace.Start {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	return events[0].Body.(*trace.Start)
}

// SameFiles finds the task a trace was recorded with wherever its corpus now is: the task file
// and every file it loaded, at their recorded paths, with their recorded bytes. A recorded path
// that leaves the corpus root (by "..", absolute, or through a link) is not read, even when the
// file it names has the recorded bytes.
func TestSameFiles(t *testing.T) {
	t.Parallel()
	start := startOf(t, recordIn(t, corpusOf(nil)))
	require.Len(t, start.Sources, 3)
	assert.Equal(t, "t.star", start.TaskPath())

	base := t.TempDir()
	dir := writeHelperFiles(t, filepath.Join(base, "moved"))
	outside := writeHelperFiles(t, filepath.Join(base, "outside"))
	c, err := dsl.OpenDir(dir, "moved")
	require.NoError(t, err)
	assert.True(t, trace.SameFiles(c, "t.star", start))
	assert.False(t, trace.SameFiles(c, "lib/x.star", start), "another file")

	with := func(i int, path, sha string) *trace.Start {
		s := *start
		s.Sources = append([]trace.Source(nil), start.Sources...)
		s.Sources[i] = trace.Source{Path: path, SHA256: sha}
		return &s
	}
	y := start.Sources[2]
	require.Equal(t, "lib/y.star", y.Path)
	assert.False(t, trace.SameFiles(c, "t.star", with(2, y.Path, trace.FileSHA256([]byte("other")))), "a helper with other bytes")
	assert.False(t, trace.SameFiles(c, "t.star", with(2, "lib/z.star", y.SHA256)), "a helper that is not there")
	assert.False(t, trace.SameFiles(c, "t.star", with(2, "../outside/lib/y.star", y.SHA256)), "a helper outside the root")
	assert.False(t, trace.SameFiles(c, "t.star", with(2, filepath.ToSlash(filepath.Join(outside, "lib", "y.star")), y.SHA256)), "an absolute path")
	assert.False(t, trace.SameFiles(c, "t.star", with(0, "t.star", trace.FileSHA256([]byte("other")))), "sources that contradict file_sha256")

	// a helper that is a link out of the root, to a file with the recorded bytes
	require.NoError(t, os.Remove(filepath.Join(dir, "lib", "y.star")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "lib", "y.star"), filepath.Join(dir, "lib", "y.star")))
	assert.False(t, trace.SameFiles(c, "t.star", start), "an absolute link out")
	require.NoError(t, os.Remove(filepath.Join(dir, "lib", "y.star")))
	require.NoError(t, os.Symlink(filepath.Join("..", "..", "outside", "lib", "y.star"), filepath.Join(dir, "lib", "y.star")))
	assert.False(t, trace.SameFiles(c, "t.star", start), "a relative link out")
	// a link that stays inside the root is followed
	require.NoError(t, os.Remove(filepath.Join(dir, "lib", "y.star")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "y-real.star"), []byte(helperFiles["lib/y.star"]), 0o644))
	require.NoError(t, os.Symlink(filepath.Join("..", "y-real.star"), filepath.Join(dir, "lib", "y.star")))
	assert.True(t, trace.SameFiles(c, "t.star", start), "a link inside")

	// a trace without sources (an older engine) names its file as given and has only its hash
	old := *start
	old.Sources = nil
	assert.Equal(t, old.File, old.TaskPath())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lib", "x.star"), []byte("X = 1\n"), 0o644))
	assert.True(t, trace.SameFiles(c, "t.star", &old), "only the task file is known")
	assert.False(t, trace.SameFiles(c, "t.star", start))
}
