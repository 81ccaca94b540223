package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/require"
)

// The inputs of the tests, made afresh by each test from the task files in testdata/tasks (a
// corpus root shown as "testdata/tasks"): traces of the oracle and of a scripted model, a
// rollout, and the committed testdata/validate.json (validate --json of testdata/tasks and
// testdata/invalid, run in this folder) and testdata/generation/manifest.jsonl.

const corpusShown = "testdata/tasks"

// hostile is text a trace can hold that must show as text: it would end the page's script, run
// a script of its own, or load an image from elsewhere if it were parsed as markup.
const hostile = `</script><script>alert(1)</script><img src=x onerror=alert(1)> <a href="https://evil.example/">x</a>`

type fixture struct {
	dir    string // the test's temporary folder
	corpus *dsl.Corpus
	tasks  map[string]*dsl.Task // by name
	rels   map[string]string    // task name -> file inside the corpus
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	c, err := dsl.OpenDir("testdata/tasks", corpusShown)
	require.NoError(t, err)
	f := &fixture{dir: t.TempDir(), corpus: c, tasks: map[string]*dsl.Task{}, rels: map[string]string{}}
	files, err := c.TaskFiles()
	require.NoError(t, err)
	for _, rel := range files {
		lf := c.LoadFile(context.Background(), rel)
		require.Empty(t, lf.Diags, rel)
		for _, task := range lf.Tasks {
			f.tasks[task.Name] = task
			f.rels[task.Name] = rel
		}
	}
	return f
}

// locate finds the task a trace names in the fixture's corpus.
func (f *fixture) locate(_ context.Context, _ string, start *trace.Start) (*dsl.Task, string, error) {
	task, ok := f.tasks[start.Task]
	if !ok {
		return nil, "", fmt.Errorf("no task %s in %s", start.Task, corpusShown)
	}
	return task, task.File, nil
}

func (f *fixture) options() Options { return Options{Locate: f.locate} }

// start is the start event of an episode of task.
func (f *fixture) start(t testing.TB, p *episode.Prepared, agent string) trace.Start {
	src, err := f.corpus.ReadSource(f.rels[p.Task.Name])
	require.NoError(t, err)
	s := trace.StartOf(p, src, 0, agent)
	s.Sources, err = trace.Sources(f.corpus, f.rels[p.Task.Name])
	require.NoError(t, err)
	return s
}

// run runs task with agent and writes its trace to the fixture's folder; it returns the path.
func (f *fixture) run(t testing.TB, name string, agent episode.Agent, start func(*trace.Start)) string {
	t.Helper()
	task := f.tasks[name]
	require.NotNil(t, task, name)
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	s := f.start(t, p, agent.Name())
	if start != nil {
		start(&s)
	}
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, s)
	r := p.Run(context.Background(), agent, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(r))
	path := filepath.Join(f.dir, name+"."+agent.Name()+".jsonl")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// oracleTrace is the oracle's episode of the two-turn calendar task.
func (f *fixture) oracleTrace(t testing.TB) string {
	return f.run(t, "standup-room-move", episode.Oracle{}, nil)
}

// modelTrace is an episode of a scripted model on the stock task: reasoning, text beside calls,
// an injected fault and its retry, arguments that are not JSON (not run), a tool that does not
// exist (a tool error), token usage, and hostile text in the model's messages, in a result and
// in the state.
func (f *fixture) modelTrace(t testing.TB) string {
	answers := []chattest.Answer{
		{Body: chattest.Completion{Message: withReasoning(chattest.WithCalls("Let me read the note first. "+hostile,
			chattest.Call("c1", "fs_read", `{"path":"/inbox/delivery_0105.txt"}`)), "I should check the delivery note "+hostile)}.String()},
		{Body: chattest.Calls("", chattest.Call("c2", "stock_adjust", `{"sku":"sku-7","delta":24}`))},
		{Body: chattest.Calls("The tool failed once; again.", chattest.Call("c3", "stock_adjust", `{"sku":"sku-7","delta":24}`),
			chattest.Call("c4", "stock_adjust", `{"sku": sku-9}`), chattest.Call("c5", "stock_lookup", `{"sku":"sku-7"}`))},
		{Body: chattest.Calls("", chattest.Call("c6", "fs_write", `{"path":"/inbox/booked.md","content":"booked sku-7 +24 `+strings.ReplaceAll(hostile, `"`, `\"`)+`"}`))},
		{Body: chattest.Say("Booked: sku-7 now counts 36. " + hostile)},
	}
	srv := chattest.New(t, chattest.InOrder(answers...))
	agent, err := modelagent.New(modelagent.Config{Model: "fake-model", BaseURL: srv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	return f.run(t, "stock-delivery-record", agent, func(s *trace.Start) {
		temp := 0.0
		s.System = "You are a careful assistant. " + hostile
		// the endpoint as a fixed text: the fake server's port changes from run to run
		s.Model = &trace.Model{Name: "fake-model", BaseURL: "http://127.0.0.1:8000/v1", Request: jsonv.NewObject("temperature", temp),
			ToolCallFormat: "auto", ReasoningHistory: "drop"}
	})
}

// withReasoning adds reasoning_content to an assistant message's JSON.
func withReasoning(msg, reasoning string) string {
	return strings.TrimSuffix(msg, "}") + `,"reasoning_content":` + chattest.Quote(reasoning) + `}`
}

// scripted is an agent that acts as the oracle, or does nothing, by a fixed plan over the
// episodes it is made for (rollout.Run makes one per episode, in order with one job).
type scripted struct{ episode.Agent }

func (scripted) Name() string { return "scripted" }

// rolloutDir rolls out every fixture task, samples each, with the scripted agent.
func (f *fixture) rolloutDir(t testing.TB, samples int, plan []bool) string {
	t.Helper()
	return f.rolloutDirNamed(t, "rollout", samples, plan)
}

// rolloutDirNamed is rolloutDir into the folder name of the fixture's.
func (f *fixture) rolloutDirNamed(t testing.TB, name string, samples int, plan []bool) string {
	t.Helper()
	var tasks []rollout.Task
	for _, name := range []string{"q3-total-reply", "standup-room-move", "stock-delivery-record"} {
		task := f.tasks[name]
		src, err := f.corpus.ReadSource(f.rels[name])
		require.NoError(t, err)
		sources, err := trace.Sources(f.corpus, f.rels[name])
		require.NoError(t, err)
		tasks = append(tasks, rollout.Task{Task: task, Source: src, Sources: sources})
	}
	out := filepath.Join(f.dir, name)
	n := 0
	_, err := rollout.Run(context.Background(), tasks, rollout.Options{Out: out, Samples: samples, Jobs: 1, Agent: "scripted",
		Config: jsonv.NewObject("agent", "scripted"),
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) {
			oracle := plan[n%len(plan)]
			n++
			if oracle {
				return scripted{episode.Oracle{}}, "", nil
			}
			return scripted{episode.Noop{}}, "", nil
		}})
	require.NoError(t, err)
	return out
}

// rolloutPlan: which samples the scripted agent solves, in the order they run (task by task).
var rolloutPlan = []bool{true, true, false, true, false, false, true, true, true}

// betterPlan is a second rollout for the comparison: q3-total-reply is no longer solved (1 of 3),
// standup-room-move now is (3 of 3), stock-delivery-record still is.
var betterPlan = []bool{false, false, true, true, true, true, true, true, true}

// normalize replaces the fixture's folder in a page by $TMP, for a golden file.
func (f *fixture) normalize(s string) string {
	return strings.ReplaceAll(s, f.dir, "$TMP")
}
