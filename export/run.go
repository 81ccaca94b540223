package export

import (
	"context"
	"crypto/sha256"
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
	// Select, when it drops anything (Selection.Active), chooses among the episodes the kind
	// keeps before any is verified: every trace is read once to choose, and the chosen ones again
	// to verify and write them (a trace that changed in between is unreadable).
	Select *Selection
	// Refuse, when set, is asked about every episode read; an error stops the export before
	// anything is written (export sft and rl refuse an episode of a test split).
	Refuse func(e *Episode) error
}

// Summary is what an export did.
type Summary struct {
	// Traces were read, Kept episodes written.
	Traces, Kept int
	// Candidates are the episodes a Selection chose from (0 without one): those the kind keeps.
	Candidates int
	// Splits counts the episodes written by the split their trace records ("" for none).
	Splits map[string]int
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
	sum := &Summary{Traces: len(paths), Skipped: map[string]int{}, Splits: map[string]int{}}
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
	unreadable := func(p string, err error) {
		if opts.OnUnreadable != nil {
			opts.OnUnreadable(p, err)
		}
		sum.Unreadable++
	}
	var chosen map[int][32]byte // with a selection: the digest of each chosen trace, by index
	if opts.Select.Active() {
		var err error
		if chosen, err = choose(paths, sink, opts, sum, unreadable); err != nil {
			sink.Abort()
			return sum, err
		}
	}
	for i, p := range paths {
		progress(i)
		digest, ok := chosen[i]
		if chosen != nil && !ok {
			continue // unreadable, skipped or not chosen: counted by choose
		}
		data, err := trace.ReadFile(p)
		var e *Episode
		if err == nil && chosen != nil && sha256.Sum256(data) != digest {
			err = errors.New("the trace changed while it was exported")
		}
		if err == nil {
			e, err = Decode(p, data)
		}
		if err != nil {
			unreadable(p, err)
			continue
		}
		if opts.Refuse != nil && chosen == nil {
			if err := opts.Refuse(e); err != nil {
				sink.Abort()
				return sum, err
			}
		}
		if why := leftOut(sink, e); why != "" {
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
		sum.Splits[e.SplitOf()]++
	}
	progress(len(paths))
	if err := sink.Commit(); err != nil {
		return sum, err
	}
	return sum, nil
}

// leftOut says why an export leaves e out ("" when it keeps it): an inconclusive episode (RLSkip),
// else the kind's own rule.
func leftOut(sink Sink, e *Episode) string {
	if why := RLSkip(e); why != "" {
		return why
	}
	return sink.Skip(e)
}

// choose reads every trace once and lets opts.Select choose among the episodes the kind keeps:
// the digest of each chosen trace's bytes, by its index in paths. Unreadable traces, skipped
// episodes and those not chosen are counted in sum.
func choose(paths []string, sink Sink, opts RunOptions, sum *Summary, unreadable func(string, error)) (map[int][32]byte, error) {
	var cands []candidate
	digests := map[int][32]byte{}
	for i, p := range paths {
		data, err := trace.ReadFile(p)
		var e *Episode
		if err == nil {
			e, err = Decode(p, data)
		}
		if err != nil {
			unreadable(p, err)
			continue
		}
		if opts.Refuse != nil {
			if err := opts.Refuse(e); err != nil {
				return nil, err
			}
		}
		if why := leftOut(sink, e); why != "" {
			sum.Skipped[why]++
			continue
		}
		digests[i] = sha256.Sum256(data)
		cands = append(cands, opts.Select.candidateOf(i, e))
	}
	sum.Candidates = len(cands)
	kept, dropped := opts.Select.choose(cands)
	for i, why := range dropped {
		sum.Skipped[why]++
		delete(digests, i)
	}
	for i := range digests {
		if !kept[i] {
			delete(digests, i) // not reached: every candidate is kept or dropped
		}
	}
	return digests, nil
}
