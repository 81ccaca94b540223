package queue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func jobs(kind string, bodies ...string) []queue.Job {
	var out []queue.Job
	for _, b := range bodies {
		out = append(out, queue.Job{ID: queue.JobID(kind, []byte(b)), Kind: kind, Body: []byte(b)})
	}
	return out
}

// Produce publishes the jobs, a job given twice once, and hands each result over once; the last
// progress counts them all done.
func TestProduceTakesEachResultOnce(t *testing.T) {
	url := server(t)
	q := open(t, url, "produce")
	var c counter
	worker(t, url, "produce", nil, echo(&c))
	js := jobs("echo", "a", "b", "c", "a")
	got := map[string]string{}
	var last queue.Progress
	err := q.Produce(guarded(t), queue.Produce{Jobs: js,
		OnResult: func(r queue.Result) ([]queue.Job, error) {
			require.NotContains(t, got, r.JobID)
			got[r.JobID] = string(r.Body)
			return nil, nil
		},
		Progress: func(p queue.Progress) { last = p }})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{js[0].ID: "done a", js[1].ID: "done b", js[2].ID: "done c"}, got)
	assert.Equal(t, 1, c.get(js[0].ID))
	assert.Equal(t, queue.Progress{Total: 3, Done: 3}, last)
	assert.Equal(t, "3 done · 0 running · 0 queued", last.String())
	assert.Equal(t, "12 done · 1 failed · 3 running · 20 queued", queue.Progress{Done: 12, Failed: 1, Running: 3, Queued: 20}.String())
}

// The jobs OnResult returns are published and their results handed over in turn (a job whose
// result was taken is not published again); a result that came before its job was published
// (Later) is kept for it, and taken when the job is published.
func TestProducePublishesAsResultsCome(t *testing.T) {
	url := server(t)
	q := open(t, url, "chain")
	var c counter
	worker(t, url, "chain", nil, echo(&c))
	early := jobs("echo", "early")[0]
	require.NoError(t, q.Produce(guarded(t), queue.Produce{Jobs: []queue.Job{early}, OnResult: func(queue.Result) ([]queue.Job, error) { return nil, nil }}))

	chain := jobs("echo", "1", "2", "3")
	var order []string
	var last queue.Progress
	err := q.Produce(guarded(t), queue.Produce{Jobs: chain[:1], Total: 4,
		Later: func(id string) bool { return id == early.ID },
		OnResult: func(r queue.Result) ([]queue.Job, error) {
			order = append(order, string(r.Body))
			switch r.JobID {
			case chain[0].ID:
				return chain[1:2], nil
			case chain[1].ID:
				return []queue.Job{early, chain[2]}, nil
			case chain[2].ID:
				return chain[:1], nil
			}
			return nil, nil
		},
		Progress: func(p queue.Progress) { last = p }})
	require.NoError(t, err)
	assert.Equal(t, []string{"done 1", "done 2", "done early", "done 3"}, order)
	assert.Equal(t, 1, c.get(early.ID), "the early job was not run again")
	assert.Equal(t, queue.Progress{Total: 4, Done: 4}, last)
}

// A kept result that is a failure is not taken by a queue opened WithRetryFailed: the job runs
// again.
func TestProduceRetriesAKeptFailure(t *testing.T) {
	url := server(t)
	opts := []queue.Option{queue.WithMaxDeliver(1)}
	q := open(t, url, "retry", opts...)
	var runs atomic.Int32
	worker(t, url, "retry", opts, func(ctx context.Context, job queue.Job) ([]byte, error) {
		if runs.Add(1) == 1 {
			return nil, errors.New("not this time")
		}
		return []byte("ok"), nil
	})
	flaky, first := jobs("x", "flaky")[0], jobs("x", "first")[0]
	var res queue.Result
	require.NoError(t, q.Produce(guarded(t), queue.Produce{Jobs: []queue.Job{flaky}, OnResult: func(r queue.Result) ([]queue.Job, error) { res = r; return nil, nil }}))
	require.False(t, res.OK)

	retrying := open(t, url, "retry", queue.WithRetryFailed())
	var got []queue.Result
	err := retrying.Produce(guarded(t), queue.Produce{Jobs: []queue.Job{first},
		Later: func(id string) bool { return id == flaky.ID },
		OnResult: func(r queue.Result) ([]queue.Job, error) {
			got = append(got, r)
			if r.JobID == first.ID {
				return []queue.Job{flaky}, nil
			}
			return nil, nil
		}})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.True(t, got[1].OK, "the failure was run again: %+v", got[1])
	assert.Equal(t, 1, got[1].Attempt)
	assert.EqualValues(t, 3, runs.Load())
}

// OnResult's error stops Produce; so does ctx, with no worker to do the jobs.
func TestProduceStops(t *testing.T) {
	url := server(t)
	q := open(t, url, "stops")
	var c counter
	stop := worker(t, url, "stops", nil, echo(&c))
	boom := errors.New("boom")
	err := q.Produce(guarded(t), queue.Produce{Jobs: jobs("echo", "a", "b"), OnResult: func(queue.Result) ([]queue.Job, error) { return nil, boom }})
	require.ErrorIs(t, err, boom)
	stop()

	ctx, cancel := context.WithCancel(guarded(t))
	var last queue.Progress
	err = q.Produce(ctx, queue.Produce{Jobs: jobs("echo", "c", "d"),
		OnResult: func(queue.Result) ([]queue.Job, error) { return nil, nil },
		Progress: func(p queue.Progress) {
			last = p
			cancel() // once the jobs are published
		}})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, queue.Progress{Total: 2, Queued: 2}, last)
}
