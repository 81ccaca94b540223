package queue_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallServer is an embedded server that takes messages of 64 KiB at most.
func smallServer(t *testing.T) string {
	t.Helper()
	url, stop, err := queue.EmbeddedWith(t.TempDir(), 64<<10)
	require.NoError(t, err)
	t.Cleanup(stop)
	return url
}

// blobsStream is the stream of the blobs of the queue name, read directly.
func blobsStream(t *testing.T, url, name string) jetstream.Stream {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(guarded(t), "BLOBS_"+name)
	require.NoError(t, err)
	return s
}

func lastSeq(t *testing.T, s jetstream.Stream) uint64 {
	t.Helper()
	info, err := s.Info(guarded(t))
	require.NoError(t, err)
	return info.State.LastSeq
}

// A blob four times the server's max_payload is stored in chunks and read back whole, by any
// connection; storing it again, from here or from another producer, sends nothing.
func TestBlobsLargerThanAMessage(t *testing.T) {
	url := smallServer(t)
	q := open(t, url, "blobs")
	data := make([]byte, 256<<10+123)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	ref, err := q.Put(guarded(t), data)
	require.NoError(t, err)
	assert.Equal(t, queue.Ref(data), ref)
	assert.Regexp(t, `^sha256-[0-9a-f]{64}$`, ref)
	s := blobsStream(t, url, "blobs")
	stored := lastSeq(t, s)
	assert.Greater(t, stored, uint64(4), "stored in chunks")

	other := open(t, url, "blobs")
	got, err := other.Get(guarded(t), ref)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	for _, p := range []*queue.Queue{q, other} {
		again, err := p.Put(guarded(t), data)
		require.NoError(t, err)
		assert.Equal(t, ref, again)
	}
	assert.Equal(t, stored, lastSeq(t, s), "nothing was stored again")

	empty, err := q.Put(guarded(t), nil)
	require.NoError(t, err)
	got, err = other.Get(guarded(t), empty)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// Get checks what it reads: a ref that is not one, a blob that is not there and bytes that do
// not have the ref's hash are errors.
func TestBlobsAreChecked(t *testing.T) {
	url := smallServer(t)
	q := open(t, url, "checked")
	_, err := q.Get(guarded(t), "../x")
	assert.ErrorContains(t, err, "not sha256- and 64 hex digits")
	_, err = q.Get(guarded(t), queue.Ref([]byte("never stored")))
	assert.ErrorIs(t, err, queue.ErrBlobNotFound)

	data := make([]byte, 100<<10)
	ref, err := q.Put(guarded(t), data)
	require.NoError(t, err)
	// another writer replaces the second chunk with other bytes
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	_, err = js.Publish(guarded(t), fmt.Sprintf("coworkenv.checked.blobs.%s.1", ref[len("sha256-"):]), []byte("other bytes"))
	require.NoError(t, err)
	_, err = open(t, url, "checked").Get(guarded(t), ref)
	assert.ErrorContains(t, err, "do not have that SHA-256")
}

// A Queue reads a blob from the server once, and keeps it: here the blob is gone from the
// server after the first read, and only a Queue that read it before still has it.
func TestBlobsAreReadOnce(t *testing.T) {
	url := smallServer(t)
	producer := open(t, url, "once")
	ref, err := producer.Put(guarded(t), []byte("shared by every job"))
	require.NoError(t, err)
	worker := open(t, url, "once")
	ctx := guarded(t)
	var all []chan []byte
	for range 4 { // at once: one read
		c := make(chan []byte, 1)
		all = append(all, c)
		go func() {
			data, err := worker.Get(ctx, ref)
			assert.NoError(t, err)
			c <- data
		}()
	}
	for _, c := range all {
		assert.Equal(t, "shared by every job", string(<-c))
	}
	require.NoError(t, blobsStream(t, url, "once").Purge(guarded(t)))
	data, err := worker.Get(guarded(t), ref)
	require.NoError(t, err)
	assert.Equal(t, "shared by every job", string(data))
	_, err = open(t, url, "once").Get(guarded(t), ref)
	assert.ErrorIs(t, err, queue.ErrBlobNotFound)
	_, err = open(t, url, "once", queue.WithBlobCache(0)).Get(context.Background(), ref)
	assert.ErrorIs(t, err, queue.ErrBlobNotFound)
}

// Decode checks the kind and reads the body.
func TestDecode(t *testing.T) {
	type body struct{ N int }
	b, err := queue.Decode[body](queue.Job{Kind: "k", Body: []byte(`{"N": 3}`)}, "k")
	require.NoError(t, err)
	assert.Equal(t, 3, b.N)
	_, err = queue.Decode[body](queue.Job{Kind: "other", Body: []byte(`{}`)}, "k")
	assert.EqualError(t, err, `not a k job: kind "other"`)
	_, err = queue.Decode[body](queue.Job{Kind: "k", Body: []byte(`{`)}, "k")
	assert.ErrorContains(t, err, "k job: ")
}
