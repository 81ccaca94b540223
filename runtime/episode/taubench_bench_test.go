package episode_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/taubench"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/require"
)

// tauRetail loads the full-size τ-bench retail task (package internal/taubench), and its gold
// actions as a scripted agent.
func tauRetail(tb testing.TB) (*dsl.Task, *episode.Scripted) {
	tb.Helper()
	data := taubench.Generate(1)
	gold := &episode.Scripted{Label: "gold", Calls: [][]episode.ScriptedCall{nil}, Replies: []string{"Your exchange is requested."}}
	for _, c := range data.Gold {
		gold.Calls[0] = append(gold.Calls[0], episode.ScriptedCall{Name: c.Tool, Args: c.Args})
	}
	fs := fstest.MapFS{}
	for name, src := range data.Files() {
		fs[name] = &fstest.MapFile{Data: []byte(src)}
	}
	f := dsl.NewCorpus(fs, ".", "c").LoadFile(context.Background(), "retail.star")
	require.Empty(tb, f.Diags)
	return f.Tasks[0], gold
}

// The retail task seeds τ-bench's sizes, its gold episode passes, and doing nothing fails.
func TestTauRetail(t *testing.T) {
	t.Parallel()
	task, gold := tauRetail(t)
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	for coll, n := range map[string]int{"users": taubench.Users, "orders": taubench.Orders, "products": taubench.Products} {
		require.Equal(t, n, p.Base.DB().Count(coll, nil), coll)
	}
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
	require.Nil(t, r.Err)
	require.True(t, r.Passed, "%v", r.FailedItems())
	require.Len(t, r.Calls, 5)
	for _, c := range r.Calls {
		require.False(t, c.IsError, "%s: %s", c.Name, c.Error)
	}
	require.False(t, p.Run(context.Background(), episode.Noop{}, episode.RunOptions{}).Passed)
	g := p.Run(context.Background(), gold, episode.RunOptions{})
	require.True(t, g.Passed, "the gold actions pass as the reference does")
	require.Equal(t, r.FinalState, g.FinalState)
}

// BenchmarkTauRetail is the gold episode of the full-size τ-bench retail task, verifier included
// (ws.diff(ws.reference)). "prepared": the gold actions, as τ-bench's Env steps through them,
// from the prepared state, with the reference's end state made once, as a rollout or a server
// has them; "prepared-oracle": the same through the task's Starlark solution, which decodes every
// result; "cold": setup (loading the database) and the reference run for each episode too, as
// τ-bench's Python episode reloads its data.
func BenchmarkTauRetail(b *testing.B) {
	task, gold := tauRetail(b)
	for _, c := range []struct {
		name  string
		agent episode.Agent
	}{{"prepared", gold}, {"prepared-oracle", episode.Oracle{}}} {
		b.Run(c.name, func(b *testing.B) {
			p, d := episode.Prepare(context.Background(), task, episode.Options{})
			if d != nil {
				b.Fatal(d)
			}
			if _, err := p.Reference(); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if r := p.Run(context.Background(), c.agent, episode.RunOptions{}); !r.Passed {
					b.Fatal(r.Err, r.FailedItems())
				}
			}
		})
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			p, d := episode.Prepare(context.Background(), task, episode.Options{})
			if d != nil {
				b.Fatal(d)
			}
			if r := p.Run(context.Background(), gold, episode.RunOptions{}); !r.Passed {
				b.Fatal(r.Err, r.FailedItems())
			}
		}
	})
}
