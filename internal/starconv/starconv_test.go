package starconv

import (
	"math"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

func TestRoundTrip(t *testing.T) {
	d := starlark.NewDict(3)
	_ = d.SetKey(starlark.String("z"), starlark.MakeInt(1))
	_ = d.SetKey(starlark.String("a"), starlark.NewList([]starlark.Value{starlark.Float(1.5), starlark.None, starlark.True}))
	_ = d.SetKey(starlark.String("t"), starlark.Tuple{starlark.String("x")})
	j, err := ToJSON(d)
	require.NoError(t, err)
	assert.Equal(t, `{"z":1,"a":[1.5,null,true],"t":["x"]}`, jsonv.MustEncode(j), "dict order is kept, tuples are arrays")
	back := FromJSON(j)
	assert.Equal(t, `{"z": 1, "a": [1.5, None, True], "t": ["x"]}`, back.String())

	s := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{"b": starlark.String("2"), "a": starlark.MakeInt(1)})
	j, err = ToJSON(s)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1,"b":"2"}`, jsonv.MustEncode(j), "struct fields sorted")
}

func TestErrors(t *testing.T) {
	bad := starlark.NewDict(1)
	_ = bad.SetKey(starlark.MakeInt(1), starlark.None)
	huge := starlark.MakeInt64(math.MaxInt64).Mul(starlark.MakeInt(10))
	for name, v := range map[string]starlark.Value{
		"non-string key": bad,
		"big int":        huge,
		"nan":            starlark.Float(math.NaN()),
		"function":       starlark.NewBuiltin("f", nil),
	} {
		_, err := ToJSON(v)
		assert.Error(t, err, name)
	}
	// a cyclic list costs an error, not the stack
	l := starlark.NewList(nil)
	_ = l.Append(l)
	_, err := ToJSON(l)
	assert.ErrorContains(t, err, "nested more than")
}
