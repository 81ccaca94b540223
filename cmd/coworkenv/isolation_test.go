package main

import (
	"embed"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileFiles are the task files that take a process down when it runs them unguarded.
//
//go:embed testdata/hostile/*.star
var hostileFiles embed.FS

// hostile is the file of that name.
func hostile(t *testing.T, name string) string {
	data, err := hostileFiles.ReadFile("testdata/hostile/" + name)
	require.NoError(t, err)
	return string(data)
}

// hugeOrders is what a model asks orders_first for: 2**40 orders.
const hugeOrders = `{"n": 1099511627776}`

// ordersPolicy is a model that asks the orders tool for 2**40 orders, then answers.
func ordersPolicy(msgs []map[string]any) string {
	for _, m := range msgs {
		if m["role"] == "assistant" {
			return chatSay("The first order is o-1.")
		}
	}
	return chatCalls("", chatCall("c1", "orders_first", hugeOrders))
}

// isolatedArgs are the limits of the tests of a memory bomb: a small memory limit, and a time
// limit it cannot reach first.
var isolatedArgs = []string{"--memory-limit", "256", "--time-limit", "10m"}

// readTrace reads a whole trace file.
func readTraceFile(t *testing.T, path string) []trace.Event {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	events, err := trace.Read(f)
	require.NoError(t, err, "%s is a whole trace", path)
	return events
}

func kindsOf(events []trace.Event) []string {
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	return kinds
}

// A task that validates ok has a tool that a model can make build a list of 2**40 numbers. run
// (which isolates a file from disk by default) ends that episode with memory-limit: exit 1, and
// a trace with the model's call and an end event that says so.
func TestRunIsolatedMemoryLimit(t *testing.T) {
	if genRaceBuild {
		t.Skip("memory limits under the race detector")
	}
	modelEnv(t)
	dir := writeFiles(t, map[string]string{"orders.star": hostile(t, "orders.star")})
	file := filepath.Join(dir, "orders.star")
	code, out, errs := cli(t, "validate", file)
	require.Equal(t, 0, code, "the task validates ok:\n%s%s", out, errs)

	f := newChatFake(t, ordersPolicy)
	tr := filepath.Join(dir, "orders.jsonl")
	args := append([]string{"run", file, "--model", "m", "--base-url", f.url(), "--retries", "0", "--trace", tr}, isolatedArgs...)
	code, out, errs = cli(t, args...)
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, out, "→ orders_first {\"n\":1099511627776}")
	assert.Contains(t, out, "· memory-limit")
	assert.Contains(t, errs, "error[memory-limit]: the episode needed more memory than the isolated worker has (its memory limit of 256 MiB)")
	events := readTraceFile(t, tr)
	assert.Equal(t, []string{"start", "user", "assistant", "call", "end"}, kindsOf(events))
	end := events[len(events)-1].Body.(*trace.End)
	require.NotNil(t, end.Error)
	assert.Equal(t, "memory-limit", end.Error.Code)
	assert.False(t, end.Passed)

	// --json prints that end event
	code, out, errs = cli(t, append([]string{"run", file, "--model", "m", "--base-url", f.url(), "--json"}, isolatedArgs...)...)
	assert.Equal(t, 1, code, errs)
	var obj map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &obj))
	assert.Equal(t, "memory-limit", obj["error"].(map[string]any)["code"])
}

// A rollout over that task and a good one: the good task's samples finish and are scored, the
// bad ones are failed with memory-limit (their .partial ends with it), and a second run resumes:
// it runs only the failed samples again.
func TestRolloutIsolatedGoesOn(t *testing.T) {
	if genRaceBuild {
		t.Skip("memory limits under the race detector")
	}
	modelEnv(t)
	f := newChatFake(t, func(msgs []map[string]any) string {
		if strings.Contains(msgs[1]["content"].(string), "first order") {
			return ordersPolicy(msgs)
		}
		return copyNotePolicy(msgs)
	})
	corpus := writeFiles(t, map[string]string{"orders.star": hostile(t, "orders.star"), "copy.star": copyNoteTask})
	out := filepath.Join(t.TempDir(), "o")
	args := append([]string{"rollout", corpus, "--model", "m", "--base-url", f.url(), "--retries", "0",
		"--samples", "2", "--jobs", "2", "--out", out, "--json"}, isolatedArgs...)
	code, stdout, errs := cli(t, args...)
	require.Equal(t, 1, code, "%s%s", stdout, errs)
	assert.Contains(t, errs, "orders-first sample 0 failed")
	assert.Contains(t, errs, "error[memory-limit]")
	sum := rolloutJSON(t, stdout)
	ep := sum["episodes"].(map[string]any)
	assert.EqualValues(t, 2, ep["run"])
	assert.EqualValues(t, 2, ep["failed"])
	assert.Equal(t, map[string]any{"memory-limit": 2.0}, ep["failed_by_code"])
	files := dirContents(t, out)
	for _, name := range []string{"copy-note/0.jsonl", "copy-note/1.jsonl", "orders-first/0.jsonl.partial", "orders-first/1.jsonl.partial"} {
		assert.Contains(t, files, name)
	}
	assert.NotContains(t, files, "orders-first/0.jsonl")
	events := readTraceFile(t, filepath.Join(out, "orders-first", "0.jsonl.partial"))
	assert.Equal(t, "memory-limit", events[len(events)-1].Body.(*trace.End).Error.Code)
	good := readTraceFile(t, filepath.Join(out, "copy-note", "1.jsonl"))
	assert.True(t, good[len(good)-1].Body.(*trace.End).Passed, "the good samples are whole and scored")

	before := len(f.requests())
	code, stdout, errs = cli(t, args...)
	require.Equal(t, 1, code, "%s%s", stdout, errs)
	ep = rolloutJSON(t, stdout)["episodes"].(map[string]any)
	assert.EqualValues(t, 2, ep["resumed"], "the good samples are read back")
	assert.EqualValues(t, 2, ep["failed"], "the bad ones run again, and fail again")
	assert.Len(t, f.requests(), before+2, "only the failed samples ask the model again")
}

// replay of a folder of traces: one of a task whose tool now never returns ends with timeout,
// and the replay goes on with the next trace, which matches.
func TestReplayIsolatedTimeoutGoesOn(t *testing.T) {
	hang := hostile(t, "hang.star")
	safe := strings.Replace(hang, "    return 1 if x == x else 0\n", "    return n\n", 1)
	require.NotEqual(t, hang, safe)
	dir := writeFiles(t, map[string]string{"count.star": safe, "copy.star": copyNoteTask})
	traces := filepath.Join(dir, "traces")
	require.NoError(t, os.Mkdir(traces, 0o755))
	for file, tr := range map[string]string{"count.star": "a.jsonl", "copy.star": "b.jsonl"} {
		code, out, errs := cli(t, "run", filepath.Join(dir, file), "--trace", filepath.Join(traces, tr))
		require.Equal(t, 0, code, "%s%s", out, errs)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "count.star"), []byte(hang), 0o644))

	// the hang never ends, so it is stopped at the time limit however slow the machine is
	code, out, errs := cli(t, "replay", traces, "--corpus", dir, "--time-limit", "3s")
	assert.Equal(t, 1, code, "%s%s", out, errs)
	assert.Contains(t, out, "a.jsonl: timeout: the replay ran longer than the isolated worker's limit of 3s")
	assert.Contains(t, out, "b.jsonl: matched (copy-note)")
	assert.Contains(t, out, "2 traces: 1 matched, 0 diverged, 1 stopped")
}

// The choice of where files run, on every command: --in-process and --isolate exclude each
// other, and the limits must be positive.
func TestIsolationFlags(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	file := filepath.Join(dir, "copy.star")
	for _, args := range [][]string{
		{"validate", file, "--in-process", "--isolate"},
		{"run", file, "--in-process", "--isolate"},
		{"rollout", file, "--out", filepath.Join(dir, "o"), "--in-process", "--isolate"},
		{"replay", file, "--in-process", "--isolate"},
		{"export", "rl", file, "--out", filepath.Join(dir, "x.jsonl"), "--in-process", "--isolate"},
		{"export", "rl", file, "--out", filepath.Join(dir, "x.jsonl"), "--time-limit", "0s"},
		{"run", file, "--memory-limit", "0"},
		{"run", file, "--time-limit", "0s"},
	} {
		code, _, errs := cli(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: %q", args, errs)
	}
	// the same episode here and in a worker writes the same trace
	here, there := filepath.Join(dir, "here.jsonl"), filepath.Join(dir, "there.jsonl")
	code, out, errs := cli(t, "run", file, "--in-process", "--trace", here)
	require.Equal(t, 0, code, "%s%s", out, errs)
	code, out2, errs := cli(t, "run", file, "--trace", there)
	require.Equal(t, 0, code, "%s%s", out2, errs)
	a, err := os.ReadFile(here)
	require.NoError(t, err)
	b, err := os.ReadFile(there)
	require.NoError(t, err)
	assert.Equal(t, string(a), string(b))
	assert.Equal(t, out, out2, "and the same transcript")
}
