package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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

// resultOf reads the results until the job's comes.
func resultOf(t *testing.T, q *queue.Queue, id string) queue.Result {
	t.Helper()
	for r, err := range q.Results(guarded(t)) {
		require.NoError(t, err)
		if r.JobID == id {
			return r
		}
	}
	panic("unreachable: Results ends with an error")
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

// A job whose every delivery is lost with its worker (stopped mid-job, as a killed one) ends as
// failed, without running again, on the delivery after the last one allowed; a producer waiting
// for its result gets it.
func TestAJobLostWithItsWorkersEndsFailed(t *testing.T) {
	url := server(t)
	opts := []queue.Option{queue.WithAckWait(200 * time.Millisecond), queue.WithMaxDeliver(2)}
	q := open(t, url, "lost", opts...)
	job, err := q.Publish(guarded(t), queue.Job{Kind: "slow", Body: []byte("x")})
	require.NoError(t, err)

	var c counter
	for range 2 {
		started := make(chan struct{})
		stop := worker(t, url, "lost", nil, func(ctx context.Context, job queue.Job) ([]byte, error) {
			c.add(job.ID)
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		select {
		case <-started:
		case <-guarded(t).Done():
			t.Fatal("the worker never got the job")
		}
		stop() // lost mid-job: no ack, no result
	}
	require.Equal(t, 2, c.get(job.ID))

	stop := worker(t, url, "lost", nil, echo(&c))
	got := collect(t, q, 1)
	stop()
	r := got[job.ID]
	require.False(t, r.OK)
	require.Contains(t, r.Error, "lost: the job was delivered 2 times")
	require.Equal(t, 3, r.Deliveries)
	require.Equal(t, 2, c.get(job.ID), "a lost job is not run past the max deliver")
	require.Equal(t, queue.Status{Failed: 1}, status(t, q))
}

// WithRetryFailed publishes a failed job again as its next attempt, and Results yields that
// attempt's result only; without it, a job with a result is not published again and its result
// stands.
func TestRetryFailed(t *testing.T) {
	url := server(t)
	opts := []queue.Option{queue.WithMaxDeliver(1)}
	first := open(t, url, "retry", opts...)
	var broken sync.Map // kind → true while its jobs fail
	broken.Store("flaky", true)
	var c counter
	h := func(ctx context.Context, job queue.Job) ([]byte, error) {
		c.add(job.ID)
		if _, ok := broken.Load(job.Kind); ok {
			return nil, fmt.Errorf("attempt %d broken", job.Attempt)
		}
		return fmt.Appendf(nil, "attempt %d ok", job.Attempt), nil
	}
	stop := worker(t, url, "retry", nil, h)
	flaky, err := first.Publish(guarded(t), queue.Job{Kind: "flaky"})
	require.NoError(t, err)
	fine, err := first.Publish(guarded(t), queue.Job{Kind: "fine"})
	require.NoError(t, err)
	require.Equal(t, 0, flaky.Attempt)
	got := collect(t, first, 2)
	stop() // every job settled
	require.Equal(t, "attempt 0 broken", got[flaky.ID].Error)
	require.Equal(t, "attempt 0 ok", string(got[fine.ID].Body))
	broken.Delete("flaky")

	// Without the option, publishing again leaves both results as they are.
	again := open(t, url, "retry")
	for _, j := range []queue.Job{flaky, fine} {
		p, err := again.Publish(guarded(t), queue.Job{Kind: j.Kind})
		require.NoError(t, err)
		require.Equal(t, 0, p.Attempt)
	}
	require.Equal(t, queue.Status{Done: 1, Failed: 1}, status(t, again))
	got = collect(t, again, 2)
	require.False(t, got[flaky.ID].OK)

	// With it, the failed job runs again; the done one does not.
	stop = worker(t, url, "retry", nil, h)
	retry := open(t, url, "retry", queue.WithRetryFailed())
	p, err := retry.Publish(guarded(t), queue.Job{Kind: "flaky"})
	require.NoError(t, err)
	require.Equal(t, 1, p.Attempt)
	p, err = retry.Publish(guarded(t), queue.Job{Kind: "fine"})
	require.NoError(t, err)
	require.Equal(t, 0, p.Attempt)
	got = collect(t, retry, 2)
	stop()
	require.Equal(t, queue.Result{JobID: flaky.ID, Attempt: 1, OK: true, Body: []byte("attempt 1 ok"), Deliveries: 1}, got[flaky.ID])
	require.Equal(t, "attempt 0 ok", string(got[fine.ID].Body))
	require.Equal(t, 2, c.get(flaky.ID))
	require.Equal(t, 1, c.get(fine.ID))
	require.Equal(t, queue.Status{Done: 2}, status(t, retry))

	// Once the retry is done, a producer takes its result with or without the option.
	for _, o := range [][]queue.Option{nil, {queue.WithRetryFailed()}} {
		later := open(t, url, "retry", o...)
		p, err := later.Publish(guarded(t), queue.Job{Kind: "flaky"})
		require.NoError(t, err)
		require.Equal(t, 1, p.Attempt)
		require.Equal(t, "attempt 1 ok", string(resultOf(t, later, flaky.ID).Body))
	}
	require.Equal(t, 2, c.get(flaky.ID))
}

// The settings of a queue live on the server: the Open that creates it sets them, an Open with
// no option keeps them, and an option changes them.
func TestSettingsLiveOnTheServer(t *testing.T) {
	url := server(t)
	q := open(t, url, "settings", queue.WithAckWait(5*time.Second), queue.WithMaxDeliver(5))
	want := queue.Settings{AckWait: 5 * time.Second, MaxDeliver: 5, Duplicates: queue.DefaultDuplicates}
	require.Equal(t, want, q.Settings())
	require.Equal(t, want, open(t, url, "settings").Settings())

	open(t, url, "settings", queue.WithMaxDeliver(2), queue.WithDuplicates(time.Hour))
	want.MaxDeliver, want.Duplicates = 2, time.Hour
	require.Equal(t, want, open(t, url, "settings").Settings())

	require.Equal(t, queue.Settings{AckWait: queue.DefaultAckWait, MaxDeliver: queue.DefaultMaxDeliver, Duplicates: queue.DefaultDuplicates},
		open(t, url, "other").Settings())
}

func TestInspect(t *testing.T) {
	url := server(t)
	b := open(t, url, "b", queue.WithMaxDeliver(1))
	open(t, url, "a")
	for _, kind := range []string{"poison", "fine", "waiting"} {
		_, err := b.Publish(guarded(t), queue.Job{Kind: kind})
		require.NoError(t, err)
	}
	stop := worker(t, url, "b", nil, func(ctx context.Context, job queue.Job) ([]byte, error) {
		if job.Kind == "poison" {
			return nil, errors.New("broken")
		}
		return nil, nil
	})
	collect(t, b, 3)
	stop()
	_, err := b.Publish(guarded(t), queue.Job{Kind: "queued"})
	require.NoError(t, err)

	defaults := queue.Settings{AckWait: queue.DefaultAckWait, MaxDeliver: queue.DefaultMaxDeliver, Duplicates: queue.DefaultDuplicates}
	bInfo := queue.Info{Name: "b", Status: queue.Status{Queued: 1, Done: 2, Failed: 1}, Settings: defaults}
	bInfo.MaxDeliver = 1
	all, err := queue.Inspect(guarded(t), url, "")
	require.NoError(t, err)
	require.Equal(t, []queue.Info{{Name: "a", Settings: defaults}, bInfo}, all)
	one, err := queue.Inspect(guarded(t), url, "b")
	require.NoError(t, err)
	require.Equal(t, []queue.Info{bInfo}, one)

	_, err = queue.Inspect(guarded(t), url, "c")
	require.ErrorContains(t, err, "no queue named c")
	_, err = queue.Inspect(guarded(t), "nats://127.0.0.1:1", "")
	require.ErrorContains(t, err, "cannot reach a NATS server at nats://127.0.0.1:1")
}

// The messages are what docs/scaling.md says, for readers in other languages: the body as the
// data, the rest in headers. A message that is not a job fails at once; one on the results
// stream that is not a result is skipped by Status and reported by Results.
func TestMessagesOnTheServer(t *testing.T) {
	url := server(t)
	q := open(t, url, "wire", queue.WithMaxDeliver(2))
	_, err := q.Publish(guarded(t), queue.Job{ID: "j-1", Kind: "echo", Body: []byte("one\n")})
	require.NoError(t, err)
	_, err = q.Publish(guarded(t), queue.Job{ID: "j-2", Kind: "fail"})
	require.NoError(t, err)
	_, err = q.Publish(guarded(t), queue.Job{ID: "line\nbreak", Kind: "echo"})
	require.ErrorContains(t, err, "without line breaks")

	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	jobs, err := js.Stream(guarded(t), "JOBS_wire")
	require.NoError(t, err)
	raw, err := jobs.GetMsg(guarded(t), 1)
	require.NoError(t, err)
	require.Equal(t, "coworkenv.wire.jobs", raw.Subject)
	require.Equal(t, "one\n", string(raw.Data))
	require.Equal(t, "j-1", raw.Header.Get("Coworkenv-Job-Id"))
	require.Equal(t, "echo", raw.Header.Get("Coworkenv-Kind"))
	require.Equal(t, "j-1", raw.Header.Get("Nats-Msg-Id"))
	// a message that is not a job
	_, err = js.Publish(guarded(t), "coworkenv.wire.jobs", []byte("junk"))
	require.NoError(t, err)

	stop := worker(t, url, "wire", nil, func(ctx context.Context, job queue.Job) ([]byte, error) {
		if job.Kind == "fail" {
			return nil, errors.New("it failed\non two lines")
		}
		return append([]byte("done "), job.Body...), nil
	})
	got := collect(t, q, 3)
	stop()
	require.Equal(t, "unreadable job: a message without a job ID", got["seq-3"].Error)
	require.Equal(t, 1, got["seq-3"].Deliveries)

	results, err := js.Stream(guarded(t), "RESULTS_wire")
	require.NoError(t, err)
	raw, err = results.GetLastMsgForSubject(guarded(t), "coworkenv.wire.results.j-1")
	require.NoError(t, err)
	require.Equal(t, "done one\n", string(raw.Data))
	require.Equal(t, "true", raw.Header.Get("Coworkenv-Ok"))
	require.Equal(t, "1", raw.Header.Get("Coworkenv-Deliveries"))
	require.Equal(t, "", raw.Header.Get("Coworkenv-Attempt"))
	require.Equal(t, "result-j-1", raw.Header.Get("Nats-Msg-Id"))
	raw, err = results.GetLastMsgForSubject(guarded(t), "coworkenv.wire.results.j-2")
	require.NoError(t, err)
	require.Equal(t, "it failed\non two lines", string(raw.Data))
	require.Equal(t, "false", raw.Header.Get("Coworkenv-Ok"))
	require.Equal(t, "2", raw.Header.Get("Coworkenv-Deliveries"))

	// a message on the results stream that is not a result
	_, err = js.Publish(guarded(t), "coworkenv.wire.results.x", []byte("junk"))
	require.NoError(t, err)
	require.Equal(t, queue.Status{Done: 1, Failed: 2}, status(t, q))
	n := 0
	for r, err := range q.Results(guarded(t)) {
		if n++; n == 4 {
			require.ErrorContains(t, err, "a message without a job ID")
			break
		}
		require.NoError(t, err)
		require.NotEmpty(t, r.JobID)
	}
}
