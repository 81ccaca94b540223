package validate_test

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/typical"
	"github.com/coworkenv/coworkenv/validate"
)

// BenchmarkValidateCorpus validates a folder of 1,000 copies of the typical task with every
// check on (two setups, noop, two oracles, reply-only, one replay per state-changing call and
// the honest-reward mutations). verifier=strong is the typical task, which no mutation fools,
// so every mutation run is spent (the worst case) and every task must come out ok;
// verifier=weak checks keywords only, so a check ends at its first finding.
func BenchmarkValidateCorpus(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as the coworkenv command sets it
	const n = 1000
	for _, strong := range []bool{true, false} {
		fsys := fstest.MapFS{}
		for i := 0; i < n; i++ {
			src := typical.WeakSource(fmt.Sprintf("typical-%04d", i))
			if strong {
				src = typical.Source(fmt.Sprintf("typical-%04d", i))
			}
			fsys[fmt.Sprintf("tasks/t%04d.star", i)] = &fstest.MapFile{Data: []byte(src)}
		}
		name := map[bool]string{true: "strong", false: "weak"}[strong]
		for _, jobs := range []int{1, 2} {
			b.Run(fmt.Sprintf("verifier=%s/jobs=%d", name, jobs), func(b *testing.B) {
				for b.Loop() {
					c := dsl.NewCorpus(fsys, ".", "bench")
					rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: jobs})
					if err != nil {
						b.Fatal(err)
					}
					if rep.Summary.OK+rep.Summary.Warn+rep.Summary.Invalid != n {
						b.Fatalf("%d tasks checked", len(rep.Tasks))
					}
					if strong && rep.Summary.OK != n {
						b.Fatalf("%d ok of %d: %v", rep.Summary.OK, n, rep.Tasks[0].Diagnostics)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
			})
		}
	}
}
