package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coworkenv/coworkenv/runtime/episode"
)

// Leaving a call out keeps the reference's questions where they were: a question asked before a
// later call of the same turn still comes right before that call, one asked before the dropped
// call or before an earlier one stays, and the other turns are untouched (and not shared).
func TestWithoutCallKeepsQuestionsInPlace(t *testing.T) {
	t.Parallel()
	c := func(name string) episode.ScriptedCall { return episode.ScriptedCall{Name: name} }
	calls := [][]episode.ScriptedCall{{c("a"), c("b")}, {c("c"), c("d"), c("e")}}
	asks := [][]episode.ScriptedAsk{
		{{Before: 1, Said: "t0"}},
		{{Before: 0, Said: "first"}, {Before: 1, Said: "before d"}, {Before: 2, Said: "before e"}, {Before: 3, Said: "at the end"}},
	}
	mut, mutAsks := withoutCall(calls, asks, 3) // d, the second call of turn 1
	assert.Equal(t, [][]episode.ScriptedCall{{c("a"), c("b")}, {c("c"), c("e")}}, mut)
	assert.Equal(t, [][]episode.ScriptedAsk{
		{{Before: 1, Said: "t0"}},
		{{Before: 0, Said: "first"}, {Before: 1, Said: "before d"}, {Before: 1, Said: "before e"}, {Before: 2, Said: "at the end"}},
	}, mutAsks)
	assert.Equal(t, 2, asks[1][2].Before, "the oracle's questions are not changed")

	mut, mutAsks = withoutCall(calls, nil, 0)
	assert.Equal(t, [][]episode.ScriptedCall{{c("b")}, {c("c"), c("d"), c("e")}}, mut)
	assert.Nil(t, mutAsks)
}
