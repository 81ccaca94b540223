package episode_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/typical"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

func typicalTask(b *testing.B) *dsl.Task {
	return load(b, typical.Source("typical"))["typical"]
}

// BenchmarkLoadAndSetup: parse and run the task file, then run setup.
func BenchmarkLoadAndSetup(b *testing.B) {
	src := []byte(typical.Source("typical"))
	for b.Loop() {
		c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: src}}, ".", "c")
		f := c.LoadFile(context.Background(), "t.star")
		if _, d := episode.Prepare(context.Background(), f.Tasks[0], episode.Options{}); d != nil {
			b.Fatal(d)
		}
	}
}

// BenchmarkFork: a fork of the frozen post-setup state.
func BenchmarkFork(b *testing.B) {
	p, _ := episode.Prepare(context.Background(), typicalTask(b), episode.Options{})
	for b.Loop() {
		_ = p.Base.Fork()
	}
}

type loopAgent struct {
	name  string
	args  *jsonv.Object
	n     int
	times []time.Duration // each call's duration, for the median
}

func (a *loopAgent) Name() string { return "loop" }
func (a *loopAgent) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	for i := 0; i < a.n; i++ {
		t0 := time.Now()
		if _, err := tc.Call("", a.name, a.args); err != nil {
			return "", err
		}
		a.times = append(a.times, time.Since(t0))
	}
	return "", nil
}

// BenchmarkToolCall: one built-in tool call through the episode (schema check, fork, run,
// result encoding, state hash, recording), per call.
func BenchmarkToolCall(b *testing.B) {
	task := typicalTask(b)
	task.MaxCallsPerTurn = 1000
	p, _ := episode.Prepare(context.Background(), task, episode.Options{})
	for _, c := range []struct {
		name string
		args *jsonv.Object
	}{
		{"mail_list", jsonv.NewObject("limit", int64(5))},
		{"fs_read", jsonv.NewObject("path", "/docs/team1/note_01.md")},
		{"fs_write", jsonv.NewObject("path", "/out.md", "content", "x")},
		{"ticket_close", jsonv.NewObject("id", "T-101")},
	} {
		b.Run(c.name, func(b *testing.B) {
			a := &loopAgent{name: c.name, args: c.args, n: 1000}
			b.ResetTimer()
			for i := 0; i < b.N; i += a.n {
				p.Run(context.Background(), a, episode.RunOptions{})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(((b.N+a.n-1)/a.n)*a.n), "ns/call")
			slices.Sort(a.times)
			b.ReportMetric(float64(a.times[len(a.times)/2].Nanoseconds()), "p50-ns/call")
		})
	}
}

// BenchmarkOracleEpisode: a whole oracle episode from the prepared state, verifier included.
func BenchmarkOracleEpisode(b *testing.B) {
	p, _ := episode.Prepare(context.Background(), typicalTask(b), episode.Options{})
	for b.Loop() {
		if r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{}); !r.Passed {
			b.Fatal(r.Err, r.FailedItems())
		}
	}
}

// BenchmarkForkedEpisodesMemory: 10,000 forked episodes alive at once, each after one write;
// reports the heap they hold.
func BenchmarkForkedEpisodesMemory(b *testing.B) {
	p, _ := episode.Prepare(context.Background(), typicalTask(b), episode.Options{})
	const n = 10000
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		states := make([]any, n)
		for i := range states {
			s := p.Base.Fork()
			_ = s.Files().Write("/reports/summary.md", "Summary\n")
			_ = s.Hash()
			states[i] = s
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB/10k")
		runtime.KeepAlive(states)
	}
}

// recordsTask has 1,000 records; its verifier requires the final records to equal those the
// reference leaves (the whole-state reward in one line) and nothing else to be touched.
const recordsTask = `
def _setup(ws):
    for i in range(1000):
        ws.db.insert("orders", {"id": "O-%d" % i, "status": "open", "qty": i % 17})

def _close(ws, id):
    o = ws.db.get("orders", id)
    if o == None:
        fail("no order " + id)
    ws.db.update("orders", id, status = "closed")
    return {"id": id, "status": "closed"}

def _solve(agent):
    agent.call("close_order", id = "O-500")
    agent.reply("Closed O-500.")

def _verify(ws, ep):
    check(ws.diff(ws.reference).empty, "the records are the reference's")
    bad = ws.unexpected(records = ["orders/O-500"])
    safety(bad == [], "nothing else: %s" % bad)

task(name = "records-1000", prompt = "Close order O-500.", setup = _setup, verify = _verify, solution = _solve,
     tools = [tool(name = "close_order", description = "Close an order.", params = {"id": param("string")}, impl = _close)])
`

// BenchmarkReferenceEpisode: a whole episode of a task with 1,000 records whose verifier
// compares the state with the reference's end state, after the prepared state and the
// reference's end state exist.
func BenchmarkReferenceEpisode(b *testing.B) {
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(recordsTask)}}, ".", "c")
	f := c.LoadFile(context.Background(), "t.star")
	if len(f.Diags) > 0 {
		b.Fatal(f.Diags)
	}
	p, d := episode.Prepare(context.Background(), f.Tasks[0], episode.Options{})
	if d != nil {
		b.Fatal(d)
	}
	if _, err := p.Reference(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
		if !r.Passed {
			b.Fatal(r.Err, r.Items)
		}
	}
}
