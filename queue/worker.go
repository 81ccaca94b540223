package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
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
// The job Work hands the handler carries the queue's blobs (Job.Blobs). A result's body or error
// larger than the inline bound (InlineResult) is stored as a blob, which Results reads back.
//
// When the handler succeeds, Work publishes an OK result and then acks the job: a worker that
// dies in between leaves the job to be done again, and Results skips the second result. When the
// handler fails, Work asks for the job to be delivered again (to any worker), except on the last
// delivery allowed (WithMaxDeliver): then it publishes a failed result with the handler's error
// and ends the job, so a job that always fails does not stay in the queue.
//
// When ctx is done while the handler runs and the handler fails (as it should when stopped), Work
// leaves the job unacked, like a worker that was killed: the server gives it to another worker
// after the ack wait. A handler that succeeds still gets its result recorded. A job delivered
// once more than the max deliver is one whose last delivery was lost that way: Work does not run
// it but ends it as failed, with a reason that says so.
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
	job, err := decodeJob(m.Headers(), m.Data())
	if err != nil {
		// No worker can read it: end it as failed right away.
		id := fmt.Sprintf("seq-%d", meta.Sequence.Stream)
		return q.fail(ctx, m, Result{JobID: id, Error: "unreadable job: " + err.Error(), Deliveries: deliveries})
	}
	job.Blobs = q

	if deliveries > q.settings.MaxDeliver {
		// The server redelivers without a limit; the delivery before this one was the last
		// allowed, and its worker neither finished nor failed it.
		return q.fail(ctx, m, Result{JobID: job.ID, Attempt: job.Attempt, Error: lostReason(deliveries - 1), Deliveries: deliveries})
	}

	body, herr := q.runHandler(ctx, m, job, handler)
	switch {
	case herr == nil:
		// Record the result even when the worker is being stopped.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer cancel()
		r := Result{JobID: job.ID, Attempt: job.Attempt, OK: true, Body: body, Deliveries: deliveries}
		if err := q.publishResult(fctx, r); err != nil {
			if errors.Is(err, nats.ErrMaxPayload) {
				// No delivery will do better.
				return q.fail(ctx, m, Result{JobID: job.ID, Attempt: job.Attempt, Error: err.Error(), Deliveries: deliveries})
			}
			// Let another delivery try again.
			if nerr := m.Nak(); nerr != nil {
				return fmt.Errorf("nak job %s: %w", job.ID, nerr)
			}
			return nil
		}
		// The result is recorded: a lost ack (the job was given to another worker meanwhile,
		// or the connection dropped) only costs a second run, whose result the stream drops.
		// A connection that is down stops the next fetch.
		_ = m.DoubleAck(fctx)
		return nil
	case ctx.Err() != nil:
		// Stopped mid-job: leave the job to the ack wait, as a killed worker would.
		return nil
	case deliveries < q.settings.MaxDeliver:
		if err := m.Nak(); err != nil {
			return fmt.Errorf("nak job %s: %w", job.ID, err)
		}
		return nil
	default:
		return q.fail(ctx, m, Result{JobID: job.ID, Attempt: job.Attempt, Error: herr.Error(), Deliveries: deliveries})
	}
}

// lostReason is the error of a job whose last delivery, of n, was lost with its worker.
func lostReason(n int) string {
	return fmt.Sprintf("lost: the job was delivered %d times (the most allowed) and the worker that had it last "+
		"stopped before finishing it (killed, stopped, or cut off from the server)", n)
}

// runHandler runs the handler and marks the job in progress every third of the ack wait until it
// returns.
func (q *Queue) runHandler(ctx context.Context, m jetstream.Msg, job Job, handler Handler) ([]byte, error) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(max(q.settings.AckWait/3, time.Millisecond))
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
	// "+TERM reason", sent as a request so that the server confirms it (as DoubleAck does an
	// ack): once fail returns, the job is off the queue. As for an ack, a confirmation that does
	// not come only costs a redelivery, which ends the same way (its result is dropped).
	reason := strings.Join(strings.Fields(r.Error), " ")
	for i := range reason {
		if i > maxTermReason {
			reason = reason[:i]
			break
		}
	}
	_, _ = q.nc.RequestWithContext(fctx, m.Reply(), []byte("+TERM "+reason))
	return nil
}

// maxTermReason bounds the reason the server is given with a job it ends (for its advisory);
// the result holds the whole error.
const maxTermReason = 256
