package dsl

import (
	"context"
	"time"

	"github.com/coworkenv/coworkenv/stdlib/re"
	"github.com/coworkenv/coworkenv/stdlib/timemod"
	"go.starlark.net/lib/json"
	"go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Limits bound every call into a script.
type Limits struct {
	// Steps is the step budget of one call into a script (Thread.ExecutionSteps).
	Steps uint64
	// Timeout is the wall-clock safety limit of one call into a script; 0 means none.
	Timeout time.Duration
}

// DefaultLimits: 1,000,000 steps and 10 seconds per call into a script.
var DefaultLimits = Limits{Steps: 1_000_000, Timeout: 10 * time.Second}

// FileOptions is the dialect of task files: set, while, top-level control and global
// reassignment are on; recursion is off (SPEC §10).
var FileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// Predeclared returns the names every task and helper file sees.
func Predeclared() starlark.StringDict {
	d := starlark.StringDict{
		"json":   json.Module,
		"math":   math.Module,
		"time":   timemod.Module,
		"re":     re.Module,
		"struct": starlark.NewBuiltin("struct", starlarkstruct.Make),
	}
	for i := range Builtins {
		b := &Builtins[i]
		d[b.Name] = b.Starlark(b.Impl)
	}
	d.Freeze()
	return d
}

// NewThread makes a fresh thread with the step budget already set, so that no code runs
// unbounded. Its print output goes nowhere unless print is given.
func NewThread(name string, lim Limits, print func(pos syntax.Position, msg string)) *starlark.Thread {
	th := &starlark.Thread{Name: name}
	if lim.Steps > 0 {
		th.SetMaxExecutionSteps(lim.Steps)
	}
	th.Print = func(t *starlark.Thread, msg string) {
		if print != nil {
			print(PrintPos(t), msg)
		}
	}
	return th
}

// PrintPos is the position of the print() call running on t: its innermost frame in a file.
func PrintPos(t *starlark.Thread) syntax.Position {
	pos, _ := innermost(t.CallStack())
	return pos
}

// Guard cancels thread when ctx is done or the timeout passes; call the returned stop when the
// call into the script returns. The script runs on the caller's goroutine.
func Guard(ctx context.Context, thread *starlark.Thread, lim Limits) (stop func()) {
	if lim.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, lim.Timeout, errTimeout)
		stopAfter := context.AfterFunc(ctx, func() { thread.Cancel(cancelReason(ctx)) })
		return func() { stopAfter(); cancel() }
	}
	if ctx.Done() == nil {
		return func() {}
	}
	stopAfter := context.AfterFunc(ctx, func() { thread.Cancel(cancelReason(ctx)) })
	return func() { stopAfter() }
}

type timeoutError struct{}

func (timeoutError) Error() string { return reasonTimeout }

var errTimeout = timeoutError{}

func cancelReason(ctx context.Context) string {
	if context.Cause(ctx) == errTimeout {
		return reasonTimeout
	}
	return reasonCanceled
}

// Call calls fn on a fresh thread with the given limits. prepare, when not nil, sets thread
// locals (the check collector, the episode) before the call.
func Call(ctx context.Context, lim Limits, name string, fn starlark.Callable, args starlark.Tuple, kwargs []starlark.Tuple, prepare func(*starlark.Thread)) (starlark.Value, error) {
	th := NewThread(name, lim, nil)
	if prepare != nil {
		prepare(th)
	}
	stop := Guard(ctx, th, lim)
	defer stop()
	return starlark.Call(th, fn, args, kwargs)
}
