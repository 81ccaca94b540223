package export

import (
	"context"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/assert"
)

// modelDown is a model agent whose endpoint fails for good in the second turn.
type modelDown struct{ modelLike }

func (m modelDown) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if tc.Index == 0 {
		return m.modelLike.Turn(ctx, tc)
	}
	return "", &modelagent.RequestError{Model: "m", URL: "http://127.0.0.1:1/v1", Status: "503 Service Unavailable", Code: 503, Message: "overloaded", Attempts: 3}
}

// An episode that says nothing about its agent (its model's endpoint failed, or it was
// interrupted) is left out of both sft and rl, and the reason names the code; an agent's own
// error is still an rl episode.
func TestInconclusiveEpisodesAreSkipped(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, modelDown{}, "S", "x/0.jsonl")
	assert.Equal(t, "model-error", e.ErrorCode())
	assert.Equal(t, "inconclusive (model-error)", RLSkip(e))
	assert.Equal(t, "inconclusive (model-error)", SFTSkip(e, SFTOptions{MinScore: new(float64)}))

	e = record(t, task, src, 0, modelLike{}, "S", "x/1.jsonl")
	assert.Equal(t, "solution-error", e.ErrorCode(), "the agent's own error")
	assert.Equal(t, "", RLSkip(e))

	// an interrupted trace, as Ctrl-C leaves it
	f := e.end().Error
	f.Code = "interrupted"
	assert.Equal(t, "inconclusive (interrupted)", RLSkip(e))
	assert.Equal(t, "inconclusive (interrupted)", SFTSkip(e, SFTOptions{IncludeReference: true}))
}
