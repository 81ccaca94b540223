// Package queue spreads work units over worker processes through NATS JetStream. It is the
// foundation for running generate, validate and rollout on many machines (docs/scaling.md): a
// producer publishes jobs, workers pull them one at a time and publish a result for each, and the
// producer reads the results back.
//
// A queue named N is three streams on the server:
//
//   - JOBS_N holds the jobs on the subject coworkenv.N.jobs. It keeps a job until a worker acks
//     or ends it (work-queue retention), and drops a job published again under the same message
//     id within the duplicate window, so publishing twice is harmless.
//   - RESULTS_N holds the results, each job's on its own subject coworkenv.N.results.<job>. It
//     keeps them (limits retention), so a producer that comes back later reads every result from
//     the start, and Publish finds a job's latest result without reading the others.
//   - BLOBS_N holds content-addressed data that jobs and results refer to instead of carrying it
//     (blob.go): Put and Get.
//
// Every worker pulls from one durable consumer, "workers", on the jobs stream: a job is delivered
// to one worker at a time, and comes back to another when its worker neither acks it nor says it
// is still working on it within the ack wait. The settings of a queue (ack wait, max deliver,
// duplicate window) live on the server: the first Open creates them, and an Open given an option
// changes it for everyone.
package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults of the settings of a queue, used by the Open that creates it.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultMaxDeliver = 3
	DefaultDuplicates = 24 * time.Hour
)

// workersConsumer is the durable consumer on the jobs stream that every worker shares.
const workersConsumer = "workers"

// maxDeliverKey is the metadata key of the workers' consumer that holds the queue's max deliver.
// The consumer itself redelivers without a limit (its MaxDeliver is -1): a worker that gets a job
// past the queue's max deliver ends it as failed (see Work), which the server's own limit would
// not do (a job past it would stay on the stream with no result).
const maxDeliverKey = "coworkenv_max_deliver"

// Job is one work unit.
type Job struct {
	// ID names the job; the jobs stream drops a second job with the same ID and attempt within
	// the duplicate window. Publish fills it from Kind and Body when it is empty (see JobID).
	// It and Kind travel in headers: printable characters on one line, up to 1024 bytes.
	ID   string
	Kind string // what the worker does with Body, e.g. "rollout"
	Body []byte
	// Attempt is 0 for the first run of a job, and counts the times it was published again after
	// a failed result (WithRetryFailed). Publish sets it.
	Attempt int
	// Blobs, on a job that Work hands a handler, reads the blobs of the job's queue, which the
	// producer stored with Put (the body carries their refs). Publish ignores it.
	Blobs Blobs
}

// Result is what a worker reports for a job.
type Result struct {
	JobID   string
	Attempt int // the job's attempt this result is for
	OK      bool
	Body    []byte // the handler's answer when OK
	Error   string // why the job failed when not OK
	// blob is the ref of the body (or error) when the message carries it in the blob store.
	blob string
	// Deliveries is how many times the job was delivered, this time included.
	Deliveries int
}

// Status counts the jobs of a queue.
type Status struct {
	Queued   int // published and not yet delivered to a worker
	InFlight int // delivered and neither acked nor ended (running, or waiting to be redelivered)
	Done     int // whose latest attempt's result is OK
	Failed   int // whose latest attempt's result is not OK
}

// Settings are the settings of a queue, as the server holds them.
type Settings struct {
	AckWait    time.Duration // see WithAckWait
	MaxDeliver int           // see WithMaxDeliver
	Duplicates time.Duration // see WithDuplicates
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
	Settings
	retryFailed bool
	blobCache   int
	// which settings were given, and so are set on the server
	setAckWait, setMaxDeliver, setDuplicates bool
}

// WithAckWait sets how long a worker may hold a job without acking it or saying it is still
// working on it before the job goes to another worker (DefaultAckWait). Workers say so every
// third of it.
func WithAckWait(d time.Duration) Option {
	return func(o *options) { o.AckWait, o.setAckWait = d, true }
}

// WithMaxDeliver sets how many times a job is delivered at most (DefaultMaxDeliver): a job whose
// last delivery fails, or whose every delivery is lost with its worker, ends as failed.
func WithMaxDeliver(n int) Option {
	return func(o *options) { o.MaxDeliver, o.setMaxDeliver = n, true }
}

// WithDuplicates sets the window within which a job published again with the same ID and
// attempt is dropped (DefaultDuplicates).
func WithDuplicates(d time.Duration) Option {
	return func(o *options) { o.Duplicates, o.setDuplicates = d, true }
}

// WithRetryFailed is for producers: Publish runs again a job whose latest result is failed, as
// its next attempt, instead of leaving its failure as its result. It changes nothing on the
// server and nothing for workers.
func WithRetryFailed() Option { return func(o *options) { o.retryFailed = true } }

// Queue is a connection to one named queue, for producers and workers alike.
type Queue struct {
	name        string
	settings    Settings // in force on the server when the queue was opened
	retryFailed bool
	nc          *nats.Conn
	js          jetstream.JetStream
	jobs        jetstream.Stream
	results     jetstream.Stream
	workers     jetstream.Consumer
	jobsSubj    string
	resultSubj  string // the prefix of the results' subjects
	blobs       jetstream.Stream
	blobSubj    string // the prefix of the blobs' subjects

	mu       sync.Mutex
	expected map[string]int // the attempt whose result Results yields, by job published here

	blobMu   sync.Mutex
	stored   map[string]bool   // blobs Put stored or found
	fetching map[string]*fetch // blobs Get is reading
	cache    *blobCache
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Open connects to the server at url and binds the queue name, creating its streams and the
// workers' consumer with the options (the defaults where none is given) when they do not exist
// yet. An existing queue keeps its settings except those given as options, which are changed on
// the server for every producer and worker of the queue; workers already running keep the ack
// wait they started with until they open the queue again. Close the queue when done.
func Open(ctx context.Context, url, name string, opts ...Option) (*Queue, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("queue name %q: use letters, digits, '_' and '-'", name)
	}
	o := options{Settings: Settings{AckWait: DefaultAckWait, MaxDeliver: DefaultMaxDeliver, Duplicates: DefaultDuplicates}, blobCache: DefaultBlobCache}
	for _, opt := range opts {
		opt(&o)
	}
	if o.AckWait <= 0 || o.MaxDeliver < 1 || o.Duplicates <= 0 {
		return nil, errors.New("queue: the ack wait, max deliver and duplicate window must be positive")
	}
	nc, err := connect(url, "coworkenv queue "+name)
	if err != nil {
		return nil, err
	}
	q := &Queue{
		name:        name,
		retryFailed: o.retryFailed,
		nc:          nc,
		jobsSubj:    jobsSubject(name),
		resultSubj:  "coworkenv." + name + ".results",
		blobSubj:    blobsSubject(name),
		expected:    map[string]int{},
		stored:      map[string]bool{},
		fetching:    map[string]*fetch{},
		cache:       newBlobCache(o.blobCache),
	}
	if err := q.setUp(ctx, o); err != nil {
		nc.Close()
		return nil, serverError(url, err)
	}
	return q, nil
}

// connect connects to the server at url, with an error that names it.
func connect(url, client string) (*nats.Conn, error) {
	nc, err := nats.Connect(url, nats.Name(client))
	if err != nil {
		return nil, fmt.Errorf("cannot reach a NATS server at %s: %w", url, err)
	}
	return nc, nil
}

// serverError names the server in an error of JetStream, and says what to do about a server
// without JetStream.
func serverError(url string, err error) error {
	if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
		return fmt.Errorf("the NATS server at %s has no JetStream (start it with -js): %w", url, err)
	}
	return fmt.Errorf("NATS server at %s: %w", url, err)
}

func jobsSubject(name string) string { return "coworkenv." + name + ".jobs" }

func (q *Queue) setUp(ctx context.Context, o options) error {
	var err error
	if q.js, err = jetstream.New(q.nc); err != nil {
		return err
	}
	q.jobs, err = q.stream(ctx, jetstream.StreamConfig{
		Name:       "JOBS_" + q.name,
		Subjects:   []string{q.jobsSubj},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		Duplicates: o.Duplicates,
	}, o.setDuplicates)
	if err != nil {
		return fmt.Errorf("jobs stream: %w", err)
	}
	q.results, err = q.stream(ctx, jetstream.StreamConfig{
		Name:       "RESULTS_" + q.name,
		Subjects:   []string{q.resultSubj + ".>"},
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		Duplicates: o.Duplicates,
	}, o.setDuplicates)
	if err != nil {
		return fmt.Errorf("results stream: %w", err)
	}
	q.blobs, err = q.stream(ctx, jetstream.StreamConfig{
		Name:              blobsStream(q.name),
		Subjects:          []string{q.blobSubj + ".>"},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		MaxMsgsPerSubject: 1,    // a chunk stored again replaces the same bytes
		AllowDirect:       true, // a chunk is read with a direct get, as it was stored
	}, false)
	if err != nil {
		return fmt.Errorf("blobs stream: %w", err)
	}
	if q.workers, err = q.consumer(ctx, o); err != nil {
		return fmt.Errorf("workers consumer: %w", err)
	}
	q.settings = settingsOf(q.jobs.CachedInfo(), q.workers.CachedInfo())
	return nil
}

// settingsOf reads a queue's settings from its jobs stream and workers' consumer.
func settingsOf(jobs *jetstream.StreamInfo, workers *jetstream.ConsumerInfo) Settings {
	s := Settings{AckWait: workers.Config.AckWait, MaxDeliver: DefaultMaxDeliver, Duplicates: jobs.Config.Duplicates}
	if n, err := strconv.Atoi(workers.Config.Metadata[maxDeliverKey]); err == nil && n >= 1 {
		s.MaxDeliver = n
	}
	return s
}

// stream binds the stream cfg names, creating it with cfg when it does not exist. An existing
// stream gets cfg's subjects and retention, and its duplicate window when setDup.
func (q *Queue) stream(ctx context.Context, cfg jetstream.StreamConfig, setDup bool) (jetstream.Stream, error) {
	s, err := q.js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = q.js.CreateStream(ctx, cfg)
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return s, err
		}
		s, err = q.js.Stream(ctx, cfg.Name) // another Open created it meanwhile
	}
	if err != nil {
		return nil, err
	}
	cur := s.CachedInfo().Config
	want := cur
	want.Subjects, want.Retention = cfg.Subjects, cfg.Retention
	if setDup {
		want.Duplicates = cfg.Duplicates
	}
	if slices.Equal(cur.Subjects, want.Subjects) && cur.Retention == want.Retention && cur.Duplicates == want.Duplicates {
		return s, nil
	}
	return q.js.UpdateStream(ctx, want)
}

// consumer binds the workers' consumer, creating it with o's settings when it does not exist,
// and changes the settings o gives on an existing one.
func (q *Queue) consumer(ctx context.Context, o options) (jetstream.Consumer, error) {
	c, err := q.jobs.Consumer(ctx, workersConsumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		c, err = q.jobs.CreateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       workersConsumer,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       o.AckWait,
			MaxDeliver:    -1,
			DeliverPolicy: jetstream.DeliverAllPolicy,
			Metadata:      map[string]string{maxDeliverKey: strconv.Itoa(o.MaxDeliver)},
		})
		if !errors.Is(err, jetstream.ErrConsumerExists) {
			return c, err
		}
		c, err = q.jobs.Consumer(ctx, workersConsumer) // another Open created it meanwhile
	}
	if err != nil {
		return nil, err
	}
	cur := c.CachedInfo().Config
	want := cur
	want.MaxDeliver = -1
	if o.setAckWait {
		want.AckWait = o.AckWait
	}
	md := strconv.Itoa(o.MaxDeliver)
	if _, ok := cur.Metadata[maxDeliverKey]; !ok || o.setMaxDeliver {
		want.Metadata = maps.Clone(cur.Metadata)
		if want.Metadata == nil {
			want.Metadata = map[string]string{}
		}
		want.Metadata[maxDeliverKey] = md
	}
	if want.MaxDeliver == cur.MaxDeliver && want.AckWait == cur.AckWait && want.Metadata[maxDeliverKey] == cur.Metadata[maxDeliverKey] {
		return c, nil
	}
	return q.jobs.UpdateConsumer(ctx, want)
}

// Close closes the connection. Jobs a worker of this queue holds go to another worker after the
// ack wait.
func (q *Queue) Close() { q.nc.Close() }

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// Settings are the queue's settings on the server when it was opened.
func (q *Queue) Settings() Settings { return q.settings }

// Publish adds a job, filling its ID when empty (see JobID), and returns it with its Attempt once
// the server has stored it. A job that already has a result is not published again: Results
// yields its latest result, unless that result is failed and the queue was opened
// WithRetryFailed, in which case the job is published as its next attempt. A job published again
// within the duplicate window (one still queued or running, say) is dropped.
func (q *Queue) Publish(ctx context.Context, job Job) (Job, error) {
	if job.ID == "" {
		job.ID = JobID(job.Kind, job.Body)
	}
	last, err := q.lastResult(ctx, job.ID)
	if err != nil {
		return job, fmt.Errorf("publish job %s: %w", job.ID, err)
	}
	job.Attempt = 0
	if last != nil {
		job.Attempt = last.Attempt
		if last.OK || !q.retryFailed {
			q.expect(job.ID, job.Attempt)
			return job, nil
		}
		job.Attempt++
	}
	msg, err := jobMsg(q.jobsSubj, job)
	if err != nil {
		return job, err
	}
	if _, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(msgID(job.ID, job.Attempt))); err != nil {
		return job, fmt.Errorf("publish job %s: %w", job.ID, q.sizeError("job", len(msg.Data), err))
	}
	q.expect(job.ID, job.Attempt)
	return job, nil
}

// msgID is the message id of a job's attempt: the job's ID for the first.
func msgID(id string, attempt int) string {
	if attempt == 0 {
		return id
	}
	return id + "#" + strconv.Itoa(attempt)
}

var subjectToken = regexp.MustCompile(`^[A-Za-z0-9_-]{1,200}$`)

// resultSubject is the subject of the results of the job id: its ID when that is a plain token,
// a hash of it otherwise.
func (q *Queue) resultSubject(id string) string {
	if subjectToken.MatchString(id) {
		return q.resultSubj + "." + id
	}
	h := sha256.Sum256([]byte(id))
	return q.resultSubj + ".sha256-" + hex.EncodeToString(h[:])
}

// lastResult is the latest result stored for the job id, or nil.
func (q *Queue) lastResult(ctx context.Context, id string) (*Result, error) {
	m, err := q.results.GetLastMsgForSubject(ctx, q.resultSubject(id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read its result: %w", err)
	}
	r, err := decodeResult(m.Header, m.Data)
	if err != nil || r.JobID != id {
		return nil, nil // not a result of this job: as if there were none
	}
	return &r, nil
}

func (q *Queue) expect(id string, attempt int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expected[id] = attempt
}

func (q *Queue) expectedAttempt(id string) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	a, ok := q.expected[id]
	return a, ok
}

// Results reads the results from the first one on and then waits for new ones, until ctx is done
// (then it yields ctx's error once and stops) or the loop breaks. For a job published on this
// Queue, it yields one result: the first of the attempt Publish chose (or of a later one), so
// that an earlier attempt's failure is skipped when the job was published again; publish a job
// before reading its result. For another job, it yields the first result of each attempt. A
// result published again for the same attempt (a worker that finished a job but died before
// acking it, so that another worker did it again) is skipped. Since it always starts from the
// first result, a producer that comes back sees the results of the jobs finished while it was
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
		p := picker{q: q}
		for {
			m, err := msgs.Next(jetstream.NextContext(ctx))
			if err != nil {
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				yield(Result{}, err)
				return
			}
			r, err := decodeResult(m.Headers(), m.Data())
			if err != nil {
				if !yield(Result{}, fmt.Errorf("result: %w", err)) {
					return
				}
				continue
			}
			if !p.take(r) {
				continue
			}
			if r.blob != "" {
				data, err := q.readBlob(ctx, r.blob)
				switch {
				case ctx.Err() != nil:
					yield(Result{}, ctx.Err())
					return
				case err != nil:
					// The result's data is lost (its blob removed, say): the reader gets a
					// failure that says so rather than waiting for a result that came.
					r.OK, r.Error = false, fmt.Sprintf("the result's data cannot be read from the blob store: %v", err)
				default:
					r.setData(data)
				}
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// picker chooses the results Results yields.
type picker struct {
	q       *Queue
	seen    map[attemptKey]bool // results yielded, for jobs not published on q
	settled map[string]bool     // jobs published on q whose result was yielded
}

type attemptKey struct {
	id      string
	attempt int
}

func (p *picker) take(r Result) bool {
	if want, ok := p.q.expectedAttempt(r.JobID); ok {
		if r.Attempt < want || p.settled[r.JobID] {
			return false
		}
		if p.settled == nil {
			p.settled = map[string]bool{}
		}
		p.settled[r.JobID] = true
		return true
	}
	k := attemptKey{r.JobID, r.Attempt}
	if p.seen[k] {
		return false
	}
	if p.seen == nil {
		p.seen = map[attemptKey]bool{}
	}
	p.seen[k] = true
	return true
}

// Status counts the queue's jobs: queued and in flight from the workers' consumer, done and
// failed from the results, each job counted once by the result of its latest attempt.
func (q *Queue) Status(ctx context.Context) (Status, error) {
	return status(ctx, q.jobs, q.results, q.workers)
}

func status(ctx context.Context, jobs, results jetstream.Stream, workers jetstream.Consumer) (Status, error) {
	var s Status
	ci, err := workers.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("workers consumer: %w", err)
	}
	// The jobs stream holds a job until it is acked or ended (work-queue retention), and its
	// count is current as soon as a publish is acknowledged; the consumer's own pending count
	// may lag behind it. Queued is what the stream holds less what is out with workers.
	ji, err := jobs.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("jobs stream: %w", err)
	}
	s.InFlight = ci.NumAckPending
	s.Queued = max(int(ji.State.Msgs)-s.InFlight, 0)
	info, err := results.Info(ctx)
	if err != nil {
		return s, fmt.Errorf("results stream: %w", err)
	}
	if info.State.Msgs == 0 {
		return s, nil
	}
	type latest struct {
		attempt int
		ok      bool
	}
	byJob := map[string]latest{}
	for r, err := range resultsUpTo(ctx, results, info.State.LastSeq) {
		if err != nil {
			return s, err
		}
		if l, ok := byJob[r.JobID]; !ok || r.Attempt > l.attempt {
			byJob[r.JobID] = latest{r.Attempt, r.OK}
		}
	}
	for _, l := range byJob {
		if l.ok {
			s.Done++
		} else {
			s.Failed++
		}
	}
	return s, nil
}

// resultsUpTo reads every stored result of the stream results up to the one at the sequence
// last, without waiting for new ones; their headers only (no body, no error).
func resultsUpTo(ctx context.Context, results jetstream.Stream, last uint64) iter.Seq2[Result, error] {
	return func(yield func(Result, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cons, err := results.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy, HeadersOnly: true})
		if err != nil {
			yield(Result{}, fmt.Errorf("read results: %w", err))
			return
		}
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
				r, err := decodeResult(m.Headers(), nil)
				if err == nil && !yield(r, nil) {
					return // (a message that is not a result is skipped)
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

// publishResult stores a job's result on the job's subject. Its message id is the job's and
// attempt's, so a second result for the same attempt within the duplicate window is dropped by
// the stream.
func (q *Queue) publishResult(ctx context.Context, r Result) error {
	msg := resultMsg(q.resultSubject(r.JobID), r)
	if len(msg.Data) > q.inlineLimit() {
		ref, err := q.Put(ctx, msg.Data)
		if err != nil {
			return fmt.Errorf("store the result's data: %w", err)
		}
		msg.Data = nil
		msg.Header.Set(hdrBlob, ref)
	}
	_, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID("result-"+msgID(r.JobID, r.Attempt)))
	return q.sizeError("result", len(msg.Data), err)
}

// sizeError says what a message of n bytes that the server refuses as too large was, and what to
// do; it returns other errors as they are.
func (q *Queue) sizeError(what string, n int, err error) error {
	if !errors.Is(err, nats.ErrMaxPayload) {
		return err
	}
	return fmt.Errorf("the %s is %d bytes, more than the NATS server takes in a message (its max_payload, %d bytes; raise it in the server's configuration): %w",
		what, n, q.nc.MaxPayload(), err)
}
