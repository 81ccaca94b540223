package main

// Queued rollouts across processes: an embedded server started by the test, `coworkenv worker`
// and `coworkenv rollout --queue URL` as processes of their own (the test binary re-executed as
// the command, see mainEnv), killed with SIGKILL at moments the fake model fixes: a request it
// holds until the test has killed the process that sent it.

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// processGuard bounds every wait of these tests; it only turns a hang into a failure.
const processGuard = 3 * time.Minute

// shortAckWait is the ack wait of the queues whose workers the tests kill: a job held by a killed
// worker goes to another this long after the worker last said it was working on it.
const shortAckWait = time.Second

// process is the command running as a process of its own.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr string // files
	done           chan struct{}
}

// startProcess starts `coworkenv ARGS` with the key the fake model wants; it is killed when the
// test ends, if it still runs.
func startProcess(t *testing.T, args ...string) *process {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	p := &process{stdout: filepath.Join(dir, "stdout"), stderr: filepath.Join(dir, "stderr"), done: make(chan struct{})}
	out, err := os.Create(p.stdout)
	require.NoError(t, err)
	defer out.Close()
	errf, err := os.Create(p.stderr)
	require.NoError(t, err)
	defer errf.Close()
	p.cmd = exec.Command(exe, args...)
	p.cmd.Env = append(os.Environ(), mainEnv+"=1", "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=")
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait waits for the process to end and returns its exit status, stdout and stderr.
func (p *process) wait(t *testing.T) (int, string, string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(processGuard):
		errs, _ := os.ReadFile(p.stderr)
		t.Fatalf("coworkenv %v did not end; its stderr:\n%s", p.cmd.Args[1:], errs)
	}
	out, err := os.ReadFile(p.stdout)
	require.NoError(t, err)
	errs, err := os.ReadFile(p.stderr)
	require.NoError(t, err)
	return p.cmd.ProcessState.ExitCode(), string(out), string(errs)
}

// kill ends the process with SIGKILL and waits for it.
func (p *process) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	p.wait(t)
}

// interrupt stops the process as Ctrl-C does and checks that it ends with status 0.
func (p *process) interrupt(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	code, _, errs := p.wait(t)
	require.Equal(t, 0, code, errs)
}

// heldModel is a fake model that answers by a policy, except that the first request of the
// episodes it holds (the n-th episode to start, counting from 1) waits until the test
// releases it, or until the process that sent it is gone.
type heldModel struct {
	srv    *chattest.Server
	mu     sync.Mutex
	starts int // the episodes started: requests of a conversation without an answer yet
	holds  map[int]*modelHold
}

type modelHold struct {
	reached, release chan struct{}
	once             sync.Once
}

func newHeldModel(t *testing.T, policy func(msgs []map[string]any) string, hold ...int) *heldModel {
	t.Helper()
	m := &heldModel{holds: map[int]*modelHold{}}
	for _, n := range hold {
		m.holds[n] = &modelHold{reached: make(chan struct{}), release: make(chan struct{})}
	}
	m.srv = chattest.New(t, func(r *chattest.Request) chattest.Answer {
		body := policy(r.Messages)
		if r.Rounds() > 0 {
			return chattest.Answer{Body: body}
		}
		m.mu.Lock()
		m.starts++
		h := m.holds[m.starts]
		m.mu.Unlock()
		if h == nil {
			return chattest.Answer{Body: body}
		}
		return chattest.Answer{Handler: func(w http.ResponseWriter, req *http.Request) {
			close(h.reached)
			select {
			case <-h.release:
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, body)
			case <-req.Context().Done(): // the process that asked is gone
			}
		}}
	})
	// Release what is still held before the server closes (it waits for its requests).
	t.Cleanup(func() {
		for _, h := range m.holds {
			h.free()
		}
	})
	return m
}

func (h *modelHold) free() { h.once.Do(func() { close(h.release) }) }

// await waits until the n-th episode's first request is held.
func (m *heldModel) await(t *testing.T, n int) {
	t.Helper()
	select {
	case <-m.holds[n].reached:
	case <-time.After(processGuard):
		t.Fatalf("episode %d never asked the model", n)
	}
}

// release lets the n-th episode's held request be answered.
func (m *heldModel) release(n int) { m.holds[n].free() }

// episodes is the number of episodes that started.
func (m *heldModel) episodes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.starts
}

// rolloutQueue opens the rollout queue on the server at url (creating it with opts); the
// processes the tests start open it with no option, so they keep its settings.
func rolloutQueue(t *testing.T, url string, opts ...queue.Option) *queue.Queue {
	t.Helper()
	q, err := queue.Open(t.Context(), url, rollout.QueueName, opts...)
	require.NoError(t, err)
	t.Cleanup(q.Close)
	return q
}

// queueResults reads the first n results of q by job ID.
func queueResults(t *testing.T, q *queue.Queue, n int) map[string]queue.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), processGuard)
	defer cancel()
	got := map[string]queue.Result{}
	for r, err := range q.Results(ctx) {
		require.NoError(t, err)
		require.NotContains(t, got, r.JobID)
		got[r.JobID] = r
		if len(got) == n {
			break
		}
	}
	return got
}

// jobsPublished is the number of jobs the rollout queue's stream has stored since it was made
// (duplicates dropped).
func jobsPublished(t *testing.T, url string) uint64 {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(t.Context(), "JOBS_"+rollout.QueueName)
	require.NoError(t, err)
	return s.CachedInfo().State.LastSeq
}

// resultsReaders watches the rollout queue's results stream from now on: the function it returns
// waits until a reader of the results starts (a producer does once it has published its jobs).
// It listens to the server's advisory of a consumer created on the stream.
func resultsReaders(t *testing.T, url string) func(t *testing.T) {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.CREATED.RESULTS_" + rollout.QueueName + ".>")
	require.NoError(t, err)
	require.NoError(t, nc.Flush()) // the server has the subscription
	return func(t *testing.T) {
		t.Helper()
		_, err := sub.NextMsg(processGuard)
		require.NoError(t, err, "no reader of the results started")
	}
}

// localRollout runs args (a rollout without --out) here, into a new folder, and returns its
// folder and summary.
func localRollout(t *testing.T, args []string) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "local")
	code, stdout, errs := cli(t, append(args, "--out", out)...)
	require.Equal(t, 0, code, errs)
	return out, stdout
}

// A worker process killed (SIGKILL) mid-job loses no job and duplicates none: its job goes to
// another worker after the ack wait, and every sample ends with one trace, the same bytes as a
// local rollout's, and the same summary.
func TestQueueWorkerKilledMidJob(t *testing.T) {
	modelEnv(t)
	url := embeddedServer(t)
	q := rolloutQueue(t, url, queue.WithAckWait(shortAckWait))
	m := newHeldModel(t, copyNotePolicy, 1)
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	args := []string{"rollout", corpus, "--model", "fake-model", "--base-url", m.srv.BaseURL(), "--samples", "3", "--json"}
	out := filepath.Join(t.TempDir(), "queued")

	first := startProcess(t, "worker", "--queue", url, "--jobs", "1")
	producer := startProcess(t, append(args, "--out", out, "--queue", url)...)
	m.await(t, 1)
	first.kill(t) // mid-job: its episode waits for the model
	second := startProcess(t, "worker", "--queue", url, "--jobs", "2")
	code, summary, errs := producer.wait(t)
	require.Equal(t, 0, code, errs)
	second.interrupt(t)

	results := queueResults(t, q, 3)
	require.Len(t, results, 3)
	redelivered := 0
	for _, r := range results {
		require.True(t, r.OK, r.Error)
		if r.Deliveries > 1 {
			redelivered++
		}
	}
	assert.GreaterOrEqual(t, redelivered, 1, "the killed worker's job was delivered again")
	assert.GreaterOrEqual(t, m.episodes(), 4, "the killed worker's episode ran again")
	s, err := q.Status(t.Context())
	require.NoError(t, err)
	assert.Equal(t, queue.Status{Done: 3}, s)

	local, localSummary := localRollout(t, args)
	assert.Equal(t, dirContents(t, local), dirContents(t, out), "one trace per sample, as a local rollout writes it")
	want, got := rolloutJSON(t, localSummary), rolloutJSON(t, summary)
	delete(want, "out")
	delete(got, "out")
	assert.Equal(t, want, got, "the summary is a local rollout's")
}

// A producer killed (SIGKILL) mid-run and started again resumes: it takes the result of the job
// finished while it was away from the server, publishes the two others again (dropped as
// duplicates: one is running, one queued) and waits for their results; no episode runs twice. A
// third run finds every trace and runs nothing.
func TestQueueProducerKilledAndRestarted(t *testing.T) {
	modelEnv(t)
	url := embeddedServer(t)
	m := newHeldModel(t, copyNotePolicy, 1, 2)
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	args := []string{"rollout", corpus, "--model", "fake-model", "--base-url", m.srv.BaseURL(), "--samples", "3", "--json"}
	out := filepath.Join(t.TempDir(), "queued")
	queued := append(args, "--out", out, "--queue", url)

	worker := startProcess(t, "worker", "--queue", url, "--jobs", "1") // one episode at a time
	first := startProcess(t, queued...)
	m.await(t, 1)
	first.kill(t) // no result has come in: it wrote no trace
	m.release(1)
	m.await(t, 2) // the worker settled the first job before taking the second
	reading := resultsReaders(t, url)
	again := startProcess(t, queued...)
	reading(t) // it has published its jobs, and reads the results
	m.release(2)
	code, summary, errs := again.wait(t)
	require.Equal(t, 0, code, errs)
	episodes := rolloutJSON(t, summary)["episodes"].(map[string]any)
	assert.EqualValues(t, 3, episodes["run"])
	assert.EqualValues(t, 0, episodes["resumed"])
	assert.Equal(t, 3, m.episodes(), "no episode ran twice")
	assert.EqualValues(t, 3, jobsPublished(t, url), "every sample was published once")

	code, summary, errs = cli(t, queued...)
	require.Equal(t, 0, code, errs)
	episodes = rolloutJSON(t, summary)["episodes"].(map[string]any)
	assert.EqualValues(t, 0, episodes["run"])
	assert.EqualValues(t, 3, episodes["resumed"])
	assert.Equal(t, 3, m.episodes())
	worker.interrupt(t)

	local, _ := localRollout(t, args)
	assert.Equal(t, dirContents(t, local), dirContents(t, out))
}

// A poison task, one that takes its worker's process past --memory-limit every time, ends failed
// after the queue's max deliver, with the diagnostic; the other jobs complete.
func TestQueuePoisonTask(t *testing.T) {
	modelEnv(t)
	url := embeddedServer(t)
	q := rolloutQueue(t, url, queue.WithMaxDeliver(2))
	m := newHeldModel(t, func(msgs []map[string]any) string {
		if len(msgs) > 1 && msgs[1]["content"] == "Which is our first order?" {
			return ordersPolicy(msgs)
		}
		return copyNotePolicy(msgs)
	})
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask, "orders.star": hostile(t, "orders.star")})
	out := filepath.Join(t.TempDir(), "queued")

	worker := startProcess(t, append([]string{"worker", "--queue", url, "--jobs", "2"}, isolatedArgs...)...)
	producer := startProcess(t, "rollout", corpus, "--model", "fake-model", "--base-url", m.srv.BaseURL(),
		"--samples", "2", "--json", "--out", out, "--queue", url)
	code, summary, errs := producer.wait(t)
	require.Equal(t, 1, code, errs)
	worker.interrupt(t)
	assert.Contains(t, errs, "memory-limit")
	episodes := rolloutJSON(t, summary)["episodes"].(map[string]any)
	assert.EqualValues(t, 2, episodes["failed"])
	assert.EqualValues(t, 2, rolloutJSON(t, summary)["overall"].(map[string]any)["passed"])
	files := dirContents(t, out)
	assert.Contains(t, files, "copy-note/0.jsonl")
	assert.Contains(t, files, "copy-note/1.jsonl")
	assert.NotContains(t, files, "orders-first/0.jsonl")

	failed := 0
	for _, r := range queueResults(t, q, 4) {
		if !r.OK {
			failed++
			assert.Equal(t, 2, r.Deliveries)
			assert.Contains(t, r.Error, "memory-limit")
		}
	}
	assert.Equal(t, 2, failed)
	assert.Equal(t, 2+2*2, m.episodes(), "each poison job ran twice, each other job once")
}

// A job whose every delivery is lost with its worker (each killed mid-job) ends failed with a
// reason that says so, without running again, and the producer finishes.
func TestQueueJobLostWithItsWorkers(t *testing.T) {
	modelEnv(t)
	url := embeddedServer(t)
	q := rolloutQueue(t, url, queue.WithAckWait(shortAckWait), queue.WithMaxDeliver(2))
	m := newHeldModel(t, copyNotePolicy, 1, 2)
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	out := filepath.Join(t.TempDir(), "queued")

	producer := startProcess(t, "rollout", corpus, "--model", "fake-model", "--base-url", m.srv.BaseURL(), "--json",
		"--out", out, "--queue", url)
	for n := 1; n <= 2; n++ {
		w := startProcess(t, "worker", "--queue", url, "--jobs", "1")
		m.await(t, n)
		w.kill(t)
	}
	last := startProcess(t, "worker", "--queue", url, "--jobs", "1")
	code, summary, errs := producer.wait(t)
	require.Equal(t, 1, code, errs)
	last.interrupt(t)
	assert.Contains(t, errs, "lost: the job was delivered 2 times")
	assert.EqualValues(t, 1, rolloutJSON(t, summary)["episodes"].(map[string]any)["failed"])
	assert.Equal(t, 2, m.episodes(), "a lost job does not run past the max deliver")
	s, err := q.Status(t.Context())
	require.NoError(t, err)
	assert.Equal(t, queue.Status{Failed: 1}, s)
}
