package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// embeddedServer starts a NATS server in the test, stopped when it ends.
func embeddedServer(t *testing.T) string {
	t.Helper()
	url, stop, err := queue.Embedded(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(stop)
	return url
}

// `queue status` prints the counts and settings of every queue, or of one, as text or JSON.
func TestQueueStatus(t *testing.T) {
	t.Parallel()
	url := embeddedServer(t)
	ctx := t.Context()
	for _, name := range []string{"rollout", "other"} {
		q, err := queue.Open(ctx, url, name, queue.WithMaxDeliver(1))
		require.NoError(t, err)
		t.Cleanup(q.Close)
	}
	q, err := queue.Open(ctx, url, "rollout")
	require.NoError(t, err)
	for _, kind := range []string{"broken", "ok", "left"} {
		_, err := q.Publish(ctx, queue.Job{Kind: kind})
		require.NoError(t, err)
	}
	// One worker settles two jobs, then stops (after the handler of the second, which succeeds).
	wctx, stop := context.WithCancel(ctx)
	settled := 0
	require.NoError(t, q.Work(wctx, func(ctx context.Context, job queue.Job) ([]byte, error) {
		if settled++; settled == 2 {
			stop() // the result of this one is still recorded
		}
		if job.Kind == "broken" {
			return nil, errors.New("broken")
		}
		return nil, nil
	}))

	code, out, errs := cli(t, "queue", "status", "--queue", url)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, ""+
		"queue    queued  in flight  done  failed  ack wait  max deliver\n"+
		"other         0          0     0       0       30s            1\n"+
		"rollout       1          0     1       1       30s            1\n", out)

	code, out, errs = cli(t, "queue", "status", "--queue", url, "--name", "rollout", "--json")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, `{"queues":[{"name":"rollout","queued":1,"in_flight":0,"done":1,"failed":1,"ack_wait":"30s","max_deliver":1,"duplicates":"24h0m0s"}]}`+"\n", out)

	code, _, errs = cli(t, "queue", "status", "--queue", url, "--name", "nothing")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "no queue named nothing")
}

func TestQueueStatusUsage(t *testing.T) {
	t.Parallel()
	url := embeddedServer(t)
	code, out, _ := cli(t, "queue", "status", "--queue", url)
	assert.Equal(t, 0, code)
	assert.Equal(t, "no queue on "+url+"\n", out)
	code, out, _ = cli(t, "queue", "status", "--queue", url, "--json")
	assert.Equal(t, 0, code)
	assert.Equal(t, `{"queues":[]}`+"\n", out)

	// A server that cannot be reached: one line that names it.
	code, _, errs := cli(t, "queue", "status", "--queue", "nats://127.0.0.1:1")
	assert.Equal(t, 2, code)
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
	assert.Contains(t, errs, "coworkenv queue status: cannot reach a NATS server at nats://127.0.0.1:1")

	for _, args := range [][]string{{"queue"}, {"queue", "stats"}, {"queue", "status"}, {"queue", "status", "--queue", "embedded"}, {"queue", "status", "--queue", url, "extra"}} {
		code, _, errs := cli(t, args...)
		assert.Equal(t, 2, code, args)
		assert.NotEmpty(t, errs, args)
	}
	code, out, _ = cli(t, "queue", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "queue status --queue URL")
	code, out, _ = cli(t, "queue", "status", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "-name")
	assert.Contains(t, out, "in flight")
}

// The settings flags of producers and workers give the options of the flags given only.
func TestQueueFlags(t *testing.T) {
	t.Parallel()
	url := embeddedServer(t)
	parseQueueFlags := func(producer bool, queueURL string, args ...string) ([]queue.Option, error) {
		fs := newFlags("test")
		f := addQueueFlags(fs, producer)
		require.NoError(t, fs.Parse(args))
		return f.options(queueURL)
	}
	opts, err := parseQueueFlags(true, url)
	require.NoError(t, err)
	assert.Empty(t, opts)

	opts, err = parseQueueFlags(true, url, "--ack-wait", "2s", "--retry-failed")
	require.NoError(t, err)
	assert.Len(t, opts, 2)
	q, err := queue.Open(t.Context(), url, "flags", opts...)
	require.NoError(t, err)
	defer q.Close()
	assert.Equal(t, queue.Settings{AckWait: 2 * time.Second, MaxDeliver: queue.DefaultMaxDeliver, Duplicates: queue.DefaultDuplicates}, q.Settings())

	opts, err = parseQueueFlags(false, url, "--max-deliver", "5")
	require.NoError(t, err)
	q, err = queue.Open(t.Context(), url, "flags", opts...)
	require.NoError(t, err)
	defer q.Close()
	assert.Equal(t, queue.Settings{AckWait: 2 * time.Second, MaxDeliver: 5, Duplicates: queue.DefaultDuplicates}, q.Settings())

	_, err = parseQueueFlags(false, url, "--max-deliver", "0")
	assert.ErrorContains(t, err, "--max-deliver: 0 is not a positive number")
	_, err = parseQueueFlags(true, url, "--ack-wait", "-1s")
	assert.ErrorContains(t, err, "--ack-wait")
	_, err = parseQueueFlags(true, "", "--retry-failed")
	assert.ErrorContains(t, err, "--retry-failed needs --queue")
	fs := newFlags("worker")
	addQueueFlags(fs, false)
	assert.Error(t, fs.Parse([]string{"--retry-failed"}), "a worker has no --retry-failed")
}
