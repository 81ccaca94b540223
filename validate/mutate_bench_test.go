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

// BenchmarkValidateHonest validates 1,000 copies of the typical task with every check on, the
// honest-reward mutations included, whatever their verdict: strong=false with the weak verifier
// (the first mutation that passes ends a check early), strong=true with the typical verifier
// that no mutation fools, so that every mutation run is spent (the worst case).
func BenchmarkValidateHonest(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	const n = 1000
	for _, strong := range []bool{false, true} {
		fsys := fstest.MapFS{}
		for i := 0; i < n; i++ {
			src := typical.WeakSource(fmt.Sprintf("typical-%04d", i))
			if strong {
				src = typical.Source(fmt.Sprintf("typical-%04d", i))
			}
			fsys[fmt.Sprintf("tasks/t%04d.star", i)] = &fstest.MapFile{Data: []byte(src)}
		}
		for _, jobs := range []int{1, 2} {
			b.Run(fmt.Sprintf("strong=%v/jobs=%d", strong, jobs), func(b *testing.B) {
				for b.Loop() {
					c := dsl.NewCorpus(fsys, ".", "bench")
					rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: jobs})
					if err != nil {
						b.Fatal(err)
					}
					if rep.Summary.OK+rep.Summary.Warn+rep.Summary.Invalid != n {
						b.Fatalf("%d tasks checked", len(rep.Tasks))
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
			})
		}
	}
}
