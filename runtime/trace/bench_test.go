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
	benchReplay(b, f, record(b, f.task(b), f.src, 0))
}

// benchReplay reads and replays a trace.
func benchReplay(b *testing.B, f *fixture, data []byte) {
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

// BenchmarkReplayModel reads and replays a model trace: two turns, seven tool calls (one with
// arguments that are not JSON), faults.
func BenchmarkReplayModel(b *testing.B) {
	f := newFixture(taskSrc)
	benchReplay(b, f, recordModel(b, f.task(b), f.src, modelAnswers...))
}
