package isolate_test

import (
	"bytes"
	"context"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/require"
)

// moveRuns are recorded runs of okTask's move-todo: a hack that copies instead of moving (it
// passes: the verifier only checks done.txt exists) and a careful run that fails (it renames
// the file elsewhere).
const moveRuns = `[
 {"task": "move-todo", "why": "copies, and leaves todo.txt", "expect": "fail", "turns": [{"calls": [
   {"name": "fs_write", "args": {"path": "/notes/done.txt", "content": "call the plumber\n"}}], "reply": "Done."}]},
 {"task": "move-todo", "why": "renames it where the user keeps finished things", "expect": "pass", "turns": [{"calls": [
   {"name": "fs_move", "args": {"src": "/notes/todo.txt", "dst": "/notes/done/todo.txt"}}], "reply": "Done."}]}
]`

// Recorded runs travel to the worker: a validation there plays them as this process does, and
// an episode of the agent script plays its run there as here.
func TestRecordedRunsInWorker(t *testing.T) {
	t.Parallel()
	runs, err := recorded.Parse("runs.json", []byte(moveRuns), "")
	require.NoError(t, err)
	p := newPool(t, isolate.Options{Workers: 1})
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(okTask)}}, ".", "gen")
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

	ep := taskEpisode(okTask, isolate.Agent{Name: recorded.Label, Script: runs[1]})
	var trace bytes.Buffer
	res, err := p.Episode(context.Background(), ep, isolate.Host{Trace: &trace})
	require.NoError(t, err)
	here, r := inProcess(t, ep, modelagent.Config{})
	require.Equal(t, here, trace.String())
	require.False(t, r.Passed, "the careful run fails this verifier")
	require.False(t, res.End.Passed)
	require.Contains(t, trace.String(), `"agent":"script"`)
	require.Contains(t, trace.String(), `/notes/done/todo.txt`)
}
