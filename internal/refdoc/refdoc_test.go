package refdoc

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/reference.md")

// TestReferenceIsFresh fails when docs/reference.md differs from what `coworkenv doc` prints.
func TestReferenceIsFresh(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "reference.md")
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/refdoc -update)", err)
	}
	if string(got) != want {
		t.Fatalf("docs/reference.md is stale: run go test ./internal/refdoc -update")
	}
}
