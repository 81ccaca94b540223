package export

import (
	"context"
	"errors"
	"sort"
	"strconv"

	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Sink writes the episodes of one export: a kind of output (sft, rl, atif, inspect).
type Sink interface {
	// Skip says why an episode is left out before its replay ("" keeps it): the kind's own rule.
	Skip(e *Episode) string
	// Add writes one episode; system is its system message ("" when none).
	Add(e *Episode, system string) error
	// Commit finishes the output (atomically: the path holds the old output or the whole new one).
	Commit() error
	// Abort drops what was written.
	Abort()
}

// RunOptions tune Run.
type RunOptions struct {
	// Verify, when set, replays the trace of an episode that would be kept (data, as read):
	// why is the reason it is left out ("" keeps it), detail what a person needs to know about
	// it, and undone that it could not be checked at all (the replay could not run).
	Verify func(ctx context.Context, data []byte, e *Episode) (why, detail string, undone bool)
	// Systems gives the episodes' system messages (nil: only the recorded ones).
	Systems *Systems
	// Progress, when set, is told before each trace and at the end how many traces were read
	// and how many episodes kept.
	Progress func(done, kept int)
	// OnUnreadable, OnLeftOut and OnNoSystem, when set, are told of each trace that cannot be
	// read, each left out after its replay, and the first episode of each task without a system
	// message.
	OnUnreadable func(path string, err error)
	OnLeftOut    func(path, why, detail string)
	OnNoSystem   func(e *Episode, err error)
}

// Summary is what an export did.
type Summary struct {
	// Traces were read, Kept episodes written.
	Traces, Kept int
	// Skipped counts the episodes left out by reason: the ones every kind leaves out (RLSkip),
	// the kind's own (Sink.Skip), and the replay's.
	Skipped map[string]int
	// Unreadable traces could not be read; LeftOut episodes were left out after their replay,
	// Unverified of them because the replay could not check them; NoSystem episodes have no
	// system message.
	Unreadable, LeftOut, Unverified, NoSystem int
}

// Reasons are the reasons of Skipped, "N reason" each, sorted, and how many episodes they left
// out.
func (s *Summary) Reasons() ([]string, int) {
	var reasons []string
	n := 0
	for why, k := range s.Skipped {
		n += k
		reasons = append(reasons, strconv.Itoa(k)+" "+why)
	}
	sort.Strings(reasons)
	return reasons, n
}

// Failed reports whether a trace was left out as unreadable, unverified, diverged or changed: work
// left undone, unlike an episode its kind leaves out by rule.
func (s *Summary) Failed() bool { return s.Unreadable > 0 || s.Unverified > 0 || s.LeftOut > 0 }

// ErrInterrupted ends a Run whose context was done: nothing was written.
var ErrInterrupted = errors.New("interrupted")

// Run writes to sink the episodes of the traces at paths, in order: each trace is read whole
// (one that cannot be read is left out), left out when every kind leaves it out (RLSkip: a
// model-error or an interrupted episode) or the sink's kind does, else verified (opts.Verify)
// and, when kept, written with its system message. It commits the sink when every trace is
// read. An error is ErrInterrupted (ctx is done during a replay) or a write's; either way the
// sink is aborted and nothing is written.
func Run(ctx context.Context, paths []string, sink Sink, opts RunOptions) (*Summary, error) {
	sum := &Summary{Traces: len(paths), Skipped: map[string]int{}}
	systems := opts.Systems
	if systems == nil {
		systems = &Systems{}
	}
	noSystemTasks := map[string]bool{}
	progress := func(done int) {
		if opts.Progress != nil {
			opts.Progress(done, sum.Kept)
		}
	}
	for i, p := range paths {
		progress(i)
		data, err := trace.ReadFile(p)
		var e *Episode
		if err == nil {
			e, err = Decode(p, data)
		}
		if err != nil {
			if opts.OnUnreadable != nil {
				opts.OnUnreadable(p, err)
			}
			sum.Unreadable++
			continue
		}
		why := RLSkip(e)
		if why == "" {
			why = sink.Skip(e)
		}
		if why != "" {
			sum.Skipped[why]++
			continue
		}
		if opts.Verify != nil {
			why, detail, undone := opts.Verify(ctx, data, e)
			if ctx.Err() != nil {
				sink.Abort()
				return sum, ErrInterrupted
			}
			if why != "" {
				sum.Skipped[why]++
				sum.LeftOut++
				if opts.OnLeftOut != nil {
					opts.OnLeftOut(p, why, detail)
				}
				if undone {
					sum.Unverified++
				}
				continue
			}
		}
		system, err := systems.For(e)
		if err != nil {
			sum.NoSystem++
			if key := e.File() + ":" + e.Task(); !noSystemTasks[key] {
				noSystemTasks[key] = true
				if opts.OnNoSystem != nil {
					opts.OnNoSystem(e, err)
				}
			}
		}
		if err := sink.Add(e, system); err != nil {
			sink.Abort()
			return sum, err
		}
		sum.Kept++
	}
	progress(len(paths))
	if err := sink.Commit(); err != nil {
		return sum, err
	}
	return sum, nil
}
