package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneTrace runs the hello task once with the oracle and returns its trace.
func oneTrace(t *testing.T) string {
	t.Helper()
	p := writeTask(t, helloTask)
	tr := filepath.Join(t.TempDir(), "a.jsonl")
	code, _, errs := cli(t, "run", p+":hello", "--trace", tr, "--json")
	require.Equal(t, 0, code, errs)
	return tr
}

// usageError asserts exit 2 and one line on stderr that names the argument.
func usageError(t *testing.T, code int, stdout, errs, arg string, args ...any) {
	t.Helper()
	assert.Equal(t, 2, code, args...)
	assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	assert.Contains(t, errs, arg+": ", args...)
	assert.Empty(t, stdout, args...)
}

// `export rl a.jsonl --out a.jsonl` used to exit 0 and replace its input with its export. The
// output is refused when it is one of the traces: named alike, through a symbolic link, or
// found in a folder given as input; the trace stays as it was.
func TestExportRefusesToOverwriteItsInput(t *testing.T) {
	t.Parallel()
	tr := oneTrace(t)
	before, err := os.ReadFile(tr)
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link.jsonl")
	require.NoError(t, os.Symlink(tr, link))
	for _, args := range [][]string{
		{"export", "rl", tr, "--out", tr},
		{"export", "sft", tr, "--include-oracle", "--out", tr},
		{"export", "rl", tr, "--out", link},
		{"export", "rl", link, "--out", tr},
		{"export", "rl", filepath.Dir(tr), "--out", tr},
		{"export", "rl", tr, "--out", filepath.Join(filepath.Dir(tr), ".", "a.jsonl")},
	} {
		code, stdout, errs := cli(t, args...)
		usageError(t, code, stdout, errs, "--out", "%v", args)
		assert.Contains(t, errs, "is also an input", "%v", args)
	}
	after, err := os.ReadFile(tr)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the input is intact")
	entries, err := os.ReadDir(filepath.Dir(tr))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left")
}

// `export --out DIR` used to read every trace and then fail on the rename. It is refused before
// any trace is read (an unreadable one among them says nothing), as are an output in a missing
// folder and one under a file.
func TestExportOutFolderRefusedUpFront(t *testing.T) {
	t.Parallel()
	tr := oneTrace(t)
	broken := filepath.Join(t.TempDir(), "broken.jsonl")
	require.NoError(t, os.WriteFile(broken, []byte("not a trace\n"), 0o644))
	dir := t.TempDir()
	for _, out := range []string{dir, filepath.Join(dir, "no", "x.jsonl"), filepath.Join(tr, "x.jsonl")} {
		code, stdout, errs := cli(t, "export", "rl", tr, broken, "--out", out)
		usageError(t, code, stdout, errs, "--out", out)
		assert.NotContains(t, errs, "skipping", "no trace was read")
	}
	code, _, errs := cli(t, "export", "rl", tr, broken, "--out", dir)
	require.Equal(t, 2, code)
	assert.Contains(t, errs, "is a folder")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// `run --trace DIR` onto an existing folder used to run the whole episode, fail on the rename and
// leave DIR.partial. It is refused before the episode: nothing printed, no .partial; so are the
// task file itself as the trace and a trace in a missing folder.
func TestRunTraceRefusedBeforeRunning(t *testing.T) {
	t.Parallel()
	p := writeTask(t, helloTask)
	src, err := os.ReadFile(p)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "traces")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, tc := range []struct{ trace, want string }{
		{dir, "is a folder"},
		{p, "is also an input"},
		{filepath.Join(dir, "no", "t.jsonl"), "does not exist"},
	} {
		code, stdout, errs := cli(t, "run", p+":hello", "--trace", tc.trace)
		usageError(t, code, stdout, errs, "--trace", tc.trace)
		assert.Contains(t, errs, tc.want, tc.trace)
		assert.NoFileExists(t, tc.trace+".partial", "no episode ran")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
	after, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, string(src), string(after))
}

// A folder that cannot be written is refused up front (not as root, who can write anywhere).
func TestOutputInUnwritableFolder(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes in read-only folders")
	}
	p := writeTask(t, helloTask)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o555))
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	code, stdout, errs := cli(t, "run", p+":hello", "--trace", filepath.Join(dir, "t.jsonl"))
	usageError(t, code, stdout, errs, "--trace")
	assert.Contains(t, errs, "cannot write in")
	code, stdout, errs = cli(t, "rollout", p, "--out", filepath.Join(dir, "runs"))
	usageError(t, code, stdout, errs, "--out")
}

// rollout --out and generate --out/--record are checked the same way before anything runs.
func TestRolloutAndGenerateOutputsChecked(t *testing.T) {
	t.Parallel()
	p := writeTask(t, helloTask)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for _, tc := range []struct {
		args      []string
		arg, want string
	}{
		{[]string{"rollout", p, "--out", file}, "--out", "is a file, not a folder"},
		{[]string{"rollout", filepath.Dir(p), "--out", filepath.Dir(p)}, "--out", "is also an input"},
		{[]string{"rollout", p + ":hello", "--out", filepath.Join(file, "runs")}, "--out", "not a directory"},
		{[]string{"generate", "--capability", "mail.reply", "--out", file, "--model", "m"}, "--out", "is a file, not a folder"},
		{[]string{"generate", "--capability", "mail.reply", "--out", t.TempDir(), "--model", "m", "--record", t.TempDir()}, "--record", "is a folder"},
		{[]string{"generate", "--capability", "mail.reply", "--out", t.TempDir(), "--model", "m", "--reference", file, "--record", file}, "--record", "is also an input"},
	} {
		code, stdout, errs := cli(t, tc.args...)
		usageError(t, code, stdout, errs, tc.arg, "%v", tc.args)
		assert.Contains(t, errs, tc.want, "%v", tc.args)
	}
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "x", string(b))
}

// A model endpoint that is down (refusing connections, or answering 503) ends the episode with
// model-error, not the solution-error of an agent's own failure: in run's JSON and trace, in the
// rollout's summary, and export leaves such an episode out.
func TestModelDownIsModelError(t *testing.T) {
	modelEnv(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL + "/v1"
	closed.Close()
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"the model is overloaded","type":"server_error"}}`))
	}))
	t.Cleanup(unavailable.Close)
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	task := filepath.Join(dir, "copy.star")

	for _, url := range []string{closedURL, unavailable.URL + "/v1"} {
		tr := filepath.Join(t.TempDir(), "t.jsonl")
		code, stdout, errs := cli(t, "run", task, "--agent", "openai", "--model", "m", "--base-url", url,
			"--retries", "0", "--json", "--trace", tr)
		require.Equal(t, 1, code, "%s%s", stdout, errs)
		var end map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &end), stdout)
		require.NotNil(t, end["error"], stdout)
		assert.Equal(t, "model-error", end["error"].(map[string]any)["code"], url)
		assert.Contains(t, errs, "error[model-error]")
		traced, _ := traceEnd(t, tr)
		assert.Equal(t, "model-error", traced["error"].(map[string]any)["code"])

		out := filepath.Join(t.TempDir(), "rl.jsonl")
		code, stdout, errs = cli(t, "export", "rl", tr, "--out", out)
		require.Equal(t, 1, code, "an export that keeps no episode says so: %s%s", stdout, errs)
		assert.Contains(t, stdout, "wrote 0 episodes")
		assert.Contains(t, stdout, "1 inconclusive (model-error)")
		assert.Contains(t, errs, "no episode written to "+out+": every trace was left out (1 inconclusive (model-error))")
	}

	out := filepath.Join(t.TempDir(), "runs")
	code, stdout, errs := cli(t, "rollout", task, "--model", "m", "--base-url", unavailable.URL+"/v1",
		"--retries", "0", "--out", out, "--json")
	require.Equal(t, 1, code, "%s%s", stdout, errs)
	assert.Contains(t, errs, "copy-note sample 0 failed: error[model-error]: turn 0: openai agent: model m at")
	ep := rolloutJSON(t, stdout)["episodes"].(map[string]any)
	assert.Equal(t, map[string]any{"model-error": 1.0}, ep["failed_by_code"])
	assert.EqualValues(t, 0, ep["interrupted"])
	assert.FileExists(t, filepath.Join(out, "copy-note", "0.jsonl.partial"))
}
