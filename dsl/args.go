package dsl

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"go.starlark.net/starlark"
)

// args holds the arguments of one builtin call by parameter name, so that every builtin reports
// errors the same way: "<builtin>: <param>: <problem>".
type args struct {
	name string
	vals map[string]starlark.Value
}

// unpack binds positional and keyword arguments to params. A name ending in "?" is optional.
func unpack(fn string, params []string, pos starlark.Tuple, kwargs []starlark.Tuple) (*args, error) {
	a := &args{name: fn, vals: make(map[string]starlark.Value, len(params))}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = strings.TrimSuffix(p, "?")
	}
	if len(pos) > len(names) {
		return nil, schemaErrorf("%s: got %d positional arguments, want at most %d", fn, len(pos), len(names))
	}
	for i, v := range pos {
		a.vals[names[i]] = v
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		found := false
		for _, n := range names {
			if n == k {
				found = true
				break
			}
		}
		if !found {
			return nil, schemaErrorf("%s: unexpected argument %q (want one of %s)", fn, k, strings.Join(names, ", "))
		}
		if _, dup := a.vals[k]; dup {
			return nil, schemaErrorf("%s: %s: given twice", fn, k)
		}
		a.vals[k] = kv[1]
	}
	for i, p := range params {
		if !strings.HasSuffix(p, "?") {
			if _, ok := a.vals[names[i]]; !ok {
				return nil, schemaErrorf("%s: missing required argument %s", fn, names[i])
			}
		}
	}
	return a, nil
}

// has reports whether the argument was given and is not None.
func (a *args) has(name string) bool {
	v, ok := a.vals[name]
	return ok && v != starlark.None
}

func (a *args) given(name string) bool {
	_, ok := a.vals[name]
	return ok
}

func (a *args) errorf(name, format string, x ...any) error {
	return schemaErrorf("%s: %s: %s", a.name, name, fmt.Sprintf(format, x...))
}

func (a *args) typeErr(name string, v starlark.Value, want string) error {
	return a.errorf(name, "got %s, want %s", v.Type(), want)
}

func (a *args) str(name, def string) (string, error) {
	if !a.has(name) {
		return def, nil
	}
	v := a.vals[name]
	s, ok := v.(starlark.String)
	if !ok {
		return "", a.typeErr(name, v, "string")
	}
	return string(s), nil
}

func (a *args) integer(name string, def int64) (int64, error) {
	if !a.has(name) {
		return def, nil
	}
	v := a.vals[name]
	i, ok := v.(starlark.Int)
	if !ok {
		return 0, a.typeErr(name, v, "int")
	}
	n, ok := i.Int64()
	if !ok {
		return 0, a.errorf(name, "%s is out of range", i)
	}
	return n, nil
}

func (a *args) number(name string, def float64) (float64, error) {
	if !a.has(name) {
		return def, nil
	}
	switch x := a.vals[name].(type) {
	case starlark.Int:
		f, _ := starlark.AsFloat(x)
		return f, nil
	case starlark.Float:
		return float64(x), nil
	}
	return 0, a.typeErr(name, a.vals[name], "float")
}

func (a *args) boolean(name string, def bool) (bool, error) {
	if !a.has(name) {
		return def, nil
	}
	b, ok := a.vals[name].(starlark.Bool)
	if !ok {
		return false, a.typeErr(name, a.vals[name], "bool")
	}
	return bool(b), nil
}

// strings reads a list (or tuple) of strings.
func (a *args) strings(name string) ([]string, error) {
	if !a.has(name) {
		return nil, nil
	}
	seq, ok := a.vals[name].(starlark.Indexable)
	if _, isStr := a.vals[name].(starlark.String); !ok || isStr {
		return nil, a.typeErr(name, a.vals[name], "list of strings")
	}
	out := make([]string, seq.Len())
	for i := range out {
		s, ok := seq.Index(i).(starlark.String)
		if !ok {
			return nil, a.errorf(name, "element %d: got %s, want string", i, seq.Index(i).Type())
		}
		out[i] = string(s)
	}
	return out, nil
}

func (a *args) list(name string) ([]starlark.Value, error) {
	if !a.has(name) {
		return nil, nil
	}
	seq, ok := a.vals[name].(starlark.Indexable)
	if _, isStr := a.vals[name].(starlark.String); !ok || isStr {
		return nil, a.typeErr(name, a.vals[name], "list")
	}
	out := make([]starlark.Value, seq.Len())
	for i := range out {
		out[i] = seq.Index(i)
	}
	return out, nil
}

// fn reads a callable. want describes its parameters, e.g. "(ws, ep)"; nparams is how many
// positional arguments the runtime passes.
func (a *args) fn(name string, nparams int, want string) (starlark.Callable, error) {
	if !a.has(name) {
		return nil, nil
	}
	c, ok := a.vals[name].(starlark.Callable)
	if !ok {
		return nil, a.typeErr(name, a.vals[name], "function "+want)
	}
	if err := checkArity(c, nparams); err != nil {
		return nil, a.errorf(name, "%s must take %s: %v", c.Name(), want, err)
	}
	return c, nil
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

// jsonArg converts an argument to JSON (for enum values, defaults, metadata).
func (a *args) jsonArg(name string) (jsonv.Value, error) {
	v, err := starconv.ToJSON(a.vals[name])
	if err != nil {
		return nil, a.errorf(name, "%v", err)
	}
	return v, nil
}
