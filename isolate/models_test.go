package isolate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simTask asks its simulated user which report to summarise, and its verifier asks a judge.
const simTask = `
def _setup(ws):
    ws.fs.write("/reports/march.md", "March: 12 orders")
    ws.fs.write("/reports/april.md", "April: 7 orders")

def _user(said, round):
    if "which" in said.lower():
        return "March."
    return None

def _verify(ws, ep):
    check(ws.fs.exists("/out/summary.md"), "the summary is written")
    judge(text = ep.reply or "", rubric = "Says how many orders there were.", stand_in = lambda text: "12" in text)

def _solve(agent):
    answer = agent.ask("Which report should I summarise?")
    month = "april" if "April" in answer else "march"
    t = agent.call("fs_read", path = "/reports/" + month + ".md")
    agent.call("fs_write", path = "/out/summary.md", content = t)
    agent.reply("Summary: " + t)

task(
    name = "summarise",
    prompt = simulated_user(opening = "Summarise the report for me.", persona = "Dana", goal = "a summary", stand_in = _user),
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

// taskModels are fake servers of a user model, which names the April report and is then done,
// and a judge model, which passes a text that names 7 orders.
type taskModels struct {
	user, judge *chattest.Server
}

func newTaskModels(t *testing.T) *taskModels {
	last := func(r *chattest.Request) string {
		c, _ := r.Messages[len(r.Messages)-1]["content"].(string)
		return c
	}
	return &taskModels{
		user: chattest.New(t, func(r *chattest.Request) chattest.Answer {
			if strings.Contains(last(r), "Which report") {
				return chattest.Answer{Body: chattest.Say("The April one.")}
			}
			return chattest.Answer{Body: chattest.Say("DONE")}
		}),
		judge: chattest.New(t, func(r *chattest.Request) chattest.Answer {
			passed := strings.Contains(last(r), "7 orders")
			v, _ := json.Marshal(map[string]any{"passed": passed, "score": 0.9, "reason": "Counts the orders."})
			return chattest.Answer{Body: chattest.Say(string(v))}
		}),
	}
}

// agent is the oracle with the user and judge models of m.
func (m *taskModels) agent() isolate.Agent {
	return isolate.Agent{Name: "oracle",
		User:  isolate.SettingsOf(modelagent.Config{Model: "user-model", BaseURL: m.user.BaseURL(), MaxRetries: -1}),
		Judge: isolate.SettingsOf(modelagent.Config{Model: "judge-model", BaseURL: m.judge.BaseURL(), MaxRetries: -1})}
}

// runHere runs the episode of the task of ep in this process and returns its trace.
func runHere(t *testing.T, ep isolate.Episode, base modelagent.Config, newAgent func(*episode.Prepared) (episode.Agent, string, error)) string {
	t.Helper()
	c := dsl.NewCorpus(mapFS(ep.Files), ".", "gen")
	task, src, err := isolate.FindTask(context.Background(), c, "t.star", "summarise")
	require.NoError(t, err)
	sources, err := trace.Sources(c, "t.star")
	require.NoError(t, err)
	var buf bytes.Buffer
	_, setup, err := isolate.RunEpisode(context.Background(), isolate.Run{Task: task, Source: src, Sources: sources, Seed: ep.Seed,
		Agent: ep.Agent, Model: base, NewAgent: newAgent, Trace: &buf})
	require.NoError(t, err)
	require.Nil(t, setup)
	return buf.String()
}

// The user and judge models of an episode in a worker answer through the pool, with the pool's
// key, exactly as they do in this process: the two traces are the same, byte for byte, and the
// oracle got the user model's answer.
func TestTaskModelsInWorkerAndHere(t *testing.T) {
	t.Parallel()
	m := newTaskModels(t)
	base := modelagent.Config{APIKey: "sk-pool"} // the oracle is no model: only the key
	ep := taskEpisode(simTask, m.agent())
	p := newPool(t, isolate.Options{Workers: 1})
	var got bytes.Buffer
	res, err := p.Episode(context.Background(), ep, isolate.Host{Trace: &got, Model: base})
	require.NoError(t, err)
	require.Nil(t, res.Err, "%v", res.Err)
	assert.True(t, res.End.Passed)
	assert.Contains(t, got.String(), `"path":"/reports/april.md"`, "the oracle read the report the user model named")
	assert.Contains(t, got.String(), `"content":"The April one.","done":false,"source":"model","model":"user-model"`)
	assert.Contains(t, got.String(), `"passed":true,"score":0.9,"reason":"Counts the orders.","source":"model","model":"judge-model"`)

	want := runHere(t, ep, base, nil)
	assert.Equal(t, want, got.String())

	require.Len(t, m.user.Requests(), 4, "two exchanges in the worker, two here")
	require.Len(t, m.judge.Requests(), 2)
	for _, r := range append(m.user.Requests(), m.judge.Requests()...) {
		assert.Equal(t, "Bearer sk-pool", r.Header.Get("Authorization"))
	}
	assert.Equal(t, "user-model", m.user.Requests()[0].Model)
	assert.Equal(t, "judge-model", m.judge.Requests()[0].Model)

	// the replay needs neither model
	events, err := trace.Read(strings.NewReader(got.String()))
	require.NoError(t, err)
	m.user.Close()
	m.judge.Close()
	rr, err := p.Replay(context.Background(), isolate.Replay{Display: "gen", Files: ep.Files, File: "t.star", Trace: got.Bytes()})
	require.NoError(t, err)
	require.NotNil(t, rr.Result)
	assert.True(t, rr.Result.Matched(), "%v", rr.Result.Divergence)
	assert.Len(t, events, 12)
}

// An agent made by Run.NewAgent brings the models with it (WithModels): how a rollout in this
// process gives them; Run.Models wins over them.
func TestWithModelsInThisProcess(t *testing.T) {
	t.Parallel()
	m := newTaskModels(t)
	ep := taskEpisode(simTask, isolate.Agent{Name: "oracle"})
	models, err := isolate.NewModels(m.agent(), modelagent.Config{APIKey: "sk-here"})
	require.NoError(t, err)
	got := runHere(t, ep, modelagent.Config{}, func(*episode.Prepared) (episode.Agent, string, error) {
		return isolate.WithModels(episode.Oracle{}, models), "", nil
	})
	assert.Contains(t, got, `"agent":"oracle"`)
	assert.Contains(t, got, `"source":"model","model":"user-model"`)
	assert.Len(t, m.user.Requests(), 2)
	assert.Equal(t, "Bearer sk-here", m.user.Requests()[0].Header.Get("Authorization"))

	stand := runHere(t, ep, modelagent.Config{}, nil)
	assert.NotContains(t, stand, `"source":"model"`, "without models, the stand-ins answer")
	assert.Contains(t, stand, `"path":"/reports/march.md"`)
	assert.Len(t, m.user.Requests(), 2)
}

// A user model's retries wait in the pool, which is told about them with the model named; one
// that fails for good ends the episode with model-error.
func TestTaskModelRetriesInWorker(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	user := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		switch calls.Add(1) {
		case 1:
			return chattest.Error(http.StatusServiceUnavailable, "busy", "")
		case 2:
			return chattest.Answer{Body: chattest.Say("March.")}
		}
		return chattest.Error(http.StatusUnauthorized, "bad key", "invalid_request_error")
	})
	var retries []string
	var slept atomic.Int32
	base := modelagent.Config{APIKey: "sk-pool",
		Sleep:   func(context.Context, time.Duration) error { slept.Add(1); return nil },
		OnRetry: func(attempt int, delay time.Duration, reason error) { retries = append(retries, reason.Error()) }}
	agent := isolate.Agent{Name: "oracle", User: isolate.SettingsOf(modelagent.Config{Model: "u", BaseURL: user.BaseURL(), MaxRetries: 1})}
	p := newPool(t, isolate.Options{Workers: 1})
	res, err := p.Episode(context.Background(), taskEpisode(simTask, agent), isolate.Host{Model: base})
	require.NoError(t, err)
	assert.Equal(t, []string{"the user model: HTTP 503 Service Unavailable"}, retries)
	assert.EqualValues(t, 1, slept.Load(), "the worker waited in the pool")
	require.NotNil(t, res.Err)
	assert.Equal(t, episode.ModelError, res.Err.Code, "the exchange after the reply was refused")
	assert.Contains(t, res.Err.Message, "simulated user: model u at "+user.BaseURL()+": HTTP 401 Unauthorized: bad key")
}
