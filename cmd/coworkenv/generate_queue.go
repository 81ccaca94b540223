package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/queue"
)

// generateQueueHelp is the part of the usage text of generate about --queue.
const generateQueueHelp = `--queue URL publishes each attempt as a job on the NATS JetStream server at URL instead of running
it here (docs/scaling.md): ` + "`coworkenv worker --queue URL`" + ` processes ask the model (with their own
$OPENAI_API_KEY, and their $OPENAI_BASE_URL when --base-url is not given: this process needs
neither), validate the candidates and send the outcome back; this process writes the accepted files
and the manifest in attempt order, as a local run does, and publishes attempt i once attempt i-J
is written (J is --jobs), so the output is the same as a local run's given the same answers of the
model. A job that fails (the model down, after the queue's deliveries) stops the run as a failed
attempt does; started again with --retry-failed, the run asks for it again. --record and --replay
are refused with --queue. --queue embedded starts a server in this process and --jobs workers on
it.

` + queueFlagsHelp

// runGenerate runs the generation of opts: here, or on the queue of qr when given, with its
// progress on bar.
func runGenerate(ctx context.Context, qr *queueRun, opts generator.Options, bar *progress.Bar) (*generator.Summary, error) {
	if !qr.on() {
		return generator.Run(ctx, opts)
	}
	qopts, err := qr.options()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", generator.ErrUsage, err)
	}
	// The bar counts the attempts written, as a local run's does, and tells the jobs' counts.
	var mu sync.Mutex
	written, accepted, rejected := -1, 0, 0
	var jobs queue.Progress
	show := func() {
		done := max(written, 0)
		if jobs.Total > 0 { // the attempts resumed are written
			done = max(done, opts.Count-jobs.Total)
		}
		bar.Set(done, fmt.Sprintf("%d accepted · %d rejected · %d running · %d queued", accepted, rejected, jobs.Running, jobs.Queued))
	}
	onRecord := opts.OnRecord
	opts.OnRecord = func(r generator.Record) {
		if onRecord != nil {
			onRecord(r)
		}
		mu.Lock()
		defer mu.Unlock()
		written = r.Attempt + 1
		if r.Status == "accepted" {
			accepted++
		} else {
			rejected++
		}
		show()
	}
	progress := func(p queue.Progress) {
		mu.Lock()
		defer mu.Unlock()
		jobs = p
		show()
	}
	var sum *generator.Summary
	err = onQueue(ctx, *qr.url, generator.QueueName, qopts, opts.Jobs,
		func() (queue.Handler, error) { return generator.Handler(opts.Pool, os.Getenv, opts.Log), nil },
		func(q *queue.Queue) error {
			var err error
			sum, err = generator.RunQueued(ctx, opts, q, progress)
			return err
		})
	return sum, err
}
