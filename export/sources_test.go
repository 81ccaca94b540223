package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rl group hashes every file the start event's sources name: two versions of a helper are
// two groups, the same files one; a task file that loads nothing, or a trace without sources,
// keeps the group of its file_sha256.
func TestGroupHashesEverySource(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, episode.Oracle{}, "", "x/0.jsonl")
	sha := trace.FileSHA256(src)
	assert.Equal(t, "flaky@"+sha[:12], e.Group(), "no sources: the task file's hash")

	withSources := func(helper string) string {
		e.start().Sources = []trace.Source{{Path: "t.star", SHA256: sha}, {Path: "lib/h.star", SHA256: trace.FileSHA256([]byte(helper))}}
		return e.Group()
	}
	v1, v2 := withSources("X = 1\n"), withSources("X = 2\n")
	assert.NotEqual(t, v1, v2, "two versions of the helper")
	assert.Equal(t, v1, withSources("X = 1\n"), "the same files")
	assert.NotEqual(t, "flaky@"+sha[:12], v1)
	assert.Regexp(t, `^flaky@[0-9a-f]{12}$`, v1)

	e.start().Sources = []trace.Source{{Path: "t.star", SHA256: sha}}
	assert.Equal(t, "flaky@"+sha[:12], e.Group(), "only the task file: its hash")
}

// ReplaySkip leaves out an episode whose files changed (first) or whose replay diverged, and
// keeps one that matched, notes and all.
func TestReplaySkip(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", ReplaySkip(&trace.Result{Notes: []string{"the agent \"x\" cannot be run again"}}))
	assert.Equal(t, SkipDiverged, ReplaySkip(&trace.Result{Divergence: &trace.Divergence{Line: 3}}))
	changed := &trace.Result{TaskChanged: true, Changed: []trace.FileChange{{Path: "lib/h.star", Recorded: "a", Current: "b"}}}
	assert.Equal(t, SkipChanged, ReplaySkip(changed))
	changed.Divergence = &trace.Divergence{Line: 3}
	assert.Equal(t, SkipChanged, ReplaySkip(changed), "the change explains the divergence")
}

// Decode reads a trace from bytes, as ReadFile reads it from its file.
func TestDecode(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, episode.Oracle{}, "", "x/0.jsonl")
	data := []byte{}
	for _, ev := range e.Events {
		b, err := trace.Encode(ev.Body)
		require.NoError(t, err)
		data = append(append(data, b...), '\n')
	}
	path := filepath.Join(t.TempDir(), "0.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	a, err := Decode(path, data)
	require.NoError(t, err)
	b, err := ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, e.Group(), a.Group())

	_, err = Decode(path, []byte("{\"event\":\"start\"}\n"))
	assert.Error(t, err)
}
