package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Detect tells every kind of input from the input itself, and an error names the file.
func TestDetect(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := f.rolloutDir(t, 1, []bool{true})
	for path, want := range map[string]Kind{
		f.oracleTrace(t):                               Episode,
		dir:                                            Rollout,
		filepath.Join(dir, "rollout.json"):             Rollout,
		filepath.Join(dir, "q3-total-reply"):           "", // a task's folder is no rollout
		"testdata/validate.json":                       Validation,
		"testdata/generation":                          Generation,
		"testdata/generation/manifest.jsonl":           Generation,
		"testdata/tasks/q3_total.star":                 "",
		filepath.Join(f.dir, "missing.jsonl"):          "",
		filepath.Join(dir, "q3-total-reply", "0.html"): "",
	} {
		got, err := Detect(path)
		assert.Equal(t, want, got, path)
		if want == "" {
			require.Error(t, err, path)
			assert.True(t, strings.HasPrefix(err.Error(), path+": "), "%q does not name %s", err, path)
			var ie *InputError
			assert.True(t, errors.As(err, &ie))
		}
	}
}

// Several traces make one page: an article each, with anchors of their own.
func TestSeveralTraces(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	out := filepath.Join(f.dir, "two.html")
	kind, err := Write(context.Background(), out, []string{f.oracleTrace(t), f.modelTrace(t)}, f.options())
	require.NoError(t, err)
	assert.Equal(t, Episode, kind)
	s := read(t, out)
	assert.Contains(t, s, "<h1>2 episodes</h1>")
	assert.Contains(t, s, `<article class="episode" id="e0">`)
	assert.Contains(t, s, `<article class="episode" id="e1">`)
	assert.Contains(t, s, `<h2 id="e1-title">Episode: stock-delivery-record</h2>`)
	assert.Contains(t, s, `id="e1-turn-0"`)
	assert.Equal(t, 1, strings.Count(s, `id="e0-turn-1"`))
}

// A rollout folder read back: samples left without a trace (.partial) count as failed with
// their code, or interrupted; tasks whose file is not found are named, and their views say why
// they show no changes; a trace cannot choose where its view is written.
func TestRolloutFolder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := f.rolloutDir(t, 2, []bool{true, false})
	// sample 2 of q3 stopped by its model, sample 3 interrupted before its end
	q3 := filepath.Join(dir, "q3-total-reply")
	data, err := os.ReadFile(filepath.Join(q3, "1.jsonl"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	end := `{"event":"end","score":0,"passed":false,"completion":0,"safety":0,"robustness":0,"checks":[],"state":"s","error":{"code":"model-error","message":"the endpoint failed","file":null,"line":null,"col":null}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(q3, "2.jsonl.partial"), []byte(lines[0]+lines[1]+end), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(q3, "3.jsonl.partial"), []byte(lines[0]), 0o644))
	// a trace that names its task with a path
	stock := filepath.Join(dir, "stock-delivery-record", "0.jsonl")
	data, err = os.ReadFile(stock)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(stock, []byte(strings.Replace(string(data), `"task":"stock-delivery-record"`, `"task":"../../escaped"`, 1)), 0o644))

	notFound := func(context.Context, string, *trace.Start) (*dsl.Task, string, error) {
		return nil, "", errors.New("nowhere to be found")
	}
	out := filepath.Join(f.dir, "r.html")
	_, err = Write(context.Background(), out, []string{dir}, Options{Locate: notFound})
	require.NoError(t, err)
	s := read(t, out)
	assert.Contains(t, s, "The task files of 3 tasks were not found")
	assert.Contains(t, s, `{"i":2,"p":false,"sc":null,"code":"model-error"}`)
	assert.Contains(t, s, `{"i":3,"p":false,"sc":null,"code":"interrupted"}`)
	assert.Contains(t, s, "<dt>Failed (no score)</dt><dd>1</dd>")
	assert.Contains(t, s, "<dt>Interrupted</dt><dd>1</dd>")
	view := read(t, filepath.Join(EpisodesDir(out), "q3-total-reply", "0.html"))
	assert.Contains(t, view, "the task file was not found, so the state changes are not shown: nowhere to be found")
	assert.FileExists(t, filepath.Join(EpisodesDir(out), "stock-delivery-record", "0.html"))
	assert.NoFileExists(t, filepath.Join(f.dir, "escaped"))
	assert.NoDirExists(t, filepath.Join(filepath.Dir(f.dir), "escaped"))
}

// A manifest whose last line was cut by a kill is read without it, and left as it is.
func TestManifestCutLine(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/generation/manifest.jsonl")
	require.NoError(t, err)
	cut := append(data, []byte(`{"attempt":8,"seed":19,"sta`)...)
	path := filepath.Join(t.TempDir(), "manifest.jsonl")
	require.NoError(t, os.WriteFile(path, cut, 0o644))
	recs, err := readManifest(path)
	require.NoError(t, err)
	assert.Len(t, recs, 8)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, cut, after, "the manifest was changed")

	require.NoError(t, os.WriteFile(path, []byte("{\"attempt\": \"x\"}\n"), 0o644))
	_, err = readManifest(path)
	assert.ErrorContains(t, err, path+": line 1 is not a manifest record")
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// The validation page's tiles add up: ok, warn and invalid are the tasks (Tasks), and a file that
// failed before declaring a task is counted apart, not among the invalid tasks too.
func TestValidationTilesAddUp(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v.html")
	_, err := Write(context.Background(), path, []string{"testdata/validate.json"}, Options{})
	require.NoError(t, err)
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	tiles := map[string]int{}
	for _, m := range regexp.MustCompile(`<dt>([^<]+)</dt><dd>(\d+)</dd>`).FindAllStringSubmatch(string(page), -1) {
		n, err := strconv.Atoi(m[2])
		require.NoError(t, err)
		tiles[m[1]] = n
	}
	// testdata/validate.json: 4 tasks (2 ok, 1 warn, 1 invalid) and 1 file without a task
	assert.Equal(t, map[string]int{"Tasks": 4, "ok": 2, "warn": 1, "invalid": 1, "Files without a task": 1, "Diagnostics": 4}, tiles)
	assert.Equal(t, tiles["Tasks"], tiles["ok"]+tiles["warn"]+tiles["invalid"])
}
