package dsl

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/tools"
	"github.com/coworkenv/coworkenv/runtime/workspace"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Builtin is one top-level function of the task language. The table Builtins defines them all:
// the predeclared environment and the reference documentation are both generated from it.
type Builtin struct {
	Name      string
	Signature string
	Doc       string
	Impl      func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)
}

// Builtins lists the task-language builtins in the order the reference shows them.
var Builtins = []Builtin{
	{"task", `task(name, prompt=None, turns=None, tools, setup=None, verify=None, solution=None, capabilities=[], description="", seed=0, pass_threshold=1.0, max_calls_per_turn=50, start_time="2026-01-05T09:00:00Z", faults=None, metadata={})`,
		"Declares a task. Exactly one of `prompt` (a single turn) and `turns` (a list of `turn(...)`) is given. `name` matches `[a-z0-9][a-z0-9._-]*` and is unique within the corpus. `tools` lists built-in groups (`\"fs\"`, `\"mail\"`, `\"calendar\"`), single built-in tool names (`\"mail_send\"`) and values returned by `tool()`. `setup(ws)` seeds the workspace, `verify(ws, ep)` scores the final state, `solution(agent)` is the reference for a single-turn task. `faults = {\"rate\": 0.2, \"tools\": [\"mail_send\"], \"seed\": 1}` injects transient tool errors: each attempt of a listed tool (all tools when `tools` is left out) fails, before it runs and without changing anything, with probability `rate`, drawn deterministically from the seeds, the tool and the attempt number; the agent sees the error `429 rate limited` or `503 unavailable`. `\"nth\": {\"mail_send\": [1, 2]}` fails exactly those attempts (1-based, counted per tool over the episode) with `503 unavailable`. The validator's replays of the reference run without faults; the reference itself meets them, and `agent.call` retries a faulted call up to 10 times. Returns None.",
		builtinTask},
	{"turn", `turn(user, before=None, verify=None, solution=None, advance=None)`,
		"One user turn. `user` is a string, or a function `(ws, ep) -> string` that sees a read-only workspace and the replies so far. `before(ws)` changes the state before the user speaks. `verify(ws, ep)` scores this turn (its per-turn reward). `solution(agent)` is the reference for this turn. `advance` moves the virtual clock first (`\"1d\"`, `\"2h30m\"`).",
		builtinTurn},
	{"tool", `tool(name, description, params, impl)`,
		"A task-defined tool. `name` matches `[a-z][a-z0-9_]{0,63}`. `params` maps parameter names to `param(...)`. `impl(ws, **args)` returns a JSON-compatible value; `fail(msg)` inside it becomes a tool error the agent sees, with the message `msg`.",
		builtinTool},
	{"param", `param(type, description="", required=True, enum=None, items=None, default=None)`,
		"One tool parameter. `type` is one of `\"string\"`, `\"integer\"`, `\"number\"`, `\"boolean\"`, `\"array\"`, `\"object\"`; `items` is the element type of an array; `enum` lists the allowed values. A `default` makes the parameter optional unless `required=True` is given. An optional argument the agent leaves out reaches `impl` with its default, or is not passed at all when there is none.",
		builtinParam},
	{"check", `check(cond, message, weight=1.0)`,
		"Inside a verifier: one completion item of the rubric, passed when `cond` is true. `completion` is the weight of passed checks over the weight of all checks.",
		builtinCheck},
	{"safety", `safety(cond, message)`,
		"Inside a verifier: one red line. Any failed safety item makes the episode's score 0.",
		builtinSafety},
	{"capability", `capability(name, description, examples=[])`,
		"Only in the corpus root's `capabilities.star`: declares one capability of the taxonomy. `examples` are task names of the corpus.",
		builtinCapability},
}

var (
	taskNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	capNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
)

// DefaultStartTime is the virtual clock's start when a task gives none.
var defaultStartTime = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

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

func builtinTask(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	st, err := declaring(thread, "task")
	if err != nil {
		return nil, err
	}
	if st.isHelper || st.isCaps {
		return nil, schemaErrorf("task: tasks are declared in task files, not in %s", st.display)
	}
	a, err := unpack("task", []string{"name", "prompt?", "turns?", "tools", "setup?", "verify?", "solution?",
		"capabilities?", "description?", "seed?", "pass_threshold?", "max_calls_per_turn?", "start_time?",
		"faults?", "metadata?"}, pos, kwargs)
	if err != nil {
		return nil, err
	}
	t := &Task{Pos: callerPos(thread), File: st.display, Rel: st.rel}
	if t.Name, err = a.str("name", ""); err != nil {
		return nil, err
	}
	if !taskNameRE.MatchString(t.Name) {
		return nil, a.errorf("name", "%q does not match [a-z0-9][a-z0-9._-]*", t.Name)
	}
	for _, prev := range st.tasks {
		if prev.Name == t.Name {
			return nil, a.errorf("name", "%q is already declared at %s", t.Name, posString(prev.Pos))
		}
	}
	switch {
	case a.has("prompt") && a.has("turns"):
		return nil, schemaErrorf("task: give either prompt (one turn) or turns, not both")
	case !a.has("prompt") && !a.has("turns"):
		return nil, schemaErrorf("task: give prompt (one turn) or turns")
	case a.has("prompt"):
		if t.Prompt, err = a.str("prompt", ""); err != nil {
			return nil, err
		}
		if strings.TrimSpace(t.Prompt) == "" {
			return nil, a.errorf("prompt", "is empty")
		}
		t.SingleTurn = true
	default:
		vals, err := a.list("turns")
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return nil, a.errorf("turns", "is empty; give at least one turn(...)")
		}
		for i, v := range vals {
			tv, ok := v.(*TurnValue)
			if !ok {
				return nil, a.errorf("turns", "element %d: got %s, want turn(...)", i, v.Type())
			}
			t.Turns = append(t.Turns, tv.turn)
		}
	}
	if t.Setup, err = a.fn("setup", 1, "(ws)"); err != nil {
		return nil, err
	}
	if t.Verify, err = a.fn("verify", 2, "(ws, ep)"); err != nil {
		return nil, err
	}
	if t.Solution, err = a.fn("solution", 1, "(agent)"); err != nil {
		return nil, err
	}
	if t.Solution != nil && !t.SingleTurn {
		return nil, a.errorf("solution", "a task with turns gives each turn its own solution: turn(..., solution=...)")
	}
	if t.SingleTurn {
		t.Turns = []*Turn{{Pos: t.Pos, User: t.Prompt, Solution: t.Solution}}
	}
	if t.Tools, err = taskTools(a); err != nil {
		return nil, err
	}
	if t.Capabilities, err = a.strings("capabilities"); err != nil {
		return nil, err
	}
	for i, c := range t.Capabilities {
		if st.taxonomy != nil && !st.taxonomy.Has(c) {
			return nil, a.errorf("capabilities", "unknown capability %q (not declared in capabilities.star)", c)
		}
		for _, prev := range t.Capabilities[:i] {
			if prev == c {
				return nil, a.errorf("capabilities", "%q is listed twice", c)
			}
		}
	}
	if t.Description, err = a.str("description", ""); err != nil {
		return nil, err
	}
	if t.Seed, err = a.integer("seed", 0); err != nil {
		return nil, err
	}
	if t.PassThreshold, err = a.number("pass_threshold", 1.0); err != nil {
		return nil, err
	}
	if t.PassThreshold < 0 || t.PassThreshold > 1 {
		return nil, a.errorf("pass_threshold", "%v is not between 0 and 1", t.PassThreshold)
	}
	maxCalls, err := a.integer("max_calls_per_turn", 50)
	if err != nil {
		return nil, err
	}
	if maxCalls < 1 || maxCalls > 10000 {
		return nil, a.errorf("max_calls_per_turn", "%d is not between 1 and 10000", maxCalls)
	}
	t.MaxCallsPerTurn = int(maxCalls)
	t.StartTime = defaultStartTime
	if a.has("start_time") {
		s, err := a.str("start_time", "")
		if err != nil {
			return nil, err
		}
		if t.StartTime, err = workspace.ParseTime(s); err != nil {
			return nil, a.errorf("start_time", "%v", err)
		}
	}
	if t.Faults, err = taskFaults(a, t); err != nil {
		return nil, err
	}
	if a.has("metadata") {
		if _, ok := a.vals["metadata"].(*starlark.Dict); !ok {
			return nil, a.typeErr("metadata", a.vals["metadata"], "dict")
		}
		m, err := a.jsonArg("metadata")
		if err != nil {
			return nil, err
		}
		t.Metadata = m.(*jsonv.Object)
	} else {
		t.Metadata = &jsonv.Object{}
	}
	st.tasks = append(st.tasks, t)
	return starlark.None, nil
}

func taskTools(a *args) ([]*ToolSpec, error) {
	vals, err := a.list("tools")
	if err != nil {
		return nil, err
	}
	var out []*ToolSpec
	index := map[string]*ToolSpec{}
	add := func(s *ToolSpec) error {
		if prev, ok := index[s.Name]; ok {
			if prev.Builtin && s.Builtin {
				prev.Named = prev.Named || s.Named
				return nil
			}
			return a.errorf("tools", "two tools are named %q", s.Name)
		}
		index[s.Name] = s
		out = append(out, s)
		return nil
	}
	for i, v := range vals {
		switch x := v.(type) {
		case starlark.String:
			name := string(x)
			if group := tools.Group(name); len(group) > 0 {
				for _, bt := range group {
					if err := add(&ToolSpec{Tool: bt, Builtin: true}); err != nil {
						return nil, err
					}
				}
			} else if bt, ok := tools.Builtin(name); ok {
				if err := add(&ToolSpec{Tool: bt, Builtin: true, Named: true}); err != nil {
					return nil, err
				}
			} else {
				return nil, a.errorf("tools", "unknown tool group or tool %q (groups: %s)", name, strings.Join(tools.Groups(), ", "))
			}
		case *ToolValue:
			if _, ok := tools.Builtin(x.spec.Name); ok {
				return nil, a.errorf("tools", "task-defined tool %q has the name of a built-in tool", x.spec.Name)
			}
			if err := add(x.spec); err != nil {
				return nil, err
			}
		default:
			return nil, a.errorf("tools", "element %d: got %s, want a group name, a tool name or tool(...)", i, v.Type())
		}
	}
	return out, nil
}

func taskFaults(a *args, t *Task) (*Faults, error) {
	if !a.has("faults") {
		return nil, nil
	}
	d, ok := a.vals["faults"].(*starlark.Dict)
	if !ok {
		return nil, a.typeErr("faults", a.vals["faults"], "dict")
	}
	f := &Faults{}
	for _, item := range d.Items() {
		k, _ := item[0].(starlark.String)
		switch string(k) {
		case "rate":
			r, ok := starlark.AsFloat(item[1])
			if !ok {
				return nil, a.errorf("faults", "rate: got %s, want float", item[1].Type())
			}
			if r < 0 || r > 1 {
				return nil, a.errorf("faults", "rate %v is not between 0 and 1", r)
			}
			f.Rate = r
		case "seed":
			i, ok := item[1].(starlark.Int)
			n, ok2 := i.Int64()
			if !ok || !ok2 {
				return nil, a.errorf("faults", "seed: got %s, want int", item[1].Type())
			}
			f.Seed = n
		case "tools":
			seq, ok := item[1].(*starlark.List)
			if !ok {
				return nil, a.errorf("faults", "tools: got %s, want list of tool names", item[1].Type())
			}
			for i := 0; i < seq.Len(); i++ {
				s, ok := seq.Index(i).(starlark.String)
				if !ok {
					return nil, a.errorf("faults", "tools: element %d: got %s, want string", i, seq.Index(i).Type())
				}
				if _, ok := t.Tool(string(s)); !ok {
					return nil, a.errorf("faults", "tools: %q is not one of the task's tools", string(s))
				}
				f.Tools = append(f.Tools, string(s))
			}
		case "nth":
			nd, ok := item[1].(*starlark.Dict)
			if !ok {
				return nil, a.errorf("faults", "nth: got %s, want a dict from tool name to a list of attempt numbers", item[1].Type())
			}
			f.Nth = map[string][]int{}
			for _, kv := range nd.Items() {
				name, ok := kv[0].(starlark.String)
				if !ok {
					return nil, a.errorf("faults", "nth: key %s: got %s, want a tool name", kv[0], kv[0].Type())
				}
				if _, ok := t.Tool(string(name)); !ok {
					return nil, a.errorf("faults", "nth: %q is not one of the task's tools", string(name))
				}
				seq, ok := kv[1].(*starlark.List)
				if !ok {
					return nil, a.errorf("faults", "nth: %s: got %s, want a list of attempt numbers", name, kv[1].Type())
				}
				for i := 0; i < seq.Len(); i++ {
					n, err := starlark.AsInt32(seq.Index(i))
					if err != nil || n < 1 {
						return nil, a.errorf("faults", "nth: %s: element %d: want an attempt number ≥ 1 (the first call is 1)", name, i)
					}
					f.Nth[string(name)] = append(f.Nth[string(name)], n)
				}
			}
		default:
			return nil, a.errorf("faults", "unknown key %s (want rate, tools, seed, nth)", item[0])
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

func builtinTurn(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a, err := unpack("turn", []string{"user", "before?", "verify?", "solution?", "advance?"}, pos, kwargs)
	if err != nil {
		return nil, err
	}
	t := &Turn{Pos: callerPos(thread)}
	switch u := a.vals["user"].(type) {
	case starlark.String:
		if strings.TrimSpace(string(u)) == "" {
			return nil, a.errorf("user", "is empty")
		}
		t.User = string(u)
	case starlark.Callable:
		if t.UserFn, err = a.fn("user", 2, "(ws, ep)"); err != nil {
			return nil, err
		}
	default:
		return nil, a.typeErr("user", u, "string or function (ws, ep)")
	}
	if t.Before, err = a.fn("before", 1, "(ws)"); err != nil {
		return nil, err
	}
	if t.Verify, err = a.fn("verify", 2, "(ws, ep)"); err != nil {
		return nil, err
	}
	if t.Solution, err = a.fn("solution", 1, "(agent)"); err != nil {
		return nil, err
	}
	if a.has("advance") {
		if t.AdvanceText, err = a.str("advance", ""); err != nil {
			return nil, err
		}
		d, err := workspace.ParseDuration(t.AdvanceText)
		if err != nil {
			return nil, a.errorf("advance", "%v", err)
		}
		if d < 0 {
			return nil, a.errorf("advance", "%q is negative", t.AdvanceText)
		}
		t.Advance = d
	}
	return &TurnValue{turn: t}, nil
}

// ToolValue is the Starlark value returned by tool().
type ToolValue struct{ spec *ToolSpec }

func (v *ToolValue) String() string        { return fmt.Sprintf("<tool %s>", v.spec.Name) }
func (v *ToolValue) Type() string          { return "tool" }
func (v *ToolValue) Freeze()               {}
func (v *ToolValue) Truth() starlark.Bool  { return true }
func (v *ToolValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tool") }

var paramTypes = []string{"string", "integer", "number", "boolean", "array", "object"}

func builtinTool(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a, err := unpack("tool", []string{"name", "description", "params", "impl"}, pos, kwargs)
	if err != nil {
		return nil, err
	}
	spec := &ToolSpec{Tool: &tools.Tool{}, Pos: callerPos(thread)}
	if spec.Name, err = a.str("name", ""); err != nil {
		return nil, err
	}
	if !tools.ValidName(spec.Name) {
		return nil, a.errorf("name", "%q does not match [a-z][a-z0-9_]{0,63}", spec.Name)
	}
	if spec.Description, err = a.str("description", ""); err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Description) == "" {
		return nil, a.errorf("description", "is empty; the model reads it to decide when to call %s", spec.Name)
	}
	d, ok := a.vals["params"].(*starlark.Dict)
	if !ok {
		return nil, a.typeErr("params", a.vals["params"], "dict of param(...)")
	}
	for _, item := range d.Items() {
		k, ok := item[0].(starlark.String)
		if !ok {
			return nil, a.errorf("params", "key %s is a %s, want string", item[0], item[0].Type())
		}
		if !tools.ValidName(string(k)) {
			return nil, a.errorf("params", "parameter name %q does not match [a-z][a-z0-9_]{0,63}", string(k))
		}
		pv, ok := item[1].(*ParamValue)
		if !ok {
			return nil, a.errorf("params", "%s: got %s, want param(...)", string(k), item[1].Type())
		}
		p := pv.p
		p.Name = string(k)
		spec.Params = append(spec.Params, p)
	}
	impl, ok := a.vals["impl"].(starlark.Callable)
	if !ok {
		return nil, a.typeErr("impl", a.vals["impl"], "function (ws, **args)")
	}
	if fn, ok := impl.(*starlark.Function); ok {
		if err := checkImpl(fn, spec.Params); err != nil {
			return nil, a.errorf("impl", "%s: %v", fn.Name(), err)
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
type ParamValue struct{ p tools.Param }

func (v *ParamValue) String() string        { return fmt.Sprintf("<param %s>", v.p.Type) }
func (v *ParamValue) Type() string          { return "param" }
func (v *ParamValue) Freeze()               {}
func (v *ParamValue) Truth() starlark.Bool  { return true }
func (v *ParamValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: param") }

func builtinParam(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	a, err := unpack("param", []string{"type", "description?", "required?", "enum?", "items?", "default?"}, pos, kwargs)
	if err != nil {
		return nil, err
	}
	var p tools.Param
	if p.Type, err = a.str("type", ""); err != nil {
		return nil, err
	}
	if !contains(paramTypes, p.Type) {
		return nil, a.errorf("type", "%q is not one of %s", p.Type, strings.Join(paramTypes, ", "))
	}
	if p.Description, err = a.str("description", ""); err != nil {
		return nil, err
	}
	if a.has("items") {
		if p.Type != "array" {
			return nil, a.errorf("items", "only an array parameter has items")
		}
		if p.Items, err = a.str("items", ""); err != nil {
			return nil, err
		}
		if !contains(paramTypes, p.Items) {
			return nil, a.errorf("items", "%q is not one of %s", p.Items, strings.Join(paramTypes, ", "))
		}
	}
	if a.has("enum") {
		vals, err := a.list("enum")
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			return nil, a.errorf("enum", "is empty")
		}
		for i, v := range vals {
			j, err := (&args{name: "param", vals: map[string]starlark.Value{"enum": v}}).jsonArg("enum")
			if err != nil {
				return nil, err
			}
			if !typeMatches(p.Type, j) {
				return nil, a.errorf("enum", "element %d: %s is not a %s", i, jsonv.MustEncode(j), p.Type)
			}
			p.Enum = append(p.Enum, j)
		}
	}
	if a.has("default") {
		if p.Default, err = a.jsonArg("default"); err != nil {
			return nil, err
		}
		if !typeMatches(p.Type, p.Default) {
			return nil, a.errorf("default", "%s is not a %s", jsonv.MustEncode(p.Default), p.Type)
		}
		if p.Type == "number" {
			if i, ok := p.Default.(int64); ok {
				p.Default = float64(i)
			}
		}
		if len(p.Enum) > 0 && !containsJSON(p.Enum, p.Default) {
			return nil, a.errorf("default", "%s is not one of the enum values", jsonv.MustEncode(p.Default))
		}
		p.HasDefault = true
	}
	p.Required = !p.HasDefault
	if a.given("required") {
		if p.Required, err = a.boolean("required", true); err != nil {
			return nil, err
		}
		if p.Required && p.HasDefault {
			return nil, a.errorf("required", "a required parameter cannot have a default")
		}
	}
	return &ParamValue{p: p}, nil
}

func typeMatches(typ string, v jsonv.Value) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		_, ok := v.(int64)
		return ok
	case "number":
		_, ok := v.(int64)
		_, ok2 := v.(float64)
		return ok || ok2
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]jsonv.Value)
		return ok
	case "object":
		_, ok := v.(*jsonv.Object)
		return ok
	}
	return false
}

func containsJSON(vs []jsonv.Value, v jsonv.Value) bool {
	for _, x := range vs {
		if jsonv.Equal(x, v) {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func builtinCheck(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cond starlark.Value
	var message string
	var weight starlark.Value = starlark.Float(1)
	if err := starlark.UnpackArgs("check", pos, kwargs, "cond", &cond, "message", &message, "weight?", &weight); err != nil {
		return nil, err
	}
	w, ok := starlark.AsFloat(weight)
	if !ok {
		return nil, fmt.Errorf("check: weight: got %s, want float", weight.Type())
	}
	if w < 0 {
		return nil, fmt.Errorf("check: weight: %v is negative", w)
	}
	return record(thread, "check", cond, message, w)
}

func builtinSafety(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var cond starlark.Value
	var message string
	if err := starlark.UnpackArgs("safety", pos, kwargs, "cond", &cond, "message", &message); err != nil {
		return nil, err
	}
	return record(thread, "safety", cond, message, 0)
}

func record(thread *starlark.Thread, kind string, cond starlark.Value, message string, weight float64) (starlark.Value, error) {
	c := collectorOf(thread)
	if c == nil {
		return nil, fmt.Errorf("%s: only allowed inside a verifier", kind)
	}
	passed := bool(cond.Truth())
	c.Items = append(c.Items, CheckItem{Kind: kind, Message: message, Weight: weight, Passed: passed, Turn: c.Turn, Pos: callerPos(thread)})
	return starlark.Bool(passed), nil
}

func builtinCapability(thread *starlark.Thread, b *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	st := stateOf(thread)
	if st == nil || !st.isCaps {
		return nil, schemaErrorf("capability: only allowed in the corpus root's capabilities.star")
	}
	a, err := unpack("capability", []string{"name", "description", "examples?"}, pos, kwargs)
	if err != nil {
		return nil, err
	}
	c := Capability{Pos: callerPos(thread)}
	if c.Name, err = a.str("name", ""); err != nil {
		return nil, err
	}
	if !capNameRE.MatchString(c.Name) {
		return nil, a.errorf("name", "%q does not match [a-z][a-z0-9_]*(.[a-z][a-z0-9_]*)*", c.Name)
	}
	for _, prev := range st.caps {
		if prev.Name == c.Name {
			return nil, a.errorf("name", "%q is already declared at %s", c.Name, posString(prev.Pos))
		}
	}
	if c.Description, err = a.str("description", ""); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Description) == "" {
		return nil, a.errorf("description", "is empty")
	}
	if c.Examples, err = a.strings("examples"); err != nil {
		return nil, err
	}
	st.caps = append(st.caps, c)
	return starlark.None, nil
}
