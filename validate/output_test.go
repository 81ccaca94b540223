package validate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportRoundTrip: ParseReport reads back exactly what JSON wrote, for every golden report
// (diagnostics with and without positions and backtraces, runs present and absent), and the
// text output of the parsed report, sources given, is the original's.
func TestReportRoundTrip(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "golden")
	c := dsl.NewCorpus(os.DirFS(dir), ".", "testdata/golden")
	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rep.Tasks), 6)
	data := jsonv.MustEncode(rep.JSON())

	sources := map[string][]byte{}
	for _, tr := range rep.Tasks {
		sources[tr.File] = tr.Source
	}
	back, err := validate.ParseReport([]byte(data), func(f string) []byte { return sources[f] })
	require.NoError(t, err)
	assert.Equal(t, data, jsonv.MustEncode(back.JSON()))
	assert.Equal(t, rep.Summary, back.Summary)

	var want, got bytes.Buffer
	rep.Sources = nil // helper files are quoted from Sources, which the JSON does not carry
	rep.WriteText(&want, true)
	back.WriteText(&got, true)
	assert.Equal(t, want.String(), got.String())
}

// TestParseReportRejectsBadInput: a report that is not what JSON writes is an error that says
// where, never a panic or a silently empty report.
func TestParseReportRejectsBadInput(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`not json`:                            "not JSON",
		`[1]`:                                 "not a JSON object",
		`{"tasks": 3}`:                        `field "tasks" is integer`,
		`{"tasks": [1]}`:                      "task 0 is not an object",
		`{"tasks": [{"file": 1}]}`:            `task 0: field "file" is integer`,
		`{"tasks": [{"diagnostics": ["x"]}]}`: "a diagnostic of task 0 is not an object",
		`{"tasks": [{"oracle": {"score": "1"}}]}`:       `field "oracle.score" is string`,
		`{"tasks": [{"diagnostics": [{"line": 1.5}]}]}`: `field "line" is number`,
	} {
		_, err := validate.ParseReport([]byte(in), nil)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
	}
}
