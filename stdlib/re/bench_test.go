package re

import (
	"testing"

	"go.starlark.net/starlark"
)

// BenchmarkSearch: one call of re.search from Go, binding included (the pattern is cached).
func BenchmarkSearch(b *testing.B) {
	th := &starlark.Thread{Name: "bench"}
	fn := Module.Members["search"]
	args := starlark.Tuple{starlark.String(`a+`), starlark.String("xaay")}
	kwargs := []starlark.Tuple{{starlark.String("flags"), starlark.MakeInt(IGNORECASE)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := starlark.Call(th, fn, args, kwargs); err != nil {
			b.Fatal(err)
		}
	}
}
