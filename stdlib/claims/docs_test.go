package claims

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated tables of docs/claims.md")

// docs/claims.md shows the rule set the reader applies: its tables are generated from the
// lexicon (go test ./stdlib/claims -update rewrites them).
func TestDocsShowTheRules(t *testing.T) {
	const path = "../../docs/claims.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, block := range []struct{ name, body string }{
		{"claims statuses", StatusMarkdown()},
		{"claims rules", RulesMarkdown()},
	} {
		begin, end := "<!-- begin: "+block.name+" -->\n", "<!-- end: "+block.name+" -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("%s has no %q block", path, block.name)
		}
		fresh := doc[:i+len(begin)] + block.body + doc[j:]
		if fresh != doc {
			if !*update {
				t.Errorf("the %q table of %s is stale: run go test ./stdlib/claims -update", block.name, path)
				continue
			}
			doc = fresh
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
