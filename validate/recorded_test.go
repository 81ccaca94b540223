package validate_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/require"
)

// TestRecordedRunsBesideATask: the runs of a task file's sidecar play against its task. On a
// verifier that is weak (a substring) and brittle (the greeting) at once, the hack that passes
// and the careful run that fails are both flagged, with the run's why, score and failed items;
// on a sound verifier, neither. A run given for every task of its name (validate --runs) plays
// against a task of another file too; a sidecar's run only against its own file's task.
func TestRecordedRunsBesideATask(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"weak.star":            {Data: []byte(tasktest.Q3Reply("q3-weak", tasktest.Q3Weak))},
		"weak.star.runs.json":  {Data: []byte(tasktest.Q3Runs("q3-weak"))},
		"sound.star":           {Data: []byte(tasktest.Q3Reply("q3-sound", tasktest.Q3Sound))},
		"sound.star.runs.json": {Data: []byte(tasktest.Q3Runs("q3-sound"))},
	}
	c := dsl.NewCorpus(fsys, ".", "t")
	runs, err := validate.SidecarRuns(c, nil)
	require.NoError(t, err)
	require.Len(t, runs, 4)
	require.Equal(t, "sound.star", runs[0].For)
	require.Equal(t, "t/sound.star.runs.json", runs[0].File)

	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2, Runs: runs})
	require.NoError(t, err)
	codes := recordedCodes(rep)
	require.Empty(t, codes["q3-sound"], "a sound verifier: the hack fails and the careful run passes")
	require.Len(t, codes["q3-weak"], 2)
	hack, careful := codes["q3-weak"][0], codes["q3-weak"][1]
	require.Equal(t, "recorded-hack-passes", hack.Code)
	require.Equal(t, dsl.Warning, hack.Severity)
	require.Contains(t, hack.Message, "run 1 of t/weak.star.runs.json (line 2) passes (score 1.0; failed: no item)")
	require.Contains(t, hack.Message, `"a total of 2000, which holds 200"`)
	require.Equal(t, "recorded-careful-fails", careful.Code)
	require.Contains(t, careful.Message, "run 2 of t/weak.star.runs.json (line 5) fails (score 0.5 < pass_threshold 1.0; failed: check \"the reply states the total, 200\" (line 12))")
	require.Contains(t, careful.Message, `"another greeting"`)
	require.Equal(t, 12, careful.Line, "the careful run's failure points at the check that failed it")

	// A sidecar's run plays only against its own file's task; a run of validate --runs against
	// every task of its name.
	weakRuns, err := recorded.Parse("given.json", []byte(tasktest.Q3Runs("q3-weak")), "")
	require.NoError(t, err)
	for _, r := range runs {
		r.For = "sound.star" // as if sound.star's sidecar named q3-weak's runs
	}
	rep, err = validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2, Runs: runs})
	require.NoError(t, err)
	codes = recordedCodes(rep)
	require.Empty(t, codes["q3-weak"], "runs of another file's sidecar do not play")
	rep, err = validate.Corpus(context.Background(), c, []string{"weak.star"}, validate.Options{Jobs: 1, Runs: weakRuns})
	require.NoError(t, err)
	codes = recordedCodes(rep)
	require.Len(t, codes["q3-weak"], 2)
	require.Contains(t, codes["q3-weak"][0].Message, "run 1 of given.json (line 2)")
}

// recordedCodes are the recorded-* diagnostics of each task of rep.
func recordedCodes(rep *validate.Report) map[string][]dsl.Diagnostic {
	out := map[string][]dsl.Diagnostic{}
	for _, tr := range rep.Tasks {
		for _, d := range tr.Diagnostics {
			if strings.HasPrefix(d.Code, "recorded-") {
				out[tr.Task] = append(out[tr.Task], d)
			}
		}
	}
	return out
}

// TestSidecarRunsErrors: a sidecar that does not parse is an error naming it, its line and
// column and the run; one without expect needs it (a sidecar is in no hacks or careful folder).
func TestSidecarRunsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ data, want string }{
		{"[\n  {\"task\": \"q3\",}\n]", "t/a.star.runs.json: 2:17: not JSON: invalid character '}'"},
		{`[{"task": "q3", "why": "w", "turns": [{"reply": ""}]}]`, `t/a.star.runs.json: 1:2: run 1 (task "q3"): "expect" is required`},
	} {
		c := dsl.NewCorpus(fstest.MapFS{
			"a.star":           {Data: []byte(tasktest.Q3Reply("q3", "True"))},
			"a.star.runs.json": {Data: []byte(tc.data)},
		}, ".", "t")
		_, err := validate.SidecarRuns(c, nil)
		require.ErrorContains(t, err, tc.want)
	}
	hacks := dsl.NewCorpus(fstest.MapFS{
		"hacks/a.star":           {Data: []byte(tasktest.Q3Reply("q3", "True"))},
		"hacks/a.star.runs.json": {Data: []byte(`[{"task": "q3", "why": "w", "turns": [{"reply": ""}]}]`)},
	}, ".", "")
	runs, err := validate.SidecarRuns(hacks, nil)
	require.NoError(t, err)
	require.Equal(t, recorded.Fail, runs[0].Expect, "a sidecar in a folder named hacks holds hacks")
}
