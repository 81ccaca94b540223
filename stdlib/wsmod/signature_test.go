package wsmod

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/starargs/argstest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"go.starlark.net/starlark"
)

// Every method's signature in Reference lists exactly the parameters its binder accepts.
func TestSignaturesAreTheirBinding(t *testing.T) {
	methods := 0
	for _, d := range Reference {
		if !strings.Contains(d.Signature, "(") {
			continue
		}
		methods++
		t.Run(d.Name, func(t *testing.T) {
			argstest.Check(t, d.Signature, func(args starlark.Tuple, kwargs []starlark.Tuple) error {
				st := workspace.New(start, 1)
				initial := st.Fork()
				initial.Freeze()
				var v starlark.Value = New(st, Options{Initial: initial})
				for _, name := range strings.Split(d.Name, ".")[1:] {
					var err error
					if v, err = v.(starlark.HasAttrs).Attr(name); err != nil || v == nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				_, err := starlark.Call(&starlark.Thread{Name: "test"}, v, args, kwargs)
				return err
			})
		})
	}
	if methods < 50 {
		t.Errorf("only %d methods checked", methods)
	}
}

// A service writes its defaults in Starlark; the signature shows them as the values they are,
// written as the service wrote them.
func TestServiceDefaultsAreStarlark(t *testing.T) {
	for _, s := range services.All {
		for _, m := range s.WS {
			for _, p := range m.Params {
				if p.Default != "" && param(p).Default.String() != p.Default {
					t.Errorf("ws.%s.%s: default of %s is %s, written %s", s.ScriptName(), m.Name, p.Name, param(p).Default, p.Default)
				}
			}
		}
	}
}
