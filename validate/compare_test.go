package validate

import (
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
)

// Starlark gives no way to write a nondeterministic task, so the comparison behind the
// nondeterministic diagnostic is tested on hand-made results.
func TestCompareRuns(t *testing.T) {
	t.Parallel()
	mk := func(content, state, final string, n int) *episode.Result {
		r := &episode.Result{FinalState: final, Score: 1, Turns: []*episode.TurnResult{{Reply: "r"}}}
		for i := 0; i < n; i++ {
			r.Calls = append(r.Calls, &episode.Call{Name: "fs_read", Args: jsonv.NewObject("path", "/a"), Content: content, State: state})
		}
		return r
	}
	a := mk(`"x"`, "s1", "f", 1)
	assert.Empty(t, compareRuns(a, mk(`"x"`, "s1", "f", 1)))
	assert.Contains(t, compareRuns(a, mk(`"y"`, "s1", "f", 1)), "call 1 (fs_read): results differ")
	assert.Contains(t, compareRuns(a, mk(`"x"`, "s2", "f", 1)), "states differ after the call")
	assert.Contains(t, compareRuns(a, mk(`"x"`, "s1", "g", 1)), "final states or scores differ")
	assert.Contains(t, compareRuns(a, mk(`"x"`, "s1", "f", 2)), "1 vs 2 tool calls")
	b := mk(`"x"`, "s1", "f", 1)
	b.Turns[0].Reply = "other"
	assert.Contains(t, compareRuns(a, b), "turn 0: messages or states differ")
}
