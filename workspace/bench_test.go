package workspace

import (
	"fmt"
	"runtime"
	"testing"
)

func BenchmarkFork(b *testing.B) {
	ws := typical(b)
	ws.Freeze()
	b.ReportAllocs()
	for b.Loop() {
		_ = ws.Fork()
	}
}

func BenchmarkForkWrite(b *testing.B) {
	ws := typical(b)
	ws.Freeze()
	b.ReportAllocs()
	for b.Loop() {
		c := ws.Fork()
		_ = c.Files().Write("/dir0/file00.txt", "x")
	}
}

// BenchmarkHash is the hash after one change, as after a state-changing tool call.
func BenchmarkHash(b *testing.B) {
	ws := typical(b)
	_ = ws.Hash()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		_ = ws.Files().Write("/dir0/file00.txt", fmt.Sprint(i))
		_ = ws.Hash()
	}
}

// BenchmarkHashMail is the hash after one change to a message.
func BenchmarkHashMail(b *testing.B) {
	ws := typical(b)
	_ = ws.Hash()
	b.ReportAllocs()
	i := false
	for b.Loop() {
		i = !i
		_, _ = ws.Mail().Mark("m1", &i, nil)
		_ = ws.Hash()
	}
}

func BenchmarkHashCold(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		ws := typical(b)
		b.StartTimer()
		_ = ws.Hash()
	}
}

// BenchmarkForkMemory keeps 10,000 forks of one frozen state alive, each with one small file
// write, and reports the heap they hold per fork.
func BenchmarkForkMemory(b *testing.B) {
	const n = 10000
	base := typical(b)
	base.Freeze()
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		forks := make([]*State, n)
		for i := range forks {
			forks[i] = base.Fork()
			if err := forks[i].Files().Write("/dir0/file00.txt", "small"); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/fork")
		runtime.KeepAlive(forks)
	}
}
