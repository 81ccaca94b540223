package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The comparison gives A, B and their difference per group, and lists the tasks that flipped
// either way, each sample linking to an episode view that is written; the page is the same when
// written twice.
func TestCompare(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a := f.rolloutDirNamed(t, "a", 3, rolloutPlan)
	b := f.rolloutDirNamed(t, "b", 3, betterPlan)
	out := filepath.Join(f.dir, "cmp.html")
	require.NoError(t, WriteCompare(context.Background(), out, a, b, f.options()))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	page := string(data)
	// A: 2/3, 1/3, 3/3 → 66.7%; B: 1/3, 3/3, 3/3 → 77.8%
	assert.Contains(t, page, `<tr><th scope="row">overall</th><td class="n">3</td><td class="n">66.7%</td><td class="n">77.8%</td><td class="n delta pass">&#43;11.1</td>`)
	up := page[strings.Index(page, `id="flips-up"`):strings.Index(page, `id="flips-down"`)]
	down := page[strings.Index(page, `id="flips-down"`):]
	assert.Contains(t, up, "standup-room-move")
	assert.NotContains(t, up, "q3-total-reply")
	assert.Contains(t, down, "q3-total-reply")
	assert.NotContains(t, down, "stock-delivery-record")
	assert.Contains(t, up, `href="./cmp-episodes/b/standup-room-move/0.html"`)
	assert.FileExists(t, filepath.Join(f.dir, "cmp-episodes", "b", "standup-room-move", "0.html"))
	assert.FileExists(t, filepath.Join(f.dir, "cmp-episodes", "a", "q3-total-reply", "2.html"))
	assert.NoDirExists(t, filepath.Join(f.dir, "cmp-episodes", "a", "stock-delivery-record"), "only the flipped tasks' episodes")
	assert.Contains(t, page, "pass@3 A")

	require.NoError(t, WriteCompare(context.Background(), out, a, b, f.options()))
	again, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, page, string(again))

	// with --no-episodes the samples link to their traces
	plain := filepath.Join(f.dir, "plain.html")
	opts := f.options()
	opts.NoEpisodes = true
	require.NoError(t, WriteCompare(context.Background(), plain, a, b, opts))
	data, err = os.ReadFile(plain)
	require.NoError(t, err)
	assert.Contains(t, string(data), `href="./b/standup-room-move/0.jsonl"`)
}
