//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkQueuedRollout is the throughput of a rollout through the queue against a local one:
// the oracle over the built-in corpus, 4 samples a task, run locally in N worker processes
// (`rollout --isolate --jobs N`) and through a queue on a server in this process with N workers
// (`rollout --queue embedded --jobs N`: every episode runs in a worker process there too). Each
// iteration is one whole rollout into a fresh folder: the workers' start and, for the queue, the
// server's start and its streams included. Besides episodes a second, it reports the CPU time an
// episode costs, this process's and its worker processes' together, which the load of a shared
// machine changes less.
//
//	go test ./cmd/coworkenv/ -run XXX -bench QueuedRollout -benchtime 3x
func BenchmarkQueuedRollout(b *testing.B) {
	const samples = 4
	tasks := 0
	for _, mode := range []string{"local", "queue"} {
		for _, jobs := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/jobs=%d", mode, jobs), func(b *testing.B) {
				args := []string{"rollout", "--samples", fmt.Sprint(samples), "--jobs", fmt.Sprint(jobs), "--json"}
				if mode == "local" {
					args = append(args, "--isolate")
				} else {
					args = append(args, "--queue", "embedded")
				}
				cpu := cpuTime(b)
				for i := 0; i < b.N; i++ {
					var stdout, stderr bytes.Buffer
					out := filepath.Join(b.TempDir(), fmt.Sprint(i))
					if code := Main(append(args, "--out", out), &stdout, &stderr); code != 0 {
						b.Fatalf("exit %d\n%s", code, stderr.String())
					}
					if tasks == 0 {
						var m struct {
							Tasks []any `json:"tasks"`
						}
						if err := json.Unmarshal(stdout.Bytes(), &m); err != nil {
							b.Fatal(err)
						}
						tasks = len(m.Tasks)
					}
				}
				episodes := float64(tasks * samples * b.N)
				b.ReportMetric(episodes/b.Elapsed().Seconds(), "episodes/s")
				b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/1000/episodes, "cpu-ms/episode")
			})
		}
	}
}

// cpuTime is the CPU time (user and system) of this process and of its children that ended.
func cpuTime(b *testing.B) time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}
