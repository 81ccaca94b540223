package rollout

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPassAtKHandComputed(t *testing.T) {
	t.Parallel()
	// n=5 samples, c=2 passed.
	// pass@1 = 1 - C(3,1)/C(5,1) = 1 - 3/5  = 0.4
	// pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
	// pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10 = 0.9
	// pass@4 = 1 (C(3,4) = 0: every 4 samples hold a passing one)
	assert.InDelta(t, 0.4, PassAtK(5, 2, 1), 1e-12)
	assert.InDelta(t, 0.7, PassAtK(5, 2, 2), 1e-12)
	assert.InDelta(t, 0.9, PassAtK(5, 2, 3), 1e-12)
	assert.Equal(t, 1.0, PassAtK(5, 2, 4))
	// pass^1 = C(2,1)/C(5,1) = 2/5 = 0.4
	// pass^2 = C(2,2)/C(5,2) = 1/10 = 0.1
	// pass^3 = C(2,3)/C(5,3) = 0
	assert.InDelta(t, 0.4, PassHatK(5, 2, 1), 1e-12)
	assert.InDelta(t, 0.1, PassHatK(5, 2, 2), 1e-12)
	assert.Equal(t, 0.0, PassHatK(5, 2, 3))
	// n=10, c=7, k=3: pass@3 = 1 - C(3,3)/C(10,3) = 1 - 1/120; pass^3 = C(7,3)/C(10,3) = 35/120
	assert.InDelta(t, 1-1.0/120, PassAtK(10, 7, 3), 1e-12)
	assert.InDelta(t, 35.0/120, PassHatK(10, 7, 3), 1e-12)
	// edges
	assert.Equal(t, 0.0, PassAtK(3, 0, 3))
	assert.Equal(t, 1.0, PassAtK(3, 3, 3))
	assert.Equal(t, 1.0, PassHatK(3, 3, 3))
	assert.Equal(t, 0.0, PassHatK(3, 0, 1))
	assert.Equal(t, -1.0, PassAtK(2, 1, 3), "k > n is not defined")
	assert.Equal(t, -1.0, PassHatK(2, 1, 0))
	// large n does not overflow
	assert.InDelta(t, 1-math.Pow(0.5, 1), PassAtK(1000, 500, 1), 1e-9)
	assert.False(t, math.IsNaN(PassAtK(2000, 3, 100)))
}

func sample(score float64, passed bool) Sample {
	return Sample{Score: score, Passed: passed, Completion: score, Safety: 1, Robustness: 1}
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	a := &dsl.Task{Name: "a", File: "a.star", Turns: make([]*dsl.Turn, 1), Capabilities: []string{"x"}}
	b := &dsl.Task{Name: "b", File: "b.star", Turns: make([]*dsl.Turn, 2), Capabilities: []string{"y", "x"}}
	c := &dsl.Task{Name: "c", File: "c.star", Turns: make([]*dsl.Turn, 1)}
	failed := Sample{Err: "model down"}
	r := &Result{Samples: 5, Agent: "openai", Tasks: []TaskResult{
		{a, []Sample{sample(1, true), sample(0.5, false), sample(1, true), sample(0, false), sample(0.5, false)}},
		{b, []Sample{sample(1, true), sample(1, true), failed, sample(1, true), sample(1, true)}},
		{c, []Sample{failed, failed, failed, failed, failed}},
	}, Ran: 9, Failed: 6}
	s := Summarize(r)
	require.Equal(t, []int{1, 5}, s.Ks)
	ta, tb, tc := s.Tasks[0], s.Tasks[1], s.Tasks[2]
	assert.Equal(t, 5, ta.Scored)
	assert.Equal(t, 2, ta.Passed)
	assert.InDelta(t, 0.4, ta.PassRate, 1e-12)
	assert.InDelta(t, 0.6, ta.MeanScore, 1e-12)
	assert.InDelta(t, 0.4, ta.PassAt[0], 1e-12)
	assert.Equal(t, 1.0, ta.PassAt[1])
	assert.Equal(t, 0.0, ta.PassHat[1])
	assert.Equal(t, 4, tb.Scored)
	assert.Equal(t, 1, tb.Failed)
	assert.True(t, math.IsNaN(tb.PassAt[1]), "4 scored samples: pass@5 is not defined")
	assert.Equal(t, 0, tc.Scored)
	assert.True(t, math.IsNaN(tc.MeanScore))

	// means over tasks; c has no scored sample and is left out
	assert.Equal(t, 2, s.Overall.Tasks)
	assert.Equal(t, 9, s.Overall.Episodes)
	assert.InDelta(t, 0.7, s.Overall.PassRate, 1e-12)
	assert.InDelta(t, 0.8, s.Overall.MeanScore, 1e-12)
	assert.InDelta(t, 0.7, s.Overall.PassAt[0], 1e-12)
	assert.Equal(t, 1.0, s.Overall.PassAt[1], "only a has 5 scored samples")
	assert.Equal(t, 0.0, s.Overall.PassHat[1])
	assert.Equal(t, 1, s.SingleTurn.Tasks)
	assert.InDelta(t, 0.6, s.SingleTurn.MeanScore, 1e-12)
	assert.Equal(t, 1, s.MultiTurn.Tasks)
	assert.Equal(t, 1.0, s.MultiTurn.MeanScore)
	require.Len(t, s.ByCapability, 2)
	assert.Equal(t, "x", s.ByCapability[0].Name)
	assert.Equal(t, 2, s.ByCapability[0].Tasks)
	assert.Equal(t, "y", s.ByCapability[1].Name)
	assert.Equal(t, 1.0, s.ByCapability[1].MeanScore)

	j := jsonv.MustEncode(s.JSON())
	assert.Contains(t, j, `"pass@k":{"1":0.4,"5":1.0}`)
	assert.Contains(t, j, `"pass^k":{"1":1.0,"5":null}`)
	var text bytes.Buffer
	s.WriteText(&text)
	assert.Contains(t, text.String(), "pass^5")
	assert.Contains(t, text.String(), "(1 failed)")
	assert.Contains(t, text.String(), "9 episodes run, 0 resumed, 6 failed")
}

const task1 = `
def _setup(ws):
    ws.fs.write("/a.txt", "a")

def _verify(ws, ep):
    check(ws.fs.exists("/b.txt"), "b is written")

def _solve(agent):
    agent.call("fs_write", path = "/b.txt", content = "b")
    agent.reply("ok")

task(name = "t1", prompt = "Write /b.txt.", tools = ["fs"], setup = _setup, verify = _verify, solution = _solve)
`

func loadTasks(t *testing.T, src string) []Task {
	t.Helper()
	m := fstest.MapFS{"t.star": &fstest.MapFile{Data: []byte(src)}}
	c := dsl.NewCorpus(m, ".", "c")
	f := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	sources, err := trace.Sources(c, "t.star")
	require.NoError(t, err)
	var out []Task
	for _, tk := range f.Tasks {
		out = append(out, Task{Task: tk, Source: f.Source, Sources: sources})
	}
	return out
}

// agentFunc is an agent made of a function.
type agentFunc func(ctx context.Context, tc *episode.TurnContext) (string, error)

func (agentFunc) Name() string { return "openai" }
func (f agentFunc) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	return f(ctx, tc)
}

func opts(out string, a episode.Agent) Options {
	return Options{Out: out, Samples: 2, Jobs: 2, Agent: a.Name(),
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) { return a, "be helpful", nil }}
}

// A model whose requests fail leaves .partial traces and failed samples; an agent that errs in
// another way is an outcome of the episode, traced and scored.
func TestRunFailures(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	out := t.TempDir()
	down := agentFunc(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		return "", &modelagent.RequestError{Model: "m", URL: "http://x/v1", Status: "503", Code: 503, Message: "overloaded", Attempts: 5}
	})
	res, err := Run(context.Background(), tasks, opts(out, down))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Failed)
	assert.Equal(t, 0, res.Ran)
	assert.Contains(t, res.Tasks[0].Samples[0].Err, "overloaded")
	assert.FileExists(t, filepath.Join(out, "t1", "0.jsonl.partial"))
	assert.NoFileExists(t, filepath.Join(out, "t1", "0.jsonl"))

	wrong := agentFunc(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		return "", errors.New("the model answered nonsense")
	})
	res, err = Run(context.Background(), tasks, opts(out, wrong))
	require.NoError(t, err)
	assert.Equal(t, 0, res.Failed)
	assert.Equal(t, 2, res.Ran)
	assert.FileExists(t, filepath.Join(out, "t1", "1.jsonl"))
	s := res.Tasks[0].Samples[1]
	assert.True(t, s.OK())
	assert.False(t, s.Passed)
	b, err := os.ReadFile(s.Path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"system":"be helpful"`)
}

func TestRunInterruptedAndChecks(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, tasks, Options{Out: out, Samples: 3, Agent: "oracle",
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil }})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Interrupted)
	assert.Equal(t, 0, res.Failed, "interrupted samples are not failed ones")

	// an unreadable trace runs again, with a warning
	require.NoError(t, os.MkdirAll(filepath.Join(out, "t1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "t1", "0.jsonl"), []byte("garbage\n"), 0o644))
	var warnings []string
	o := Options{Out: out, Samples: 3, Agent: "oracle", Warn: func(s string) { warnings = append(warnings, s) },
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil }}
	res, err = Run(context.Background(), tasks, o)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Ran)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "cannot be read")
	assert.True(t, res.Tasks[0].Samples[0].Passed)

	// resumed: another agent's traces are refused
	o.Agent = "noop"
	o.NewAgent = func(*episode.Prepared) (episode.Agent, string, error) { return episode.Noop{}, "", nil }
	_, err = Run(context.Background(), tasks, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "agent")

	// two tasks of one name
	_, err = Run(context.Background(), append(tasks, tasks[0]), Options{Out: t.TempDir(), Samples: 1, Agent: "oracle", NewAgent: o.NewAgent})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "two tasks are named t1"), err.Error())
}

// Ctrl-C in the middle of a rollout (the context is cancelled in-process): the sample that was
// running and the ones not yet started are interrupted, not failed; the finished one keeps its
// trace; the running one's .partial ends with the code interrupted; and the next run reruns
// exactly the interrupted samples.
func TestInterruptedRolloutResumes(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	solve := agentFunc(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		_, err := tc.Call("", "fs_write", jsonv.NewObject("path", "/b.txt", "content", "b"))
		return "ok", err
	})
	interrupt := agentFunc(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		if _, err := tc.Call("", "fs_list", jsonv.NewObject("path", "/")); err != nil {
			return "", err
		}
		cancel() // Ctrl-C while the model is thinking
		return "", ctx.Err()
	})
	made := 0
	o := Options{Out: out, Samples: 3, Jobs: 1, Agent: "openai",
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) {
			made++
			if made == 2 {
				return interrupt, "", nil
			}
			return solve, "", nil
		}}
	res, err := Run(ctx, tasks, o)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Ran)
	assert.Equal(t, 2, res.Interrupted)
	assert.Equal(t, 0, res.Failed, "interrupted samples are not failed ones")
	samples := res.Tasks[0].Samples
	assert.True(t, samples[0].Passed)
	for _, s := range samples[1:] {
		assert.True(t, s.Interrupted, "sample %d", s.Index)
		assert.Equal(t, "interrupted", s.Code, "sample %d", s.Index)
	}
	assert.FileExists(t, filepath.Join(out, "t1", "0.jsonl"))
	assert.NoFileExists(t, filepath.Join(out, "t1", "1.jsonl"))
	f, err := os.Open(filepath.Join(out, "t1", "1.jsonl.partial"))
	require.NoError(t, err)
	events, err := trace.Read(f)
	f.Close()
	require.NoError(t, err, "the interrupted trace is complete enough to read")
	end := events[len(events)-1].Body.(*trace.End)
	require.NotNil(t, end.Error)
	assert.Equal(t, "interrupted", end.Error.Code)
	assert.NoFileExists(t, filepath.Join(out, "t1", "2.jsonl.partial"), "sample 2 never started")

	sum := Summarize(res)
	assert.Equal(t, 2, sum.Interrupted)
	assert.Equal(t, 0, sum.Failed)
	assert.Equal(t, 2, sum.Tasks[0].Interrupted)
	assert.Equal(t, 1, sum.Tasks[0].Scored, "interrupted samples are left out of the scores")
	j := jsonv.MustEncode(sum.JSON())
	assert.Contains(t, j, `"failed":0,"failed_by_code":{},"interrupted":2`)
	var text bytes.Buffer
	sum.WriteText(&text)
	assert.Contains(t, text.String(), "(2 interrupted)")
	assert.Contains(t, text.String(), "1 episode run, 0 resumed, 0 failed, 2 interrupted")

	// resumed: the finished sample is read back, the interrupted ones run again
	made = 0
	o.NewAgent = func(*episode.Prepared) (episode.Agent, string, error) { made++; return solve, "", nil }
	res, err = Run(context.Background(), tasks, o)
	require.NoError(t, err)
	assert.Equal(t, 1, res.Resumed)
	assert.Equal(t, 2, res.Ran)
	assert.Equal(t, 0, res.Interrupted)
	assert.Equal(t, 2, made, "only the interrupted samples run again")
	for _, s := range res.Tasks[0].Samples {
		assert.True(t, s.Passed, "sample %d", s.Index)
	}
	assert.FileExists(t, filepath.Join(out, "t1", "1.jsonl"))
	assert.NoFileExists(t, filepath.Join(out, "t1", "1.jsonl.partial"))
}

// A model whose endpoint is down fails its samples with the code model-error, counted by code in
// the summary.
func TestModelErrorInSummary(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	down := agentFunc(func(ctx context.Context, tc *episode.TurnContext) (string, error) {
		return "", &modelagent.RequestError{Model: "m", URL: "http://127.0.0.1:1/v1", Message: "connection refused", Attempts: 1}
	})
	res, err := Run(context.Background(), tasks, opts(t.TempDir(), down))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Failed)
	assert.Equal(t, "model-error", res.Tasks[0].Samples[0].Code)
	assert.False(t, res.Tasks[0].Samples[0].Interrupted)
	sum := Summarize(res)
	assert.Equal(t, map[string]int{"model-error": 2}, sum.FailedBy)
	assert.Contains(t, jsonv.MustEncode(sum.JSON()), `"failed_by_code":{"model-error":2}`)
	var text bytes.Buffer
	sum.WriteText(&text)
	assert.Contains(t, text.String(), "2 failed (2 model-error)")
}

// A folder where a trace belongs is refused before anything runs.
func TestFolderWhereTraceBelongs(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, task1)
	out := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(out, "t1", "1.jsonl"), 0o755))
	made := 0
	o := opts(out, episode.Oracle{})
	o.Agent = "oracle"
	o.NewAgent = func(*episode.Prepared) (episode.Agent, string, error) { made++; return episode.Oracle{}, "", nil }
	_, err := Run(context.Background(), tasks, o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a folder")
	assert.Equal(t, 0, made, "nothing ran")
	assert.NoFileExists(t, filepath.Join(out, "t1", "0.jsonl"))
}

// draw sets up a workspace from ws.rand: its start state depends on the seed.
const drawTask = `
def _setup(ws):
    ws.fs.write("/n.txt", str(ws.rand.int(0, 1000000)))

def _verify(ws, ep):
    check(ws.fs.exists("/b.txt"), "b is written")

def _solve(agent):
    agent.call("fs_write", path = "/b.txt", content = "b")
    agent.reply("ok")

task(name = "draw", prompt = "Write /b.txt.", tools = ["fs"], setup = _setup, verify = _verify, solution = _solve)
`

// The samples of a task whose setup draws from ws.rand start from one state, with one seed, by
// default; with VarySetup sample i runs with Seed+i and the samples start from different
// states. The manifest records the choice, and resuming with the other one is refused, as is a
// trace that records another seed than its sample's.
func TestSetupSeed(t *testing.T) {
	t.Parallel()
	tasks := loadTasks(t, drawTask)
	oracle := func(*episode.Prepared) (episode.Agent, string, error) { return episode.Oracle{}, "", nil }
	run := func(out string, vary bool) (*Result, error) {
		return Run(context.Background(), tasks, Options{Out: out, Samples: 4, Jobs: 2, Seed: 11, VarySetup: vary, Agent: "oracle", NewAgent: oracle})
	}

	same := t.TempDir()
	res, err := run(same, false)
	require.NoError(t, err)
	assert.False(t, res.VarySetup)
	first := startOf(t, TracePath(same, "draw", 0))
	assert.EqualValues(t, 11, first.Seed)
	for i, s := range res.Tasks[0].Samples {
		assert.EqualValues(t, 11, s.Seed, "sample %d", i)
		st := startOf(t, s.Path)
		assert.EqualValues(t, 11, st.Seed, "sample %d records the seed it ran with", i)
		assert.Equal(t, first.State, st.State, "sample %d starts from sample 0's state", i)
		assert.Equal(t, first.Rand, st.Rand, "sample %d has sample 0's random source", i)
	}
	manifest, err := os.ReadFile(filepath.Join(same, ManifestFile))
	require.NoError(t, err)
	assert.Contains(t, string(manifest), `"vary_setup": false`)
	assert.Contains(t, jsonv.MustEncode(Summarize(res).JSON()), `"seed":11,"vary_setup":false`)

	vary := t.TempDir()
	res, err = run(vary, true)
	require.NoError(t, err)
	assert.True(t, res.VarySetup)
	states := map[string]bool{}
	for i, s := range res.Tasks[0].Samples {
		assert.EqualValues(t, 11+i, s.Seed, "sample %d", i)
		st := startOf(t, s.Path)
		assert.EqualValues(t, 11+i, st.Seed)
		states[st.State] = true
	}
	assert.Len(t, states, 4, "four set-ups, four start states")
	var text bytes.Buffer
	Summarize(res).WriteText(&text)
	assert.Contains(t, text.String(), "sample i of a task ran with seed 11+i (--vary-setup)")

	// resuming with the other setting is refused, both ways, before anything runs
	_, err = run(same, true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was made without --vary-setup")
	_, err = run(vary, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was made with --vary-setup")

	// a manifest written before vary_setup existed is of a rollout that gave sample i seed+i
	old := jsonv.NewObject("format", ManifestFormat, "seed", int64(11))
	enc, err := jsonv.Indent(old)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(vary, ManifestFile), append(enc, '\n'), 0o644))
	_, err = run(vary, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was made by an older coworkenv, which ran sample i with seed+i; add --vary-setup to resume")
	res, err = run(vary, true)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Resumed)

	// without the manifest, a trace still has to record its sample's seed
	require.NoError(t, os.Remove(filepath.Join(vary, ManifestFile)))
	_, err = run(vary, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was run with seed 12, not 11")
}

// simTask's user answers one question; the oracle asks it.
var simTask = tasktest.AskingForColour

// The rounds a simulated user answered are counted per sample (run now or read back from its
// trace), and the summary gives their mean for the tasks that have one; a task with a simulated
// user is multi-turn.
func TestUserRoundsInSummary(t *testing.T) {
	t.Parallel()
	tasks := append(loadTasks(t, simTask), loadTasks(t, task1)...)
	out := t.TempDir()
	o := opts(out, episode.Oracle{})
	o.Agent = "oracle"
	res, err := Run(context.Background(), tasks, o)
	require.NoError(t, err)
	for _, smp := range res.Tasks[0].Samples {
		assert.Equal(t, 1, smp.UserRounds)
	}
	again, err := Run(context.Background(), tasks, o)
	require.NoError(t, err)
	assert.Equal(t, 4, again.Resumed, "every sample is read back")
	for _, smp := range again.Tasks[0].Samples {
		assert.True(t, smp.Resumed)
		assert.Equal(t, 1, smp.UserRounds, "read back from the trace")
	}
	s := Summarize(again)
	js := s.JSON()
	tasksJSON, _ := js.Get("tasks")
	first := tasksJSON.([]jsonv.Value)[0].(*jsonv.Object)
	rounds, ok := first.Get("mean_user_rounds")
	require.True(t, ok)
	assert.Equal(t, 1.0, rounds)
	second := tasksJSON.([]jsonv.Value)[1].(*jsonv.Object)
	_, has := second.Get("mean_user_rounds")
	assert.False(t, has, "a task without a simulated user has no rounds")
	assert.Equal(t, 1, s.MultiTurn.Tasks, "the simulated user's task is multi-turn")
}
