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
// check on (two setups, noop, two oracles, reply-only and one replay per state-changing call).
func BenchmarkValidateCorpus(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as the coworkenv command sets it
	const n = 1000
	fsys := fstest.MapFS{}
	for i := 0; i < n; i++ {
		fsys[fmt.Sprintf("tasks/t%04d.star", i)] = &fstest.MapFile{Data: []byte(typical.Source(fmt.Sprintf("typical-%04d", i)))}
	}
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for b.Loop() {
				c := dsl.NewCorpus(fsys, ".", "bench")
				rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: jobs})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Summary.OK != n {
					var buf []byte
					for _, t := range rep.Tasks[:1] {
						buf = fmt.Append(buf, t.Diagnostics)
					}
					b.Fatalf("%d ok of %d: %s", rep.Summary.OK, n, buf)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}
