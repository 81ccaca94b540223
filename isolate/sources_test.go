package isolate_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const noteV1 = "NOTE = \"call the plumber\\n\"\n"

// helperEpisode is okTask with its note in lib/notes.star, which t.star loads.
func helperEpisode(note string) isolate.Episode {
	src := "load(\"//lib/notes.star\", \"NOTE\")\n" + strings.Replace(okTask, `"call the plumber\n"`, "NOTE", 1)
	return isolate.Episode{Display: "gen", File: "t.star", Agent: isolate.Agent{Name: "oracle"}, Seed: 3,
		Files: map[string][]byte{"t.star": []byte(src), "lib/notes.star": []byte(note)}}
}

// An episode in a worker records the task file and the file it loads, with their SHA-256, in
// its start event: the sources an episode here records.
func TestEpisodeRecordsSources(t *testing.T) {
	t.Parallel()
	p := newPool(t, isolate.Options{Workers: 1})
	ep := helperEpisode(noteV1)
	var got bytes.Buffer
	res, err := p.Episode(context.Background(), ep, isolate.Host{Trace: &got})
	require.NoError(t, err)
	require.True(t, res.End.Passed)
	want, _ := inProcess(t, ep, modelagent.Config{})
	assert.Equal(t, want, got.String())

	events, err := trace.Read(strings.NewReader(got.String()))
	require.NoError(t, err)
	start := events[0].Body.(*trace.Start)
	assert.Equal(t, []trace.Source{
		{Path: "t.star", SHA256: trace.FileSHA256(ep.Files["t.star"])},
		{Path: "lib/notes.star", SHA256: trace.FileSHA256(ep.Files["lib/notes.star"])},
	}, start.Sources)
	assert.Equal(t, start.FileSHA256, start.Sources[0].SHA256)
}

// A traced episode in this process needs the sources of the bytes it runs: without them, or
// with those of other bytes of the task file, nothing runs.
func TestRunEpisodeNeedsItsSources(t *testing.T) {
	t.Parallel()
	ep := helperEpisode(noteV1)
	c := dsl.NewCorpus(mapFS(ep.Files), ".", "gen")
	task, src, err := isolate.FindTask(context.Background(), c, "t.star", "move-todo")
	require.NoError(t, err)
	sources, err := trace.Sources(c, "t.star")
	require.NoError(t, err)
	run := isolate.Run{Task: task, Source: src, Seed: 3, Agent: ep.Agent, Trace: &bytes.Buffer{}}

	_, _, err = isolate.RunEpisode(context.Background(), run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "traced without its sources")

	run.Sources = []trace.Source{{Path: "t.star", SHA256: trace.FileSHA256([]byte("other bytes"))}, sources[1]}
	_, _, err = isolate.RunEpisode(context.Background(), run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gen/t.star changed while it was loaded")

	run.Sources = sources
	res, setup, err := isolate.RunEpisode(context.Background(), run)
	require.NoError(t, err)
	require.Nil(t, setup)
	assert.True(t, res.Passed)

	// an episode without a trace needs none
	run.Sources, run.Trace = nil, nil
	res, _, err = isolate.RunEpisode(context.Background(), run)
	require.NoError(t, err)
	assert.True(t, res.Passed)
}

// A replay, here and in a worker, reads the task's files from its corpus and names a file the
// task loads that changed since the trace was recorded; the episode itself still matches.
func TestReplayNamesAChangedHelper(t *testing.T) {
	t.Parallel()
	ep := helperEpisode(noteV1)
	tr, _ := inProcess(t, ep, modelagent.Config{})
	events, err := trace.Read(strings.NewReader(tr))
	require.NoError(t, err)

	r, err := isolate.ReplayTrace(context.Background(), events, dsl.NewCorpus(mapFS(ep.Files), ".", "gen"), "t.star")
	require.NoError(t, err)
	assert.True(t, r.Matched())
	assert.False(t, r.TaskChanged)
	assert.Empty(t, r.Warnings())

	edited := maps.Clone(ep.Files)
	edited["lib/notes.star"] = []byte(noteV1 + "# reviewed\n")
	r, err = isolate.ReplayTrace(context.Background(), events, dsl.NewCorpus(mapFS(edited), ".", "gen"), "t.star")
	require.NoError(t, err)
	assert.True(t, r.Matched(), "a comment changes nothing the episode does")
	assert.True(t, r.TaskChanged)
	assert.Equal(t, []trace.FileChange{{Path: "lib/notes.star",
		Recorded: trace.FileSHA256([]byte(noteV1)), Current: trace.FileSHA256(edited["lib/notes.star"])}}, r.Changed)
	require.Len(t, r.Warnings(), 1)
	assert.Contains(t, r.Warnings()[0], "helper file lib/notes.star changed since the trace was recorded")

	p := newPool(t, isolate.Options{Workers: 1})
	res, err := p.Replay(context.Background(), isolate.Replay{Display: "gen", Files: edited, File: "t.star", Trace: []byte(tr)})
	require.NoError(t, err)
	assert.Equal(t, r, res.Result, "the worker's result is the one here")
}
