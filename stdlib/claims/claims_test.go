package claims

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/starargs/argstest"
	"github.com/coworkenv/coworkenv/internal/startest"
	"github.com/coworkenv/coworkenv/stdlib/timemod"
	"go.starlark.net/starlark"
)

// envBuiltin is the test files' env(now=None, tz=None, region="", names={}, ids=[]): it sets what an
// episode would tell the module (its clock, the user's time zone and region, the workspace's names
// and ids) on the calling thread.
var envBuiltin = starlark.NewBuiltin("env", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var now, tz, region string
	var names *starlark.Dict
	var ids *starlark.List
	if err := starlark.UnpackArgs("env", args, kwargs, "now?", &now, "tz?", &tz, "region?", &region, "names?", &names, "ids?", &ids); err != nil {
		return nil, err
	}
	e := &Env{Region: region}
	if tz != "" {
		t, err := time.Parse("2006-01-02T15:04:05Z07:00", "2026-01-01T00:00:00"+tz)
		if err != nil {
			return nil, err
		}
		_, off := t.Zone()
		e.Location = time.FixedZone("", off)
	}
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return nil, err
		}
		e.Now = func() time.Time { return t }
	}
	var kn []KnownName
	if names != nil {
		for _, kv := range names.Items() {
			k, _ := starlark.AsString(kv[0])
			c, _ := starlark.AsString(kv[1])
			kn = append(kn, KnownName{Key: k, Class: NameClass(c)})
		}
	}
	e.Names = func() []KnownName { return kn }
	var is []string
	if ids != nil {
		for i := 0; i < ids.Len(); i++ {
			s, _ := starlark.AsString(ids.Index(i))
			is = append(is, s)
		}
	}
	e.IDs = func() []string { return is }
	SetEnv(th, e)
	return starlark.None, nil
})

func predeclared(count *int) starlark.StringDict {
	expect := starlark.NewBuiltin("expect", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) < 2 || len(kwargs) > 0 {
			return nil, fmt.Errorf("expect(got, want, what...)")
		}
		*count++
		if eq, err := starlark.Equal(args[0], args[1]); err != nil || !eq {
			var what []string
			for _, a := range args[2:] {
				if s, ok := starlark.AsString(a); ok {
					what = append(what, s)
				} else {
					what = append(what, a.String())
				}
			}
			msg := fmt.Sprintf("%s: got %s, want %s: %s", th.CallFrame(1).Pos, args[0], args[1], strings.Join(what, " | "))
			if r, ok := th.Local("Reporter").(interface{ Error(...any) }); ok {
				r.Error(msg)
			} else {
				return nil, fmt.Errorf("%s", msg)
			}
		}
		return starlark.None, nil
	})
	return starlark.StringDict{"claims": Module, "time": timemod.Module, "env": envBuiltin, "expect": expect}
}

// TestStarlark runs the phrasing cases of testdata/*.star, each with its expected result inline
// (expect(got, want, what)); together they hold at least 600 cases.
func TestStarlark(t *testing.T) {
	n := 0
	startest.Run(t, "testdata", predeclared(&n))
	if n < 600 {
		t.Errorf("%d phrasing cases in testdata, want at least 600", n)
	}
	t.Logf("%d phrasing cases", n)
}

// TestSignaturesAreTheirBinding: every function's signature in Reference lists exactly the
// parameters its binder accepts.
func TestSignaturesAreTheirBinding(t *testing.T) {
	for _, d := range Reference {
		fn, ok := Module.Members[d.Name].(*starlark.Builtin)
		if !ok {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			argstest.Check(t, d.Signature, func(args starlark.Tuple, kwargs []starlark.Tuple) error {
				_, err := starlark.Call(&starlark.Thread{Name: "test"}, fn, args, kwargs)
				return err
			})
		})
	}
}

func TestReferenceMatchesModule(t *testing.T) {
	var names []string
	for _, d := range Reference {
		if d.Signature == "" || d.Doc == "" {
			t.Errorf("incomplete entry %+v", d)
		}
		if !strings.Contains(d.Name, ".") {
			names = append(names, d.Name)
		}
	}
	var members []string
	for k := range Module.Members {
		members = append(members, k)
	}
	sort.Strings(names)
	sort.Strings(members)
	if fmt.Sprint(names) != fmt.Sprint(members) {
		t.Errorf("reference %v, module %v", names, members)
	}
}
