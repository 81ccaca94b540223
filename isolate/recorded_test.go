package isolate_test

import (
	"bytes"
	"context"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/require"
)

// Recorded runs travel to the worker: a validation there plays them as this process does (on a
// weak and brittle verifier, the hack passes and the careful run fails), and an episode of the
// agent script plays its run there as here, byte for byte.
func TestRecordedRunsInWorker(t *testing.T) {
	t.Parallel()
	src := tasktest.Q3Reply("q3", tasktest.Q3Weak)
	runs, err := recorded.Parse("runs.json", []byte(tasktest.Q3Runs("q3")), "")
	require.NoError(t, err)
	p := newPool(t, isolate.Options{Workers: 1})
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "gen")
	want, err := validate.Corpus(context.Background(), c, []string{"t.star"}, validate.Options{Jobs: 1, Runs: runs})
	require.NoError(t, err)
	got, err := isolate.ValidateCorpusWith(context.Background(), p, c, []string{"t.star"}, isolate.ValidateOptions{Runs: runs})
	require.NoError(t, err)
	require.Equal(t, reportJSON(want), reportJSON(got))
	var codes []string
	for _, d := range got.Tasks[0].Diagnostics {
		codes = append(codes, d.Code)
	}
	require.Contains(t, codes, "recorded-hack-passes")
	require.Contains(t, codes, "recorded-careful-fails")

	agent := isolate.Agent{Name: recorded.Label, Script: runs[1]}
	var inWorker bytes.Buffer
	res, err := p.Episode(context.Background(), isolate.Episode{Display: "gen", Files: map[string][]byte{"t.star": []byte(src)}, File: "t.star", Agent: agent}, isolate.Host{Trace: &inWorker})
	require.NoError(t, err)
	task, data, err := isolate.FindTask(context.Background(), c, "t.star", "q3")
	require.NoError(t, err)
	sources, err := trace.Sources(c, "t.star")
	require.NoError(t, err)
	var here bytes.Buffer
	r, setup, err := isolate.RunEpisode(context.Background(), isolate.Run{Task: task, Source: data, Sources: sources, Agent: agent, Trace: &here})
	require.NoError(t, err)
	require.Nil(t, setup)
	require.Equal(t, here.String(), inWorker.String())
	require.False(t, r.Passed, "the careful run fails this verifier")
	require.False(t, res.End.Passed)
	require.Contains(t, inWorker.String(), `"agent":"script"`)
	require.Contains(t, inWorker.String(), `Dear Dana, the Q3 total is 200.`)
}
