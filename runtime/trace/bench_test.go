package trace_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/coworkenv/coworkenv/internal/typical"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// BenchmarkReplay reads and replays the oracle trace of the typical task (setup included).
func BenchmarkReplay(b *testing.B) {
	f := newFixture(typical.Source("typical"))
	data := record(b, f.task(b), f.src, 0)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		events, err := trace.Read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		r, err := trace.Replay(context.Background(), events, f.loader)
		if err != nil || !r.Matched() {
			b.Fatal(err, r.Divergence)
		}
	}
}

// BenchmarkRead parses the trace only.
func BenchmarkRead(b *testing.B) {
	f := newFixture(typical.Source("typical"))
	data := record(b, f.task(b), f.src, 0)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := trace.Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
