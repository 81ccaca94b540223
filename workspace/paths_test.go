package workspace_test

import (
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/stdlib/wsmod"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// controlPaths are paths with a control character, as given and as the error quotes them.
var controlPaths = []struct{ in, quoted string }{
	{"/a\x00b", `"/a\x00b"`},
	{"notes/\x1b[31mred.txt", `"/notes/\x1b[31mred.txt"`},
	{"/a\nb", `"/a\nb"`},
	{"/a\x7fb", `"/a\x7fb"`},
	{"/a\u0085b", `"/a\u0085b"`},
}

func newState() *workspace.State {
	return workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
}

// requireUnchanged fails when st is not as fresh as a new state: no file, no history.
func requireUnchanged(t *testing.T, st *workspace.State) {
	t.Helper()
	require.Equal(t, newState().Hash(), st.Hash())
	n, _ := st.Files().Size()
	require.Zero(t, n)
}

// Every file operation that takes a path refuses one with a control character, and changes
// nothing.
func TestControlCharacterPaths(t *testing.T) {
	for _, c := range controlPaths {
		st := newState()
		fs := st.Files()
		want := "path " + c.quoted + ": contains a control character"
		assert.EqualError(t, fs.Write(c.in, "x"), want)
		assert.EqualError(t, fs.Mkdir(c.in), want)
		_, err := fs.Read(c.in)
		assert.EqualError(t, err, want)
		_, err = fs.List(c.in)
		assert.EqualError(t, err, want)
		_, err = fs.Glob(c.in)
		assert.EqualError(t, err, want)
		assert.EqualError(t, fs.Remove(c.in), want)
		require.NoError(t, fs.Write("/ok.txt", "x"))
		assert.EqualError(t, fs.Move("/ok.txt", c.in), want)
		assert.EqualError(t, fs.Move(c.in, "/ok2.txt"), want)
		assert.False(t, fs.Exists(c.in))
		assert.Equal(t, []string{"/ok.txt"}, fs.Walk("/"))
	}
}

// ws.fs.write from a script gets the error, prefixed with the method.
func TestControlCharacterWSFSWrite(t *testing.T) {
	for _, c := range controlPaths {
		st := newState()
		th := &starlark.Thread{Name: "test"}
		src := "ws.fs.write(p, \"secret\")\n"
		_, err := starlark.ExecFileOptions(&syntax.FileOptions{}, th, "t.star", src,
			starlark.StringDict{"ws": wsmod.New(st, wsmod.Options{}), "p": starlark.String(c.in)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "ws.fs.write: path "+c.quoted+": contains a control character")
		requireUnchanged(t, st)
	}
}

// The fs_write tool, as an agent calls it, gets the error and writes nothing.
func TestControlCharacterFSWriteTool(t *testing.T) {
	tool, ok := services.Tool("fs_write")
	require.True(t, ok)
	for _, c := range controlPaths {
		st := newState()
		_, err := tool.Call(st, jsonv.NewObject("path", c.in, "content", "secret"))
		require.Error(t, err)
		assert.Equal(t, "path "+c.quoted+": contains a control character", err.Error())
		requireUnchanged(t, st)
	}
}
