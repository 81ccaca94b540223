package argstest

import (
	"fmt"
	"testing"

	"github.com/coworkenv/coworkenv/internal/starargs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

func TestParse(t *testing.T) {
	ps, ok, err := Parse(`f(a, b="x, (y)", /, c=[1, 2], *, d, e={}, **rest) -> list | None`)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []Param{
		{Name: "a", Required: true, PosOnly: true}, {Name: "b", PosOnly: true},
		{Name: "c"}, {Name: "d", Required: true, KwOnly: true}, {Name: "e", KwOnly: true},
		{Name: "rest", Rest: true},
	}, ps)
	_, ok, err = Parse("ws.mail.address")
	assert.False(t, ok)
	assert.NoError(t, err)
	_, _, err = Parse("f(a")
	assert.Error(t, err)
}

// recorder is a testing.TB that keeps the errors.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Check passes a function bound by the table its signature is rendered from, and fails one
// whose signature says anything else.
func TestCheckFindsDisagreements(t *testing.T) {
	tables := map[string]starargs.Table{
		"plain":        {Params: []starargs.Param{starargs.Req("a"), starargs.Opt("b", starlark.None)}},
		"rest":         {Params: []starargs.Param{starargs.Req("a"), starargs.Rest("kw")}},
		"rest after /": {Params: []starargs.Param{starargs.Req("a"), starargs.Rest("kw")}, PosOnly: 1},
		"positional":   starargs.Positional(starargs.Req("a"), starargs.Opt("b", starlark.None)),
		"keywords":     starargs.Keywords(starargs.Opt("a", starlark.None), starargs.Req("b")),
		"mixed":        {Params: []starargs.Param{starargs.Req("a"), starargs.Req("b"), starargs.Opt("c", starlark.None)}, PosOnly: 1, KwOnly: 1},
		"other names":  {Params: []starargs.Param{starargs.Req("a"), starargs.Opt("c", starlark.None)}},
		"b required":   {Params: []starargs.Param{starargs.Req("a"), starargs.Req("b")}},
		"none":         {},
	}
	for sigName, sigTable := range tables {
		sig := sigTable.Signature("f", "int")
		for bindName, bindTable := range tables {
			call := func(args starlark.Tuple, kwargs []starlark.Tuple) error {
				_, err := bindTable.Bind("f", make([]starlark.Value, bindTable.Named()), args, kwargs)
				return err
			}
			r := &recorder{TB: t}
			Check(r, sig, call)
			if sigName == bindName {
				assert.Empty(t, r.errs, "%s bound by its own table", sig)
			} else {
				assert.NotEmpty(t, r.errs, "%s bound by the table %s", sig, bindName)
			}
		}
	}
}
