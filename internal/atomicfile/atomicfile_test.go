package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func entries(t *testing.T, dir string) []string {
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// The path holds the old bytes until Commit, the new ones after, and no temporary file is left.
func TestCommitReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o600))
	f, err := Create(path)
	require.NoError(t, err)
	_, err = f.Write([]byte("new "))
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got), "before Commit")
	f.Write([]byte("line\n"))
	require.NoError(t, f.Commit())
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new line\n", string(got))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	assert.Equal(t, []string{"out.jsonl"}, entries(t, dir))
}

// Abort leaves the old file and no temporary one.
func TestAbortKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	require.NoError(t, WriteFile(path, []byte("old")))
	f, err := Create(path)
	require.NoError(t, err)
	f.Write([]byte("half"))
	f.Abort()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(got))
	assert.Equal(t, []string{"out.json"}, entries(t, dir))
}

// A commit that cannot rename (the path is a folder) fails, and removes its temporary file.
func TestCommitFailureCleansUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "taken")
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "x"), nil, 0o644))
	assert.Error(t, WriteFile(path, []byte("data")))
	assert.Equal(t, []string{"taken"}, entries(t, dir))
	_, err := Create(filepath.Join(dir, "missing", "f"))
	assert.Error(t, err)
}
