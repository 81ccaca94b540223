package report

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A generation run's page counts what the red team cost and wrote, apart from the generation's
// tokens; a run without a red team says nothing of it.
func TestGenerationPageRedTeam(t *testing.T) {
	t.Parallel()
	recs := []generator.Record{
		{Attempt: 0, Status: "accepted", Task: "a", File: "a.star", Rounds: 2, Model: "m", Tokens: generator.Tokens{Prompt: 100, Completion: 20, Total: 120},
			RedTeam: &generator.RedTeamRecord{Hacks: 4, Careful: 2, Requests: 1, Runs: "a.star.runs.json", Tokens: generator.Tokens{Prompt: 40, Completion: 10, Total: 50}}},
		{Attempt: 1, Status: "rejected", Rounds: 1, Model: "m",
			RedTeam: &generator.RedTeamRecord{Hacks: 3, Careful: 1, Requests: 2, Tokens: generator.Tokens{Prompt: 60, Completion: 5, Total: 65}}},
	}
	page, err := renderGeneration("manifest.jsonl", recs)
	require.NoError(t, err)
	assert.Contains(t, string(page), "<dt>Red team</dt><dd>3 requests; 100 prompt, 15 completion, 115 tokens in all; 7 hacks and 3 careful runs written, kept beside 1 accepted tasks</dd>")
	assert.Contains(t, string(page), "100 prompt, 20 completion, 120 in all", "the generation's own tokens")

	recs[0].RedTeam, recs[1].RedTeam = nil, nil
	page, err = renderGeneration("manifest.jsonl", recs)
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(page), "Red team"))
}
