package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/coworkenv/coworkenv/internal/typical"
)

// BenchmarkRolloutUserTask is the throughput of `rollout` over a task file from disk (the typical
// task): 50 oracle samples, --jobs the number of CPUs, in this process (--in-process) and in
// worker processes (the default for files from disk). Each iteration is one whole rollout into a
// fresh folder, workers started included.
//
//	go test ./cmd/coworkenv/ -run XXX -bench RolloutUserTask -benchtime 5x
func BenchmarkRolloutUserTask(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "typical.star")
	if err := os.WriteFile(file, []byte(typical.Source("typical")), 0o644); err != nil {
		b.Fatal(err)
	}
	samples, jobs := 50, runtime.NumCPU()
	for _, mode := range []string{"--in-process", "--isolate"} {
		b.Run(mode[2:], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out := filepath.Join(b.TempDir(), fmt.Sprint(i))
				var stdout, stderr bytes.Buffer
				code := Main([]string{"rollout", file, "--samples", fmt.Sprint(samples),
					"--jobs", fmt.Sprint(jobs), "--out", out, mode}, &stdout, &stderr)
				if code != 0 {
					b.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
				}
			}
			b.ReportMetric(float64(samples*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
