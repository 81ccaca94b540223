// Package queue spreads work units over worker processes through NATS JetStream. It is the
// foundation for running generate, validate and rollout on many machines (docs/scaling.md): a
// producer publishes jobs, workers pull them one at a time and publish a result for each, and the
// producer reads the results back. `rollout --queue` and `coworkenv worker` use it; generate and validate do not yet.
//
// A queue named N is two streams on the server:
//
//   - JOBS_N holds the jobs on the subject coworkenv.N.jobs. It keeps a job until a worker acks
//     or ends it (work-queue retention), and drops a job published again under the same id within
//     the duplicate window, so publishing twice is harmless.
//   - RESULTS_N holds the results on the subject coworkenv.N.results. It keeps them (limits
//     retention), so a producer that comes back later reads every result from the start.
//
// Every worker pulls from one durable consumer, "workers", on the jobs stream: a job is delivered
// to one worker at a time, and comes back to another when its worker neither acks it nor says it
// is still working on it within the ack wait.
package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of the options of Open.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultMaxDeliver = 3
	DefaultDuplicates = 24 * time.Hour
)

// workersConsumer is the durable consumer on the jobs stream that every worker shares.
const workersConsumer = "workers"

// Job is one work unit.
type Job struct {
	// ID names the job; the jobs stream drops a second job with the same ID within the duplicate
	// window. Publish fills it from Kind and Body when it is empty (see JobID).
	ID   string `json:"id"`
	Kind string `json:"kind"` // what the worker does with Body, e.g. "rollout"
	Body []byte `json:"body"`
}

// Result is what a worker reports for a job.
type Result struct {
	JobID string `json:"job_id"`
	OK    bool   `json:"ok"`
	Body  []byte `json:"body,omitempty"`  // the handler's answer when OK
	Error string `json:"error,omitempty"` // why the job failed when not OK
	// Deliveries is how many times the job was delivered, this time included.
	Deliveries int `json:"deliveries"`
}

// Status counts the jobs of a queue.
type Status struct {
	Queued   int // published and not yet delivered to a worker
	InFlight int // delivered and neither acked nor ended (running, or waiting to be redelivered)
	Done     int // with a result that is OK
	Failed   int // with a result that is not OK
}

// JobID is the ID Publish gives a job that has none: the kind and a hash of the kind and body, so
// the same work unit always gets the same ID.
func JobID(kind string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(body)
	return kind + "-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// Option changes a setting of Open.
type Option func(*options)

type options struct {
	ackWait    time.Duration
	maxDeliver int
	duplicates time.Duration
}

// WithAckWait sets how long a worker may hold a job without acking it or saying it is still
// working on it before the job goes to another worker (DefaultAckWait).
func WithAckWait(d time.Duration) Option { return func(o *options) { o.ackWait = d } }

// WithMaxDeliver sets how many times a job is delivered at most; the last delivery that fails
// ends the job as failed (DefaultMaxDeliver).
func WithMaxDeliver(n int) Option { return func(o *options) { o.maxDeliver = n } }

// WithDuplicates sets the window within which a job published again with the same ID is dropped
// (DefaultDuplicates).
func WithDuplicates(d time.Duration) Option { return func(o *options) { o.duplicates = d } }

// Queue is a connection to one named queue, for producers and workers alike.
type Queue struct {
	name       string
	opts       options
	nc         *nats.Conn
	js         jetstream.JetStream
	jobs       jetstream.Stream
	results    jetstream.Stream
	workers    jetstream.Consumer
	jobsSubj   string
	resultSubj string
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Open connects to the server at url and creates the streams and the workers' consumer of the
// queue name when they do not exist yet (and updates them to the options when they do). Close the
// queue when done.
func Open(ctx context.Context, url, name string, opts ...Option) (*Queue, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("queue name %q: use letters, digits, '_' and '-'", name)
	}
	o := options{ackWait: DefaultAckWait, maxDeliver: DefaultMaxDeliver, duplicates: DefaultDuplicates}
	for _, opt := range opts {
		opt(&o)
	}
	if o.ackWait <= 0 || o.maxDeliver < 1 || o.duplicates <= 0 {
		return nil, errors.New("queue: the ack wait, max deliver and duplicate window must be positive")
	}
	nc, err := nats.Connect(url, nats.Name("coworkenv queue "+name))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	q := &Queue{
		name:       name,
		opts:       o,
		nc:         nc,
		jobsSubj:   "coworkenv." + name + ".jobs",
		resultSubj: "coworkenv." + name + ".results",
	}
	if err := q.setUp(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return q, nil
}

func (q *Queue) setUp(ctx context.Context) error {
	var err error
	if q.js, err = jetstream.New(q.nc); err != nil {
		return err
	}
	q.jobs, err = q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       "JOBS_" + q.name,
		Subjects:   []string{q.jobsSubj},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		Duplicates: q.opts.duplicates,
	})
	if err != nil {
		return fmt.Errorf("jobs stream: %w", err)
	}
	q.results, err = q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:       "RESULTS_" + q.name,
		Subjects:   []string{q.resultSubj},
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		Duplicates: q.opts.duplicates,
	})
	if err != nil {
		return fmt.Errorf("results stream: %w", err)
	}
	q.workers, err = q.jobs.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       workersConsumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       q.opts.ackWait,
		MaxDeliver:    q.opts.maxDeliver,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("workers consumer: %w", err)
	}
	return nil
}

// Close closes the connection. Jobs a worker of this queue holds go to another worker after the
// ack wait.
func (q *Queue) Close() { q.nc.Close() }

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// Publish adds a job (filling its ID when empty, see JobID) and returns once the server has
// stored it. A job published again within the duplicate window is dropped, even when a worker has
// finished it meanwhile.
func (q *Queue) Publish(ctx context.Context, job Job) (Job, error) {
	if job.ID == "" {
		job.ID = JobID(job.Kind, job.Body)
	}
	data, err := json.Marshal(job)
	if err != nil {
		return job, err
	}
	if _, err := q.js.Publish(ctx, q.jobsSubj, data, jetstream.WithMsgID(job.ID)); err != nil {
		return job, fmt.Errorf("publish job %s: %w", job.ID, err)
	}
	return job, nil
}

// Results reads the results from the first one on and then waits for new ones, until ctx is done
// (then it yields ctx's error once and stops) or the loop breaks. Each job's first result is
// yielded once: a result published again for the same job (a worker that finished a job but died
// before acking it, so that another worker did it again) is skipped. Since it always starts from
// the first result, a producer that comes back sees the results of the jobs finished while it was
// away; it keeps no position on the server.
func (q *Queue) Results(ctx context.Context) iter.Seq2[Result, error] {
	return func(yield func(Result, error) bool) {
		cons, err := q.results.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
		if err != nil {
			yield(Result{}, fmt.Errorf("read results: %w", err))
			return
		}
		msgs, err := cons.Messages()
		if err != nil {
			yield(Result{}, fmt.Errorf("read results: %w", err))
			return
		}
		defer msgs.Stop()
		seen := map[string]bool{}
		for {
			m, err := msgs.Next(jetstream.NextContext(ctx))
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(Result{}, err)
				return
			}
			var r Result
			if err := json.Unmarshal(m.Data(), &r); err != nil {
				if !yield(Result{}, fmt.Errorf("result: %w", err)) {
					return
				}
				continue
			}
			if seen[r.JobID] {
				continue
			}
			seen[r.JobID] = true
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Status counts the queue's jobs: queued and in flight from the workers' consumer, done and
// failed from the results, each job counted once.
func (q *Queue) Status(ctx context.Context) (Status, error) {
	var s Status
	ci, err := q.workers.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("workers consumer: %w", err)
	}
	// The jobs stream holds a job until it is acked or ended (work-queue retention), and its
	// count is current as soon as a publish is acknowledged; the consumer's own pending count
	// may lag behind it. Queued is what the stream holds less what is out with workers.
	ji, err := q.jobs.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("jobs stream: %w", err)
	}
	s.InFlight = ci.NumAckPending
	s.Queued = max(int(ji.State.Msgs)-s.InFlight, 0)
	info, err := q.results.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("results stream: %w", err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return s, nil
	}
	// Read the results up to the last one there is now.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for r, err := range q.resultsUpTo(ctx, last) {
		if err != nil {
			return s, err
		}
		if r.OK {
			s.Done++
		} else {
			s.Failed++
		}
	}
	return s, nil
}

// resultsUpTo reads the results like Results, without waiting for new ones: it stops after the
// result stored at the sequence last.
func (q *Queue) resultsUpTo(ctx context.Context, last uint64) iter.Seq2[Result, error] {
	return func(yield func(Result, error) bool) {
		cons, err := q.results.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
		if err != nil {
			yield(Result{}, fmt.Errorf("read results: %w", err))
			return
		}
		seen := map[string]bool{}
		for {
			batch, err := cons.FetchNoWait(256)
			if err != nil {
				yield(Result{}, fmt.Errorf("read results: %w", err))
				return
			}
			n := 0
			for m := range batch.Messages() {
				n++
				meta, err := m.Metadata()
				if err != nil {
					yield(Result{}, err)
					return
				}
				var r Result
				if err := json.Unmarshal(m.Data(), &r); err != nil {
					yield(Result{}, fmt.Errorf("result: %w", err))
					return
				}
				if !seen[r.JobID] {
					seen[r.JobID] = true
					if !yield(r, nil) {
						return
					}
				}
				if meta.Sequence.Stream >= last {
					return
				}
			}
			if err := batch.Error(); err != nil {
				yield(Result{}, fmt.Errorf("read results: %w", err))
				return
			}
			if n == 0 {
				return // nothing more is stored
			}
		}
	}
}

// publishResult stores a job's result. The result's message id is the job's, so a second result
// for the same job within the duplicate window is dropped by the stream.
func (q *Queue) publishResult(ctx context.Context, r Result) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = q.js.Publish(ctx, q.resultSubj, data, jetstream.WithMsgID("result-"+r.JobID))
	return err
}
