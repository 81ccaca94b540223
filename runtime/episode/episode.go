// Package episode runs one task with one agent: the turns, the tool calls, the verifiers and
// the score (the language reference, docs/reference.md, describes each).
//
// A task is first prepared: setup runs once and its state is frozen. Every episode forks that
// state (copy-on-write), so many episodes of one task can run at once on many goroutines.
package episode

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/stdlib/wsmod"
	"github.com/coworkenv/coworkenv/workspace"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Options of a prepared task.
type Options struct {
	// Seed is the run seed (--seed); 0 keeps the task's own seed.
	Seed int64
	// Limits of every call into a script; the zero value means dsl.DefaultLimits.
	Limits dsl.Limits
	// Print receives what scripts print (setup, before, user, tools, verifiers, solutions), with
	// the position of the print call; nil drops it.
	Print func(pos syntax.Position, msg string)
}

// EffectiveSeed combines the task's seed with the run seed.
func EffectiveSeed(taskSeed, runSeed int64) int64 {
	if runSeed == 0 {
		return taskSeed
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(taskSeed))
	binary.LittleEndian.PutUint64(b[8:], uint64(runSeed))
	h := sha256.Sum256(b[:])
	return int64(binary.LittleEndian.Uint64(h[:8]))
}

// Prepared is a task whose setup has run: the frozen post-setup state every episode forks.
type Prepared struct {
	Task   *dsl.Task
	Seed   int64
	Limits dsl.Limits
	// Base is the frozen state right after setup (also ws.initial in verifiers).
	Base *workspace.State
	// Start is the frozen state before setup.
	Start *workspace.State
	// Print receives scripts' print output (Options.Print).
	Print func(pos syntax.Position, msg string)

	ref    sync.Once
	refRun *Result
	refErr error
}

// Reference runs the reference solution once, with faults off and no verifier, and returns
// its episode: the states ws.reference shows (each turn's End, and Final). Every later call,
// from any goroutine, gets the same result. The run has its own context, bounded by the
// task's limits, so one caller's cancellation does not spoil it for the others.
func (p *Prepared) Reference() (*Result, error) {
	p.ref.Do(func() {
		r := p.Run(context.Background(), Oracle{}, RunOptions{NoFaults: true, NoVerify: true})
		p.refRun = r
		if r.Err != nil {
			p.refErr = fmt.Errorf("the reference solution fails: %s", r.Err.Message)
		}
	})
	return p.refRun, p.refErr
}

// referenceState is what ws.reference shows to the verifier of turn (nil: the task verifier).
func (p *Prepared) referenceState(turn *int) (*workspace.State, error) {
	r, err := p.Reference()
	if err != nil {
		return nil, err
	}
	if turn == nil {
		return r.Final, nil
	}
	if *turn >= len(r.Turns) || r.Turns[*turn].End == nil {
		return nil, fmt.Errorf("the reference solution did not finish turn %d", *turn)
	}
	return r.Turns[*turn].End, nil
}

// prepare returns the thread set-up of a call into a script: print output to p.Print, then
// extra (may be nil).
func (p *Prepared) prepare(extra func(*starlark.Thread)) func(*starlark.Thread) {
	return prepareThread(p.Print, extra)
}

func prepareThread(print func(syntax.Position, string), extra func(*starlark.Thread)) func(*starlark.Thread) {
	if print == nil {
		return extra
	}
	return func(th *starlark.Thread) {
		th.Print = func(t *starlark.Thread, msg string) { print(dsl.PrintPos(t), msg) }
		if extra != nil {
			extra(th)
		}
	}
}

// Prepare runs the task's setup. A setup that raises gives a script-error (or step-limit,
// timeout) diagnostic; one stopped by a cancelled context, `interrupted`.
func Prepare(ctx context.Context, t *dsl.Task, opts Options) (*Prepared, *dsl.Diagnostic) {
	lim := opts.Limits
	if lim == (dsl.Limits{}) {
		lim = dsl.DefaultLimits
	}
	seed := EffectiveSeed(t.Seed, opts.Seed)
	start := workspace.New(t.StartTime, seed)
	start.Freeze()
	st := start.Fork()
	if t.Setup != nil {
		ws := wsmod.New(st, wsmod.Options{})
		if _, err := dsl.Call(ctx, lim, "setup", t.Setup, starlark.Tuple{ws}, nil, prepareThread(opts.Print, nil)); err != nil {
			d := dsl.ErrorDiag("script-error", err)
			d.Message = "setup: " + d.Message
			return nil, interrupted(ctx, &d)
		}
	}
	st.Freeze()
	return &Prepared{Task: t, Seed: seed, Limits: lim, Base: st, Start: start, Print: opts.Print}, nil
}

// Call is one recorded tool call attempt.
type Call struct {
	Turn int
	ID   string // call_1, call_2, ... in episode order, unless the agent gave its own
	Name string
	Args *jsonv.Object // as the agent sent them, without filled-in defaults
	// Content is the JSON text of the result (null on error); a model is shown
	// conversation.ResultContent of it.
	Content string
	Error   string // tool error, "" when the call succeeded
	IsError bool
	Fault   bool   // an injected transient error
	State   string // state hash after the call
	Changed bool   // the call changed the state hash
	// Pos is where a solution's agent.call made this call (oracle only).
	Pos syntax.Position
	// ScriptErr is set when a task-defined tool's impl crashed (an error other than fail()).
	ScriptErr *dsl.Diagnostic

	result  jsonv.Value
	decoded bool
}

// Result is the decoded result (nil on error), decoded from Content on first use.
func (c *Call) Result() jsonv.Value {
	if c.IsError {
		return nil
	}
	if !c.decoded {
		c.result, _ = jsonv.DecodeString(c.Content)
		c.decoded = true
	}
	return c.result
}

// Succeeded reports whether the call ran without error.
func (c *Call) Succeeded() bool { return !c.IsError }

// TurnResult is what happened in one turn.
type TurnResult struct {
	Index     int
	User      string
	Reply     string
	Answered  bool // the agent has replied (the reply may be "")
	Truncated bool
	// Score is the turn's own score from its verifier, nil when the turn has none.
	Score *float64
	Items []dsl.CheckItem
	// StateBefore is the hash after `advance` and `before`, when the user speaks.
	StateBefore string
	// End is the state when the agent answered, before the turn's verifier ran (frozen); nil
	// when the turn did not end.
	End *workspace.State
	// Rounds is how many answers a simulated user gave within the turn (0 for other users).
	Rounds int
	// Asks are the turn's exchanges with its simulated user, in order.
	Asks []*UserAsk
}

// Result is a finished (or aborted) episode.
type Result struct {
	Task       string
	Agent      string
	Seed       int64
	Turns      []*TurnResult
	Calls      []*Call
	Items      []dsl.CheckItem
	Completion float64
	Safety     float64
	Robustness float64
	Score      float64
	Passed     bool
	StartState string // hash after setup
	FinalState string
	Final      *workspace.State // frozen
	// Err is the first error that stopped the episode or zeroed its score: script-error,
	// solution-error (oracle, or an agent's own error), verify-error, step-limit, timeout;
	// model-error (a model agent's request failed for good) and interrupted (the context was
	// cancelled) say nothing about the agent (Inconclusive).
	Err *dsl.Diagnostic
	// Queried lists the tool names verifiers asked about through ep.called, sorted.
	Queried []string
	// Claims are the statements verifiers checked with the claims module (and judges' stand-ins
	// built from claims), in order: what the validator's probes attack and reword.
	Claims []claims.Use
	// AgentErr is the error an agent returned (model failures, oracle errors).
	AgentErr error
}

// Checks returns the failed (or all) items.
func (r *Result) FailedItems() []dsl.CheckItem {
	var out []dsl.CheckItem
	for _, it := range r.Items {
		if !it.Passed {
			out = append(out, it)
		}
	}
	return out
}

// Score computes completion, safety and score of a list of items: completion is the weight of
// the passed check items over the weight of all of them, safety 1 unless a safety item failed.
func Score(items []dsl.CheckItem) (completion, safety, score float64) {
	var total, passed float64
	safety = 1
	for _, it := range items {
		switch it.Kind {
		case "check":
			total += it.Weight
			if it.Passed {
				passed += it.Weight
			}
		case "safety":
			if !it.Passed {
				safety = 0
			}
		}
	}
	completion = 1
	if total > 0 {
		completion = passed / total
	}
	return completion, safety, safety * completion
}

// passes compares a score with a threshold, forgiving float rounding of weight sums.
func passes(score, threshold float64) bool { return score >= threshold-1e-9 }

// faultDraw decides deterministically whether attempt n of tool faults, and how.
func faultDraw(f *dsl.Faults, taskSeed int64, tool string, n int) (bool, string) {
	h := sha256.New()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(f.Seed))
	binary.LittleEndian.PutUint64(b[8:16], uint64(taskSeed))
	binary.LittleEndian.PutUint64(b[16:], uint64(n))
	h.Write(b[:])
	h.Write([]byte(tool))
	sum := h.Sum(nil)
	u := float64(binary.LittleEndian.Uint64(sum[:8])>>11) / float64(1<<53)
	if u >= f.Rate {
		return false, ""
	}
	if sum[8]&1 == 0 {
		return true, "429 rate limited"
	}
	return true, "503 unavailable"
}

func round(x float64) float64 { return math.Round(x*1e12) / 1e12 }

func intPtr(i int) *int { return &i }

// Diagnostic codes of an episode that says nothing about its agent (see Inconclusive).
const (
	// ModelError: a model agent's request failed for good (the endpoint could not be reached,
	// or answered an HTTP error after the retries).
	ModelError = "model-error"
	// Interrupted: the episode's context was cancelled (Ctrl-C) before it ended.
	Interrupted = "interrupted"
)

// Inconclusive reports whether an episode that ended with the diagnostic code says nothing
// about its agent: a rollout runs such a sample again and leaves it out of the scores, and
// training data leaves it out.
func Inconclusive(code string) bool { return code == ModelError || code == Interrupted }

// CodedError is an agent error that names its diagnostic code (a model agent's failed request
// is ModelError); any other agent error stops the episode with solution-error.
type CodedError interface {
	error
	DiagCode() string
}

// interrupted gives the diagnostic of an episode that ctx stopped the code Interrupted: what
// stopped it was neither the task nor the agent. It keeps the message and the position.
func interrupted(ctx context.Context, d *dsl.Diagnostic) *dsl.Diagnostic {
	if d == nil || ctx.Err() == nil || d.Code == Interrupted {
		return d
	}
	nd := dsl.NewDiag(Interrupted, d.Message)
	nd.File, nd.Line, nd.Col, nd.Backtrace = d.File, d.Line, d.Col, d.Backtrace
	return &nd
}

func fmtDiag(code, format string, a ...any) *dsl.Diagnostic {
	d := dsl.NewDiag(code, fmt.Sprintf(format, a...))
	return &d
}

// decodeContent turns the JSON text the agent saw back into a Starlark value.
func decodeContent(content string) starlark.Value {
	v, err := jsonv.DecodeString(content)
	if err != nil {
		return starlark.String(content)
	}
	return starconv.FromJSON(v)
}

// FormatScore prints a score or weight for people: at most four decimals, at least one
// ("1.0", "0.75", "0.6667").
func FormatScore(f float64) string {
	s := strconv.FormatFloat(f, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
