package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/stretchr/testify/require"
)

// guard bounds every wait of these tests; it only turns a hang into a failure.
const guard = 2 * time.Minute

// server starts an embedded server that stops when the test ends.
func server(t *testing.T) string {
	t.Helper()
	url, stop, err := queue.Embedded(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(stop)
	return url
}

// guarded is a context that fails the wait it guards instead of letting the test hang.
func guarded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), guard)
	t.Cleanup(cancel)
	return ctx
}

func open(t *testing.T, url, name string, opts ...queue.Option) *queue.Queue {
	t.Helper()
	q, err := queue.Open(guarded(t), url, name, opts...)
	require.NoError(t, err)
	t.Cleanup(q.Close)
	return q
}

// worker runs Work on its own connection, as a worker process would. The returned function stops
// it (without acking the job it runs, see Work) and waits for it to return; the test's end does
// the same.
func worker(t *testing.T, url, name string, opts []queue.Option, h queue.Handler) (stop func()) {
	t.Helper()
	q, err := queue.Open(guarded(t), url, name, opts...)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- q.Work(ctx, h) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-errc:
				require.NoError(t, err)
			case <-time.After(guard):
				t.Error("the worker did not stop")
			}
			q.Close()
		})
	}
	t.Cleanup(stop)
	return stop
}

// collect reads the first n results, by job ID.
func collect(t *testing.T, q *queue.Queue, n int) map[string]queue.Result {
	t.Helper()
	got := map[string]queue.Result{}
	if n == 0 {
		return got
	}
	for r, err := range q.Results(guarded(t)) {
		require.NoError(t, err)
		require.NotContains(t, got, r.JobID, "a job's result came twice")
		got[r.JobID] = r
		if len(got) == n {
			break
		}
	}
	require.Len(t, got, n)
	return got
}

// counter counts the runs of each job's handler.
type counter struct {
	mu   sync.Mutex
	runs map[string]int
}

func (c *counter) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[id]++
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[id]
}

func echo(c *counter) queue.Handler {
	return func(ctx context.Context, job queue.Job) ([]byte, error) {
		c.add(job.ID)
		return []byte("done " + string(job.Body)), nil
	}
}

func status(t *testing.T, q *queue.Queue) queue.Status {
	t.Helper()
	s, err := q.Status(guarded(t))
	require.NoError(t, err)
	return s
}

func TestJobsAreDoneOnceOverWorkers(t *testing.T) {
	url := server(t)
	q := open(t, url, "spread")
	ids := map[string]string{} // job ID → body
	for i := range 20 {
		job, err := q.Publish(guarded(t), queue.Job{Kind: "echo", Body: fmt.Appendf(nil, "job %d", i)})
		require.NoError(t, err)
		ids[job.ID] = string(job.Body)
	}
	require.Len(t, ids, 20)

	var c counter
	var stops []func()
	for range 3 {
		stops = append(stops, worker(t, url, "spread", nil, echo(&c)))
	}
	got := collect(t, q, 20)
	for _, stop := range stops {
		stop()
	}
	for id, body := range ids {
		r := got[id]
		require.True(t, r.OK, id)
		require.Equal(t, "done "+body, string(r.Body))
		require.Equal(t, 1, r.Deliveries)
		require.Equal(t, 1, c.get(id), "runs of %s", id)
	}
	require.Equal(t, queue.Status{Done: 20}, status(t, q))
}

func TestPublishingTwiceGivesOneJob(t *testing.T) {
	url := server(t)
	q := open(t, url, "twice")
	a, err := q.Publish(guarded(t), queue.Job{Kind: "echo", Body: []byte("same")})
	require.NoError(t, err)
	b, err := q.Publish(guarded(t), queue.Job{Kind: "echo", Body: []byte("same")})
	require.NoError(t, err)
	require.Equal(t, a.ID, b.ID)
	require.Equal(t, queue.JobID("echo", []byte("same")), a.ID)
	// An explicit ID is the job's identity, whatever the body.
	_, err = q.Publish(guarded(t), queue.Job{ID: a.ID, Kind: "echo", Body: []byte("other")})
	require.NoError(t, err)
	require.Equal(t, queue.Status{Queued: 1}, status(t, q))

	var c counter
	stop := worker(t, url, "twice", nil, echo(&c))
	got := collect(t, q, 1)
	stop()
	require.Equal(t, "done same", string(got[a.ID].Body))
	require.Equal(t, 1, c.get(a.ID))
	require.Equal(t, queue.Status{Done: 1}, status(t, q))

	// Publishing it again after it is done is harmless too.
	_, err = q.Publish(guarded(t), queue.Job{Kind: "echo", Body: []byte("same")})
	require.NoError(t, err)
	require.Equal(t, queue.Status{Done: 1}, status(t, q))
}

func TestAKilledWorkersJobGoesToAnother(t *testing.T) {
	url := server(t)
	// A short ack wait makes the server give the job back soon after the worker stops telling
	// it that it is working on it.
	opts := []queue.Option{queue.WithAckWait(200 * time.Millisecond)}
	q := open(t, url, "killed", opts...)

	started := make(chan string, 1)
	stopFirst := worker(t, url, "killed", opts, func(ctx context.Context, job queue.Job) ([]byte, error) {
		started <- job.ID
		<-ctx.Done()
		return nil, ctx.Err()
	})
	job, err := q.Publish(guarded(t), queue.Job{Kind: "slow", Body: []byte("x")})
	require.NoError(t, err)
	select {
	case id := <-started:
		require.Equal(t, job.ID, id)
	case <-guarded(t).Done():
		t.Fatal("the first worker never got the job")
	}
	stopFirst() // killed mid-job: no ack, no result

	var c counter
	stop := worker(t, url, "killed", opts, echo(&c))
	got := collect(t, q, 1)
	stop()
	r := got[job.ID]
	require.True(t, r.OK)
	require.Equal(t, "done x", string(r.Body))
	require.Equal(t, 2, r.Deliveries)
	require.Equal(t, 1, c.get(job.ID))
	require.Equal(t, queue.Status{Done: 1}, status(t, q))
}

func TestAPoisonJobEndsAsFailed(t *testing.T) {
	url := server(t)
	q := open(t, url, "poison")
	poison, err := q.Publish(guarded(t), queue.Job{Kind: "poison", Body: []byte("p")})
	require.NoError(t, err)
	for i := range 5 {
		_, err := q.Publish(guarded(t), queue.Job{Kind: "echo", Body: fmt.Appendf(nil, "%d", i)})
		require.NoError(t, err)
	}
	var c counter
	h := func(ctx context.Context, job queue.Job) ([]byte, error) {
		c.add(job.ID)
		if job.Kind == "poison" {
			return nil, errors.New("always broken")
		}
		return job.Body, nil
	}
	stops := []func(){worker(t, url, "poison", nil, h), worker(t, url, "poison", nil, h)}
	got := collect(t, q, 6)
	for _, stop := range stops {
		stop()
	}
	for id, r := range got {
		if id == poison.ID {
			require.False(t, r.OK)
			require.Equal(t, "always broken", r.Error)
			require.Equal(t, queue.DefaultMaxDeliver, r.Deliveries)
			require.Equal(t, queue.DefaultMaxDeliver, c.get(id))
			continue
		}
		require.True(t, r.OK, id)
		require.Equal(t, 1, c.get(id))
	}
	s := status(t, q)
	require.Equal(t, 5, s.Done)
	require.Equal(t, 1, s.Failed)
	require.Equal(t, 0, s.Queued)
}

func TestAProducerThatComesBackSeesResults(t *testing.T) {
	url := server(t)
	producer := open(t, url, "resume")
	want := map[string]string{}
	for i := range 5 {
		job, err := producer.Publish(guarded(t), queue.Job{Kind: "echo", Body: fmt.Appendf(nil, "%d", i)})
		require.NoError(t, err)
		want[job.ID] = "done " + string(job.Body)
	}
	producer.Close() // the producer goes away

	ran := make(chan struct{}, 5)
	var c counter
	stop := worker(t, url, "resume", nil, func(ctx context.Context, job queue.Job) ([]byte, error) {
		b, err := echo(&c)(ctx, job)
		ran <- struct{}{}
		return b, err
	})
	for range 5 {
		select {
		case <-ran:
		case <-guarded(t).Done():
			t.Fatal("the worker did not run every job")
		}
	}
	stop() // a handler that finished has its result recorded before Work returns

	// The producer comes back and reads every result, then a new one as it comes.
	back := open(t, url, "resume")
	last, err := back.Publish(guarded(t), queue.Job{Kind: "echo", Body: []byte("late")})
	require.NoError(t, err)
	want[last.ID] = "done late"
	got := map[string]string{}
	for r, err := range back.Results(guarded(t)) {
		require.NoError(t, err)
		got[r.JobID] = string(r.Body)
		if len(got) == 5 {
			worker(t, url, "resume", nil, echo(&c)) // done only after the five are read
		}
		if len(got) == 6 {
			break
		}
	}
	require.Equal(t, want, got)
}

func TestStatusCounts(t *testing.T) {
	url := server(t)
	// One delivery only, so the poison job fails on its first run and the order is fixed.
	opts := []queue.Option{queue.WithMaxDeliver(1)}
	q := open(t, url, "status", opts...)
	for _, kind := range []string{"poison", "fast", "slow"} {
		_, err := q.Publish(guarded(t), queue.Job{Kind: kind})
		require.NoError(t, err)
	}
	require.Equal(t, queue.Status{Queued: 3}, status(t, q))

	started, release := make(chan struct{}), make(chan struct{})
	stop := worker(t, url, "status", opts, func(ctx context.Context, job queue.Job) ([]byte, error) {
		switch job.Kind {
		case "poison":
			return nil, errors.New("broken")
		case "slow":
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return []byte(job.Kind), nil
	})
	select {
	case <-started:
	case <-guarded(t).Done():
		t.Fatal("the slow job never started")
	}
	// The one worker takes the jobs in order and settles each before it takes the next.
	require.Equal(t, queue.Status{InFlight: 1, Done: 1, Failed: 1}, status(t, q))

	close(release)
	collect(t, q, 3)
	stop()
	require.Equal(t, queue.Status{Done: 2, Failed: 1}, status(t, q))
}

func TestOpenChecksTheName(t *testing.T) {
	_, err := queue.Open(t.Context(), "nats://127.0.0.1:1", "a.b")
	require.Error(t, err)
	_, _, err = queue.Embedded("")
	require.Error(t, err)
}
