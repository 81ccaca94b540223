package export

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cand is a candidate of group g with the call sequence seq (one byte of it).
func cand(index int, g string, score float64, calls int, tokens int64, seq byte, capability string) candidate {
	c := candidate{index: index, group: g, score: score, calls: calls, tokens: tokens, capability: capability,
		path: filepath.Join("out", g, string(rune('a'+index))+".jsonl")}
	c.seq[0] = seq
	return c
}

// keptIndexes are the indexes kept, in order.
func keptIndexes(kept map[int]bool) []int {
	var out []int
	for i := range kept {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// Within a task: a higher score first, then fewer calls, then fewer tokens; repeated call
// sequences go before the cap counts; every candidate is kept or dropped for one reason.
func TestSelectionRanksWithinATask(t *testing.T) {
	t.Parallel()
	cands := []candidate{
		cand(0, "t", 1, 3, 10, 1, ""),   // full score, 3 calls
		cand(1, "t", 1, 2, 50, 2, ""),   // full score, 2 calls, more tokens
		cand(2, "t", 1, 2, 10, 3, ""),   // the best
		cand(3, "t", 0.5, 1, 1, 4, ""),  // a lower score, whatever its calls
		cand(4, "t", 1, 2, 10, 3, ""),   // the best's calls again
		cand(5, "u", 0.8, 9, 99, 3, ""), // another task: the same calls are no duplicate
	}
	s := &Selection{PerTask: 2, Distinct: true}
	kept, dropped := s.choose(slices.Clone(cands))
	assert.Equal(t, []int{1, 2, 5}, keptIndexes(kept))
	assert.Equal(t, map[int]string{0: ReasonPerTask, 3: ReasonPerTask, 4: ReasonDuplicate}, dropped)

	// without --distinct the repeat counts as the second best
	kept, dropped = (&Selection{PerTask: 2}).choose(slices.Clone(cands))
	assert.Equal(t, []int{2, 4, 5}, keptIndexes(kept))
	assert.Len(t, dropped, 3)

	// the order of the candidates does not matter
	rev := slices.Clone(cands)
	slices.Reverse(rev)
	kept2, dropped2 := s.choose(rev)
	kept, dropped = s.choose(slices.Clone(cands))
	assert.Equal(t, kept, kept2)
	assert.Equal(t, dropped, dropped2)
}

// A mix keeps the largest set in the given shares, the best of every task before the second of
// any, and drops the capabilities it does not name; --per-capability caps each.
func TestSelectionFollowsAMix(t *testing.T) {
	t.Parallel()
	var cands []candidate
	add := func(g string, n int, capability string) {
		for k := range n {
			cands = append(cands, cand(len(cands), g, 1, 1+k, 0, byte(len(cands)), capability))
		}
	}
	add("a1", 3, "easy") // an easy capability: 3 tasks of 3 episodes
	add("a2", 3, "easy")
	add("a3", 3, "easy")
	add("b1", 2, "hard") // a hard one: 2 episodes in all
	add("c1", 1, "other")
	mix, err := ParseMix("easy=0.5, hard=0.5")
	require.NoError(t, err)
	kept, dropped := (&Selection{Mix: mix}).choose(slices.Clone(cands))
	count := map[string]int{}
	for i := range kept {
		count[cands[i].capability]++
		if cands[i].capability == "easy" {
			assert.Zero(t, cands[i].calls-1, "the best episode of each easy task comes first: %d", i)
		}
	}
	assert.Equal(t, map[string]int{"easy": 2, "hard": 2}, count)
	assert.Equal(t, ReasonNotInMix, dropped[11])
	reasons := map[string]int{}
	for _, why := range dropped {
		reasons[why]++
	}
	assert.Equal(t, map[string]int{ReasonCapability: 7, ReasonNotInMix: 1}, reasons)

	kept, _ = (&Selection{PerCapability: 4}).choose(slices.Clone(cands))
	count = map[string]int{}
	for i := range kept {
		count[cands[i].capability]++
	}
	assert.Equal(t, map[string]int{"easy": 4, "hard": 2, "other": 1}, count)
}

func TestParseMix(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("mail.reply=2,files.organize=1")
	require.NoError(t, err)
	assert.Equal(t, []Share{{"mail.reply", 2}, {"files.organize", 1}}, m)
	for _, bad := range []string{"", "a", "a=0", "a=-1", "a=x", "a=1x", "a=Inf", "a=NaN", "=1", "a=1,a=2"} {
		_, err := ParseMix(bad)
		assert.Error(t, err, bad)
	}
}

// Run with a selection reads every trace to choose, then verifies and writes the chosen ones in
// their order; repeated call sequences are counted by their rule, and a trace that changes
// between the two readings is unreadable rather than written unchecked.
func TestRunSelects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o1 := writeTrace(t, dir, "o1.jsonl", episode.Oracle{}, "")
	o2 := writeTrace(t, dir, "o2.jsonl", episode.Oracle{}, "")
	m1 := writeTrace(t, dir, "m1.jsonl", modelLike{}, "S")
	m2 := writeTrace(t, dir, "m2.jsonl", modelLike{}, "S")
	paths := []string{o2, m1, o1, m2}

	sink := &memSink{}
	sum, err := Run(context.Background(), paths, sink, RunOptions{Select: &Selection{Distinct: true}})
	require.NoError(t, err)
	assert.Equal(t, 4, sum.Candidates)
	assert.Equal(t, 2, sum.Kept)
	assert.Equal(t, map[string]int{ReasonDuplicate: 2}, sum.Skipped)
	assert.Equal(t, []string{m1 + " S", o1 + " "}, sink.added, "the first by path of each pair of equal episodes, in the given order")

	// a chosen trace edited after it was chosen
	sink = &memSink{}
	sum, err = Run(context.Background(), paths, sink, RunOptions{Select: &Selection{Distinct: true},
		Verify: func(ctx context.Context, data []byte, e *Episode) (string, string, bool) {
			if e.Path == m1 {
				require.NoError(t, os.WriteFile(o1, append(data, '\n'), 0o644))
			}
			return "", "", false
		}})
	require.NoError(t, err)
	assert.Equal(t, []string{m1 + " S"}, sink.added)
	assert.Equal(t, 1, sum.Unreadable)
}
