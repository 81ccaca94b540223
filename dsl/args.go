package dsl

import (
	"fmt"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starargs"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"go.starlark.net/starlark"
)

// Param is one parameter of a builtin or method, as its table declares it (see starargs.Param).
// Default is the value an argument that is left out or given as None takes, and what the
// signature shows; nil makes the parameter required. A name starting with "**" collects the
// keyword arguments; the parameters before it are then positional only, so that those keyword
// arguments may have any name (agent.call("t", name = "x") passes name to the tool).
type Param = starargs.Param

// Req is a required parameter.
func Req(name string) Param { return starargs.Req(name) }

// Opt is an optional parameter with its default (starlark.None: no value).
func Opt(name string, def starlark.Value) Param { return starargs.Opt(name, def) }

// Rest is a "**name" parameter.
func Rest(name string) Param { return starargs.Rest(name) }

// Func is one builtin or method: its name, its parameters and its documentation. The same row
// binds the arguments of every call (Bind) and gives the signature the reference shows
// (Signature), both through its starargs.Table, so the two cannot disagree.
type Func struct {
	Name   string  // as called and as errors name it: "task", "agent.call", "ep.turn"
	Params []Param // in order; nil for an attribute (Signature is then the bare name)
	Doc    string  // one paragraph, for the reference
	// Schema makes argument errors schema errors: the function declares part of a task.
	Schema bool
}

// table is the parameter table: the parameters before a "**" one are positional only.
func (f *Func) table() starargs.Table {
	t := starargs.Table{Params: f.Params}
	if n := t.Named(); n < len(f.Params) {
		t.PosOnly = n
	}
	return t
}

// Signature is the function as the reference shows it: `name(a, b=default, /, **rest)`; the bare
// name for an attribute.
func (f *Func) Signature() string {
	if f.Params == nil {
		return f.Name
	}
	t := f.table()
	return t.Signature(f.Name, "")
}

// Starlark makes the function a Starlark builtin that binds its arguments, then runs impl.
func (f *Func) Starlark(impl func(thread *starlark.Thread, a *Args) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(f.Name, func(thread *starlark.Thread, _ *starlark.Builtin, pos starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		a, err := f.Bind(pos, kwargs)
		if err != nil {
			return nil, err
		}
		return impl(thread, a)
	})
}

// Args holds the arguments of one call by parameter position, so that every builtin and method
// reports errors the same way: "<func>: <param>: <problem>".
type Args struct {
	f    *Func
	vals []starlark.Value // as given: nil when left out
	rest []starlark.Tuple
}

// Bind matches positional and keyword arguments to the parameters (starargs.Table.Bind, whose
// wording every binding error has). An argument left out, or an optional one given as None,
// takes its parameter's default.
func (f *Func) Bind(pos starlark.Tuple, kwargs []starlark.Tuple) (*Args, error) {
	t := f.table()
	a := &Args{f: f, vals: make([]starlark.Value, t.Named())}
	rest, err := t.Bind(f.Name, a.vals, pos, kwargs)
	if err != nil {
		return nil, a.fail("%v", err)
	}
	a.rest = rest
	return a, nil
}

// index returns the position of the declared parameter called name. Reading a parameter the
// table does not declare is a bug, and panics.
func (a *Args) index(name string) int {
	t := a.f.table()
	i := t.Index(name)
	if i < 0 {
		panic(fmt.Sprintf("dsl: %s has no parameter %s", a.f.Name, name))
	}
	return i
}

func (a *Args) fail(format string, x ...any) error {
	if a.f.Schema {
		return schemaErrorf(format, x...)
	}
	return fmt.Errorf(format, x...)
}

// Errorf is an error about one argument: "<func>: <param>: <problem>".
func (a *Args) Errorf(name, format string, x ...any) error {
	return a.fail("%s: %s: %s", a.f.Name, name, fmt.Sprintf(format, x...))
}

// TypeErr is "<func>: <param>: got <type>, want <want>".
func (a *Args) TypeErr(name string, v starlark.Value, want string) error {
	return a.Errorf(name, "got %s, want %s", v.Type(), want)
}

// Value is the argument as given, or its default (None for an optional parameter without one).
// Reading a parameter the table does not declare is a bug, and panics.
func (a *Args) Value(name string) starlark.Value {
	i := a.index(name)
	v, def := a.vals[i], a.f.Params[i].Default
	if def != nil && (v == nil || v == starlark.None) {
		return def
	}
	return v
}

// Has reports whether the argument has a value other than None (given, or by default).
func (a *Args) Has(name string) bool { return a.Value(name) != starlark.None }

// Given reports whether the call passed the argument, even as None.
func (a *Args) Given(name string) bool { return a.vals[a.index(name)] != nil }

// Rest is the keyword arguments a "**" parameter collected, in call order.
func (a *Args) Rest() []starlark.Tuple { return a.rest }

// typed returns the argument for a reader that wants a value of type want: nil when it is None
// and the parameter is optional (the reader then gives its zero value). A required argument
// given as None is a type error.
func (a *Args) typed(name, want string) (starlark.Value, error) {
	v := a.Value(name)
	if v != starlark.None {
		return v, nil
	}
	if a.f.Params[a.index(name)].Default == nil {
		return nil, a.TypeErr(name, v, want)
	}
	return nil, nil
}

// Str reads a string; "" for None.
func (a *Args) Str(name string) (string, error) {
	v, err := a.typed(name, "string")
	if v == nil || err != nil {
		return "", err
	}
	s, ok := v.(starlark.String)
	if !ok {
		return "", a.TypeErr(name, v, "string")
	}
	return string(s), nil
}

// Int reads an int; 0 for None.
func (a *Args) Int(name string) (int64, error) {
	v, err := a.typed(name, "int")
	if v == nil || err != nil {
		return 0, err
	}
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, a.TypeErr(name, v, "int")
	}
	n, ok := i.Int64()
	if !ok {
		return 0, a.Errorf(name, "%s is out of range", i)
	}
	return n, nil
}

// Float reads a float or an int; 0 for None.
func (a *Args) Float(name string) (float64, error) {
	v, err := a.typed(name, "float")
	if v == nil || err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case starlark.Int:
		f, _ := starlark.AsFloat(x)
		return f, nil
	case starlark.Float:
		return float64(x), nil
	}
	return 0, a.TypeErr(name, v, "float")
}

// Bool reads a bool; false for None.
func (a *Args) Bool(name string) (bool, error) {
	v, err := a.typed(name, "bool")
	if v == nil || err != nil {
		return false, err
	}
	b, ok := v.(starlark.Bool)
	if !ok {
		return false, a.TypeErr(name, v, "bool")
	}
	return bool(b), nil
}

// Strings reads a list (or tuple) of strings; nil for None.
func (a *Args) Strings(name string) ([]string, error) {
	vals, err := a.seq(name, "list of strings")
	if err != nil {
		return nil, err
	}
	var out []string
	if vals != nil {
		out = make([]string, len(vals))
	}
	for i, v := range vals {
		s, ok := v.(starlark.String)
		if !ok {
			return nil, a.Errorf(name, "element %d: got %s, want string", i, v.Type())
		}
		out[i] = string(s)
	}
	return out, nil
}

// List reads a list (or tuple); nil for None.
func (a *Args) List(name string) ([]starlark.Value, error) { return a.seq(name, "list") }

func (a *Args) seq(name, want string) ([]starlark.Value, error) {
	v, err := a.typed(name, want)
	if v == nil || err != nil {
		return nil, err
	}
	seq, ok := v.(starlark.Indexable)
	if _, isStr := v.(starlark.String); !ok || isStr {
		return nil, a.TypeErr(name, v, want)
	}
	out := make([]starlark.Value, seq.Len())
	for i := range out {
		out[i] = seq.Index(i)
	}
	return out, nil
}

// Fn reads a callable; nil for None. want describes its parameters, e.g. "(ws, ep)"; nparams is
// how many positional arguments the runtime passes.
func (a *Args) Fn(name string, nparams int, want string) (starlark.Callable, error) {
	v, err := a.typed(name, "function "+want)
	if v == nil || err != nil {
		return nil, err
	}
	c, ok := v.(starlark.Callable)
	if !ok {
		return nil, a.TypeErr(name, v, "function "+want)
	}
	if err := checkArity(c, nparams); err != nil {
		return nil, a.Errorf(name, "%s must take %s: %v", c.Name(), want, err)
	}
	return c, nil
}

// JSON converts a value of the argument (itself, or an element of it) to JSON, for enum values,
// defaults, metadata and tool arguments; an error names the argument.
func (a *Args) JSON(name string, v starlark.Value) (jsonv.Value, error) {
	j, err := starconv.ToJSON(v)
	if err != nil {
		return nil, a.Errorf(name, "%v", err)
	}
	return j, nil
}

// checkArity reports whether a Starlark function accepts exactly n positional arguments.
func checkArity(c starlark.Callable, n int) error {
	fn, ok := c.(*starlark.Function)
	if !ok {
		return nil // builtins check their own arguments
	}
	np := fn.NumParams() - fn.NumKwonlyParams()
	if fn.HasVarargs() {
		np--
	}
	if fn.HasKwargs() {
		np--
	}
	required := 0
	for i := 0; i < np; i++ {
		if fn.ParamDefault(i) == nil {
			required++
		}
	}
	if required > n {
		return fmt.Errorf("it requires %d parameters", required)
	}
	if np < n && !fn.HasVarargs() {
		return fmt.Errorf("it takes %d parameters", np)
	}
	return nil
}
