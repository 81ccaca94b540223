package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/rollout"
)

// jobKinds are the kinds of jobs `coworkenv worker` runs, each from the queue of its name.
var jobKinds = []string{rollout.QueueName, isolate.ValidateQueue, generator.QueueName}

const workerUsage = "worker --queue URL [--kinds rollout,validate,generate] [--jobs N] [--memory-limit MiB] [--time-limit D]\n" +
	"       [--ack-wait D] [--max-deliver N]\n\n" +
	"Pulls the jobs that `rollout`, `validate` and `generate` publish with --queue URL from the NATS JetStream\n" +
	"server at URL (docs/scaling.md) and runs them until Ctrl-C: N jobs of each kind of --kinds at a time\n" +
	"(default: every kind, each from its queue: rollout, validate, generate), on one pool of N worker\n" +
	"processes with the memory and time limits. A rollout job is one episode, run as a local isolated\n" +
	"rollout runs it, and its trace goes back; a validate job is one task file, checked as a local\n" +
	"validate checks it, and its report goes back; a generate job is one attempt (the model's rounds,\n" +
	"each candidate validated in a worker process), and its outcome goes back. A model's requests go out\n" +
	"with $OPENAI_API_KEY (and $OPENAI_BASE_URL for a model without a base URL) of this process; the\n" +
	"values of --header flags given to rollout do not travel with the jobs. A job that cannot run (an\n" +
	"episode that does not start, a setup that fails, a worker process that stops in an episode, a model\n" +
	"that fails for good) is delivered again, and fails with the reason after its last delivery. A job\n" +
	"running when the worker stops goes to another worker after the queue's ack wait. Run `coworkenv\n" +
	"worker --kinds K` on machines dedicated to one kind.\n\n" + queueFlagsHelp

// workerOptions are the options of `coworkenv worker`.
type workerOptions struct {
	streams
	url, kinds string
	jobs       int
	iso        *isolation
	queue      *queueFlags
}

func (o *workerOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "queue", "", "URL of the NATS server of the queue, like nats://127.0.0.1:4222 (required)")
	fs.StringVar(&o.kinds, "kinds", strings.Join(jobKinds, ","), "the kinds of jobs to run, comma-separated")
	fs.IntVar(&o.jobs, "jobs", 4, "jobs of each kind run at once, and worker processes")
	o.iso = addIsolationFlags(fs, "episode or file")
	o.queue = addQueueFlags(fs, false)
}

func (o *workerOptions) args(pos []string) error { return noArgs(pos) }

// runWorker is `coworkenv worker --queue URL`.
func runWorker(o *workerOptions) error {
	switch {
	case o.url == "" || o.url == "embedded":
		return usagef("--queue URL of a NATS server is required")
	case o.jobs < 1:
		return positive("--jobs", o.jobs)
	case *o.iso.inProcess:
		return usagef("--in-process: jobs always run in worker processes")
	}
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	names, err := parseKinds(o.kinds)
	if err != nil {
		return usage(err)
	}
	qopts, err := o.queue.options(o.url)
	if err != nil {
		return usage(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	pool, err := o.iso.pool(o.jobs)
	if err != nil {
		return usage(err)
	}
	defer pool.Close()
	var loops []workLoop
	for _, name := range names {
		q, err := queue.Open(ctx, o.url, name, qopts...)
		if err != nil {
			return usage(err)
		}
		defer q.Close()
		loops = append(loops, workLoop{q, handlerOf(name, pool, o.stderr), o.jobs})
	}
	fmt.Fprintf(o.stderr, "coworkenv worker: running %s jobs from %s, %d of each at a time; Ctrl-C stops\n", strings.Join(names, ", "), o.url, o.jobs)
	return usage(work(ctx, loops...))
}

// parseKinds reads --kinds: known kinds, each once, in the order given.
func parseKinds(s string) ([]string, error) {
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "":
			continue
		case !slices.Contains(jobKinds, k):
			return nil, fmt.Errorf("--kinds: unknown kind %q (kinds: %s)", k, strings.Join(jobKinds, ", "))
		case !slices.Contains(out, k):
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--kinds: no kind given")
	}
	return out, nil
}

// handlerOf is the handler of the jobs of the queue name, on pool, with the model keys of this
// process's environment; generate jobs tell their repair rounds on log.
func handlerOf(name string, pool *isolate.Pool, log io.Writer) queue.Handler {
	switch name {
	case isolate.ValidateQueue:
		return isolate.ValidateHandler(pool, os.Getenv)
	case generator.QueueName:
		return generator.Handler(pool, os.Getenv, log)
	}
	return rollout.Handler(pool, os.Getenv)
}

// workLoop is n workers of one queue.
type workLoop struct {
	q       *queue.Queue
	handler queue.Handler
	n       int
}

// work runs the loops until ctx is done; an error is the first that stopped a worker (the server
// cannot be reached), and it stops the others.
func work(ctx context.Context, loops ...workLoop) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, l := range loops {
		for range l.n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := l.q.Work(ctx, l.handler); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("queue %s: %w", l.q.Name(), err))
					mu.Unlock()
					cancel()
				}
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// onQueue runs produce on the queue name at url, opened with opts. With url "embedded" it starts
// a server in this process (storing in a temporary folder, removed afterwards) and, while produce
// runs, n workers of the handler that handler makes (called once, after the server started).
func onQueue(ctx context.Context, url, name string, opts []queue.Option, n int, handler func() (queue.Handler, error), produce func(*queue.Queue) error) error {
	if url != "embedded" {
		q, err := queue.Open(ctx, url, name, opts...)
		if err != nil {
			return err
		}
		defer q.Close()
		return produce(q)
	}
	dir, err := os.MkdirTemp("", "coworkenv-queue-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, stopServer, err := queue.Embedded(dir)
	if err != nil {
		return err
	}
	defer stopServer()
	q, err := queue.Open(ctx, addr, name, opts...)
	if err != nil {
		return err
	}
	defer q.Close()
	h, err := handler()
	if err != nil {
		return err
	}
	wctx, stopWorkers := context.WithCancel(ctx)
	werr := make(chan error, 1)
	go func() { werr <- work(wctx, workLoop{q, h, n}) }()
	err = produce(q)
	stopWorkers()
	if e := <-werr; err == nil && e != nil {
		err = e
	}
	return err
}

// runQueued is `rollout --queue URL|embedded`: it publishes the samples on the queue at url and
// writes the traces the workers send back (onQueue; embedded, jobs workers on pool here).
func runQueued(ctx context.Context, url string, jobs int, pool func() (*isolate.Pool, error), tasks []rollout.Task, opts rollout.Options, qopts ...queue.Option) (*rollout.Result, error) {
	var res *rollout.Result
	err := onQueue(ctx, url, rollout.QueueName, qopts, jobs,
		func() (queue.Handler, error) {
			p, err := pool()
			if err != nil {
				return nil, err
			}
			return rollout.Handler(p, os.Getenv), nil
		},
		func(q *queue.Queue) error {
			var err error
			res, err = rollout.RunQueued(ctx, tasks, opts, q)
			return err
		})
	return res, err
}
