package timemod

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/starargs/argstest"
	"github.com/coworkenv/coworkenv/internal/startest"
	"go.starlark.net/starlark"
)

func TestStarlark(t *testing.T) {
	startest.Run(t, "testdata", starlark.StringDict{"time": Module})
}

// TestStarlarkUnderOtherLocalZone runs the same files with the process's local zone changed: a
// result that depended on the host's zone would differ (e.g. "+0100 CET" instead of "+0100 +0100").
func TestStarlarkUnderOtherLocalZone(t *testing.T) {
	old := time.Local
	time.Local = time.FixedZone("CET", 3600)
	defer func() { time.Local = old }()
	startest.Run(t, "testdata", starlark.StringDict{"time": Module})
}

// TestNoHostAccess guards against reaching the host clock or zone database from this package.
func TestNoHostAccess(t *testing.T) {
	src, err := os.ReadFile("timemod.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, banned := range []string{`time\.Now\b`, `time\.Since\b`, `time\.Until\b`, `time\.Local\b`, `LoadLocation`, `go\.starlark\.net/lib/time`, `\.Local\(\)`} {
		if regexp.MustCompile(banned).Match(src) {
			t.Errorf("timemod.go uses %s", banned)
		}
	}
}

// Every function's and method's signature in Reference lists exactly the parameters its binder
// accepts.
func TestSignaturesAreTheirBinding(t *testing.T) {
	checked := 0
	for _, d := range Reference {
		var fn starlark.Value
		switch {
		case strings.HasPrefix(d.Name, "Time."):
			fn, _ = Time{}.Attr(strings.TrimPrefix(d.Name, "Time."))
		case strings.HasPrefix(d.Name, "Duration."):
			fn, _ = Duration(0).Attr(strings.TrimPrefix(d.Name, "Duration."))
		default:
			fn = Module.Members[d.Name]
		}
		if _, ok := fn.(*starlark.Builtin); !ok {
			continue
		}
		checked++
		t.Run(d.Name, func(t *testing.T) {
			argstest.Check(t, d.Signature, func(args starlark.Tuple, kwargs []starlark.Tuple) error {
				_, err := starlark.Call(&starlark.Thread{Name: "test"}, fn, args, kwargs)
				return err
			})
		})
	}
	if checked != 7 {
		t.Errorf("%d functions and methods checked, want 7", checked)
	}
}

func TestReferenceMatchesModule(t *testing.T) {
	members := 0
	for _, d := range Reference {
		if d.Signature == "" || d.Doc == "" {
			t.Errorf("incomplete entry %+v", d)
		}
		switch {
		case strings.HasPrefix(d.Name, "Time."):
			name := strings.TrimPrefix(d.Name, "Time.")
			if v, err := (Time{}).Attr(name); v == nil || err != nil {
				t.Errorf("Reference names %s, which time.time lacks", d.Name)
			}
		case strings.HasPrefix(d.Name, "Duration."):
			name := strings.TrimPrefix(d.Name, "Duration.")
			if v, err := Duration(0).Attr(name); v == nil || err != nil {
				t.Errorf("Reference names %s, which time.duration lacks", d.Name)
			}
		case d.Name == "Time" || d.Name == "Duration":
		default:
			members++
			if _, ok := Module.Members[d.Name]; !ok {
				t.Errorf("Reference names %q, which Module lacks", d.Name)
			}
		}
	}
	if members != len(Module.Members) {
		t.Errorf("Reference documents %d members, Module has %d", members, len(Module.Members))
	}
	if _, ok := Module.Members["now"]; ok {
		t.Error("Module has now")
	}
}
