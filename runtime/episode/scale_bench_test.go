package episode_test

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
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
		name, _, _ := strings.Cut(a.tool, ":")
		c, err := tc.Call("", name, typical.ScaleCallArgs(a.tool, a.n, a.next))
		if err != nil {
			return "", err
		}
		if c.IsError {
			return "", fmt.Errorf("%s: %s", a.tool, c.Error)
		}
	}
	return "", nil
}

// scaleCalls is the number of calls of an episode of BenchmarkScaleCall: fewer make the tree
// before issue 24 measurable at 100,000 entries in a few minutes.
var scaleCalls = flag.Int("scale.calls", 200, "calls per episode of BenchmarkScaleCall")

// scaleSizes, when set, are the sizes BenchmarkScaleCall seeds ("1000,10000"): a size it does
// not measure still takes its time to seed.
var scaleSizes = flag.String("scale.sizes", "", "sizes of BenchmarkScaleCall, comma-separated (default: typical.ScaleSizes)")

// BenchmarkScaleCall is the cost of one built-in call through an episode over a workspace of n
// files, n mail messages, n records, n chat messages and n contacts (typical.Scale and
// ScaleChatContacts, seeded in Go after the task's own setup), as the mean over episodes of
// 200 calls each: the marginal cost of a call, with a two-hundredth of the episode's own cost.
// order_update is a task-defined tool that updates one record.
func BenchmarkScaleCall(b *testing.B) {
	calls := *scaleCalls
	task := load(b, typical.ScaleTask)["scale"]
	task.MaxCallsPerTurn = calls
	sizes := typical.ScaleSizes
	if *scaleSizes != "" {
		sizes = nil
		for _, f := range strings.Split(*scaleSizes, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		p, d := episode.Prepare(context.Background(), task, episode.Options{})
		if d != nil {
			b.Fatal(d)
		}
		big := p.Base.Fork()
		if err := typical.Scale(big, n); err != nil {
			b.Fatal(err)
		}
		if err := typical.ScaleChatContacts(big, n); err != nil {
			b.Fatal(err)
		}
		big.Freeze()
		_ = big.Hash()
		p.Base = big
		for _, tool := range []string{"fs_write", "mail_mark", "order_update", "fs_read", "fs_list", "mail_list",
			"chat_read", "chat_search", "chat_mentions", "chat_list_channels", "chat_post", "chat_react",
			"contacts_search", "contacts_search:role", "contacts_get", "contacts_list", "contacts_update"} {
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
