package workspace_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/typical"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
)

// The workspace at enterprise size (issue 24): the cost of a write, of a fork and its first
// write, and the memory of a large workspace and of many forks of it, at 1,000, 10,000 and
// 100,000 entries (docs/benchmarks.md).

var scaleStart = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// scaleState returns a frozen state with n files, n messages and n records (typical.Scale).
func scaleState(b *testing.B, n int) *workspace.State {
	b.Helper()
	st := workspace.New(scaleStart, 1)
	if err := typical.Scale(st, n); err != nil {
		b.Fatal(err)
	}
	st.Freeze()
	_ = st.Hash()
	return st
}

// BenchmarkScaleWrite is one write and the state hash after it, on a state that has written
// before: the marginal cost of a state-changing call in the kernel.
func BenchmarkScaleWrite(b *testing.B) {
	for _, n := range typical.ScaleSizes {
		base := scaleState(b, n)
		for _, w := range typical.ScaleWrites {
			b.Run(fmt.Sprintf("%s/n=%d", w.Name, n), func(b *testing.B) {
				st := base.Fork()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					if err := w.Write(st, n, i); err != nil {
						b.Fatal(err)
					}
					_ = st.Hash()
				}
			})
		}
	}
}

// BenchmarkScaleForkWrite is a fork of a frozen state, its first write and the state hash after
// it: what each state-changing tool call of an episode costs the kernel.
func BenchmarkScaleForkWrite(b *testing.B) {
	for _, n := range typical.ScaleSizes {
		base := scaleState(b, n)
		for _, w := range typical.ScaleWrites {
			b.Run(fmt.Sprintf("%s/n=%d", w.Name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					st := base.Fork()
					if err := w.Write(st, n, i); err != nil {
						b.Fatal(err)
					}
					_ = st.Hash()
				}
			})
		}
	}
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// forkAndWrite makes forks forks of st, lets write change each (f is its number) and takes
// its hash.
func forkAndWrite(st *workspace.State, forks int, write func(s *workspace.State, f int) error, b *testing.B) []*workspace.State {
	states := make([]*workspace.State, forks)
	for f := range states {
		s := st.Fork()
		if err := write(s, f); err != nil {
			b.Fatal(err)
		}
		_ = s.Hash()
		states[f] = s
	}
	return states
}

// BenchmarkScaleMemory reports the heap a workspace of 100,000 records holds (its hash
// computed), and what 1,000 forks of it add, each after ten record updates and its hash.
func BenchmarkScaleMemory(b *testing.B) {
	const n, forks, writes = 100000, 1000, 10
	for b.Loop() {
		h0 := heapAlloc()
		st := workspace.New(scaleStart, 1)
		for i := range n {
			if _, err := st.DB().Insert("orders", typical.ScaleRecord(i)); err != nil {
				b.Fatal(err)
			}
		}
		st.Freeze()
		_ = st.Hash()
		h1 := heapAlloc()
		states := forkAndWrite(st, forks, func(s *workspace.State, f int) error {
			for w := range writes {
				id := "O-" + strconv.Itoa((f*writes+w)*7919%n)
				if _, err := s.DB().Update("orders", id, jsonv.NewObject("status", "closed", "by", strconv.Itoa(f))); err != nil {
					return err
				}
			}
			return nil
		}, b)
		h2 := heapAlloc()
		b.ReportMetric(float64(h1-h0)/(1<<20), "MiB/100k-records")
		b.ReportMetric(float64(h2-h1)/(1<<20), "MiB/1000-forks")
		runtime.KeepAlive(st)
		runtime.KeepAlive(states)
	}
}

// BenchmarkScaleMemoryChatContacts reports the heap a chat of 100,000 messages and a book of
// 100,000 contacts hold (typical.ScaleChat and ScaleContacts, hashed), and what 1,000 forks of
// them add, each after five reactions and five contact updates and its hash.
func BenchmarkScaleMemoryChatContacts(b *testing.B) {
	const n, forks = 100000, 1000
	for b.Loop() {
		h0 := heapAlloc()
		st := workspace.New(scaleStart, 1)
		if err := typical.ScaleChat(st, n); err != nil {
			b.Fatal(err)
		}
		_ = st.Hash()
		h1 := heapAlloc()
		if err := typical.ScaleContacts(st, n); err != nil {
			b.Fatal(err)
		}
		st.Freeze()
		_ = st.Hash()
		h2 := heapAlloc()
		react, _ := services.Tool("chat_react")
		update, _ := services.Tool("contacts_update")
		states := forkAndWrite(st, forks, func(s *workspace.State, f int) error {
			for w := range 5 {
				i := (f*5 + w) * 7919 % n
				if _, err := react.Call(s, typical.ScaleCallArgs("chat_react", n, i)); err != nil {
					return err
				}
				if _, err := update.Call(s, typical.ScaleCallArgs("contacts_update", n, i)); err != nil {
					return err
				}
			}
			return nil
		}, b)
		h3 := heapAlloc()
		b.ReportMetric(float64(h1-h0)/(1<<20), "MiB/100k-chat")
		b.ReportMetric(float64(h2-h1)/(1<<20), "MiB/100k-contacts")
		b.ReportMetric(float64(h3-h2)/(1<<20), "MiB/1000-forks")
		runtime.KeepAlive(st)
		runtime.KeepAlive(states)
	}
}
