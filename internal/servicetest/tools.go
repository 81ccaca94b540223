package servicetest

import (
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Helpers for the Go tests of built-in tools.

// Object decodes JSON text that must be an object.
func Object(t testing.TB, s string) *jsonv.Object {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	require.NoError(t, err)
	o, ok := v.(*jsonv.Object)
	require.True(t, ok, "not an object: %s", s)
	return o
}

// Call runs the built-in tool name (any service's) on st with args, a JSON object, and returns
// the JSON text of its result, or its error.
func Call(t testing.TB, st *workspace.State, name, args string) (string, error) {
	t.Helper()
	tl, ok := services.Tool(name)
	require.True(t, ok, name)
	res, err := tl.Call(st, Object(t, args))
	if err != nil {
		return "", err
	}
	return jsonv.MustEncode(res), nil
}

// OK is Call for a call that must succeed.
func OK(t testing.TB, st *workspace.State, name, args string) string {
	t.Helper()
	res, err := Call(t, st, name, args)
	require.NoError(t, err, "%s %s", name, args)
	return res
}

// Fails checks that a call fails with the error want and changes nothing.
func Fails(t testing.TB, st *workspace.State, name, args, want string) {
	t.Helper()
	h := st.Hash()
	_, err := Call(t, st, name, args)
	assert.EqualError(t, err, want, "%s %s", name, args)
	assert.Equal(t, h, st.Hash(), "a failed %s changes nothing", name)
}
