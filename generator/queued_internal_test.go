package generator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/modelagent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingBlobs counts the blobs read.
type countingBlobs struct {
	queue.Blobs
	mu   sync.Mutex
	gets int
}

func (c *countingBlobs) Get(ctx context.Context, ref string) ([]byte, error) {
	c.mu.Lock()
	c.gets++
	c.mu.Unlock()
	return c.Blobs.Get(ctx, ref)
}

// A generate job's body has the same small size whatever the corpus and however many tasks the
// attempt has seen (here a corpus index of 1 MB, a system prompt larger than a message and 400
// tasks seen, 2 MB); its ID depends only on what the attempt sees, not on how the chain was
// built; and a worker reads each link of the chain once.
func TestGenerateJobSizeDoesNotGrow(t *testing.T) {
	t.Parallel()
	url, stop, err := queue.EmbeddedWith(t.TempDir(), 64<<10)
	require.NoError(t, err)
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	open := func() *queue.Queue {
		q, err := queue.Open(ctx, url, QueueName)
		require.NoError(t, err)
		t.Cleanup(q.Close)
		return q
	}
	shingles := func(k int) map[uint64]struct{} {
		sh := map[uint64]struct{}{}
		for j := range 600 {
			sh[uint64(k)<<20|uint64(j)] = struct{}{}
		}
		return sh
	}
	g := &gen{opts: Options{Capabilities: []string{"mail.reply"}, Seed: 7, MaxRounds: 2, NearThreshold: 0.5, Jobs: 2, Model: modelagent.Config{Model: "m"}},
		system: strings.Repeat("the system prompt ", 5000), names: map[string]string{}, desc: map[string]string{}, support: map[string][]byte{}}
	g.mix, err = newMixPlan(g.opts.Capabilities, nil, 0, false, nil)
	require.NoError(t, err)
	for k := range 200 {
		g.corpus = append(g.corpus, &entry{name: fmt.Sprintf("corpus-%d", k), where: "corpus", attempt: -1, hash: fmt.Sprint(k), shingles: shingles(k)})
	}
	const seen = 400
	for k := range seen {
		name := fmt.Sprintf("task-%d", k)
		g.accepted = append(g.accepted, &entry{name: name, where: fmt.Sprintf("attempt %d", 2*k), attempt: 2 * k, hash: name, shingles: shingles(1000 + k)})
		g.desc[name] = "What task " + name + " is about."
	}

	producer := open()
	jobs, err := newAttemptJobs(ctx, g, producer)
	require.NoError(t, err)
	bodies := map[int]queue.Job{}
	for _, i := range []int{0, 1, 2, 3, 50, 401, 2*seen + 1} { // seeing 0, 0, 1, 1, 25, 200 and 400 tasks
		j, err := jobs.job(ctx, i)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(j.Body), 192, "attempt %d: %s", i, j.Body)
		bodies[i] = j
	}
	again, err := newAttemptJobs(ctx, g, producer)
	require.NoError(t, err)
	j, err := again.job(ctx, 2*seen+1) // the chain of 400 built at once
	require.NoError(t, err)
	assert.Equal(t, bodies[2*seen+1].ID, j.ID)

	blobs := &countingBlobs{Blobs: open()}
	var w workerState
	for _, c := range []struct{ attempt, seen, reads int }{{401, 200, 200}, {2*seen + 1, seen, seen - 200}, {2*seen + 1, seen, 0}} {
		var body attemptJob
		require.NoError(t, json.Unmarshal(bodies[c.attempt].Body, &body))
		before := blobs.gets
		got, err := w.seen(ctx, blobs, body.Seen)
		require.NoError(t, err)
		assert.Equal(t, c.reads, blobs.gets-before, "links read for attempt %d", c.attempt)
		want := g.snapshot(c.attempt - g.opts.Jobs)
		require.Len(t, got.entries, c.seen)
		for k, e := range want {
			require.Equal(t, *e, *got.entries[k])
			require.Equal(t, g.desc[e.name], got.desc[e.name])
		}
		require.Len(t, got.desc, c.seen)
	}
	run, err := w.run(ctx, blobs, jobs.run)
	require.NoError(t, err)
	assert.Equal(t, g.system, run.spec.System)
	assert.Len(t, run.corpus, 200)
}

// A worker refuses a chain whose links do not follow each other.
func TestSeenChainChecked(t *testing.T) {
	t.Parallel()
	blobs := mapBlobs{}
	put := func(l seenLink) string {
		data, err := json.Marshal(l)
		require.NoError(t, err)
		ref := queue.Ref(data)
		blobs[ref] = data
		return ref
	}
	first := put(seenLink{N: 1, Entry: entryJSON{Name: "a"}})
	for _, l := range []seenLink{
		{Prev: first, N: 3, Entry: entryJSON{Name: "b"}}, // skips one
		{N: 2, Entry: entryJSON{Name: "b"}},              // no link before the second
		{Prev: first, N: 1, Entry: entryJSON{Name: "b"}}, // a first after a first
	} {
		var w workerState
		_, err := w.seen(context.Background(), blobs, put(l))
		assert.ErrorContains(t, err, "does not follow", "%+v", l)
	}
}

type mapBlobs map[string][]byte

func (m mapBlobs) Get(_ context.Context, ref string) ([]byte, error) {
	data, ok := m[ref]
	if !ok {
		return nil, queue.ErrBlobNotFound
	}
	return data, nil
}

func TestShinglesPacked(t *testing.T) {
	t.Parallel()
	sh := Shingles("the quick brown fox jumps over the lazy dog")
	got, err := unpackShingles(packShingles(sh))
	require.NoError(t, err)
	assert.Equal(t, sh, got)
	got, err = unpackShingles(packShingles(nil))
	require.NoError(t, err)
	assert.Nil(t, got)
	_, err = unpackShingles([]byte{1, 2, 3})
	assert.Error(t, err)
}

// A worker's answer cannot make the producer write outside its folder.
func TestAnswerNamesAFile(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"../escape", "a/b", "", ".hidden"} {
		data, err := json.Marshal(attemptAnswer{Record: Record{Attempt: 2, Status: "accepted", Task: name}})
		require.NoError(t, err)
		_, err = readAttemptAnswer(data, 2)
		assert.ErrorContains(t, err, "no file name", name)
	}
	data, err := json.Marshal(attemptAnswer{Record: Record{Attempt: 2, Status: "accepted", Task: "ok-name"}})
	require.NoError(t, err)
	o, err := readAttemptAnswer(data, 2)
	require.NoError(t, err)
	assert.Equal(t, "ok-name", o.rec.Task)
	_, err = readAttemptAnswer(data, 3)
	assert.ErrorContains(t, err, "answered for attempt 2")
}
