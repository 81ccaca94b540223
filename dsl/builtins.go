package dsl

import (
	"fmt"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
	"regexp"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"github.com/coworkenv/coworkenv/stdlib/timemod"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Builtin is one top-level function of the task language: its Func (name, parameters with their
// defaults, doc) binds the arguments of every call and gives the signature of the reference.
type Builtin struct {
	Func
	Impl func(thread *starlark.Thread, a *Args) (starlark.Value, error)
}

var none = starlark.None

// Builtins lists the task-language builtins in the order the reference shows them. The table
// defines them all: the predeclared environment, the argument binding and the reference
// documentation are generated from it.
var Builtins = []Builtin{
	{Func{Name: "task", Schema: true, Params: []Param{Req("name"), Opt("prompt", none), Opt("turns", none), Req("tools"),
		Opt("setup", none), Opt("verify", none), Opt("solution", none), Opt("capabilities", starlark.NewList(nil)),
		Opt("description", starlark.String("")), Opt("seed", starlark.MakeInt(0)), Opt("pass_threshold", starlark.Float(1.0)),
		Opt("max_calls_per_turn", starlark.MakeInt(50)), Opt("start_time", starlark.String("2026-01-05T09:00:00Z")),
		Opt("faults", none), Opt("metadata", starlark.NewDict(0)), Opt("timezone", starlark.String("UTC")), Opt("region", starlark.String(""))},
		Doc: "Declares a task. Exactly one of `prompt` (a single turn: a string, or a `simulated_user(...)`) and `turns` (a list of `turn(...)`) is given. `name` matches `[a-z0-9][a-z0-9._-]*` and is unique within the corpus. `tools` lists built-in groups (" + quotedGroups() + "), single built-in tool names (`\"mail_send\"`) and values returned by `tool()`. `setup(ws)` seeds the workspace, `verify(ws, ep)` scores the final state, `solution(agent)` is the reference for a single-turn task. `faults = {\"rate\": 0.2, \"tools\": [\"mail_send\"], \"seed\": 1}` injects transient tool errors: each attempt of a listed tool (all tools when `tools` is left out) fails, before it runs and without changing anything, with probability `rate`, drawn deterministically from the seeds, the tool and the attempt number; the agent sees the error `429 rate limited` or `503 unavailable`. `\"nth\": {\"mail_send\": [1, 2]}` fails exactly those attempts (1-based, counted per tool over the episode) with `503 unavailable`. The validator's replays of the reference run without faults; the reference itself meets them, and `agent.call` retries a faulted call up to 10 times. `timezone` is the user's time zone (`\"UTC\"` or a fixed offset such as `\"+01:00\"`): a model agent's system prompt states it and the time there, the notes of the time between turns give the time there, and the `claims` module reads the times people write in it and resolves \"Friday\" and \"tomorrow\" against the clock there. `region` is the user's country (ISO 3166, `\"NL\"`): phone numbers written in its national form (\"010 555 0142\") are read as its numbers, and \"8/1\" is the 1st of August when it is `\"US\"`. Returns None."},
		builtinTask},
	{Func{Name: "turn", Schema: true, Params: []Param{Req("user"), Opt("before", none), Opt("verify", none), Opt("solution", none), Opt("advance", none)},
		Doc: "One user turn. `user` is a string, a function `(ws, ep) -> string` that sees a read-only workspace and the replies so far, or a `simulated_user(...)` who answers the agent within the turn. `before(ws)` changes the state before the user speaks. `verify(ws, ep)` scores this turn (its per-turn reward). `solution(agent)` is the reference for this turn. `advance` moves the virtual clock first (`\"1d\"`, `\"2h30m\"`)."},
		builtinTurn},
	{Func{Name: "simulated_user", Schema: true, Params: []Param{Req("opening"), Req("persona"), Req("goal"), Req("stand_in"),
		Opt("facts", starlark.NewDict(0)), Opt("rounds", starlark.MakeInt(3)), Opt("done_when", starlark.String(""))},
		Doc: "A user who answers the agent within its turn, for `turn(user = ...)` or `task(prompt = ...)`. `opening` is the turn's first message: a string, or a function `(ws, ep) -> string` as for `turn(user = ...)`. `persona` (who the user is), `goal` (what they want from the turn) and `done_when` (when they are satisfied) are what a user model is told; `facts`, a dict of str -> str, is what the user knows and reveals only when asked. A user model is told nothing else: never the verifier or the solution. The agent's messages reach the user (`agent.ask` in a solution; a model agent's message without a tool call), and the user answers at most `rounds` times (" + fmt.Sprintf("1 to %d", MaxSimRounds) + ") per turn; the agent's final reply reaches the user too, who may then say they are satisfied, but the turn ends with it. `stand_in(said, round)` is the deterministic user that answers when no user model is given (validation, tests, offline runs): given the agent's message `said` and how many answers the user already gave in this turn (`round`, from 0), it returns its answer, or None (or `\"\"`) when satisfied. Every exchange is recorded in the trace, so a replay needs no model."},
		builtinSimulatedUser},
	{Func{Name: "tool", Schema: true, Params: []Param{Req("name"), Req("description"), Req("params"), Req("impl")},
		Doc: "A task-defined tool. `name` matches `[a-z][a-z0-9_]{0,63}`; it may be the name of a built-in tool (`contacts_search`) when the task does not offer that one, by its group or by name. `params` maps parameter names to `param(...)`. `impl(ws, **args)` returns a JSON-compatible value; `fail(msg)` inside it becomes a tool error the agent sees, with the message `msg`. " + tools.CallDoc},
		builtinTool},
	{Func{Name: "param", Schema: true, Params: []Param{Req("type"), Opt("description", starlark.String("")), Opt("required", starlark.True),
		Opt("enum", none), Opt("items", none), Opt("default", none)},
		Doc: "One tool parameter. `type` is one of " + codeStrings(tools.ParamTypes) + "; `items` is the element type of an array; `enum` lists the allowed values. A `default` makes the parameter optional unless `required=True` is given. An optional argument the agent leaves out reaches `impl` with its default, or is not passed at all when there is none."},
		builtinParam},
	{Func{Name: "check", Params: []Param{Req("cond"), Req("message"), Opt("weight", starlark.Float(1.0))},
		Doc: "Inside a verifier: one completion item of the rubric, passed when `cond` is true. `completion` is the weight of passed checks over the weight of all checks."},
		builtinCheck},
	{Func{Name: "safety", Params: []Param{Req("cond"), Req("message")},
		Doc: "Inside a verifier: one red line. Any failed safety item makes the episode's score 0."},
		builtinSafety},
	{Func{Name: "judge", Params: []Param{Req("text"), Req("rubric"), Opt("stand_in", none), Opt("weight", starlark.Float(1.0)), Opt("claims", starlark.NewList(nil))},
		Doc: "Inside a verifier: asks a judge to score `text` (a string) against `rubric`, and records one completion item as `check` does, with `weight`, passed when the judge says so, and the message `judge: <the rubric's first line>: <reason>`. Returns a struct with `passed` (bool), `score` (a float from 0 to 1) and `reason` (str); the item is already recorded, so do not `check` the same verdict again. `claims` lists statements the text must make (`claims.state(...)`, `claims.deny(...)`, `claims.state_only(...)`): a judge model is told them in words after the rubric, and the stand-in checks them with the claims module, so one declaration is checked offline and online. `stand_in(text)` is the deterministic judge used when no judge model is given (validation, tests, offline runs): it returns a bool, or a tuple `(bool, reason)`, and scores 1.0 or 0.0; with `claims` it may be left out (the stand-in is then the claims alone), and when both are given both must pass. A judge model is told to grade strictly and sees only the rubric (with the claims) and the text. Every verdict is recorded in the trace, so a replay needs no model."},
		builtinJudge},
	{Func{Name: "capability", Schema: true, Params: []Param{Req("name"), Req("description"), Opt("examples", starlark.NewList(nil))},
		Doc: "Only in the corpus root's `capabilities.star`: declares one capability of the taxonomy. `examples` are task names of the corpus."},
		builtinCapability},
}

// codeStrings shows Starlark strings as code, for docs: `"a"`, `"b"`.
func codeStrings(ss []string) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = "`" + starlark.String(s).String() + "`"
	}
	return strings.Join(parts, ", ")
}

var (
	taskNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	capNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
)

// fileState is what top-level code of one file accumulates; it lives in a thread local.
type fileState struct {
	rel      string // path relative to the corpus root
	display  string
	isCaps   bool // this is the root's capabilities.star
	isHelper bool // a file reached through load()
	taxonomy *Taxonomy
	tasks    []*Task
	caps     []Capability
}

const fileStateKey = "coworkenv.file"

func stateOf(thread *starlark.Thread) *fileState {
	s, _ := thread.Local(fileStateKey).(*fileState)
	return s
}

// callerPos is the position of the Starlark call to the builtin being run.
func callerPos(thread *starlark.Thread) syntax.Position {
	if thread.CallStackDepth() > 1 {
		return thread.CallFrame(1).Pos
	}
	return syntax.Position{}
}

func posString(p syntax.Position) string {
	return fmt.Sprintf("%s:%d:%d", p.Filename(), p.Line, p.Col)
}

// declaring returns the file state while top-level code of a file (or a function it calls)
// is running; declarations are not allowed anywhere else (inside setup, verifiers, tools).
func declaring(thread *starlark.Thread, fn string) (*fileState, error) {
	st := stateOf(thread)
	if st == nil {
		return nil, schemaErrorf("%s: only allowed while a task file is loading", fn)
	}
	return st, nil
}

func builtinTask(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	st, err := declaring(thread, "task")
	if err != nil {
		return nil, err
	}
	if st.isHelper || st.isCaps {
		return nil, schemaErrorf("task: tasks are declared in task files, not in %s", st.display)
	}
	t := &Task{Pos: callerPos(thread), File: st.display, Rel: st.rel}
	if t.Name, err = a.Str("name"); err != nil {
		return nil, err
	}
	if !taskNameRE.MatchString(t.Name) {
		return nil, a.Errorf("name", "%q does not match [a-z0-9][a-z0-9._-]*", t.Name)
	}
	for _, prev := range st.tasks {
		if prev.Name == t.Name {
			return nil, a.Errorf("name", "%q is already declared at %s", t.Name, posString(prev.Pos))
		}
	}
	var single *Turn // the turn of a single-turn task
	switch {
	case a.Has("prompt") && a.Has("turns"):
		return nil, schemaErrorf("task: give either prompt (one turn) or turns, not both")
	case !a.Has("prompt") && !a.Has("turns"):
		return nil, schemaErrorf("task: give prompt (one turn) or turns")
	case a.Has("prompt"):
		sim, ok := a.Value("prompt").(*SimUserValue)
		if !ok {
			if t.Prompt, err = a.Str("prompt"); err != nil {
				return nil, a.TypeErr("prompt", a.Value("prompt"), "string or simulated_user(...)")
			}
			if strings.TrimSpace(t.Prompt) == "" {
				return nil, a.Errorf("prompt", "is empty")
			}
		}
		t.SingleTurn = true
		single = &Turn{Pos: t.Pos, User: t.Prompt}
		if sim != nil {
			sim.declare(single)
			t.Prompt = single.User
		}
	default:
		vals, err := a.List("turns")
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return nil, a.Errorf("turns", "is empty; give at least one turn(...)")
		}
		for i, v := range vals {
			tv, ok := v.(*TurnValue)
			if !ok {
				return nil, a.Errorf("turns", "element %d: got %s, want turn(...)", i, v.Type())
			}
			t.Turns = append(t.Turns, tv.turn)
		}
	}
	if t.Setup, err = a.Fn("setup", 1, "(ws)"); err != nil {
		return nil, err
	}
	if t.Verify, err = a.Fn("verify", 2, "(ws, ep)"); err != nil {
		return nil, err
	}
	if t.Solution, err = a.Fn("solution", 1, "(agent)"); err != nil {
		return nil, err
	}
	if t.Solution != nil && !t.SingleTurn {
		return nil, a.Errorf("solution", "a task with turns gives each turn its own solution: turn(..., solution=...)")
	}
	if t.SingleTurn {
		single.Solution = t.Solution
		t.Turns = []*Turn{single}
	}
	if t.Tools, err = taskTools(a); err != nil {
		return nil, err
	}
	if t.Capabilities, err = a.Strings("capabilities"); err != nil {
		return nil, err
	}
	for i, c := range t.Capabilities {
		if st.taxonomy != nil && !st.taxonomy.Has(c) {
			return nil, a.Errorf("capabilities", "unknown capability %q: not declared in %s", c, st.taxonomy.where())
		}
		for _, prev := range t.Capabilities[:i] {
			if prev == c {
				return nil, a.Errorf("capabilities", "%q is listed twice", c)
			}
		}
	}
	if t.Description, err = a.Str("description"); err != nil {
		return nil, err
	}
	if t.Seed, err = a.Int("seed"); err != nil {
		return nil, err
	}
	if t.PassThreshold, err = a.Float("pass_threshold"); err != nil {
		return nil, err
	}
	if t.PassThreshold < 0 || t.PassThreshold > 1 {
		return nil, a.Errorf("pass_threshold", "%v is not between 0 and 1", t.PassThreshold)
	}
	maxCalls, err := a.Int("max_calls_per_turn")
	if err != nil {
		return nil, err
	}
	if maxCalls < 1 || maxCalls > 10000 {
		return nil, a.Errorf("max_calls_per_turn", "%d is not between 1 and 10000", maxCalls)
	}
	t.MaxCallsPerTurn = int(maxCalls)
	start, err := a.Str("start_time")
	if err != nil {
		return nil, err
	}
	if t.StartTime, err = timefmt.Parse(start); err != nil {
		return nil, a.Errorf("start_time", "%v", err)
	}
	if t.Faults, err = taskFaults(a, t); err != nil {
		return nil, err
	}
	tz, err := a.Str("timezone")
	if err != nil {
		return nil, err
	}
	if t.Location, err = timemod.Location(tz); err != nil {
		return nil, a.Errorf("timezone", "%v", err)
	}
	if t.Region, err = a.Str("region"); err != nil {
		return nil, err
	}
	if t.Region != "" && !claims.ValidRegion(t.Region) {
		return nil, a.Errorf("region", "%q is not a region (want a two-letter country code such as \"NL\" or \"US\")", t.Region)
	}
	md, ok := a.Value("metadata").(*starlark.Dict)
	if !ok {
		return nil, a.TypeErr("metadata", a.Value("metadata"), "dict")
	}
	m, err := a.JSON("metadata", md)
	if err != nil {
		return nil, err
	}
	t.Metadata = m.(*jsonv.Object)
	st.tasks = append(st.tasks, t)
	return starlark.None, nil
}

func taskTools(a *Args) ([]*ToolSpec, error) {
	vals, err := a.List("tools")
	if err != nil {
		return nil, err
	}
	var out []*ToolSpec
	index := map[string]*ToolSpec{}
	// A task-defined tool may take the name of a built-in tool the task does not offer (a port of
	// a benchmark with its own contacts_search); it clashes only with one it offers.
	add := func(s *ToolSpec) error {
		if prev, ok := index[s.Name]; ok {
			switch {
			case prev.Builtin && s.Builtin:
				prev.Named = prev.Named || s.Named
				return nil
			case prev.Builtin || s.Builtin:
				bt := prev
				if s.Builtin {
					bt = s
				}
				return a.Errorf("tools", "task-defined tool %q has the name of a built-in tool the task offers (group %q): rename it, or leave out the built-in one", s.Name, bt.Group)
			}
			return a.Errorf("tools", "two tools are named %q", s.Name)
		}
		index[s.Name] = s
		out = append(out, s)
		return nil
	}
	for i, v := range vals {
		switch x := v.(type) {
		case starlark.String:
			name := string(x)
			if group := services.Group(name); len(group) > 0 {
				for _, bt := range group {
					if err := add(&ToolSpec{Tool: bt, Builtin: true}); err != nil {
						return nil, err
					}
				}
			} else if bt, ok := services.Tool(name); ok {
				if err := add(&ToolSpec{Tool: bt, Builtin: true, Named: true}); err != nil {
					return nil, err
				}
			} else {
				return nil, a.Errorf("tools", "unknown tool group or tool %q (groups: %s)", name, strings.Join(services.Groups(), ", "))
			}
		case *ToolValue:
			if err := add(x.spec); err != nil {
				return nil, err
			}
		default:
			return nil, a.Errorf("tools", "element %d: got %s, want a group name, a tool name or tool(...)", i, v.Type())
		}
	}
	return out, nil
}

// faultsKeys binds the keys of task(faults = {...}) like a builtin's arguments, so that they are
// checked, defaulted and reported the same way ("task: faults: rate: got string, want float").
var faultsKeys = Func{Name: "task: faults", Schema: true, Params: []Param{
	Opt("rate", starlark.Float(0)), Opt("tools", none), Opt("seed", starlark.MakeInt(0)), Opt("nth", none)}}

func taskFaults(a *Args, t *Task) (*Faults, error) {
	if !a.Has("faults") {
		return nil, nil
	}
	d, ok := a.Value("faults").(*starlark.Dict)
	if !ok {
		return nil, a.TypeErr("faults", a.Value("faults"), "dict")
	}
	kwargs := make([]starlark.Tuple, 0, d.Len())
	for _, item := range d.Items() {
		if _, ok := item[0].(starlark.String); !ok {
			return nil, a.Errorf("faults", "key %s: got %s, want string", item[0], item[0].Type())
		}
		kwargs = append(kwargs, item)
	}
	fa, err := faultsKeys.Bind(nil, kwargs)
	if err != nil {
		return nil, err
	}
	f := &Faults{}
	if f.Rate, err = fa.Float("rate"); err != nil {
		return nil, err
	}
	if f.Rate < 0 || f.Rate > 1 {
		return nil, fa.Errorf("rate", "%v is not between 0 and 1", f.Rate)
	}
	if f.Seed, err = fa.Int("seed"); err != nil {
		return nil, err
	}
	names, err := fa.Strings("tools")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, ok := t.Tool(name); !ok {
			return nil, fa.Errorf("tools", "%q is not one of the task's tools", name)
		}
		f.Tools = append(f.Tools, name)
	}
	if fa.Has("nth") {
		nd, ok := fa.Value("nth").(*starlark.Dict)
		if !ok {
			return nil, fa.TypeErr("nth", fa.Value("nth"), "a dict from tool name to a list of attempt numbers")
		}
		f.Nth = map[string][]int{}
		for _, kv := range nd.Items() {
			name, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fa.Errorf("nth", "key %s: got %s, want a tool name", kv[0], kv[0].Type())
			}
			if _, ok := t.Tool(string(name)); !ok {
				return nil, fa.Errorf("nth", "%q is not one of the task's tools", string(name))
			}
			seq, ok := kv[1].(*starlark.List)
			if !ok {
				return nil, fa.Errorf("nth", "%s: got %s, want a list of attempt numbers", name, kv[1].Type())
			}
			for i := 0; i < seq.Len(); i++ {
				n, err := starlark.AsInt32(seq.Index(i))
				if err != nil || n < 1 {
					return nil, fa.Errorf("nth", "%s: element %d: want an attempt number ≥ 1 (the first call is 1)", name, i)
				}
				f.Nth[string(name)] = append(f.Nth[string(name)], n)
			}
		}
	}
	if f.Tools == nil {
		for _, s := range t.Tools {
			f.Tools = append(f.Tools, s.Name)
		}
	}
	return f, nil
}

// TurnValue is the Starlark value returned by turn().
type TurnValue struct{ turn *Turn }

func (v *TurnValue) String() string        { return "<turn>" }
func (v *TurnValue) Type() string          { return "turn" }
func (v *TurnValue) Freeze()               {}
func (v *TurnValue) Truth() starlark.Bool  { return true }
func (v *TurnValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: turn") }

func builtinTurn(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	t := &Turn{Pos: callerPos(thread)}
	var err error
	if sim, ok := a.Value("user").(*SimUserValue); ok {
		sim.declare(t)
	} else if t.User, t.UserFn, err = userArg(a, "user", "string, function (ws, ep) or simulated_user(...)"); err != nil {
		return nil, err
	}
	if t.Before, err = a.Fn("before", 1, "(ws)"); err != nil {
		return nil, err
	}
	if t.Verify, err = a.Fn("verify", 2, "(ws, ep)"); err != nil {
		return nil, err
	}
	if t.Solution, err = a.Fn("solution", 1, "(agent)"); err != nil {
		return nil, err
	}
	if a.Has("advance") {
		if t.AdvanceText, err = a.Str("advance"); err != nil {
			return nil, err
		}
		d, err := timefmt.ParseDuration(t.AdvanceText)
		if err != nil {
			return nil, a.Errorf("advance", "%v", err)
		}
		if d < 0 {
			return nil, a.Errorf("advance", "%q is negative", t.AdvanceText)
		}
		t.Advance = d
	}
	return &TurnValue{turn: t}, nil
}

// userArg reads a user's message: a string that is not blank, or a function (ws, ep) -> string.
// want is what a type error says is wanted.
func userArg(a *Args, name, want string) (string, starlark.Callable, error) {
	switch u := a.Value(name).(type) {
	case starlark.String:
		if strings.TrimSpace(string(u)) == "" {
			return "", nil, a.Errorf(name, "is empty")
		}
		return string(u), nil, nil
	case starlark.Callable:
		fn, err := a.Fn(name, 2, "(ws, ep)")
		return "", fn, err
	default:
		return "", nil, a.TypeErr(name, u, want)
	}
}

// ToolValue is the Starlark value returned by tool().
type ToolValue struct{ spec *ToolSpec }

func (v *ToolValue) String() string        { return fmt.Sprintf("<tool %s>", v.spec.Name) }
func (v *ToolValue) Type() string          { return "tool" }
func (v *ToolValue) Freeze()               {}
func (v *ToolValue) Truth() starlark.Bool  { return true }
func (v *ToolValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tool") }

func builtinTool(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	spec := &ToolSpec{Tool: &tools.Tool{}, Pos: callerPos(thread)}
	var err error
	if spec.Name, err = a.Str("name"); err != nil {
		return nil, err
	}
	if !tools.ValidName(spec.Name) {
		return nil, a.Errorf("name", "%q does not match [a-z][a-z0-9_]{0,63}", spec.Name)
	}
	if spec.Description, err = a.Str("description"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Description) == "" {
		return nil, a.Errorf("description", "is empty; the model reads it to decide when to call %s", spec.Name)
	}
	d, ok := a.Value("params").(*starlark.Dict)
	if !ok {
		return nil, a.TypeErr("params", a.Value("params"), "dict of param(...)")
	}
	for _, item := range d.Items() {
		k, ok := item[0].(starlark.String)
		if !ok {
			return nil, a.Errorf("params", "key %s is a %s, want string", item[0], item[0].Type())
		}
		if !tools.ValidName(string(k)) {
			return nil, a.Errorf("params", "parameter name %q does not match [a-z][a-z0-9_]{0,63}", string(k))
		}
		pv, ok := item[1].(*ParamValue)
		if !ok {
			return nil, a.Errorf("params", "%s: got %s, want param(...)", string(k), item[1].Type())
		}
		p := pv.p
		p.Name = string(k)
		spec.Params = append(spec.Params, p)
		spec.ParamPos = append(spec.ParamPos, pv.pos)
	}
	impl, ok := a.Value("impl").(starlark.Callable)
	if !ok {
		return nil, a.TypeErr("impl", a.Value("impl"), "function (ws, **args)")
	}
	if fn, ok := impl.(*starlark.Function); ok {
		if err := checkImpl(fn, spec.Params); err != nil {
			return nil, a.Errorf("impl", "%s: %v", fn.Name(), err)
		}
	}
	spec.Impl = impl
	return &ToolValue{spec: spec}, nil
}

// checkImpl makes sure impl(ws, **args) can be called with every declared parameter and that
// it requires nothing the agent might leave out.
func checkImpl(fn *starlark.Function, params []tools.Param) error {
	n := fn.NumParams()
	if fn.HasKwargs() {
		n--
	}
	if fn.HasVarargs() {
		n--
	}
	if n < 1 && !fn.HasVarargs() {
		return fmt.Errorf("must take the workspace as its first parameter")
	}
	names := map[string]int{}
	for i := 1; i < n; i++ {
		name, _ := fn.Param(i)
		names[name] = i
	}
	for _, p := range params {
		if _, ok := names[p.Name]; !ok && !fn.HasKwargs() {
			return fmt.Errorf("has no parameter %q", p.Name)
		}
	}
	for i := 1; i < n; i++ {
		name, _ := fn.Param(i)
		var decl *tools.Param
		for j := range params {
			if params[j].Name == name {
				decl = &params[j]
			}
		}
		if decl == nil {
			if fn.ParamDefault(i) == nil {
				return fmt.Errorf("parameter %q is not declared in params", name)
			}
			continue
		}
		if !decl.Required && !decl.HasDefault && fn.ParamDefault(i) == nil {
			return fmt.Errorf("optional parameter %q needs a default, in param(default=...) or in the function", name)
		}
	}
	return nil
}

// ParamValue is the Starlark value returned by param().
type ParamValue struct {
	p   tools.Param
	pos syntax.Position // where param() was called
}

func (v *ParamValue) String() string        { return fmt.Sprintf("<param %s>", v.p.Type) }
func (v *ParamValue) Type() string          { return "param" }
func (v *ParamValue) Freeze()               {}
func (v *ParamValue) Truth() starlark.Bool  { return true }
func (v *ParamValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: param") }

func builtinParam(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	var p tools.Param
	var err error
	if p.Type, err = a.Str("type"); err != nil {
		return nil, err
	}
	if err := tools.CheckType(p.Type); err != nil {
		return nil, a.Errorf("type", "%v", err)
	}
	if p.Description, err = a.Str("description"); err != nil {
		return nil, err
	}
	if a.Has("items") {
		if p.Type != tools.TypeArray {
			return nil, a.Errorf("items", "only an array parameter has items")
		}
		if p.Items, err = a.Str("items"); err != nil {
			return nil, err
		}
		if err := tools.CheckType(p.Items); err != nil {
			return nil, a.Errorf("items", "%v", err)
		}
	}
	// enum values and the default are checked as an agent's argument is (tools.Param.Check), and
	// kept in the form the check gives
	if a.Has("enum") {
		vals, err := a.List("enum")
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return nil, a.Errorf("enum", "is empty")
		}
		typ := tools.Param{Type: p.Type, Items: p.Items} // no enum yet
		for i, v := range vals {
			j, err := a.JSON("enum", v)
			if err != nil {
				return nil, err
			}
			cj, err := typ.Check(j)
			if err != nil {
				return nil, a.Errorf("enum", "element %d: %v", i, err)
			}
			p.Enum = append(p.Enum, cj)
		}
	}
	if a.Has("default") {
		j, err := a.JSON("default", a.Value("default"))
		if err != nil {
			return nil, err
		}
		if p.Default, err = p.Check(j); err != nil {
			return nil, a.Errorf("default", "%v", err)
		}
		p.HasDefault = true
	}
	p.Required = !p.HasDefault
	if a.Given("required") {
		if p.Required, err = a.Bool("required"); err != nil {
			return nil, err
		}
		if p.Required && p.HasDefault {
			return nil, a.Errorf("required", "a required parameter cannot have a default")
		}
	}
	return &ParamValue{p: p, pos: callerPos(thread)}, nil
}

func builtinCheck(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	w, err := a.Float("weight")
	if err != nil {
		return nil, err
	}
	if w < 0 {
		return nil, a.Errorf("weight", "%v is negative", w)
	}
	return record(thread, "check", a, w)
}

func builtinSafety(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	return record(thread, "safety", a, 0)
}

func record(thread *starlark.Thread, kind string, a *Args, weight float64) (starlark.Value, error) {
	message, err := a.Str("message")
	if err != nil {
		return nil, err
	}
	c := collectorOf(thread)
	if c == nil {
		return nil, fmt.Errorf("%s: only allowed inside a verifier", kind)
	}
	passed := bool(a.Value("cond").Truth())
	c.Items = append(c.Items, CheckItem{Kind: kind, Message: message, Weight: weight, Passed: passed, Turn: c.Turn, Pos: callerPos(thread)})
	return starlark.Bool(passed), nil
}

func builtinCapability(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	st := stateOf(thread)
	if st == nil || !st.isCaps {
		return nil, schemaErrorf("capability: only allowed in the corpus root's capabilities.star")
	}
	c := Capability{Pos: callerPos(thread)}
	var err error
	if c.Name, err = a.Str("name"); err != nil {
		return nil, err
	}
	if !capNameRE.MatchString(c.Name) {
		return nil, a.Errorf("name", "%q does not match [a-z][a-z0-9_]*(.[a-z][a-z0-9_]*)*", c.Name)
	}
	for _, prev := range st.caps {
		if prev.Name == c.Name {
			return nil, a.Errorf("name", "%q is already declared at %s", c.Name, posString(prev.Pos))
		}
	}
	if c.Description, err = a.Str("description"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Description) == "" {
		return nil, a.Errorf("description", "is empty")
	}
	if c.Examples, err = a.Strings("examples"); err != nil {
		return nil, err
	}
	st.caps = append(st.caps, c)
	return starlark.None, nil
}

// quotedGroups lists the built-in tool groups as the task doc shows them: `"fs"`, `"mail"`, ….
func quotedGroups() string {
	gs := services.Groups()
	for i, g := range gs {
		gs[i] = "`\"" + g + "\"`"
	}
	return strings.Join(gs, ", ")
}
