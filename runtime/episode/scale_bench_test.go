package episode_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coworkenv/coworkenv/internal/typical"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// scaleAgent makes calls calls of one tool, each with new arguments (typical.ScaleCallArgs).
type scaleAgent struct {
	tool     string
	n, calls int
	next     int
}

func (a *scaleAgent) Name() string { return "scale" }
func (a *scaleAgent) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	for range a.calls {
		a.next++
		c, err := tc.Call("", a.tool, typical.ScaleCallArgs(a.tool, a.n, a.next))
		if err != nil {
			return "", err
		}
		if c.IsError {
			return "", fmt.Errorf("%s: %s", a.tool, c.Error)
		}
	}
	return "", nil
}

// BenchmarkScaleCall is the cost of one built-in call through an episode over a workspace of n
// files, n messages and n records (typical.Scale, seeded in Go after the task's own setup), as
// the mean over episodes of 200 calls each: the marginal cost of a call, with a two-hundredth
// of the episode's own cost. order_update is a task-defined tool that updates one record.
func BenchmarkScaleCall(b *testing.B) {
	const calls = 200
	task := load(b, typical.ScaleTask)["scale"]
	task.MaxCallsPerTurn = calls
	for _, n := range typical.ScaleSizes {
		p, d := episode.Prepare(context.Background(), task, episode.Options{})
		if d != nil {
			b.Fatal(d)
		}
		big := p.Base.Fork()
		if err := typical.Scale(big, n); err != nil {
			b.Fatal(err)
		}
		big.Freeze()
		_ = big.Hash()
		p.Base = big
		for _, tool := range []string{"fs_write", "mail_mark", "order_update", "fs_read", "fs_list", "mail_list"} {
			b.Run(fmt.Sprintf("%s/n=%d", tool, n), func(b *testing.B) {
				a := &scaleAgent{tool: tool, n: n, calls: calls}
				episodes := 0
				for b.Loop() {
					if r := p.Run(context.Background(), a, episode.RunOptions{}); r.Err != nil {
						b.Fatal(r.Err)
					}
					episodes++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(episodes*calls), "ns/call")
			})
		}
	}
}
