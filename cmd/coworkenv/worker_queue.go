package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/rollout"
)

const workerUsage = "worker --queue URL [--jobs N] [--memory-limit MiB] [--time-limit D]\n\n" +
	"Pulls the jobs of `rollout --queue URL` from the NATS JetStream server at URL (docs/scaling.md) and\n" +
	"runs them, N at a time, until Ctrl-C: each job is one episode, run in a worker process with the\n" +
	"memory and time limits as a local isolated rollout runs it, and its trace goes back as the job's\n" +
	"result. A model's requests go out with $OPENAI_API_KEY (and $OPENAI_BASE_URL for a model without a\n" +
	"base URL) of this process; the values of --header flags given to rollout do not travel with the\n" +
	"jobs. A job whose episode does not start, whose setup fails, whose worker stops or whose model fails\n" +
	"for good is delivered again, and fails with the reason after its last delivery. A job running when\n" +
	"the worker stops goes to another worker after the queue's ack wait.\n\n" +
	"Exit status: 0 stopped, 2 bad usage or the server cannot be reached."

// cmdQueueWorker is `coworkenv worker --queue URL`.
func cmdQueueWorker(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("worker", workerUsage, stderr)
	url := fs.String("queue", "", "URL of the NATS server of the queue, like nats://127.0.0.1:4222 (required)")
	jobs := fs.Int("jobs", 4, "jobs run at once")
	iso := addIsolationFlags(fs, "episode")
	pos, code, ok := parse(fs, workerUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(pos) > 0:
		fmt.Fprintf(stderr, "coworkenv worker: unexpected argument %q\n", pos[0])
		return 2
	case *url == "" || *url == "embedded":
		fmt.Fprintln(stderr, "coworkenv worker: --queue URL of a NATS server is required")
		return 2
	case *jobs < 1:
		fmt.Fprintf(stderr, "coworkenv worker: --jobs: %d is not a positive number\n", *jobs)
		return 2
	case *iso.inProcess:
		fmt.Fprintln(stderr, "coworkenv worker: --in-process: jobs always run in worker processes")
		return 2
	}
	if err := iso.check(); err != nil {
		fmt.Fprintf(stderr, "coworkenv worker: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	q, err := queue.Open(ctx, *url, rollout.QueueName)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv worker: %v\n", err)
		return 2
	}
	defer q.Close()
	pool, err := iso.pool(*jobs)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv worker: %v\n", err)
		return 2
	}
	defer pool.Close()
	fmt.Fprintf(stderr, "coworkenv worker: running rollout jobs from %s, %d at a time; Ctrl-C stops\n", *url, *jobs)
	if err := work(ctx, q, pool, *jobs); err != nil {
		fmt.Fprintf(stderr, "coworkenv worker: %v\n", err)
		return 2
	}
	return 0
}

// work runs n workers of rollout jobs on q with pool until ctx is done; an error is the first
// that stopped a worker (the server cannot be reached), and it stops the others.
func work(ctx context.Context, q *queue.Queue, pool *isolate.Pool, n int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	handler := rollout.Handler(pool, os.Getenv)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = q.Work(ctx, handler); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runQueued is `rollout --queue URL|embedded`: it publishes the samples on the queue at url and
// writes the traces the workers send back. With "embedded" it starts a server in this process
// (storing in a temporary folder, removed afterwards) and runs jobs workers on pool here.
func runQueued(ctx context.Context, url string, jobs int, pool func() (*isolate.Pool, error), tasks []rollout.Task, opts rollout.Options) (*rollout.Result, error) {
	if url != "embedded" {
		q, err := queue.Open(ctx, url, rollout.QueueName)
		if err != nil {
			return nil, err
		}
		defer q.Close()
		return rollout.RunQueued(ctx, tasks, opts, q)
	}
	dir, err := os.MkdirTemp("", "coworkenv-queue-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	addr, stopServer, err := queue.Embedded(dir)
	if err != nil {
		return nil, err
	}
	defer stopServer()
	q, err := queue.Open(ctx, addr, rollout.QueueName)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	p, err := pool()
	if err != nil {
		return nil, err
	}
	wctx, stopWorkers := context.WithCancel(ctx)
	werr := make(chan error, 1)
	go func() { werr <- work(wctx, q, p, jobs) }()
	res, err := rollout.RunQueued(ctx, tasks, opts, q)
	stopWorkers()
	if e := <-werr; err == nil && e != nil {
		err = e
	}
	return res, err
}
