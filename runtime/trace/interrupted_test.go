package trace_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordInterrupted runs the oracle on f's task with the models that models makes of the
// episode's cancel, and returns the trace, whose end records interrupted.
func recordInterrupted(t *testing.T, f *fixture, models func(cancel context.CancelFunc) *episode.Models) []byte {
	t.Helper()
	p, d := episode.Prepare(context.Background(), f.task(t), episode.Options{})
	require.Nil(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, trace.StartOf(p, f.src, 0, "oracle"))
	r := p.Run(ctx, episode.Oracle{}, episode.RunOptions{Observer: w, Models: models(cancel)})
	require.NoError(t, w.End(r))
	require.NotNil(t, r.Err)
	require.Equal(t, episode.Interrupted, r.Err.Code, r.Err.Message)
	return buf.Bytes()
}

// An episode interrupted after its last reply, while its verifiers ran (a served session deleted
// then), replays what was recorded and stops where the recording stops: the replay reports it
// interrupted, not diverged, whether the verifier was cut before its judge was asked or while a
// judge model answered. A trace cut short the same way that differs before the cut still
// diverges.
func TestInterruptedTracesReplayAsRecorded(t *testing.T) {
	t.Parallel()
	f := newFixture(simTaskSrc)
	// a judge model the deletion cuts short
	inJudge := recordInterrupted(t, f, func(cancel context.CancelFunc) *episode.Models {
		return &episode.Models{Judge: func(ctx context.Context, _ *episode.JudgeCall) error {
			cancel()
			return ctx.Err()
		}}
	})
	cases := map[string][]byte{
		"in the judge model": inJudge,
		// the verifier's script cancelled before it asked its stand-in judge (when the
		// cancellation reaches the script is up to the scheduler: the trace is made as it ends)
		"before the judge": swap(t, inJudge, `"message":"verifier: judge: context canceled"`, `"message":"verifier: Starlark computation cancelled: context canceled"`),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			k := kinds(t, data)
			require.Equal(t, "end", k[len(k)-1])
			assert.NotContains(t, k, "judge", "the judge's verdict was never recorded")
			r := replay(t, f, data)
			assert.True(t, r.Matched(), "%v", r.Divergence)
			assert.True(t, r.Interrupted, "the replay says the trace was interrupted")
			again := replay(t, f, data)
			assert.Equal(t, r, again, "the same every time")

			// the reply edited: the replay diverges before the interruption
			tampered := swap(t, data, `"content":"Summary: March: 12 orders"`, `"content":"Summary: nothing"`)
			r = replay(t, f, tampered)
			require.False(t, r.Matched())
			assert.Equal(t, "reply", r.Divergence.Event)
		})
	}
}
