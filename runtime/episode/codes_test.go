package episode_test

import (
	"context"
	"errors"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentFn is an agent made of a function.
type agentFn func(ctx context.Context, tc *episode.TurnContext) (string, error)

func (agentFn) Name() string { return "fn" }
func (f agentFn) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	return f(ctx, tc)
}

// transportError is an agent error that names its code, as a model agent's failed request does.
type transportError struct{}

func (transportError) Error() string    { return "the endpoint is down" }
func (transportError) DiagCode() string { return episode.ModelError }

// What stops an episode says whose fault it is: the agent's own error is solution-error, an
// error that names its code (a model's endpoint) keeps it, and a cancelled context is
// interrupted, whatever the agent returned.
func TestEpisodeErrorCodes(t *testing.T) {
	tasks := load(t, scoring)
	p, d := episode.Prepare(context.Background(), tasks["weights"], episode.Options{})
	require.Nil(t, d)

	r := p.Run(context.Background(), agentFn(func(context.Context, *episode.TurnContext) (string, error) {
		return "", errors.New("nonsense")
	}), episode.RunOptions{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "solution-error", r.Err.Code)
	assert.False(t, episode.Inconclusive(r.Err.Code))

	r = p.Run(context.Background(), agentFn(func(context.Context, *episode.TurnContext) (string, error) {
		return "", transportError{}
	}), episode.RunOptions{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "model-error", r.Err.Code)
	assert.Contains(t, r.Err.Message, "the endpoint is down")
	assert.True(t, episode.Inconclusive(r.Err.Code))
	assert.Equal(t, 0.0, r.Score)

	// cancelled in the middle of a turn: the agent's error becomes interrupted
	ctx, cancel := context.WithCancel(context.Background())
	r = p.Run(ctx, agentFn(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		_, err := tc.Call("", "fs_list", nil)
		require.NoError(t, err)
		cancel()
		return "", ctx.Err()
	}), episode.RunOptions{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "interrupted", r.Err.Code)
	assert.Len(t, r.Calls, 1, "what ran before the interruption is kept")
	assert.True(t, episode.Inconclusive(r.Err.Code))

	// the oracle's solution is stopped at its first call
	r = p.Run(ctx, episode.Oracle{}, episode.RunOptions{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "interrupted", r.Err.Code)
	assert.Empty(t, r.Calls)
}
