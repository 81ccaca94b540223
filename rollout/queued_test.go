package rollout

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/queuetest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain lets the pools of these tests re-execute the test binary as their workers.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == isolate.WorkerCommand {
		os.Exit(isolate.WorkerMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// t2 loads its content from a helper, so its workers need more than the task file.
const task2 = `
load("//lib/text.star", "TEXT")

def _setup(ws):
    ws.fs.write("/a.txt", ws.rand.choice(["x", "y", "z"]))

def _verify(ws, ep):
    check(ws.fs.read("/c.txt") == TEXT, "c holds the text")

def _solve(agent):
    agent.call("fs_write", path = "/c.txt", content = TEXT)
    agent.reply("done")

task(name = "t2", prompt = "Write the text to /c.txt.", tools = ["fs"], setup = _setup, verify = _verify, solution = _solve)
`

// isolatedTasks are two tasks of two files, each with the files its workers need.
func isolatedTasks(t *testing.T) []Task {
	return isolatedCorpus(t, "hello")
}

// isolatedCorpus are the tasks of isolatedTasks, with the text t2 writes.
func isolatedCorpus(t *testing.T, text string) []Task {
	t.Helper()
	c := dsl.NewCorpus(fstest.MapFS{
		"a.star":        {Data: []byte(task1)},
		"b.star":        {Data: []byte(task2)},
		"lib/text.star": {Data: []byte(fmt.Sprintf("TEXT = %q\n", text))},
	}, ".", "c")
	support, err := isolate.Support(c)
	require.NoError(t, err)
	var out []Task
	for _, rel := range []string{"a.star", "b.star"} {
		f := c.LoadFile(context.Background(), rel)
		require.Empty(t, f.Diags)
		files, err := isolate.FilesFor(c, support, rel)
		require.NoError(t, err)
		for _, tk := range f.Tasks {
			out = append(out, Task{Task: tk, Source: f.Source,
				Isolated: &isolate.Episode{Display: c.Display, Files: files, File: rel, Task: tk.Name}})
		}
	}
	return out
}

func oracleOptions(out string, pool *isolate.Pool) Options {
	return Options{Out: out, Samples: 2, Jobs: 3, Seed: 5, Agent: "oracle",
		NewAgent:  func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil },
		Config:    jsonv.NewObject("agent", "oracle"),
		Pool:      pool,
		AgentSpec: isolate.Agent{Name: "oracle"}}
}

// startQueue starts a server with the rollout queue and workers running Handler on pool.
func startQueue(t *testing.T, pool *isolate.Pool, workers int, opts ...queuetest.Options) *queuetest.Workers {
	return queuetest.Start(t, QueueName, workers, Handler(pool, func(string) string { return "" }), opts...)
}

// sameTraces checks that the traces of the samples 0 and 1 of t1 and t2 are the same bytes in
// the folders want and got, with no partial trace left in got; it returns them by task.
func sameTraces(t *testing.T, want, got string) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	for _, name := range []string{"t1", "t2"} {
		for i := range 2 {
			w, err := os.ReadFile(TracePath(want, name, i))
			require.NoError(t, err)
			g, err := os.ReadFile(TracePath(got, name, i))
			require.NoError(t, err)
			assert.Equal(t, string(w), string(g), "%s sample %d", name, i)
			assert.NoFileExists(t, TracePath(got, name, i)+".partial")
			out[name] = append(out[name], g)
		}
	}
	return out
}

func summaryOf(t *testing.T, res *Result) (string, string) {
	t.Helper()
	s := Summarize(res)
	var text bytes.Buffer
	s.WriteText(&text)
	return text.String(), jsonv.MustEncode(s.JSON())
}

// A queued rollout with three workers writes the same traces, byte for byte, and the same
// summary as a local one with the same settings.
func TestQueuedRolloutMatchesLocal(t *testing.T) {
	t.Parallel()
	pool, err := isolate.NewPool(isolate.Options{Workers: 3})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	tasks := isolatedTasks(t)

	localOut := t.TempDir()
	local, err := Run(context.Background(), tasks, oracleOptions(localOut, pool))
	require.NoError(t, err)
	require.Equal(t, 4, local.Ran)

	fx := startQueue(t, pool, 3)
	queuedOut := t.TempDir()
	var progress []Progress
	o := oracleOptions(queuedOut, nil)
	o.Progress = func(p Progress) { progress = append(progress, p) }
	queued, err := RunQueued(context.Background(), tasks, o, fx.Q)
	require.NoError(t, err)
	assert.Equal(t, 4, queued.Ran)
	assert.Equal(t, 0, queued.Failed)
	require.Len(t, progress, 4)
	assert.Equal(t, Progress{Done: 4, Total: 4, Passed: 4}, progress[3])

	sameTraces(t, localOut, queuedOut)
	wantManifest, err := os.ReadFile(filepath.Join(localOut, ManifestFile))
	require.NoError(t, err)
	gotManifest, err := os.ReadFile(filepath.Join(queuedOut, ManifestFile))
	require.NoError(t, err)
	assert.Equal(t, string(wantManifest), string(gotManifest))
	wantText, wantJSON := summaryOf(t, local)
	gotText, gotJSON := summaryOf(t, queued)
	assert.Equal(t, wantText, gotText)
	assert.Equal(t, wantJSON, gotJSON)

	// A queued rollout into the same folder resumes every sample and publishes nothing.
	again, err := RunQueued(context.Background(), tasks, oracleOptions(queuedOut, nil), fx.Q)
	require.NoError(t, err)
	assert.Equal(t, 4, again.Resumed)
	assert.Equal(t, int64(4), fx.Runs())
}

// Publishing a rollout's jobs again does not run them again: with the traces gone and no worker
// left, a second queued rollout gets its jobs dropped as duplicates and writes the same traces
// from the results already on the queue.
func TestQueuedRolloutPublishedTwice(t *testing.T) {
	t.Parallel()
	pool, err := isolate.NewPool(isolate.Options{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	tasks := isolatedTasks(t)
	fx := startQueue(t, pool, 2)
	out := t.TempDir()
	first, err := RunQueued(context.Background(), tasks, oracleOptions(out, nil), fx.Q)
	require.NoError(t, err)
	require.Equal(t, 4, first.Ran)
	fx.Stop()
	require.Equal(t, int64(4), fx.Runs())

	traces := map[string][]byte{}
	for _, name := range []string{"t1", "t2"} {
		for i := range 2 {
			p := TracePath(out, name, i)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			traces[p] = b
			require.NoError(t, os.Remove(p))
		}
	}
	second, err := RunQueued(context.Background(), tasks, oracleOptions(out, nil), fx.Q)
	require.NoError(t, err)
	assert.Equal(t, 4, second.Ran)
	for p, want := range traces {
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), p)
	}
	st, err := fx.Q.Status(context.Background())
	require.NoError(t, err)
	assert.Equal(t, queue.Status{Done: 4}, st, "no job was queued again")
	assert.Equal(t, int64(4), fx.Runs())
}

// A job whose episode cannot start fails with the reason, and its sample is failed without a
// trace.
func TestQueuedRolloutFailedJob(t *testing.T) {
	t.Parallel()
	pool, err := isolate.NewPool(isolate.Options{Workers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	tasks := isolatedTasks(t)[:1]
	tasks[0].Isolated.Task = "nope" // the worker finds no such task in the file
	fx := startQueue(t, pool, 1)
	out := t.TempDir()
	o := oracleOptions(out, nil)
	o.Samples = 1
	res, err := RunQueued(context.Background(), tasks, o, fx.Q)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Failed)
	s := res.Tasks[0].Samples[0]
	assert.Contains(t, s.Err, "nope")
	assert.NoFileExists(t, s.Path)
	assert.Equal(t, int64(queue.DefaultMaxDeliver), fx.Runs(), "delivered until max deliver")
}

// On a server that takes messages of 64 KiB at most, a task whose files are larger (they go to
// the blob store, and the job carries their refs) and whose trace is larger (the result carries
// its ref) rolls out as it does locally, byte for byte; the job bodies stay small.
func TestQueuedRolloutUnderASmallMaxPayload(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	pool, err := isolate.NewPool(isolate.Options{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	tasks := isolatedCorpus(t, strings.Repeat("a long text to write. ", 4000)) // 88,000 bytes
	size := 0
	for _, data := range tasks[1].Isolated.Files {
		size += len(data)
	}
	require.Greater(t, size, limit)

	localOut := t.TempDir()
	_, err = Run(context.Background(), tasks, oracleOptions(localOut, pool))
	require.NoError(t, err)

	fx := startQueue(t, pool, 2, queuetest.Options{MaxPayload: limit})
	queuedOut := t.TempDir()
	queued, err := RunQueued(context.Background(), tasks, oracleOptions(queuedOut, nil), fx.Q)
	require.NoError(t, err)
	require.Equal(t, 0, queued.Failed, "%+v", queued.Tasks)
	for _, tr := range sameTraces(t, localOut, queuedOut)["t2"] {
		assert.Greater(t, len(tr), limit)
	}
}
