// Package startest runs Starlark test files in the style of go.starlark.net's own tests.
//
// Run executes every dir/*.star file (sorted by name) as a subtest, in a fresh thread, with the
// assert module of go.starlark.net/starlarktest (assert.eq, assert.ne, assert.true, assert.lt,
// assert.contains, assert.fails(fn, regexp), assert.fail) and the given predeclared names. `assert`
// and `freeze` are predeclared too, and load("assert.star", "assert") also works. Files use the
// task dialect: set, while, top-level if/for and global reassignment, no recursion.
//
// A failed assertion marks the subtest failed and execution goes on; an uncaught error (including
// syntax errors) ends the file. Both are reported with their Starlark backtrace, i.e. file:line.
package startest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarktest"
	"go.starlark.net/syntax"
)

// dialect is the file dialect of the test files.
var dialect = syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
}

// Run runs every dir/*.star file as a subtest named after the file. It fails the test when dir
// holds no .star file.
func Run(t *testing.T, dir string, predeclared starlark.StringDict) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.star"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("startest: no .star files in %s", dir)
	}
	sort.Strings(files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := runFile(t, file, src, predeclared); err != nil {
				t.Error(err)
			}
		})
	}
}

// reporter is the part of testing.TB that runFile needs.
type reporter interface {
	Error(args ...any)
	Log(args ...any)
}

// runFile executes one file. Assertion failures go to r as they happen; the returned error is an
// uncaught Starlark error (with backtrace) or a setup problem.
func runFile(r reporter, filename string, src []byte, predeclared starlark.StringDict) error {
	assert, err := starlarktest.LoadAssertModule()
	if err != nil {
		return fmt.Errorf("startest: loading the assert module: %v", err)
	}
	env := make(starlark.StringDict, len(predeclared)+2)
	env["assert"] = assert["assert"]
	env["freeze"] = assert["freeze"]
	for k, v := range predeclared {
		env[k] = v
	}
	thread := &starlark.Thread{
		Name: filename,
		Print: func(th *starlark.Thread, msg string) {
			if th.CallStackDepth() > 1 {
				msg = fmt.Sprintf("%s: %s", th.CallFrame(1).Pos, msg)
			}
			r.Log(msg)
		},
		Load: func(_ *starlark.Thread, module string) (starlark.StringDict, error) {
			if module == "assert.star" {
				return assert, nil
			}
			return nil, fmt.Errorf("startest: cannot load %q (only assert.star)", module)
		},
	}
	starlarktest.SetReporter(thread, r)
	if _, err := starlark.ExecFileOptions(&dialect, thread, filename, src, env); err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			return fmt.Errorf("%s", ee.Backtrace())
		}
		return err
	}
	return nil
}
