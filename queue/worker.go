package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Handler does one job and returns its answer. It should stop when ctx is done.
type Handler func(ctx context.Context, job Job) ([]byte, error)

// finishTimeout bounds recording the result of a job whose handler finished, which goes on when
// the worker is being stopped.
const finishTimeout = 30 * time.Second

// Work pulls jobs one at a time and runs the handler on each until ctx is done; run it in several
// goroutines or processes for more workers. While the handler runs, Work tells the server every
// third of the ack wait that the job is still in progress, so a long job is not given to another
// worker.
//
// When the handler succeeds, Work publishes an OK result and then acks the job: a worker that
// dies in between leaves the job to be done again, and Results skips the second result. When the
// handler fails, Work asks for the job to be delivered again (to any worker), except on the last
// delivery allowed (WithMaxDeliver): then it publishes a failed result with the handler's error
// and ends the job, so a job that always fails does not stay in the queue.
//
// When ctx is done while the handler runs and the handler fails (as it should when stopped), Work
// leaves the job unacked, like a worker that was killed: the server gives it to another worker
// after the ack wait. A handler that succeeds still gets its result recorded.
//
// Work returns nil when ctx is done, and an error when it cannot talk to the server.
func (q *Queue) Work(ctx context.Context, handler Handler) error {
	for ctx.Err() == nil {
		batch, err := q.workers.Fetch(1, jetstream.FetchContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("fetch a job: %w", err)
		}
		for m := range batch.Messages() {
			if err := q.handle(ctx, m, handler); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && ctx.Err() == nil {
			return fmt.Errorf("fetch a job: %w", err)
		}
	}
	return nil
}

// handle runs the handler on one delivered job and settles the job. It returns an error only
// when the server cannot be told.
func (q *Queue) handle(ctx context.Context, m jetstream.Msg, handler Handler) error {
	meta, err := m.Metadata()
	if err != nil {
		return fmt.Errorf("job metadata: %w", err)
	}
	deliveries := int(meta.NumDelivered)
	var job Job
	if err := json.Unmarshal(m.Data(), &job); err != nil {
		// No worker can read it: end it as failed right away.
		id := fmt.Sprintf("seq-%d", meta.Sequence.Stream)
		return q.fail(ctx, m, Result{JobID: id, Error: "unreadable job: " + err.Error(), Deliveries: deliveries})
	}

	body, herr := q.runHandler(ctx, m, job, handler)
	switch {
	case herr == nil:
		// Record the result even when the worker is being stopped.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer cancel()
		r := Result{JobID: job.ID, OK: true, Body: body, Deliveries: deliveries}
		if err := q.publishResult(fctx, r); err != nil {
			// Let another delivery try again.
			if nerr := m.Nak(); nerr != nil {
				return fmt.Errorf("nak job %s: %w", job.ID, nerr)
			}
			return nil
		}
		if err := m.DoubleAck(fctx); err != nil {
			return fmt.Errorf("ack job %s: %w", job.ID, err)
		}
		return nil
	case ctx.Err() != nil:
		// Stopped mid-job: leave the job to the ack wait, as a killed worker would.
		return nil
	case deliveries < q.opts.maxDeliver:
		if err := m.Nak(); err != nil {
			return fmt.Errorf("nak job %s: %w", job.ID, err)
		}
		return nil
	default:
		return q.fail(ctx, m, Result{JobID: job.ID, Error: herr.Error(), Deliveries: deliveries})
	}
}

// runHandler runs the handler and marks the job in progress every third of the ack wait until it
// returns.
func (q *Queue) runHandler(ctx context.Context, m jetstream.Msg, job Job, handler Handler) ([]byte, error) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(q.opts.ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = m.InProgress() // a lost one only risks a redelivery
			}
		}
	}()
	body, err := handler(ctx, job)
	close(done)
	<-stopped
	if err != nil && err.Error() == "" {
		err = errors.New("handler failed without a reason")
	}
	return body, err
}

// fail publishes a failed result for the job and ends it, so it is not delivered again.
func (q *Queue) fail(ctx context.Context, m jetstream.Msg, r Result) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := q.publishResult(fctx, r); err != nil {
		return fmt.Errorf("publish the failure of job %s: %w", r.JobID, err)
	}
	if err := m.TermWithReason(r.Error); err != nil {
		return fmt.Errorf("end job %s: %w", r.JobID, err)
	}
	return nil
}
