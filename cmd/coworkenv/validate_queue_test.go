package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queuedFolder writes a small corpus: a taxonomy, a valid task, one that loads a helper, one
// with a capability the taxonomy lacks and a file that does not load.
func queuedFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	withHelper := "load(\"//lib/people.star\", \"DANA\")\n" + strings.ReplaceAll(strings.Replace(helloTask, "name = \"hello\"", "name = \"hello-helper\"", 1), `"dana@acme.example"`, "DANA")
	for name, src := range map[string]string{
		"capabilities.star": `capability(name = "mail.reply", description = "answer mail")` + "\n",
		"lib/people.star":   "DANA = \"dana@acme.example\"\n",
		"tasks/hello.star":  helloTask,
		"tasks/helper.star": withHelper,
		"tasks/bad.star":    strings.Replace(helloTask, "name = \"hello\"", "name = \"hello-bad\",\n    capabilities = [\"nope\"]", 1),
		"tasks/broken.star": "def _setup(ws)\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	return dir
}

// validate --queue prints what a local validate prints, with the same exit status: with an
// embedded server, and with `coworkenv worker` processes of another server.
func TestValidateQueueMatchesLocal(t *testing.T) {
	t.Parallel()
	dir := queuedFolder(t)
	type run struct {
		code     int
		out, err string
	}
	validate := func(args ...string) run {
		code, out, errs := cli(t, append([]string{"validate"}, args...)...)
		return run{code, out, errs}
	}
	localJSON, localText := validate("--json", dir), validate("--verbose", dir)
	require.Equal(t, 1, localJSON.code, localJSON.err)
	require.Contains(t, localJSON.out, `"status":"invalid"`)
	require.Contains(t, localText.out, "hello-helper")
	require.NotContains(t, localText.out, "hello-helper: error", "the helper loads")

	got := validate("--json", "--queue", "embedded", "--jobs", "2", dir)
	assert.Equal(t, localJSON.code, got.code, got.err)
	assert.Equal(t, localJSON.out, got.out)

	url, stop, err := queue.Embedded(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(stop)
	worker := startProcess(t, "worker", "--queue", url, "--kinds", "validate", "--jobs", "2")
	got = validate("--verbose", "--queue", url, dir)
	assert.Equal(t, localText.code, got.code, got.err)
	assert.Equal(t, localText.out, got.out)
	worker.interrupt(t)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--queue", "embedded", "--in-process", dir}, "drop --in-process"},
		{[]string{"--ack-wait", "1s", dir}, "--ack-wait needs --queue"},
		{[]string{"--queue", "nats://127.0.0.1:1", dir}, "cannot reach a NATS server at nats://127.0.0.1:1"},
	} {
		r := validate(tc.args...)
		assert.Equal(t, 2, r.code, tc.args)
		assert.Contains(t, r.err, tc.want)
	}
}

// worker runs the kinds it is given, and refuses one it does not know.
func TestWorkerKinds(t *testing.T) {
	t.Parallel()
	got, err := parseKinds("validate, generate,validate")
	require.NoError(t, err)
	assert.Equal(t, []string{"validate", "generate"}, got)
	code, _, errs := cli(t, "worker", "--queue", "nats://127.0.0.1:1", "--kinds", "rollout,export")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `--kinds: unknown kind "export" (kinds: rollout, validate, generate)`)
}
