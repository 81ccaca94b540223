package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generate --queue writes what a local generate writes: with an embedded server, whose workers
// take the model's base URL from the environment (the producer needs no key), and with a
// `coworkenv worker` process of another server; run again, it resumes everything.
func TestGenerateQueueMatchesLocal(t *testing.T) {
	fence := func(name string) string { return "```python\n" + goldenTask(t, name) + "```" }
	srv := genFake(t, map[int64][]string{
		0: {"no code, sorry", fence("loan-return-date")},
		1: {fence("rabies-vaccine-stock")},
		2: {fence("loan-return-date")}, // a copy of attempt 0
	})
	dir := t.TempDir()
	args := func(out string, more ...string) []string {
		return append([]string{"generate", "--skeleton-dedup=false", "--capability", "mail.reply", "--count", "3", "--out", out,
			"--corpus", genCorpus, "--model", "m", "--jobs", "2", "--max-rounds", "2"}, more...)
	}
	local := filepath.Join(dir, "local")
	code, want, stderr := genMain(t, args(local, "--base-url", srv.URL+"/v1")...)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, want, "3 attempts: 2 accepted (1 first try), 1 rejected")

	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	embedded := filepath.Join(dir, "embedded")
	code, got, stderr := genMain(t, args(embedded, "--queue", "embedded")...)
	assert.Equal(t, 1, code, stderr)
	assert.Equal(t, want, replaceDir(got, embedded, local))
	sameDir(t, local, embedded)

	url, stop, err := queue.Embedded(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(stop)
	worker := startProcess(t, "worker", "--queue", url, "--kinds", "generate", "--jobs", "2")
	remote := filepath.Join(dir, "remote")
	code, _, stderr = genMain(t, args(remote, "--queue", url, "--base-url", srv.URL+"/v1")...)
	assert.Equal(t, 1, code, stderr)
	sameDir(t, local, remote)
	worker.interrupt(t)

	asked := len(srv.Requests())
	code, got, stderr = genMain(t, args(remote, "--queue", url, "--base-url", srv.URL+"/v1")...)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, got, "3 resumed from the manifest")
	assert.Equal(t, asked, len(srv.Requests()))

	code, _, stderr = genMain(t, args(remote, "--queue", url, "--replay", filepath.Join(dir, "none"))...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--record and --replay cannot be used with --queue")
}

// replaceDir is s with the folder from named as to, as the summary names its output.
func replaceDir(s, from, to string) string {
	return strings.ReplaceAll(s, from, to)
}
