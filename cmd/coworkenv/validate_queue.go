package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
)

// validateQueueHelp is the part of the usage text of validate about --queue.
const validateQueueHelp = `--queue URL publishes every task file as a job on the NATS JetStream server at URL instead of
checking it here (docs/scaling.md), and prints the report that ` + "`coworkenv worker --queue URL`" + `
processes send back: the same as a local validate's. Every file is then checked in workers, the
built-in corpus's too (--in-process is refused). A file already checked with the same content and
models is not checked again while its result is on the queue (--retry-failed runs again the jobs
that failed). --queue embedded starts a server in this process and --jobs workers on it.

` + queueFlagsHelp

// queueRun are the flags of a producer's queue: --queue and the queue's settings.
type queueRun struct {
	url   *string
	flags *queueFlags
}

// addQueueRun adds --queue (what publishes says what is published) and the settings flags.
func addQueueRun(fs *flag.FlagSet, publishes string) *queueRun {
	return &queueRun{
		url:   fs.String("queue", "", "publish "+publishes+" on the queue at this NATS URL (or embedded: a server and --jobs workers here) for `coworkenv worker` to run"),
		flags: addQueueFlags(fs, true),
	}
}

// on reports whether a queue flag was given: --queue, or a setting (an error without --queue).
func (r *queueRun) on() bool {
	given := false
	r.flags.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "queue", "ack-wait", "max-deliver", "retry-failed":
			given = true
		}
	})
	return given
}

// options are the queue's options, once the flags are parsed (a usage error: see queueFlags).
func (r *queueRun) options() ([]queue.Option, error) {
	if *r.url == "" {
		_, err := r.flags.options("")
		if err == nil {
			err = errors.New("--queue URL is empty")
		}
		return nil, err
	}
	return r.flags.options(*r.url)
}

// validateQueued is `validate --queue URL|embedded`: the report of the sources, each task file
// checked by a worker of the queue (with embedded, jobs workers on a pool here) with the
// recorded runs of its source (runs, by source). An error is a usage error or one of the queue.
func validateQueued(qr *queueRun, iso *isolation, jobs int, srcs []*source, runs [][]*recorded.Run, tm *isolate.TaskModels, stderr io.Writer) (*validate.Report, error) {
	if *iso.inProcess {
		return nil, errors.New("--queue checks every file in workers; drop --in-process")
	}
	opts, err := qr.options()
	if err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var list []isolate.Source
	for i, s := range srcs {
		list = append(list, isolate.Source{Corpus: s.corpus, Files: s.files, Runs: runs[i]})
	}
	var pool *isolate.Pool
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	var bar *progress.Bar
	defer func() { bar.Close() }()
	var reps []*validate.Report
	err = onQueue(ctx, *qr.url, isolate.ValidateQueue, opts, jobs,
		func() (queue.Handler, error) {
			var err error
			if pool, err = iso.pool(jobs); err != nil {
				return nil, err
			}
			return isolate.ValidateHandler(pool, os.Getenv), nil
		},
		func(q *queue.Queue) error {
			var err error
			reps, err = isolate.ValidateQueued(ctx, q, list, isolate.QueuedValidateOptions{Models: tm,
				Progress: func(p queue.Progress) {
					if bar == nil {
						bar = progress.New(stderr, "validate", p.Total)
					}
					bar.Set(p.Done+p.Failed, p.String())
				}})
			return err
		})
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", err)
		}
		return nil, err
	}
	bar.Close()
	rep := &validate.Report{}
	for _, r := range reps {
		rep.Merge(r)
	}
	return rep, nil
}
