package generator_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/queuetest"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startGenQueue starts a server with the generate queue and workers running Handler.
func startGenQueue(t *testing.T, workers int, opts ...queuetest.Options) *queuetest.Workers {
	return queuetest.Start(t, generator.QueueName, workers, generator.Handler(testPool(t), func(string) string { return "" }, nil), opts...)
}

// guarded bounds a wait that would hang if a result never came: it turns a hang into a failure.
func guarded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A queued run over three workers, killed after its first accepted task and started again,
// writes the same manifest and files as a local run, and the workers ask the model what the
// local run asked, once. Run again, it resumes every attempt and publishes nothing; into a new
// folder with no worker left, it writes the same from the results on the queue.
func TestQueuedGenerateMatchesLocal(t *testing.T) {
	t.Parallel()
	f, count := newFake(t, queuedScript()), len(replies)+1

	local := t.TempDir()
	_, err := generator.Run(context.Background(), options(t, f, local, count))
	require.NoError(t, err)
	asked := len(f.srv.Requests())
	recs := readManifest(t, local)
	require.Equal(t, "rejected", recs[count-1].Status)
	require.Equal(t, replies[0].name, recs[count-1].Twin)

	gq := startGenQueue(t, 3)
	queued := t.TempDir()
	ctx, cancel := context.WithCancel(guarded(t))
	opts := options(t, f, queued, count)
	opts.OnRecord = func(r generator.Record) {
		if r.Status == "accepted" {
			cancel()
		}
	}
	_, err = generator.RunQueued(ctx, opts, gq.Q, nil)
	require.ErrorIs(t, err, context.Canceled)
	// results already read when the cancel lands are still committed: at least the first
	// accepted attempt, never all of them
	stopped := len(readManifest(t, queued))
	require.True(t, stopped >= 1 && stopped < count, "%d of %d attempts committed before the stop", stopped, count)

	var progress []queue.Progress
	sum, err := generator.RunQueued(guarded(t), options(t, f, queued, count), gq.Q, func(p queue.Progress) { progress = append(progress, p) })
	require.NoError(t, err)
	assert.Equal(t, stopped, sum.Resumed)
	assert.Equal(t, len(replies), sum.Accepted)
	requireSameDir(t, local, queued)
	assert.Equal(t, bodies(f, 0, asked), bodies(f, asked, len(f.srv.Requests())), "the workers asked the model what the local run asked, once")
	require.NotEmpty(t, progress)
	assert.Equal(t, queue.Progress{Total: count - stopped, Done: count - stopped}, progress[len(progress)-1])

	// run again: every attempt is in the manifest
	ran := gq.Runs()
	sum, err = generator.RunQueued(guarded(t), options(t, f, queued, count), gq.Q, nil)
	require.NoError(t, err)
	assert.Equal(t, count, sum.Resumed)
	assert.Equal(t, ran, gq.Runs(), "nothing was run again")

	// a new folder and no worker: the jobs are duplicates, their results are on the queue
	gq.Stop()
	fresh := t.TempDir()
	_, err = generator.RunQueued(guarded(t), options(t, f, fresh, count), gq.Q, nil)
	require.NoError(t, err)
	requireSameDir(t, local, fresh)
	assert.Equal(t, ran, gq.Runs())
	assert.Equal(t, 2*asked, len(f.srv.Requests()))
}

// queuedScript answers attempts 0 to len(replies)-1 with the replies (the odd ones after a
// repair) and the next attempt with a near-duplicate of attempt 0, which the worker's check
// rejects.
func queuedScript() map[int64][]string {
	script := map[int64][]string{}
	for i, r := range replies {
		answers := []string{fenced(r.source())}
		if i%2 == 1 {
			answers = []string{fenced(syntaxError(r.source())), fenced(r.source())}
		}
		script[int64(100+i)] = answers
	}
	script[int64(100+len(replies))] = []string{fenced(renamed(replies[0].source(), replies[0].name, "flour-order-again"))}
	return script
}

// Results on the queue of jobs the run has not published yet are kept for them: here the
// results of attempts 3 to 5 of a run resumed from a local one come before those of attempts 0
// to 2, which a run into a new folder asks for first.
func TestQueuedGenerateEarlyResults(t *testing.T) {
	t.Parallel()
	f, count := newFake(t, queuedScript()), len(replies)+1
	gq := startGenQueue(t, 2)
	resumed := t.TempDir()
	_, err := generator.Run(context.Background(), options(t, f, resumed, 3))
	require.NoError(t, err)
	sum, err := generator.RunQueued(guarded(t), options(t, f, resumed, count), gq.Q, nil)
	require.NoError(t, err)
	require.Equal(t, 3, sum.Resumed)
	require.Equal(t, int64(3), gq.Runs())

	fresh := t.TempDir()
	_, err = generator.RunQueued(guarded(t), options(t, f, fresh, count), gq.Q, nil)
	require.NoError(t, err)
	requireSameDir(t, resumed, fresh)
	assert.Equal(t, int64(6), gq.Runs(), "attempts 3 to 5 were not run again")
}

// bodies are the bodies of the requests from..to the fake model got, sorted.
func bodies(f *fakeModel, from, to int) []string {
	var out []string
	for _, r := range f.srv.Requests()[from:to] {
		out = append(out, string(r.Body))
	}
	sort.Strings(out)
	return out
}

// A job that fails (here: the model has no answer for the attempt) stops the run after the
// attempts before it, as a failed attempt stops a local run.
func TestQueuedGenerateFailedJob(t *testing.T) {
	t.Parallel()
	f := newFake(t, map[int64][]string{100: {fenced(replies[0].source())}})
	gq := startGenQueue(t, 1)
	out := t.TempDir()
	opts := options(t, f, out, 3)
	opts.Jobs = 1
	_, err := generator.RunQueued(guarded(t), opts, gq.Q, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "attempt 1: ")
	assert.Contains(t, err.Error(), "no answer scripted for seed 101 round 1")
	require.Len(t, readManifest(t, out), 1, "the attempt done before the failure is kept")
	assert.Equal(t, int64(1+queue.DefaultMaxDeliver), gq.Runs(), "attempt 1 was delivered until max deliver, attempt 2 never published")
	_, err = os.Stat(filepath.Join(out, replies[0].name+".star"))
	require.NoError(t, err)

	opts.Record = filepath.Join(t.TempDir(), "c.json")
	_, err = generator.RunQueued(guarded(t), opts, gq.Q, nil)
	require.ErrorIs(t, err, generator.ErrUsage)
}

// On a server that takes messages of 64 KiB at most, a queued run whose shared part is larger
// (the language reference in the system prompt: it goes to the blob store once) and whose
// attempts see every task accepted before them (Jobs 1) writes what a local run writes.
func TestQueuedGenerateUnderASmallMaxPayload(t *testing.T) {
	t.Parallel()
	f, count := newFake(t, queuedScript()), len(replies)+1
	opts := func(out string) generator.Options {
		o := options(t, f, out, count)
		o.Jobs, o.Reference = 1, strings.Repeat("(the language reference) ", 4000) // 100,000 bytes
		return o
	}
	local := t.TempDir()
	_, err := generator.Run(context.Background(), opts(local))
	require.NoError(t, err)
	recs := readManifest(t, local)
	require.Equal(t, "accepted", recs[count-2].Status)
	require.Equal(t, replies[0].name, recs[count-1].Twin, "the last attempt saw the first one's task")

	gq := startGenQueue(t, 2, queuetest.Options{MaxPayload: 64 << 10})
	queued := t.TempDir()
	_, err = generator.RunQueued(guarded(t), opts(queued), gq.Q, nil)
	require.NoError(t, err)
	requireSameDir(t, local, queued)
}
