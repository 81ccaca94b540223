package starargs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

func kw(name string, v starlark.Value) starlark.Tuple {
	return starlark.Tuple{starlark.String(name), v}
}

func bind(t *Table, args starlark.Tuple, kwargs ...starlark.Tuple) ([]starlark.Value, []starlark.Tuple, error) {
	vals := make([]starlark.Value, t.Named())
	rest, err := t.Bind("f", vals, args, kwargs)
	return vals, rest, err
}

var one, two = starlark.MakeInt(1), starlark.MakeInt(2)

// One wording for every binding error, whatever the function.
func TestBindErrors(t *testing.T) {
	f := &Table{Params: []Param{Req("a"), Opt("b", two)}}
	for _, c := range []struct {
		t      *Table
		args   starlark.Tuple
		kwargs []starlark.Tuple
		want   string
	}{
		{f, starlark.Tuple{one, one, one}, nil, "f: got 3 positional arguments, want at most 2"},
		{&Table{Params: []Param{}}, starlark.Tuple{one}, nil, "f: got 1 positional argument, want none"},
		{f, starlark.Tuple{one}, []starlark.Tuple{kw("a", one)}, "f: a: given twice"},
		{f, nil, []starlark.Tuple{kw("c", one)}, "f: unexpected keyword argument c (want one of a, b)"},
		{f, nil, []starlark.Tuple{kw("a b", one)}, `f: unexpected keyword argument "a b" (want one of a, b)`},
		{&Table{Params: []Param{Req("a")}}, nil, []starlark.Tuple{kw("c", one)}, "f: unexpected keyword argument c (want a)"},
		{&Table{}, nil, []starlark.Tuple{kw("c", one)}, "f: unexpected keyword argument c (want none)"},
		{f, nil, nil, "f: missing required argument a"},
		{f, nil, []starlark.Tuple{kw("b", one)}, "f: missing required argument a"},
		// positional only (Python's "/") and keyword only ("*")
		{&Table{Params: []Param{Req("a"), Req("b")}, PosOnly: 1}, nil, []starlark.Tuple{kw("a", one), kw("b", one)}, "f: unexpected keyword argument a (a is positional only)"},
		{&Table{Params: []Param{Req("a"), Opt("b", two), Opt("c", two)}, KwOnly: 2}, starlark.Tuple{one, one}, nil, "f: got 2 positional arguments, want at most 1 (keyword only: b, c)"},
		{&Table{Params: []Param{Req("a"), Rest("r")}, PosOnly: 1}, nil, []starlark.Tuple{kw("a", one)}, "f: missing required argument a"},
	} {
		_, _, err := bind(c.t, c.args, c.kwargs...)
		assert.EqualError(t, err, c.want)
	}
}

func TestBind(t *testing.T) {
	f := &Table{Params: []Param{Req("a"), Opt("b", two), Rest("r")}}
	vals, rest, err := bind(f, starlark.Tuple{one}, kw("x", one), kw("b", starlark.None), kw("y", two))
	require.NoError(t, err)
	assert.Equal(t, []starlark.Value{one, starlark.None}, vals, "None is bound as given")
	assert.Equal(t, []starlark.Tuple{kw("x", one), kw("y", two)}, rest, "the other keywords, in call order")

	vals, _, err = bind(f, nil, kw("a", starlark.None))
	require.NoError(t, err, "a required argument may be None: its reader says what it wants")
	assert.Nil(t, vals[1], "left out")
	f.Defaults(vals)
	assert.Equal(t, two, vals[1])

	// before a "**" parameter, positional-only parameters leave every keyword to it
	g := &Table{Params: []Param{Req("name"), Rest("args")}, PosOnly: 1}
	vals, rest, err = bind(g, starlark.Tuple{starlark.String("t")}, kw("name", one))
	require.NoError(t, err)
	assert.Equal(t, []starlark.Value{starlark.String("t")}, vals)
	assert.Equal(t, []starlark.Tuple{kw("name", one)}, rest)
	// without PosOnly, a keyword of a parameter's name is that parameter, as in a def
	h := &Table{Params: []Param{Req("name"), Rest("args")}}
	vals, rest, err = bind(h, nil, kw("name", one), kw("x", two))
	require.NoError(t, err)
	assert.Equal(t, []starlark.Value{one}, vals)
	assert.Equal(t, []starlark.Tuple{kw("x", two)}, rest)
}

// Binding allocates nothing: ws methods bind every call of a script this way.
func TestBindAllocatesNothing(t *testing.T) {
	f := &Table{Params: []Param{Req("path"), Opt("content", starlark.String("")), Opt("mode", starlark.None)}}
	args, kwargs := starlark.Tuple{starlark.String("/a")}, []starlark.Tuple{kw("mode", starlark.String("w"))}
	var vals [3]starlark.Value
	n := testing.AllocsPerRun(100, func() {
		vals = [3]starlark.Value{}
		if _, err := f.Bind("f", vals[:], args, kwargs); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, n)
}

func TestSignature(t *testing.T) {
	for _, c := range []struct {
		t         Table
		name, ret string
		want      string
	}{
		{Table{}, "f", "", "f()"},
		{Table{Params: []Param{Req("a"), Opt("b", starlark.String("/")), Opt("c", starlark.NewList(nil)), Rest("r")}}, "f", "list", `f(a, b="/", c=[], **r) -> list`},
		{Positional(Req("a"), Opt("b", two)), "f", "int", "f(a, b=2, /) -> int"},
		{Keywords(Opt("a", one), Opt("b", starlark.None)), "f", "", "f(*, a=1, b=None)"},
		{Table{Params: []Param{Req("a"), Req("b"), Opt("c", one), Rest("r")}, PosOnly: 1, KwOnly: 1}, "f", "", "f(a, /, b, *, c=1, **r)"},
		{Table{Params: []Param{Req("name"), Rest("args")}, PosOnly: 1}, "agent.call", "", "agent.call(name, /, **args)"},
	} {
		assert.Equal(t, c.want, c.t.Signature(c.name, c.ret))
	}
}

func TestCheck(t *testing.T) {
	for _, bad := range []Table{
		{Params: []Param{Req("a"), Req("a")}},
		{Params: []Param{Rest("r"), Req("a")}},
		{Params: []Param{Req("a b")}},
		{Params: []Param{{Name: "**r", Default: one}}},
		{Params: []Param{Req("a")}, PosOnly: 1, KwOnly: 1},
		{Params: []Param{Req("a")}, PosOnly: 2},
	} {
		assert.Error(t, bad.Check(), "%+v", bad)
	}
	ok := Table{Params: []Param{Req("a"), Opt("b", one), Rest("r")}, PosOnly: 1, KwOnly: 1}
	assert.NoError(t, ok.Check())
}

func TestUnpackArgs(t *testing.T) {
	f := &Table{Params: []Param{Req("s"), Opt("n", starlark.MakeInt(7)), Opt("v", starlark.None)}}
	var (
		s string
		n int
		v starlark.Value
	)
	require.NoError(t, f.UnpackArgs("f", starlark.Tuple{starlark.String("x")}, nil, &s, &n, &v))
	assert.Equal(t, "x", s)
	assert.Equal(t, 7, n, "the table's default")
	assert.Equal(t, starlark.None, v)

	err := f.UnpackArgs("f", starlark.Tuple{starlark.String("x"), starlark.None}, nil, &s, &n, &v)
	assert.EqualError(t, err, "f: for parameter n: got NoneType, want int", "None is not left out")
	err = f.UnpackArgs("f", nil, []starlark.Tuple{kw("s", one)}, &s, &n, &v)
	assert.EqualError(t, err, "f: for parameter s: got int, want string")
	err = f.UnpackArgs("f", nil, nil, &s, &n, &v)
	assert.EqualError(t, err, "f: missing required argument s")
	assert.Panics(t, func() { _ = f.UnpackArgs("f", nil, nil, &s) }, "a variable per parameter")
}
