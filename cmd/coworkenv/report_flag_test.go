package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hasText checks that a page holds s, naming s (not the whole page) when it does not.
func hasText(t *testing.T, page, s string) {
	t.Helper()
	assert.True(t, strings.Contains(page, s), "the page does not hold %q", s)
}

// replayedAgainst is what an episode view says when its state changes were replayed against the
// task file at where (the task file was found, and every state matched).
func replayedAgainst(where string) string {
	return "are replayed from the trace against <code>" + where + "</code>; every state matched"
}

// run --report writes the episode's page, passed or not, with the state changes replayed against
// the task file it ran (outside the current folder, and without --trace: the temporary trace is
// removed).
func TestRunReportFlag(t *testing.T) {
	task := writeTask(t, helloTask)
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	page := filepath.Join(dir, "passed.html")
	code, out, errs := cli(t, "run", task+":hello", "--in-process", "--report", page)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "report in "+page+"\n")
	html := read(t, page)
	hasText(t, html, `<body data-kind="episode">`)
	hasText(t, html, "<h1>Episode: hello</h1>")
	hasText(t, html, replayedAgainst(task))
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the temporary trace is left behind")

	// not passed, in a worker, with a trace: the page is written all the same, the status is 1
	page = filepath.Join(dir, "failed.html")
	tr := filepath.Join(dir, "t.jsonl")
	code, out, errs = cli(t, "run", task+":hello", "--agent", "noop", "--isolate", "--json", "--trace", tr, "--report", page)
	assert.Equal(t, 1, code, errs)
	assert.NotContains(t, out, "report in", "--json prints only the end event")
	assert.FileExists(t, tr)
	html = read(t, page)
	hasText(t, html, `<body data-kind="episode">`)
	hasText(t, html, replayedAgainst(task))
}

// rollout --report writes the rollout's page and its episode views, also when samples fail; the
// tasks run in workers are replayed against the files the rollout ran, wherever they are.
func TestRolloutReportFlag(t *testing.T) {
	t.Parallel()
	task := writeTask(t, helloTask)
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	code, out, errs := cli(t, "rollout", task, "--agent", "noop", "--samples", "2", "--isolate", "--jobs", "2",
		"--out", filepath.Join(dir, "runs"), "--report", page)
	assert.Equal(t, 1, code, errs) // every sample fails
	assert.Contains(t, out, "report in "+page+" (episode views in "+filepath.Join(dir, "r-episodes")+")\n")
	html := read(t, page)
	hasText(t, html, `<body data-kind="rollout">`)
	hasText(t, html, `"n":"hello-again"`)
	view := read(t, filepath.Join(dir, "r-episodes", "hello-again", "1.html"))
	hasText(t, view, `<body data-kind="episode">`)
	hasText(t, view, replayedAgainst(task))

	// --json names the report in the summary
	page = filepath.Join(dir, "again.html")
	code, out, errs = cli(t, "rollout", task+":hello", "--in-process", "--out", filepath.Join(dir, "runs2"), "--json", "--report", page)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"report":"`+page+`"`)
	hasText(t, read(t, page), `<body data-kind="rollout">`)
}

// validate --report writes the validation's page, also when a task is invalid.
func TestValidateReportFlag(t *testing.T) {
	t.Parallel()
	task := writeTask(t, strings.Replace(helloTask, `agent.call("mail_reply"`, `agent.call("mail_list"`, 1))
	page := filepath.Join(t.TempDir(), "v.html")
	code, out, errs := cli(t, "validate", task, "--report", page)
	assert.Equal(t, 1, code, errs) // the solutions call mail_list with arguments it does not take
	assert.Contains(t, out, "report in "+page+"\n")
	html := read(t, page)
	hasText(t, html, `<body data-kind="validation">`)
	hasText(t, html, "<div><dt>invalid</dt><dd>2</dd></div>")
}

// A --report that cannot be written is refused with status 2 before anything runs: nothing is
// validated, no episode runs, no trace or rollout folder is made.
func TestReportFlagRefused(t *testing.T) {
	t.Parallel()
	task := writeTask(t, helloTask)
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.jsonl")
	runs := filepath.Join(dir, "runs")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blocked-episodes"), nil, 0o644))
	nowhere := filepath.Join(dir, "missing", "r.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", task + ":hello", "--trace", tr, "--report", nowhere}, "--report: the folder " + filepath.Dir(nowhere) + " does not exist"},
		{[]string{"run", task + ":hello", "--trace", tr, "--report", filepath.Join(dir, ".", "t.jsonl")}, "is also the --trace file"},
		{[]string{"run", task + ":hello", "--report", task}, "--report: " + task + " is also an input"},
		{[]string{"rollout", task, "--out", runs, "--report", dir}, "--report: " + dir + " is a folder"},
		{[]string{"rollout", task, "--out", runs, "--report", filepath.Join(dir, "blocked.html")}, "--report: " + filepath.Join(dir, "blocked-episodes") + " is a file, not a folder"},
		{[]string{"validate", task, "--report", nowhere}, "--report: the folder"},
		{[]string{"validate", task, "--report", task}, "is also an input"},
	} {
		code, out, errs := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errs, c.want, "%v", c.args)
		assert.Empty(t, out, "%v", c.args)
		assert.NoFileExists(t, tr)
		assert.NoFileExists(t, tr+".partial")
		assert.NoDirExists(t, runs)
		assert.NoFileExists(t, nowhere)
	}
}

// rollout takes the queue's flags: a setting without --queue is refused; given, the settings go
// to the server; a failed job stays failed until --retry-failed; and the progress tells the
// jobs' counts.
func TestRolloutQueueFlags(t *testing.T) {
	t.Parallel()
	task := writeTask(t, helloTask)
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	code, _, errs := cli(t, "rollout", task, "--out", runs, "--max-deliver", "2")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--max-deliver needs --queue")
	assert.NoDirExists(t, runs)

	// a worker that fails every job at its first delivery, counting them
	url := embeddedServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	q, err := queue.Open(ctx, url, rollout.QueueName, queue.WithMaxDeliver(1))
	require.NoError(t, err)
	var mu sync.Mutex
	deliveries := 0
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = q.Work(ctx, func(context.Context, queue.Job) ([]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			deliveries++
			return nil, errors.New("no worker today")
		})
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		q.Close()
	})
	delivered := func() int {
		mu.Lock()
		defer mu.Unlock()
		return deliveries
	}

	args := []string{"rollout", task + ":hello", "--samples", "20", "--out", runs, "--queue", url}
	code, _, errs = cli(t, append(args, "--ack-wait", "9s", "--max-deliver", "2")...)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "hello sample 0 failed: no worker today")
	assert.Contains(t, errs, "rollout: 20/20 (100%) · 0 passed · 20 failed · 0 running · 0 queued")
	// no line shows a sample both finished and still running or queued
	line := regexp.MustCompile(`rollout: (\d+)/(\d+) .* · (\d+) running · (\d+) queued`)
	for _, m := range line.FindAllStringSubmatch(errs, -1) {
		done, total, running, queued := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3]), atoi(t, m[4])
		assert.LessOrEqual(t, done+running+queued, total, "progress line %q", m[0])
	}
	assert.Equal(t, 20, delivered())
	code, out, errs := cli(t, "queue", "status", "--queue", url, "--name", rollout.QueueName, "--json")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"ack_wait":"9s","max_deliver":2`)

	// the failures are remembered, and run again with --retry-failed
	code, _, errs = cli(t, args...)
	assert.Equal(t, 1, code, errs)
	assert.Equal(t, 20, delivered())
	code, _, errs = cli(t, append(args, "--retry-failed")...)
	assert.Equal(t, 1, code, errs)
	assert.Equal(t, 40, delivered())
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
