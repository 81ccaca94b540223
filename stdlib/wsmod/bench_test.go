package wsmod

import (
	"testing"

	"github.com/coworkenv/coworkenv/workspace"
	"go.starlark.net/starlark"
)

// BenchmarkMethodCall: one call of a ws method from Go, as a script's call reaches it: reading
// the bound method, binding the arguments (positional, keyword and **fields) and running it.
func BenchmarkMethodCall(b *testing.B) {
	st := workspace.New(start, 1)
	ws := New(st, Options{})
	th := &starlark.Thread{Name: "bench"}
	get := func(obj, name string) starlark.Value {
		o, err := ws.(starlark.HasAttrs).Attr(obj)
		if err != nil {
			b.Fatal(err)
		}
		m, err := o.(starlark.HasAttrs).Attr(name)
		if err != nil || m == nil {
			b.Fatal(name, err)
		}
		return m
	}
	if _, err := starlark.Call(th, get("fs", "write"), starlark.Tuple{starlark.String("/a.md"), starlark.String("x")}, nil); err != nil {
		b.Fatal(err)
	}
	rec := starlark.NewDict(1)
	_ = rec.SetKey(starlark.String("status"), starlark.String("open"))
	if _, err := starlark.Call(th, get("db", "insert"), starlark.Tuple{starlark.String("t"), rec}, nil); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, obj, method string
		args              starlark.Tuple
		kwargs            []starlark.Tuple
	}{
		{"fs.read", "fs", "read", starlark.Tuple{starlark.String("/a.md")}, nil},
		{"fs.exists_kw", "fs", "exists", nil, []starlark.Tuple{{starlark.String("path"), starlark.String("/a.md")}}},
		{"mail.messages_kw", "mail", "messages", nil, []starlark.Tuple{{starlark.String("folder"), starlark.String("inbox")}, {starlark.String("unread"), starlark.True}}},
		{"db.find_rest", "db", "find", starlark.Tuple{starlark.String("t")}, []starlark.Tuple{{starlark.String("status"), starlark.String("open")}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := starlark.Call(th, get(c.obj, c.method), c.args, c.kwargs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
