package rollout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A rollout killed while it wrote a trace or its manifest leaves their temporary files; the next
// rollout into the folder removes them, and only them: files of other names, in other folders,
// and folders are kept.
func TestRolloutRemovesItsStaleTemporaryFiles(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	out := t.TempDir()
	stale := []string{".rollout.json.tmp123456", "t1/.0.jsonl.tmp2718281828", "t1/.1.jsonl.tmp7"}
	kept := []string{"t1/.notes.tmp1", "t1/0.jsonl.tmp9", "t1/.0.jsonl.tmp", "t1/.0.jsonl.tmpx1", "other/.0.jsonl.tmp1", ".t1.tmp5", "t1/.x.jsonl.tmp3"}
	for _, f := range append(append([]string{}, stale...), kept...) {
		p := filepath.Join(out, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{"), 0o644))
	}
	dir := filepath.Join(out, "t1", ".2.jsonl.tmp4")
	require.NoError(t, os.Mkdir(dir, 0o755))

	res, err := Run(context.Background(), tasks, Options{Out: out, Samples: 2, Agent: "oracle",
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil }})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Ran)
	for _, f := range stale {
		assert.NoFileExists(t, filepath.Join(out, filepath.FromSlash(f)))
	}
	for _, f := range kept {
		assert.FileExists(t, filepath.Join(out, filepath.FromSlash(f)))
	}
	assert.DirExists(t, dir)
}
