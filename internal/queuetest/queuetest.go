// Package queuetest starts a queue for tests: an embedded NATS server, a queue on it and workers
// in the test's process, all stopped when the test ends.
package queuetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coworkenv/coworkenv/queue"
)

// Workers is a queue on an embedded server and the workers that run its jobs.
type Workers struct {
	Q    *queue.Queue // the producers' side of the queue
	URL  string       // the server's
	runs atomic.Int64
	stop func()
}

// Options tune Start.
type Options struct {
	// MaxPayload, when set, is the largest message the server takes (queue.EmbeddedWith).
	MaxPayload int32
}

// Start starts a server and opens the queue name on it, and n workers (queue.Work) that run
// handler on its jobs, each on its own connection as a worker process has. Everything stops
// when the test ends, or with Stop.
func Start(t testing.TB, name string, n int, handler queue.Handler, opts ...Options) *Workers {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	var url string
	var stopServer func()
	var err error
	if o.MaxPayload > 0 {
		url, stopServer, err = queue.EmbeddedWith(t.TempDir(), o.MaxPayload)
	} else {
		url, stopServer, err = queue.Embedded(t.TempDir())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopServer)
	open := func() *queue.Queue {
		q, err := queue.Open(context.Background(), url, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(q.Close)
		return q
	}
	w := &Workers{Q: open(), URL: url}
	wq := open() // the workers' connection, shared as the loops of a worker process share it
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := wq.Work(ctx, func(ctx context.Context, job queue.Job) ([]byte, error) {
				w.runs.Add(1)
				return handler(ctx, job)
			})
			if err != nil {
				t.Errorf("queue %s: a worker stopped: %v", name, err)
			}
		}()
	}
	var once sync.Once
	w.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(w.stop)
	return w
}

// Runs is how many jobs the workers ran (each delivery counts).
func (w *Workers) Runs() int64 { return w.runs.Load() }

// Stop stops the workers and waits for them; the server and the queue stay.
func (w *Workers) Stop() { w.stop() }
