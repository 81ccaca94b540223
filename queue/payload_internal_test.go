package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// A job larger than the server takes in a message is refused with what to do; a result (or a
// failure's reason) larger than the inline bound goes through the blob store, in chunks under the
// server's limit, and the producer reads it back whole.
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

	big := []byte(strings.Repeat("a trace line\n", 1000)) // 13,000 bytes
	ok, err := q.Publish(ctx, Job{Kind: "answers-big"})
	require.NoError(t, err)
	failing, err := q.Publish(ctx, Job{Kind: "fails-big"})
	require.NoError(t, err)
	wctx, stopWorker := context.WithCancel(ctx)
	runs := 0
	done := make(chan error, 1)
	go func() {
		done <- q.Work(wctx, func(_ context.Context, job Job) ([]byte, error) {
			runs++
			if job.Kind == "fails-big" {
				return nil, errorString(big)
			}
			return big, nil
		})
	}()
	got := map[string]Result{}
	for r, err := range q.Results(ctx) {
		require.NoError(t, err)
		got[r.JobID] = r
		if len(got) == 2 {
			break
		}
	}
	stopWorker()
	require.NoError(t, <-done)
	require.True(t, got[ok.ID].OK, got[ok.ID].Error)
	require.Equal(t, string(big), string(got[ok.ID].Body))
	require.False(t, got[failing.ID].OK)
	require.Equal(t, string(big), got[failing.ID].Error)
	require.Equal(t, 1+DefaultMaxDeliver, runs)
	st, err := q.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, Status{Done: 1, Failed: 1}, st)
}

type errorString string

func (e errorString) Error() string { return string(e) }
