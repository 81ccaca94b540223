// Package archtest checks the architecture: the packages form layers, and no package imports a
// package of a higher layer (docs/architecture.md draws them).
package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/coworkenv/coworkenv/"

// layers, from the bottom: a package is in the layer of the longest prefix that matches its
// folder.
var layers = [][]string{
	{"internal/jsonv", "internal/atomicfile", "internal/starconv", "internal/starargs", "internal/limits", "internal/chattest", "internal/startest", "internal/budget", "internal/reqcache", "internal/shown", "workspace/timefmt"},
	{"workspace"},
	{"workspace/tools"},
	{"workspace/service"},
	{"workspace/services/"}, // one package per service
	{"workspace/services"},  // the list
	{"stdlib"},
	{"dsl"},
	{"runtime"},
	{"validate", "rollout", "export", "split", "queue", "isolate", "generator", "corpus", "serve", "report", "internal/refdoc"},
	{"internal"}, // the reference generator and test fixtures may use anything below the command line
	{"cmd"},
}

func layerOf(dir string) int {
	best, bestLen := -1, -1
	for i, l := range layers {
		for _, p := range l {
			match := dir == p || strings.HasPrefix(dir, p+"/")
			if strings.HasSuffix(p, "/") {
				match = strings.HasPrefix(dir, p)
			}
			if match && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

func TestImportsGoDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal("the module root is not two folders up")
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		from := layerOf(rel)
		if from < 0 {
			t.Errorf("%s: package %s is in no layer; add it to layers", path, rel)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			to := layerOf(strings.TrimPrefix(p, module))
			checked++
			if to > from {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports must go down", rel, from, strings.TrimPrefix(p, module), to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d imports checked; is the walk broken?", checked)
	}
}

func TestLayerOf(t *testing.T) {
	for dir, want := range map[string]int{
		"workspace": 1, "workspace/timefmt": 0, "workspace/tools": 2, "workspace/services/chat": 4,
		"workspace/services": 5, "stdlib/wsmod": 6, "dsl": 7, "runtime/episode": 8, "runtime/session": 8, "generator/cassette": 9, "serve": 9,
		"internal/refdoc": 9, "internal/servicetest": 10, "internal/jsonv": 0, "internal/starargs": 0, "internal/starargs/argstest": 0, "internal/limits": 0, "cmd/coworkenv": 11, "nowhere": -1,
	} {
		if got := layerOf(dir); got != want {
			t.Errorf("layerOf(%q) = %d, want %d", dir, got, want)
		}
	}
}
