package rollout

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperTasks loads task1 with its written content in lib/text.star, which t.star loads.
func helperTasks(t *testing.T, lib string) []Task {
	t.Helper()
	src := "load(\"//lib/text.star\", \"TEXT\")\n" + strings.Replace(task1, `content = "b")`, `content = TEXT)`, 1)
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}, "lib/text.star": {Data: []byte(lib)}}, ".", "c")
	f := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	sources, err := trace.Sources(c, "t.star")
	require.NoError(t, err)
	return []Task{{Task: f.Tasks[0], Source: f.Source, Sources: sources}}
}

func startOf(t *testing.T, path string) *trace.Start {
	t.Helper()
	events, err := readTrace(path)
	require.NoError(t, err)
	return events[0].Body.(*trace.Start)
}

// Every trace records the task file and the file it loads; a resumed rollout runs again the
// samples whose traces were recorded with another version of the helper, says which file
// changed, and counts them in the summary; the next one resumes them all.
func TestResumeRerunsAfterAHelperChanged(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var warnings []string
	o := Options{Out: out, Samples: 2, Agent: "oracle", Warn: func(s string) { warnings = append(warnings, s) },
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil }}
	v1 := helperTasks(t, "TEXT = \"b\"\n")
	res, err := Run(context.Background(), v1, o)
	require.NoError(t, err)
	require.Equal(t, 2, res.Ran)
	start := startOf(t, TracePath(out, "t1", 0))
	assert.Equal(t, v1[0].Sources, start.Sources)
	require.Len(t, start.Sources, 2)
	assert.Equal(t, "lib/text.star", start.Sources[1].Path)

	res, err = Run(context.Background(), v1, o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Resumed, "nothing changed")
	assert.Empty(t, warnings)

	v2 := helperTasks(t, "TEXT = \"b\"  # checked\n")
	res, err = Run(context.Background(), v2, o)
	require.NoError(t, err)
	assert.Equal(t, 0, res.Resumed)
	assert.Equal(t, 2, res.Ran)
	for _, s := range res.Tasks[0].Samples {
		require.Len(t, s.Changed, 1, "sample %d", s.Index)
		assert.Equal(t, trace.FileChange{Path: "lib/text.star", Recorded: v1[0].Sources[1].SHA256, Current: v2[0].Sources[1].SHA256}, s.Changed[0])
		assert.True(t, s.Passed)
		assert.Equal(t, v2[0].Sources, startOf(t, s.Path).Sources, "the new trace replaced the stale one")
	}
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "t1: 2 of its traces in "+filepath.Join(out, "t1")+" were recorded with other versions of its files")
	assert.Contains(t, warnings[0], "helper file lib/text.star changed since the trace was recorded")
	assert.Contains(t, warnings[0], "running those 2 samples again")
	sum := Summarize(res)
	assert.Equal(t, 2, sum.TaskChanged)
	var text strings.Builder
	sum.WriteText(&text)
	assert.Contains(t, text.String(), "2 samples ran again: the task file or a file it loads changed since their traces were recorded")

	warnings = nil
	res, err = Run(context.Background(), v2, o)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Resumed)
	assert.Empty(t, warnings)
	assert.Equal(t, 0, Summarize(res).TaskChanged)

	// a trace without sources (an older engine) is compared by its task file alone
	path := TracePath(out, "t1", 1)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	first, rest, _ := strings.Cut(string(data), "\n")
	i := strings.Index(first, `,"sources":`)
	require.Positive(t, i)
	require.True(t, strings.HasSuffix(first, "]}"), "sources is the start event's last member")
	older := first[:i] + "}"
	var line map[string]any
	require.NoError(t, json.Unmarshal([]byte(older), &line))
	assert.NotContains(t, line, "sources")
	require.NoError(t, os.WriteFile(path, []byte(older+"\n"+rest), 0o644))
	res, err = Run(context.Background(), helperTasks(t, "TEXT = \"b\"  # checked again\n"), o)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Resumed, "the older trace: its task file is the same")
	assert.Equal(t, 1, res.Ran, "the other trace names the helper that changed")
}

// A task run here without its sources is refused before anything runs.
func TestTaskWithoutSources(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	tasks[0].Sources = nil
	_, err := Run(context.Background(), tasks, Options{Out: t.TempDir(), Samples: 1, Agent: "oracle",
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "task t1 has no Sources")
}
