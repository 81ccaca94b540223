package dsl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/budget"
	"github.com/coworkenv/coworkenv/stdlib/claims"
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

// The in-process guards (docs/limits.md). The interpreter counts steps and looks at Cancel only
// between instructions, so a builtin call is one step however long it runs. The builtins the
// engine hands to scripts therefore charge the work they do to the calling thread's step budget
// and look at its cancellation as they go (Charge):
//   - the builtins that consume a whole iterable (list, tuple, sorted, reversed, set, dict,
//     enumerate, zip, max, min, all, any) take a range one element, one step, at a time, and
//     never learn its length: list(range(1 << 40)) ends at the step budget, not out of memory;
//   - str, repr, print and json.encode first walk the value they write out, a step per value
//     written (a value shared in many places is written, and charged, each time) plus the depth
//     of every list and dict (their cycle checks look at every enclosing one), and refuse a
//     result longer than MaxOutput bytes: json.encode of a shared DAG or str of data nested
//     100,000 deep end at the step budget;
//   - json.decode refuses input nested deeper than MaxJSONDepth (its parser recurses);
//   - print output is bounded (BoundPrint).
//
// What no guard here can see runs on unbounded inside one step: operators (==, <, in, % and *
// over deep or huge values), methods of values (list.extend, str.join, str.format), and
// builtins of the workspace that do not call Charge. Only a worker process bounds those
// (package isolate).
const (
	// MaxOutput bounds what str, repr, print and json.encode may produce, in bytes.
	MaxOutput = 64 << 20
	// MaxJSONDepth bounds the nesting of what json.decode reads.
	MaxJSONDepth = 1000
	// MaxPrint bounds one message of print, and MaxPrintTotal all the messages one call into a
	// script (or one episode, see BoundPrint) prints, in bytes.
	MaxPrint      = 64 << 10
	MaxPrintTotal = 1 << 20
)

// FileOptions is the dialect of task files: set, while, top-level control and global
// reassignment are on; recursion is off.
var FileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// Predeclared returns the names every task and helper file sees.
func Predeclared() starlark.StringDict {
	d := starlark.StringDict{
		"json":   guardedJSON,
		"math":   math.Module,
		"time":   timemod.Module,
		"re":     re.Module,
		"claims": claims.Module,
		"struct": starlark.NewBuiltin("struct", starlarkstruct.Make),
	}
	for name, b := range guardedUniverse {
		d[name] = b
	}
	for i := range Builtins {
		b := &Builtins[i]
		d[b.Name] = b.Starlark(b.Impl)
	}
	d.Freeze()
	return d
}

// guardedUniverse replaces the universal builtins that can run long inside one call.
var guardedUniverse = func() starlark.StringDict {
	d := starlark.StringDict{}
	for _, name := range []string{"all", "any", "dict", "enumerate", "list", "max", "min", "reversed", "set", "sorted", "tuple", "zip"} {
		d[name] = chargeRanges(starlark.Universe[name].(*starlark.Builtin))
	}
	for _, name := range []string{"str", "repr", "print"} {
		d[name] = chargeOutput(starlark.Universe[name].(*starlark.Builtin), false)
	}
	return d
}()

// guardedJSON is the json module with encode, encode_indent and decode guarded.
var guardedJSON = func() *starlarkstruct.Module {
	m := &starlarkstruct.Module{Name: json.Module.Name, Members: starlark.StringDict{}}
	for k, v := range json.Module.Members {
		m.Members[k] = v
	}
	m.Members["encode"] = chargeOutput(json.Module.Members["encode"].(*starlark.Builtin), true)
	m.Members["encode_indent"] = chargeOutput(json.Module.Members["encode_indent"].(*starlark.Builtin), true)
	decode := json.Module.Members["decode"].(*starlark.Builtin)
	m.Members["decode"] = starlark.NewBuiltin(decode.Name(), func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			if s, ok := starlark.AsString(args[0]); ok && jsonDepth(s) > MaxJSONDepth {
				return nil, fmt.Errorf("%s: the input is nested deeper than %d levels", b.Name(), MaxJSONDepth)
			}
		}
		return decode.CallInternal(th, args, kwargs)
	})
	m.Freeze()
	return m
}()

// jsonDepth is the deepest nesting of brackets in s outside strings (s need not be valid).
func jsonDepth(s string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// chargeRanges wraps a builtin that consumes iterables: a range among its arguments is handed
// over as an iterable without a length that charges a step per element.
func chargeRanges(orig *starlark.Builtin) *starlark.Builtin {
	return starlark.NewBuiltin(orig.Name(), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if guardOf(th) == nil {
			return orig.CallInternal(th, args, kwargs)
		}
		var stop error
		charged := func(v starlark.Value) starlark.Value {
			if r, ok := v.(starlark.Iterable); ok && v.Type() == "range" {
				return &chargedRange{Iterable: r, th: th, stop: &stop}
			}
			return v
		}
		args = append(starlark.Tuple(nil), args...)
		for i, a := range args {
			args[i] = charged(a)
		}
		if len(kwargs) > 0 {
			kw := make([]starlark.Tuple, len(kwargs))
			for i, kv := range kwargs {
				kw[i] = starlark.Tuple{kv[0], charged(kv[1])}
			}
			kwargs = kw
		}
		v, err := orig.CallInternal(th, args, kwargs)
		if stop != nil {
			return nil, stop
		}
		return v, err
	})
}

// chargedRange is a range as chargeRanges hands it to a builtin.
type chargedRange struct {
	starlark.Iterable
	th   *starlark.Thread
	stop *error
}

func (r *chargedRange) Iterate() starlark.Iterator {
	return &chargedIter{Iterator: r.Iterable.Iterate(), r: r}
}

type chargedIter struct {
	starlark.Iterator
	r *chargedRange
}

func (it *chargedIter) Next(p *starlark.Value) bool {
	if *it.r.stop != nil {
		return false
	}
	if err := Charge(it.r.th, 1); err != nil {
		*it.r.stop = err
		return false
	}
	return it.Iterator.Next(p)
}

// chargeOutput wraps a builtin that writes its arguments out (str, repr, print; json.encode
// and encode_indent when asJSON): it first charges the work (see Predeclared's guards), and
// refuses a result longer than MaxOutput.
func chargeOutput(orig *starlark.Builtin, asJSON bool) *starlark.Builtin {
	return starlark.NewBuiltin(orig.Name(), func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if guardOf(th) != nil {
			w := &outputWalk{th: th, json: asJSON, path: map[starlark.Value]bool{}}
			for _, a := range args {
				if _, ok := a.(starlark.String); ok && !asJSON {
					w.size += len(a.(starlark.String)) // str and print copy a string as it is
					continue
				}
				if err := w.walk(a, 1); err != nil {
					return nil, err
				}
			}
			if w.size > MaxOutput {
				return nil, fmt.Errorf("%s: the result would be longer than %d MiB", orig.Name(), MaxOutput>>20)
			}
		}
		return orig.CallInternal(th, args, kwargs)
	})
}

// outputWalk is the work of writing a value out, charged as it is found.
type outputWalk struct {
	th   *starlark.Thread
	json bool // json.encode: any other iterable is written element by element
	size int  // bytes of output, at least
	path map[starlark.Value]bool
}

func (w *outputWalk) walk(x starlark.Value, depth int) error {
	if w.size > MaxOutput {
		return nil // the caller refuses it
	}
	switch x := x.(type) {
	case starlark.String:
		w.size += len(x) + 2
		return Charge(w.th, 1)
	case *starlark.List, *starlark.Dict, *starlark.Set, *starlarkstruct.Struct:
		// the writers look for cycles among the enclosing values: depth steps
		if err := Charge(w.th, uint64(depth)); err != nil {
			return err
		}
		if w.path[x] {
			w.size += 5
			return nil // written as [...] (str), or an error (json.encode)
		}
		w.path[x] = true
		defer delete(w.path, x)
	case starlark.Tuple:
		if err := Charge(w.th, 1); err != nil {
			return err
		}
	default:
		seq, isSeq := x.(starlark.Sequence)
		if w.json && isSeq {
			n := seq.Len() // a range: written element by element
			w.size += 2 * n
			return Charge(w.th, uint64(n))
		}
		w.size += 8
		return Charge(w.th, 1)
	}
	w.size += 2
	switch x := x.(type) {
	case *starlark.List:
		for i := 0; i < x.Len(); i++ {
			if err := w.walk(x.Index(i), depth+1); err != nil {
				return err
			}
		}
	case starlark.Tuple:
		for _, e := range x {
			if err := w.walk(e, depth+1); err != nil {
				return err
			}
		}
	case *starlark.Set:
		it := x.Iterate()
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			if err := w.walk(e, depth+1); err != nil {
				return err
			}
		}
	case *starlark.Dict:
		for _, kv := range x.Items() {
			if err := w.walk(kv[0], depth+1); err != nil {
				return err
			}
			if err := w.walk(kv[1], depth+1); err != nil {
				return err
			}
		}
	case *starlarkstruct.Struct:
		for _, name := range x.AttrNames() {
			v, err := x.Attr(name)
			if err != nil || v == nil {
				continue // the writer reports it
			}
			w.size += len(name) + 4
			if err := w.walk(v, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// guard is what the builtins see of their thread's limits: the step budget, and the reason
// Guard cancelled the thread (the interpreter's own is not readable).
type guard struct {
	steps     uint64 // 0: no budget
	cancelled atomic.Pointer[string]
	wall      atomic.Pointer[wall] // the wall-clock limit of the call into the script, if any
}

const guardKey = "coworkenv.dsl.guard"

func guardOf(th *starlark.Thread) *guard {
	g, _ := th.Local(guardKey).(*guard)
	return g
}

// Charge counts n steps of work that a builtin does for the script running on th, and returns
// the error that stops the script when that spends its step budget, or when the call into the
// script was cancelled (its wall-clock limit, a cancelled context): the same error, and so the
// same diagnostic (step-limit, timeout), as when the interpreter stops between instructions.
// A builtin that loops calls it between units of work so that the limits hold inside it too. It
// is a no-op on threads that NewThread did not make.
func Charge(th *starlark.Thread, n uint64) error {
	g := guardOf(th)
	if g == nil {
		return nil
	}
	th.Steps += n
	if g.steps > 0 && th.Steps >= g.steps {
		th.Cancel("too many steps")
		return cancelled("too many steps")
	}
	if r := g.cancelled.Load(); r != nil {
		return cancelled(*r)
	}
	return nil
}

// cancelled is the interpreter's error for a cancelled thread.
func cancelled(reason string) error { return fmt.Errorf("Starlark computation cancelled: %s", reason) }

// NewThread makes a fresh thread with the step budget already set, so that no code runs
// unbounded. Its print output goes nowhere unless print is given, and is bounded (BoundPrint).
func NewThread(name string, lim Limits, print func(pos syntax.Position, msg string)) *starlark.Thread {
	th := &starlark.Thread{Name: name}
	if lim.Steps > 0 {
		th.SetMaxExecutionSteps(lim.Steps)
	}
	th.SetLocal(guardKey, &guard{steps: lim.Steps})
	budget.Install(th, Charge) // the builtins of ws charge through package budget
	if print != nil {
		print = BoundPrint(print)
	}
	th.Print = func(t *starlark.Thread, msg string) {
		if print != nil {
			print(PrintPos(t), msg)
		}
	}
	return th
}

// BoundPrint bounds what print passes on: each message is cut at MaxPrint bytes, and after
// MaxPrintTotal bytes one last message says that the rest was dropped. Give each episode (or
// call into a script) its own.
func BoundPrint(print func(pos syntax.Position, msg string)) func(pos syntax.Position, msg string) {
	var total atomic.Int64
	return func(pos syntax.Position, msg string) {
		if len(msg) > MaxPrint {
			cut := MaxPrint
			for cut > 0 && !utf8.RuneStart(msg[cut]) {
				cut--
			}
			msg = fmt.Sprintf("%s… (%d more bytes not shown)", msg[:cut], len(msg)-cut)
		}
		switch n := total.Add(int64(len(msg))); {
		case n <= MaxPrintTotal:
			print(pos, msg)
		case n-int64(len(msg)) <= MaxPrintTotal:
			print(pos, fmt.Sprintf("(print output past %d MiB is dropped)", MaxPrintTotal>>20))
		}
	}
}

// PrintPos is the position of the print() call running on t: its innermost frame in a file.
func PrintPos(t *starlark.Thread) syntax.Position {
	pos, _ := innermost(t.CallStack())
	return pos
}

// Guard cancels thread when ctx is done or the timeout passes; call the returned stop when the
// call into the script returns. The script runs on the caller's goroutine. The time the script
// spends in Waiting does not count towards the timeout.
func Guard(ctx context.Context, thread *starlark.Thread, lim Limits) (stop func()) {
	g := guardOf(thread)
	cancel := func(reason string) {
		if g != nil {
			g.cancelled.CompareAndSwap(nil, &reason)
		}
		thread.Cancel(reason)
	}
	var stops []func()
	if ctx.Done() != nil {
		stopAfter := context.AfterFunc(ctx, func() { cancel(reasonCanceled) })
		stops = append(stops, func() { stopAfter() })
	}
	if lim.Timeout > 0 {
		w := startWall(lim.Timeout, func() { cancel(reasonTimeout) })
		if g != nil {
			g.wall.Store(w)
		}
		stops = append(stops, func() {
			if g != nil {
				g.wall.CompareAndSwap(w, nil)
			}
			w.stop()
		})
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// Waiting stops the wall-clock limit of the script running on thread while a builtin waits for
// something outside it (a model's answer); call the returned resume when the wait is over. The
// step budget and a cancelled context still stop the script. Waits may nest.
func Waiting(thread *starlark.Thread) (resume func()) {
	g := guardOf(thread)
	if g == nil {
		return func() {}
	}
	w := g.wall.Load()
	if w == nil {
		return func() {}
	}
	w.pause()
	var once sync.Once
	return func() { once.Do(w.resume) }
}

// The clock of the wall-clock limit, replaced by tests.
var (
	wallNow   = time.Now
	wallAfter = func(d time.Duration, f func()) wallTimer { return time.AfterFunc(d, f) }
)

type wallTimer interface{ Stop() bool }

// wall is the wall-clock limit of one call into a script: a timer that Waiting pauses.
type wall struct {
	mu      sync.Mutex
	left    time.Duration // what is left of the limit when the timer was (re)started
	started time.Time
	timer   wallTimer // nil while paused
	waits   int
	fire    func()
}

func startWall(limit time.Duration, fire func()) *wall {
	w := &wall{left: limit, fire: fire}
	w.start()
	return w
}

func (w *wall) start() {
	w.started = wallNow()
	w.timer = wallAfter(w.left, w.fire)
}

func (w *wall) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits++
	if w.waits > 1 || w.timer == nil {
		return
	}
	if w.timer.Stop() {
		w.left -= wallNow().Sub(w.started)
		w.timer = nil
	}
	// a timer that already fired has cancelled the script: it stays fired
}

func (w *wall) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits--
	if w.waits == 0 && w.timer == nil {
		w.left = max(w.left, 0)
		w.start()
	}
}

func (w *wall) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.waits = -1 << 30 // a late resume starts nothing
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
