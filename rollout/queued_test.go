package rollout

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
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
	t.Helper()
	c := dsl.NewCorpus(fstest.MapFS{
		"a.star":        {Data: []byte(task1)},
		"b.star":        {Data: []byte(task2)},
		"lib/text.star": {Data: []byte("TEXT = \"hello\"\n")},
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

// queueFixture is an embedded server, a queue on it and in-process workers; every piece is
// stopped when the test ends.
type queueFixture struct {
	q    *queue.Queue
	runs atomic.Int64 // jobs the workers' handler ran
	stop func()       // stops the workers and waits for them
}

func startQueue(t *testing.T, pool *isolate.Pool, workers int) *queueFixture {
	t.Helper()
	url, stopServer, err := queue.Embedded(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(stopServer)
	q, err := queue.Open(context.Background(), url, QueueName)
	require.NoError(t, err)
	t.Cleanup(q.Close)
	fx := &queueFixture{q: q}
	handler := Handler(pool, func(string) string { return "" })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, q.Work(ctx, func(ctx context.Context, job queue.Job) ([]byte, error) {
				fx.runs.Add(1)
				return handler(ctx, job)
			}))
		}()
	}
	var once sync.Once
	fx.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(fx.stop)
	return fx
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
	queued, err := RunQueued(context.Background(), tasks, o, fx.q)
	require.NoError(t, err)
	assert.Equal(t, 4, queued.Ran)
	assert.Equal(t, 0, queued.Failed)
	require.Len(t, progress, 4)
	assert.Equal(t, Progress{Done: 4, Total: 4, Passed: 4}, progress[3])

	for _, name := range []string{"t1", "t2"} {
		for i := range 2 {
			want, err := os.ReadFile(TracePath(localOut, name, i))
			require.NoError(t, err)
			got, err := os.ReadFile(TracePath(queuedOut, name, i))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "%s sample %d", name, i)
			assert.NoFileExists(t, TracePath(queuedOut, name, i)+".partial")
		}
	}
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
	again, err := RunQueued(context.Background(), tasks, oracleOptions(queuedOut, nil), fx.q)
	require.NoError(t, err)
	assert.Equal(t, 4, again.Resumed)
	assert.Equal(t, int64(4), fx.runs.Load())
}

// Publishing a rollout's jobs again does not run them again: with the traces gone and no worker
// left, a second queued rollout gets its jobs dropped as duplicates and writes the same traces
// from the results already on the queue.
func TestQueuedRolloutPublishedTwice(t *testing.T) {
	pool, err := isolate.NewPool(isolate.Options{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	tasks := isolatedTasks(t)
	fx := startQueue(t, pool, 2)
	out := t.TempDir()
	first, err := RunQueued(context.Background(), tasks, oracleOptions(out, nil), fx.q)
	require.NoError(t, err)
	require.Equal(t, 4, first.Ran)
	fx.stop()
	require.Equal(t, int64(4), fx.runs.Load())

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
	second, err := RunQueued(context.Background(), tasks, oracleOptions(out, nil), fx.q)
	require.NoError(t, err)
	assert.Equal(t, 4, second.Ran)
	for p, want := range traces {
		got, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), p)
	}
	st, err := fx.q.Status(context.Background())
	require.NoError(t, err)
	assert.Equal(t, queue.Status{Done: 4}, st, "no job was queued again")
	assert.Equal(t, int64(4), fx.runs.Load())
}

// A job whose episode cannot start fails with the reason, and its sample is failed without a
// trace.
func TestQueuedRolloutFailedJob(t *testing.T) {
	pool, err := isolate.NewPool(isolate.Options{Workers: 1})
	require.NoError(t, err)
	t.Cleanup(func() { pool.Close() })
	tasks := isolatedTasks(t)[:1]
	tasks[0].Isolated.Task = "nope" // the worker finds no such task in the file
	fx := startQueue(t, pool, 1)
	out := t.TempDir()
	o := oracleOptions(out, nil)
	o.Samples = 1
	res, err := RunQueued(context.Background(), tasks, o, fx.q)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Failed)
	s := res.Tasks[0].Samples[0]
	assert.Contains(t, s.Err, "nope")
	assert.NoFileExists(t, s.Path)
	assert.Equal(t, int64(queue.DefaultMaxDeliver), fx.runs.Load(), "delivered until max deliver")
}
