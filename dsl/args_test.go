package dsl

import (
	"errors"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starargs/argstest"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

// eval evaluates a Starlark expression with the task language's builtins.
func eval(t *testing.T, expr string) (starlark.Value, error) {
	t.Helper()
	th := NewThread("test", DefaultLimits, nil)
	return starlark.EvalOptions(FileOptions, th, "test.star", expr, Predeclared())
}

// A task parameter's default and enum values are checked exactly as an agent's argument for
// that parameter is: accepted or refused alike, with the same problem named, and kept in the
// form the agent's argument takes.
func TestParamChecksAgreeWithAgentArguments(t *testing.T) {
	t.Parallel()
	cases := []struct{ typ, items, value string }{
		{"string", "", `"a"`},
		{"string", "", `3`},
		{"integer", "", `3`},
		{"integer", "", `3.0`},
		{"integer", "", `3.5`},
		{"integer", "", `True`},
		{"number", "", `2`},
		{"number", "", `2.5`},
		{"number", "", `"2"`},
		{"boolean", "", `False`},
		{"boolean", "", `"yes"`},
		{"array", "", `[1, "a"]`},
		{"array", "string", `["a", "b"]`},
		{"array", "string", `["a", 1]`},
		{"array", "integer", `[1, 2.0]`},
		{"array", "", `{"a": 1}`},
		{"object", "", `{"a": [1]}`},
		{"object", "", `[1]`},
	}
	for _, c := range cases {
		t.Run(c.typ+"/"+c.items+"/"+c.value, func(t *testing.T) {
			items := ""
			if c.items != "" {
				items = ", items = " + starlark.String(c.items).String()
			}
			v, err := eval(t, c.value)
			require.NoError(t, err)
			arg, err := starconv.ToJSON(v)
			require.NoError(t, err)
			tool := &tools.Tool{Name: "t", Params: []tools.Param{{Name: "x", Type: c.typ, Items: c.items, Required: true}}}
			checked, agentErr := tool.CheckArgs(jsonv.NewObject("x", arg))

			for _, decl := range []string{"default = " + c.value, "enum = [" + c.value + "]"} {
				pv, declErr := eval(t, `param("`+c.typ+`"`+items+", "+decl+")")
				if agentErr != nil {
					require.Error(t, declErr, decl)
					core := strings.TrimPrefix(agentErr.Error(), `argument "x": `)
					want := "param: default: " + core
					if strings.HasPrefix(decl, "enum") {
						want = "param: enum: element 0: " + core
					}
					assert.Equal(t, want, declErr.Error())
					continue
				}
				require.NoError(t, declErr, decl)
				p := pv.(*ParamValue).p
				got := p.Default
				if strings.HasPrefix(decl, "enum") {
					got = p.Enum[0]
				}
				want, _ := checked.Get("x")
				assert.Equal(t, want, got, "kept as the agent's argument is")
			}
		})
	}
}

// A default outside the enum is refused with the wording an agent's argument gets.
func TestParamDefaultOutsideEnum(t *testing.T) {
	t.Parallel()
	_, err := eval(t, `param("string", enum = ["a", "b"], default = "c")`)
	require.Error(t, err)
	tool := &tools.Tool{Name: "t", Params: []tools.Param{{Name: "x", Type: "string", Enum: []jsonv.Value{"a", "b"}}}}
	_, agentErr := tool.CheckArgs(jsonv.NewObject("x", "c"))
	require.Error(t, agentErr)
	assert.Equal(t, `argument "x": "c" is not one of "a", "b"`, agentErr.Error())
	assert.Equal(t, `param: default: "c" is not one of "a", "b"`, err.Error())

	for _, bad := range []string{`param("date")`, `param("addresses")`, `param("array", items = "date")`} {
		_, err := eval(t, bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), `is not one of string, integer, number, boolean, array, object`, bad)
	}
}

// The signature the reference shows for a builtin lists exactly the parameters its binder
// accepts, required exactly where the binder requires them, with the defaults it fills in.
func TestBuiltinSignaturesAreTheirBinding(t *testing.T) {
	t.Parallel()
	pre := Predeclared()
	for _, b := range Builtins {
		t.Run(b.Name, func(t *testing.T) {
			tab := b.table()
			require.NoError(t, tab.Check())
			argstest.Check(t, b.Signature(), func(args starlark.Tuple, kwargs []starlark.Tuple) error {
				th := NewThread("test", DefaultLimits, nil)
				_, err := starlark.Call(th, pre[b.Name], args, kwargs)
				return err
			})

			// the defaults the signature shows are the values the binder fills in
			params, _, err := argstest.Parse(b.Signature())
			require.NoError(t, err)
			var kwargs []starlark.Tuple
			for _, p := range params {
				if p.Required {
					kwargs = append(kwargs, starlark.Tuple{starlark.String(p.Name), starlark.None})
				}
			}
			a, err := b.Bind(nil, kwargs)
			require.NoError(t, err)
			for _, p := range params {
				if !p.Required {
					assert.Contains(t, b.Signature(), p.Name+"="+a.Value(p.Name).String())
					assert.False(t, a.Given(p.Name))
				}
			}
		})
	}
}

// One binder, one wording, for every builtin and method.
func TestBindErrors(t *testing.T) {
	t.Parallel()
	f := &Func{Name: "f", Params: []Param{Req("a"), Opt("b", starlark.MakeInt(2))}}
	assert.Equal(t, "f(a, b=2)", f.Signature())
	_, err := f.Bind(starlark.Tuple{starlark.True, starlark.True, starlark.True}, nil)
	assert.EqualError(t, err, "f: got 3 positional arguments, want at most 2")
	_, err = (&Func{Name: "h", Params: []Param{}}).Bind(starlark.Tuple{starlark.True}, nil)
	assert.EqualError(t, err, "h: got 1 positional argument, want none")
	_, err = f.Bind(starlark.Tuple{starlark.True}, []starlark.Tuple{{starlark.String("a"), starlark.True}})
	assert.EqualError(t, err, "f: a: given twice")
	_, err = f.Bind(nil, []starlark.Tuple{{starlark.String("c"), starlark.True}})
	assert.EqualError(t, err, `f: unexpected keyword argument c (want one of a, b)`)
	_, err = f.Bind(nil, nil)
	assert.EqualError(t, err, "f: missing required argument a")

	a, err := f.Bind(starlark.Tuple{starlark.None}, []starlark.Tuple{{starlark.String("b"), starlark.None}})
	require.NoError(t, err)
	assert.Equal(t, starlark.MakeInt(2), a.Value("b"), "None takes the default")
	assert.True(t, a.Given("b"))
	_, err = a.Str("a")
	assert.EqualError(t, err, "f: a: got NoneType, want string", "a required argument is not None")
	assert.Panics(t, func() { a.Value("c") }, "reading an undeclared parameter is a bug")

	// before a ** parameter, parameters are positional only: every keyword goes to it
	g := &Func{Name: "g", Params: []Param{Req("name"), Rest("args")}}
	assert.Equal(t, "g(name, /, **args)", g.Signature())
	a, err = g.Bind(starlark.Tuple{starlark.String("t")}, []starlark.Tuple{{starlark.String("name"), starlark.True}})
	require.NoError(t, err)
	s, err := a.Str("name")
	require.NoError(t, err)
	assert.Equal(t, "t", s)
	assert.Len(t, a.Rest(), 1)
	_, err = g.Bind(nil, []starlark.Tuple{{starlark.String("name"), starlark.True}})
	assert.EqualError(t, err, "g: missing required argument name")

	// a declaration's argument errors are schema errors; others plain errors
	_, err = (&Func{Name: "s", Schema: true}).Bind(starlark.Tuple{starlark.True}, nil)
	var se *SchemaError
	assert.ErrorAs(t, err, &se)
	_, err = (&Func{Name: "p"}).Bind(starlark.Tuple{starlark.True}, nil)
	require.Error(t, err)
	assert.False(t, errors.As(err, &se))
}
