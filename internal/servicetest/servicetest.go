// Package servicetest runs the Starlark tests of a service (its testdata/*.star files): each
// file over a fresh workspace, with ws and the helpers every service's tests need. A service's
// external test package calls RunScripts, and Call, OK and Fails for Go tests of its built-in
// tools; the Starlark tests of the kernel's own sections (ws.fs, ws.mail, …) are in package wsmod.
package servicetest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/internal/startest"
	"github.com/coworkenv/coworkenv/stdlib/wsmod"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"go.starlark.net/starlark"
)

// Start is the virtual time of the fresh workspace: Monday 5 January 2026, 09:00 UTC.
var Start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// Predeclared returns the names a test file sees over st:
//
//	ws                  the writable workspace
//	verifier()          a read-only ws of the live state (as in a verifier) whose ws.initial is
//	                    a frozen copy of the state as it is now
//	as_agent(on, turn=0)  makes the following changes the agent's (True) or a script's
//	                    (False), in that turn
//	call(name, **args)  calls the built-in tool name (any service's) with args and returns its
//	                    result decoded; a tool error is an error (assert.fails)
//	setup_text()        the setup summary of the state, every service's (services.SetupText)
func Predeclared(st *workspace.State) starlark.StringDict {
	builtin := func(name string, fn func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
		return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return fn(args, kwargs)
		})
	}
	return starlark.StringDict{
		"ws": wsmod.New(st, wsmod.Options{}),
		"verifier": builtin("verifier", func(starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			initial := st.Fork()
			initial.Freeze()
			return wsmod.New(st, wsmod.Options{ReadOnly: true, Reason: "in a verifier", Initial: initial}), nil
		}),
		"as_agent": builtin("as_agent", func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var on bool
			turn := 0
			if err := starlark.UnpackArgs("as_agent", args, kwargs, "on", &on, "turn?", &turn); err != nil {
				return nil, err
			}
			if on {
				st.SetActor(workspace.ActorAgent, turn)
			} else {
				st.SetActor("", turn)
			}
			return starlark.None, nil
		}),
		"call": builtin("call", func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var name string
			if err := starlark.UnpackPositionalArgs("call", args, nil, 1, &name); err != nil {
				return nil, err
			}
			tl, ok := services.Tool(name)
			if !ok {
				return nil, errors.New("call: no built-in tool " + name)
			}
			in := &jsonv.Object{}
			for _, kv := range kwargs {
				v, err := starconv.ToJSON(kv[1])
				if err != nil {
					return nil, err
				}
				in.Set(string(kv[0].(starlark.String)), v)
			}
			out, err := tl.Call(st, in)
			if err != nil {
				return nil, err
			}
			return starconv.FromJSON(out), nil
		}),
		"setup_text": builtin("setup_text", func(starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.String(services.SetupText(st)), nil
		}),
	}
}

// RunScripts runs each file matching glob (e.g. "testdata/*.star") as its own subtest, over a
// fresh workspace (Start, seed 1) with Predeclared's names. It fails when nothing matches.
func RunScripts(t *testing.T, glob string) {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("servicetest: no file matches %s (%v)", glob, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".star"), func(t *testing.T) {
			// startest.Run runs every file of a folder with one set of predeclared values: give
			// each file a folder of its own, so that each gets a fresh state.
			dir := t.TempDir()
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
			startest.Run(t, dir, Predeclared(workspace.New(Start, 1)))
		})
	}
}
