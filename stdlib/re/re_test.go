package re

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/coworkenv/coworkenv/internal/starargs/argstest"
	"github.com/coworkenv/coworkenv/internal/startest"
	"go.starlark.net/starlark"
)

func TestStarlark(t *testing.T) {
	startest.Run(t, "testdata", starlark.StringDict{"re": Module})
}

// Every function's signature in Reference lists exactly the parameters its binder accepts.
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
	if len(Reference) != len(Module.Members) {
		t.Fatalf("Reference has %d entries, Module %d members", len(Reference), len(Module.Members))
	}
	for _, d := range Reference {
		if _, ok := Module.Members[d.Name]; !ok {
			t.Errorf("Reference names %q, which Module lacks", d.Name)
		}
		if !strings.HasPrefix(d.Signature, "re."+d.Name) || d.Doc == "" {
			t.Errorf("bad entry %+v", d)
		}
	}
}

func TestCacheIsBounded(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				p := fmt.Sprintf("x%d_%d", g, i)
				re, err := compile("re.search", p, 0, unanchored)
				if err != nil || !re.re.MatchString(p) {
					t.Errorf("compile(%q) = %v, %v", p, re, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if n := cache.len(); n > cacheSize {
		t.Errorf("cache holds %d entries, limit %d", n, cacheSize)
	}
	// The most recent pattern is still cached and is returned as is.
	a, _ := compile("re.search", "x7_99", 0, unanchored)
	b, _ := compile("re.search", "x7_99", 0, unanchored)
	if a != b {
		t.Errorf("a cached pattern was compiled again")
	}
}

func TestOpenQuote(t *testing.T) {
	for p, want := range map[string]bool{
		`a`: false, `\Qa`: true, `\Qa\E`: false, `\Qa\Eb\Q`: true, `\\Q`: false, `[\\]\Qx`: true, `\Q\\E`: false,
	} {
		if got := openQuote(p); got != want {
			t.Errorf("openQuote(%q) = %v, want %v", p, got, want)
		}
	}
}
