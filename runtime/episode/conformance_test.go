package episode_test

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/conformance"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// TestConformanceRuns checks every `# run:` line of the shared suite, and that every file the
// suite calls valid (ok, warn, scoring, multiturn) loads without a diagnostic.
func TestConformanceRuns(t *testing.T) {
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("the conformance suite (../shared/conformance) is not there; set COWORKENV_CONFORMANCE")
	}
	files, err := conformance.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	corpus := dsl.NewCorpus(os.DirFS(dir), ".", dir)
	if tf := corpus.TaxonomyFile(); tf != nil && len(tf.Diags) > 0 {
		t.Fatalf("capabilities.star: %v", tf.Diags)
	}
	nRuns := 0
	for _, cf := range files {
		t.Run(cf.Rel, func(t *testing.T) {
			f := corpus.LoadFile(context.Background(), cf.Rel)
			valid := true
			for _, e := range cf.Expects {
				if e.Task == "*" {
					valid = false
				}
			}
			if valid && len(f.Diags) > 0 {
				t.Fatalf("a valid file fails to load: %v", f.Diags)
			}
			for _, r := range cf.Runs {
				nRuns++
				task := findTask(f, r.Task)
				if task == nil {
					t.Fatalf("line %d: no task %s (diags %v)", r.Line, r.Task, f.Diags)
				}
				p, d := episode.Prepare(context.Background(), task, episode.Options{})
				if d != nil {
					t.Fatalf("line %d: setup: %v", r.Line, d)
				}
				var agent episode.Agent = episode.Oracle{}
				if r.Agent == "noop" {
					agent = episode.Noop{}
				}
				res := p.Run(context.Background(), agent, episode.RunOptions{})
				if math.Abs(res.Score-r.Score) > 1e-6 || res.Passed != r.Passed {
					t.Errorf("line %d: %s %s: score=%v passed=%v, want score=%v passed=%v (err %v, failed %v)",
						r.Line, r.Task, r.Agent, res.Score, res.Passed, r.Score, r.Passed, res.Err, res.FailedItems())
				}
			}
		})
	}
	if nRuns == 0 {
		t.Fatal("no run lines found")
	}
}

func findTask(f *dsl.File, name string) *dsl.Task {
	for _, t := range f.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}
