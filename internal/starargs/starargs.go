// Package starargs is the one binder of the task language: every builtin and method written in
// Go (dsl's builtins, ep and agent, ws, re, time) declares its parameters in a Table, and the
// same Table binds the arguments of each call (Bind) and renders the signature the reference
// shows (Signature), so that what a function accepts and what its documentation says cannot
// disagree, and every argument error has the same words:
//
//	f: got 3 positional arguments, want at most 2
//	time.time: got 1 positional argument, want none (keyword only: year, month, …)
//	f: unexpected keyword argument zzz (want one of a, b)
//	time.parse_duration: unexpected keyword argument d (d is positional only)
//	f: a: given twice
//	f: missing required argument a
//
// (The wording of an unknown keyword is Python's, and what a model expects; the others are
// those dsl's builtins have always had.)
//
// Bind is cheap: it fills a slice the caller gives (an array on its stack, say) by parameter
// position and allocates nothing unless a "**" parameter collects keyword arguments.
package starargs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
)

// Param is one parameter. Default is the value an argument that is left out takes, and what the
// signature shows; nil makes the parameter required. A name starting with "**" (Rest) collects
// the keyword arguments that name no other parameter that takes keywords.
type Param struct {
	Name    string
	Default starlark.Value
}

// Req is a required parameter.
func Req(name string) Param { return Param{Name: name} }

// Opt is an optional parameter with its default (starlark.None: no value). The default is frozen:
// every call shares it.
func Opt(name string, def starlark.Value) Param {
	def.Freeze()
	return Param{Name: name, Default: def}
}

// Rest is a "**name" parameter; it comes last.
func Rest(name string) Param { return Param{Name: "**" + name} }

// IsRest reports whether p is a "**" parameter.
func (p Param) IsRest() bool { return strings.HasPrefix(p.Name, "**") }

// Table is the parameter table of one function: its parameters in order, of which the first
// PosOnly are positional only (Python's "/": a keyword argument of their name goes to the "**"
// parameter, or is an error) and the last KwOnly before a "**" parameter are keyword only
// (Python's "*").
type Table struct {
	Params  []Param
	PosOnly int
	KwOnly  int
}

// Positional is the table of parameters that are all positional only.
func Positional(ps ...Param) Table { return Table{Params: ps, PosOnly: len(ps)} }

// Keywords is the table of parameters that are all keyword only.
func Keywords(ps ...Param) Table { return Table{Params: ps, KwOnly: len(ps)} }

// Named is the number of parameters other than a "**" one: the length of the slice Bind fills.
func (t *Table) Named() int {
	n := len(t.Params)
	if n > 0 && t.Params[n-1].IsRest() {
		n--
	}
	return n
}

// rest reports whether the table ends with a "**" parameter.
func (t *Table) rest() bool { return t.Named() < len(t.Params) }

// Index is the position of the parameter called name (not a "**" one), or -1.
func (t *Table) Index(name string) int {
	for i, n := 0, t.Named(); i < n; i++ {
		if t.Params[i].Name == name {
			return i
		}
	}
	return -1
}

// Check reports a table that cannot be: a name that is not an identifier, or given twice, a
// "**" parameter that is not the last, PosOnly and KwOnly overlapping. Tables are declared once,
// so callers panic on an error.
func (t *Table) Check() error {
	n := t.Named()
	if t.PosOnly < 0 || t.KwOnly < 0 || t.PosOnly+t.KwOnly > n {
		return fmt.Errorf("%d positional-only and %d keyword-only parameters of %d", t.PosOnly, t.KwOnly, n)
	}
	for i, p := range t.Params {
		name := strings.TrimPrefix(p.Name, "**")
		switch {
		case !isIdent(name):
			return fmt.Errorf("parameter %q is not an identifier", p.Name)
		case p.IsRest() && i != len(t.Params)-1:
			return fmt.Errorf("%s is not the last parameter", p.Name)
		case p.IsRest() && p.Default != nil:
			return fmt.Errorf("%s has a default", p.Name)
		case t.Index(name) != i && !p.IsRest():
			return fmt.Errorf("parameter %s is declared twice", name)
		}
	}
	return nil
}

// Signature is the function as the reference shows it: `name(a, b=default, **rest) -> ret`, a
// default as the Starlark value it is, with Python's "/" after positional-only parameters and
// "*" before keyword-only ones; without " -> ret" when ret is "".
func (t *Table) Signature(name, ret string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	n, sep := t.Named(), ""
	item := func(s string) {
		b.WriteString(sep)
		b.WriteString(s)
		sep = ", "
	}
	for i, p := range t.Params {
		if i == n-t.KwOnly && t.KwOnly > 0 {
			item("*")
		}
		s := p.Name
		if p.Default != nil {
			s += "=" + p.Default.String()
		}
		item(s)
		if i == t.PosOnly-1 {
			item("/")
		}
	}
	b.WriteByte(')')
	if ret != "" {
		b.WriteString(" -> ")
		b.WriteString(ret)
	}
	return b.String()
}

// Bind matches the positional arguments args and the keyword arguments kwargs of a call of fn
// to the parameters: vals[i] (vals has at least Named() elements, all nil) becomes the argument
// of parameter i, and stays nil when the call leaves it out; the keyword arguments a "**"
// parameter collects are returned in call order. A required argument given as None is bound:
// the reader of its value says what it wants instead.
func (t *Table) Bind(fn string, vals []starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (rest []starlark.Tuple, err error) {
	ps := t.Params
	n := len(ps)
	hasRest := n > 0 && strings.HasPrefix(ps[n-1].Name, "**")
	if hasRest {
		n--
	}
	if len(args) > n-t.KwOnly {
		return nil, t.tooMany(fn, len(args))
	}
	copy(vals, args)
kwargs:
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		for i := t.PosOnly; i < n; i++ {
			if ps[i].Name == k {
				if vals[i] != nil {
					return nil, fmt.Errorf("%s: %s: given twice", fn, k)
				}
				vals[i] = kv[1]
				continue kwargs
			}
		}
		if hasRest {
			rest = append(rest, kv)
			continue
		}
		return nil, t.unexpected(fn, k)
	}
	for i := 0; i < n; i++ {
		if vals[i] == nil && ps[i].Default == nil {
			return nil, fmt.Errorf("%s: missing required argument %s", fn, ps[i].Name)
		}
	}
	return rest, nil
}

func (t *Table) tooMany(fn string, got int) error {
	n := t.Named()
	want := "none"
	if max := n - t.KwOnly; max > 0 {
		want = "at most " + strconv.Itoa(max)
	}
	s := "s"
	if got == 1 {
		s = ""
	}
	err := fmt.Sprintf("%s: got %d positional argument%s, want %s", fn, got, s, want)
	if t.KwOnly > 0 {
		err += " (keyword only: " + strings.Join(t.names(n-t.KwOnly, n), ", ") + ")"
	}
	return errors.New(err)
}

func (t *Table) unexpected(fn, k string) error {
	if i := t.Index(k); i >= 0 && i < t.PosOnly {
		return fmt.Errorf("%s: unexpected keyword argument %s (%s is positional only)", fn, k, k)
	}
	want := t.names(t.PosOnly, t.Named())
	list := "none"
	switch len(want) {
	case 0:
	case 1:
		list = want[0]
	default:
		list = "one of " + strings.Join(want, ", ")
	}
	if !isIdent(k) {
		k = strconv.Quote(k)
	}
	return fmt.Errorf("%s: unexpected keyword argument %s (want %s)", fn, k, list)
}

func (t *Table) names(from, to int) []string {
	out := make([]string, 0, to-from)
	for _, p := range t.Params[from:to] {
		out = append(out, p.Name)
	}
	return out
}

// Defaults gives each argument that Bind left out (nil) its parameter's default.
func (t *Table) Defaults(vals []starlark.Value) {
	for i, v := range vals {
		if v == nil {
			vals[i] = t.Params[i].Default
		}
	}
}

// Unpack converts the bound arguments vals into the variables ptrs point to, one per named
// parameter in order, as starlark.UnpackArg does (*string, *int, *bool, starlark.Unpacker, …); a
// nil argument leaves its variable as it is. A conversion error names the parameter: "fn: for
// parameter x: got int, want string".
func (t *Table) Unpack(fn string, vals []starlark.Value, ptrs ...any) error {
	if len(ptrs) != t.Named() || len(vals) != len(ptrs) {
		panic(fmt.Sprintf("starargs: %s: %d variables for %d parameters", fn, len(ptrs), t.Named()))
	}
	for i, v := range vals {
		if v == nil {
			continue
		}
		if err := starlark.UnpackArg(v, ptrs[i]); err != nil {
			return fmt.Errorf("%s: for parameter %s: %v", fn, t.Params[i].Name, err)
		}
	}
	return nil
}

// maxUnpack bounds the parameters of a table UnpackArgs binds (on its stack).
const maxUnpack = 8

// UnpackArgs binds a call of fn (Bind), gives the arguments left out their defaults (Defaults)
// and converts them into ptrs (Unpack), like starlark.UnpackArgs with this table. The table has
// no "**" parameter and at most 8 parameters.
func (t *Table) UnpackArgs(fn string, args starlark.Tuple, kwargs []starlark.Tuple, ptrs ...any) error {
	var buf [maxUnpack]starlark.Value
	if t.rest() || t.Named() > maxUnpack || len(ptrs) != t.Named() {
		panic(fmt.Sprintf("starargs: %s: UnpackArgs of %d variables for %d parameters (at most 8, no **)", fn, len(ptrs), len(t.Params)))
	}
	vals := buf[:t.Named()]
	if _, err := t.Bind(fn, vals, args, kwargs); err != nil {
		return err
	}
	t.Defaults(vals)
	return t.Unpack(fn, vals, ptrs...)
}

// isIdent reports whether s is an identifier (letters, digits and _), which an error shows
// unquoted.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}
