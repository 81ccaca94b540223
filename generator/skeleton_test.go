package generator_test

import (
	"context"
	"testing"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/stretchr/testify/require"
)

// Two tasks of one template (other people, texts, figures, the same work) are twins by their
// skeleton: with SkeletonDedup the second is rejected with the name of the first, without it
// both are accepted.
func TestSkeletonTwinRejected(t *testing.T) {
	t.Parallel()
	script := map[int64][]string{
		100: {fenced(replies[0].source())},
		101: {fenced(replies[1].source())},
	}
	for _, on := range []bool{false, true} {
		f := newFake(t, script)
		opts := options(t, f, t.TempDir(), 2)
		opts.Jobs = 1
		opts.SkeletonDedup = on
		sum, err := generator.Run(context.Background(), opts)
		require.NoError(t, err)
		recs := readManifest(t, opts.Out)
		require.Equal(t, "accepted", recs[0].Status)
		if !on {
			require.Equal(t, 2, sum.Accepted)
			continue
		}
		require.Equal(t, 1, sum.Accepted)
		require.Equal(t, "rejected", recs[1].Status)
		require.Equal(t, replies[0].name, recs[1].Twin)
		require.Len(t, recs[1].Diagnostics, 1)
		require.Equal(t, generator.DuplicateCode, recs[1].Diagnostics[0].Code)
		require.Contains(t, recs[1].Diagnostics[0].Message, `the task repeats the skeleton of "`+replies[0].name+`" (attempt 0): the same tool calls in its solution and the same kinds of checks (solution `)
	}
}

func TestSkeletonOf(t *testing.T) {
	t.Parallel()
	a := replies[0].source()
	b := replies[1].source()
	require.NotEqual(t, a, b)
	require.Equal(t, generator.SkeletonOf(a), generator.SkeletonOf(b), "other data, the same work")
	require.NotEmpty(t, generator.SkeletonOf(a))
	require.Contains(t, generator.SkeletonOf(a), "checks ")
	require.Equal(t, "", generator.SkeletonOf("def f(:\n"), "no skeleton of a file that does not parse")
	short := "def _solve(agent):\n    agent.call(\"mail_list\")\n    agent.call(\"mail_list\")\n    agent.call(\"mail_read\", id = \"m1\")\n"
	require.Equal(t, "", generator.SkeletonOf(short), "two steps (a repeat counts once) are too few")
	long := short + "    agent.call(\"fs_read\", path = \"/a\")\n"
	other := short + "    agent.call(\"fs_list\", path = \"/\")\n"
	require.Equal(t, "solution mail_list mail_read fs_read; checks ", generator.SkeletonOf(long))
	require.NotEqual(t, generator.SkeletonOf(long), generator.SkeletonOf(other))
	checks := long + "def _verify(ws, ep):\n    r = ws.history.sent()\n    check(claims.states(r[0].body, 5, about = \"x\") and len(r) == 1, \"five\")\n    safety(ws.unexpected(files = [\"/a\"]) == [] and helper(ws), \"nothing else\")\n"
	require.Equal(t, "solution mail_list mail_read fs_read; checks check(claims.states) safety(ws.unexpected)", generator.SkeletonOf(checks))
}
