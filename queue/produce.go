package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Progress counts the jobs of one Produce call.
type Progress struct {
	Total   int // the jobs of the call, those it has yet to publish included
	Queued  int // published, without a result, and not with a worker as far as the server says
	Running int // with a worker (from the server's count, read every Produce.Poll: for display)
	Done    int // with an OK result
	Failed  int // with a failed result
}

// String is the detail a progress display shows: "12 done · 1 failed · 3 running · 20 queued"
// (the failed count only when there is one).
func (p Progress) String() string {
	parts := []string{fmt.Sprintf("%d done", p.Done)}
	if p.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", p.Failed))
	}
	parts = append(parts, fmt.Sprintf("%d running", p.Running), fmt.Sprintf("%d queued", p.Queued))
	return strings.Join(parts, " · ")
}

// DefaultPoll is how often Produce reads the number of running jobs for its progress.
const DefaultPoll = time.Second

// Produce is what a producer publishes and how it takes the results.
type Produce struct {
	// Jobs are published first, in order, each under its ID (set it: see JobID). A job whose ID
	// came earlier in the call is not published again, and its result is taken once.
	Jobs []Job
	// OnResult takes the result of each job of the call (the one Results yields for it), one at
	// a time, in the order they come; it returns the jobs to publish next (a producer that publishes as results come
	// in, like generate's window of attempts), and an error that stops Produce.
	OnResult func(Result) ([]Job, error)
	// Later, when set, says whether a job ID may be published later in the call (by OnResult).
	// Results are read from the first one on, so the result of such a job may come before the
	// job is published, when an earlier run on the same queue did it: Produce keeps those results
	// and takes the job's when it is published, instead of waiting for a result that was read
	// already (a failed one excepted on a queue opened WithRetryFailed: the job is published
	// again, as Publish does).
	Later func(id string) bool
	// Total is the number of jobs the call publishes in all, for Progress (default: those of
	// Jobs).
	Total int
	// Progress, when set, is told the counts after the first jobs are published, when a result
	// is taken (before OnResult), after the jobs OnResult returns are published, and every Poll
	// (with the running count the server gives); one call at a time.
	Progress func(Progress)
	// Poll is how often the running count is read for Progress (default DefaultPoll).
	Poll time.Duration
}

// Produce publishes p's jobs, and those OnResult returns, and hands OnResult each job's result
// until every published job has one. It returns nil then, ctx's error when ctx is done
// first, OnResult's error, or an error of the queue (a job that cannot be published, results that
// cannot be read). A job without a result when Produce returns stays on the queue: a producer that
// publishes it again later (a duplicate, dropped) reads the result its worker sends.
func (q *Queue) Produce(ctx context.Context, p Produce) error {
	pr := &producer{q: q, p: p, waiting: map[string]bool{}, taken: map[string]bool{}, kept: map[string]Result{}}
	pr.prog.Total = p.Total
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := pr.publish(ctx, p.Jobs); err != nil {
		return err
	}
	stopPoll := pr.poll(ctx)
	defer stopPoll()
	pr.report()
	if err := pr.takeReady(ctx); err != nil {
		return err
	}
	if len(pr.waiting) == 0 {
		return nil
	}
	var qerr error
	for r, err := range q.Results(ctx) {
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			qerr = err // an unreadable result; reading goes on unless the queue stopped
			continue
		}
		switch {
		case pr.waiting[r.JobID]:
			pr.ready = append(pr.ready, r)
		case !pr.taken[r.JobID] && p.Later != nil && p.Later(r.JobID):
			pr.kept[r.JobID] = r
		}
		if err := pr.takeReady(ctx); err != nil {
			return err
		}
		if len(pr.waiting) == 0 {
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if qerr == nil {
		qerr = errors.New("the results ended")
	}
	return fmt.Errorf("queue %s: %w", q.name, qerr)
}

// producer is the state of one Produce call.
type producer struct {
	q       *Queue
	p       Produce
	waiting map[string]bool   // published, no result taken yet
	taken   map[string]bool   // result taken
	kept    map[string]Result // results of jobs not published yet (Produce.Later)
	ready   []Result          // results to hand OnResult, in order

	mu      sync.Mutex // guards what follows, and the calls of Progress
	prog    Progress
	nwait   int // len(waiting), for the poller
	running int // the server's count of jobs with a worker, last read
}

// publish publishes jobs; a job whose result was kept is taken instead.
func (pr *producer) publish(ctx context.Context, jobs []Job) error {
	for _, j := range jobs {
		if j.ID == "" {
			j.ID = JobID(j.Kind, j.Body)
		}
		if pr.waiting[j.ID] || pr.taken[j.ID] {
			continue
		}
		if r, ok := pr.kept[j.ID]; ok {
			delete(pr.kept, j.ID)
			if r.OK || !pr.q.retryFailed {
				pr.waiting[j.ID] = true
				pr.ready = append(pr.ready, r)
				continue
			}
			// a failure, which Publish runs again
		}
		if _, err := pr.q.Publish(ctx, j); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		pr.waiting[j.ID] = true
	}
	pr.mu.Lock()
	pr.nwait = len(pr.waiting)
	pr.prog.Total = max(pr.prog.Total, len(pr.waiting)+len(pr.taken))
	pr.count()
	pr.mu.Unlock()
	return nil
}

// takeReady hands the ready results to OnResult and publishes what it returns.
func (pr *producer) takeReady(ctx context.Context) error {
	for len(pr.ready) > 0 {
		r := pr.ready[0]
		pr.ready = pr.ready[1:]
		delete(pr.waiting, r.JobID)
		pr.taken[r.JobID] = true
		pr.mu.Lock()
		pr.nwait = len(pr.waiting)
		if r.OK {
			pr.prog.Done++
		} else {
			pr.prog.Failed++
		}
		pr.count()
		pr.mu.Unlock()
		// the counts are told before OnResult, so that a display that also counts what OnResult
		// records never shows the job as both finished and still waiting
		pr.report()
		more, err := pr.p.OnResult(r)
		if err != nil {
			return err
		}
		if len(more) > 0 {
			if err := pr.publish(ctx, more); err != nil {
				return err
			}
			pr.report()
		}
	}
	return nil
}

// count sets the queued and running counts from the jobs waiting; pr.mu is held.
func (pr *producer) count() {
	pr.prog.Running = min(pr.running, pr.nwait)
	pr.prog.Queued = pr.nwait - pr.prog.Running
}

// report tells Progress the counts.
func (pr *producer) report() {
	if pr.p.Progress == nil {
		return
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.p.Progress(pr.prog)
}

// poll reads the server's count of running jobs every Poll for Progress, until the returned
// function is called (it waits for the reader to stop).
func (pr *producer) poll(ctx context.Context) (stop func()) {
	if pr.p.Progress == nil {
		return func() {}
	}
	every := pr.p.Poll
	if every <= 0 {
		every = DefaultPoll
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			info, err := pr.q.workers.Info(ctx)
			if err != nil {
				continue // the display keeps the last count
			}
			pr.mu.Lock()
			pr.running = info.NumAckPending
			pr.count()
			pr.p.Progress(pr.prog)
			pr.mu.Unlock()
		}
	}()
	return func() { cancel(); <-done }
}
