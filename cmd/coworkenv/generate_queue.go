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

// generateOn runs the generation of opts: here, or on the queue of qr when given, with the
// jobs' counts on gp.
func generateOn(ctx context.Context, qr *queueRun, opts generator.Options, gp *genProgress) (*generator.Summary, error) {
	if !qr.on() {
		return generator.Run(ctx, opts)
	}
	qopts, err := qr.options()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", generator.ErrUsage, err)
	}
	progress := gp.queue
	var sum *generator.Summary
	err = onQueue(ctx, *qr.url, generator.QueueName, qopts, opts.Jobs,
		func() (queue.Handler, error) { return generator.Handler(opts.Pool, os.Getenv, opts.Log), nil },
		func(q *queue.Queue) error {
			if opts.Record != "" || opts.Replay != "" {
				return fmt.Errorf("%w: --record and --replay cannot be used with --queue: the workers ask the model", generator.ErrUsage)
			}
			var err error
			sum, err = generator.RunQueued(ctx, opts, q, progress)
			return err
		})
	return sum, err
}

// genProgress shows a generation's progress on its bar: the attempts written, accepted and
// rejected, and for a queued run the attempts running and queued.
type genProgress struct {
	bar   *progress.Bar
	count int // the attempts of the run

	mu                          sync.Mutex
	written, accepted, rejected int
	tokens                      int             // of the attempts written
	jobs                        *queue.Progress // nil until the queue tells
}

// record counts an attempt written to the manifest (generator.Options.OnRecord).
func (g *genProgress) record(r generator.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.written = r.Attempt + 1
	g.tokens += r.Tokens.Total
	if r.Status == "accepted" {
		g.accepted++
	} else {
		g.rejected++
	}
	g.show()
}

// queue takes the counts of a queued run's jobs.
func (g *genProgress) queue(p queue.Progress) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.jobs = &p
	g.show()
}

// show draws the counts; g.mu is held.
func (g *genProgress) show() {
	done := g.written
	detail := fmt.Sprintf("%d accepted · %d rejected · %d tokens", g.accepted, g.rejected, g.tokens)
	if g.jobs != nil {
		if g.jobs.Total > 0 { // the attempts resumed are written
			done = max(done, g.count-g.jobs.Total)
		}
		detail += fmt.Sprintf(" · %d running · %d queued", g.jobs.Running, g.jobs.Queued)
	}
	g.bar.Set(done, detail)
}
