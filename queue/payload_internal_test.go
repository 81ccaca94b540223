package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// A job or a result larger than the server takes in a message is refused with what to do: the
// producer gets the error, and a job whose result is too large fails at once, with no
// redelivery (none would do better).
func TestMessagesOverTheServersMaxPayload(t *testing.T) {
	url, stop, err := embedded(t.TempDir(), 4096)
	require.NoError(t, err)
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	q, err := Open(ctx, url, "big")
	require.NoError(t, err)
	defer q.Close()

	_, err = q.Publish(ctx, Job{Kind: "big", Body: make([]byte, 8192)})
	require.ErrorIs(t, err, nats.ErrMaxPayload)
	require.ErrorContains(t, err, "the job is 8192 bytes")
	require.ErrorContains(t, err, "max_payload, 4096 bytes")

	job, err := q.Publish(ctx, Job{Kind: "answers-big"})
	require.NoError(t, err)
	wctx, stopWorker := context.WithCancel(ctx)
	runs := 0
	done := make(chan error, 1)
	go func() {
		done <- q.Work(wctx, func(context.Context, Job) ([]byte, error) {
			runs++
			return make([]byte, 8192), nil
		})
	}()
	for r, err := range q.Results(ctx) {
		require.NoError(t, err)
		require.Equal(t, job.ID, r.JobID)
		require.False(t, r.OK)
		require.True(t, strings.HasPrefix(r.Error, "the result is "), r.Error)
		require.Equal(t, 1, r.Deliveries)
		break
	}
	stopWorker()
	require.NoError(t, <-done)
	require.Equal(t, 1, runs)
}
