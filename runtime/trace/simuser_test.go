package trace_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/simmodel"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simTaskSrc is a task whose user is simulated: the agent asks which report it means, and the
// final verifier asks a judge about the reply. The solution reads the report the user names.
const simTaskSrc = `
def _setup(ws):
    ws.mail.address = "dana@halden.example"
    ws.fs.write("/reports/march.md", "March: 12 orders")
    ws.fs.write("/reports/april.md", "April: 7 orders")

def _user(said, round):
    if "which" in said.lower():
        return "The March report, please."
    return None

def _judge(text):
    return ("12" in text, "names the count")

def _verify(ws, ep):
    check(ws.fs.exists("/out/summary.md"), "the summary is written")
    judge(text = ep.reply or "", rubric = "Says how many orders the month had.", stand_in = _judge)

def _solve(agent):
    answer = agent.ask("Which report should I summarise?")
    month = "march" if "March" in answer else "april"
    t = agent.call("fs_read", path = "/reports/" + month + ".md")
    agent.call("fs_write", path = "/out/summary.md", content = t)
    agent.reply("Summary: " + t)

task(
    name = "summarise",
    prompt = simulated_user(
        opening = "Summarise the report for me.",
        persona = "Dana, who runs a small shop",
        goal = "a one-line summary of the March report",
        facts = {"report": "the March report"},
        stand_in = _user,
    ),
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

// recordWith runs agent on the task of f with the models and returns the trace.
func recordWith(t testing.TB, f *fixture, agent episode.Agent, models *episode.Models) []byte {
	t.Helper()
	p, d := episode.Prepare(context.Background(), f.task(t), episode.Options{})
	require.Nil(t, d)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, trace.StartOf(p, f.src, 0, agent.Name()))
	r := p.Run(context.Background(), agent, episode.RunOptions{Observer: w, Models: models})
	require.NoError(t, w.End(r))
	return buf.Bytes()
}

// goModels are a user model and a judge model written in Go: the user names the April report
// (the stand-in names March), and the judge passes a text that names 7 orders.
func goModels(calls *int) *episode.Models {
	return &episode.Models{
		User: func(_ context.Context, x *episode.UserAsk) error {
			*calls++
			x.Source, x.Model = "model", "go-user"
			if strings.Contains(strings.ToLower(x.Said), "which") {
				x.Content = "The April one."
			} else {
				x.Done = true
			}
			return nil
		},
		Judge: func(_ context.Context, j *episode.JudgeCall) error {
			*calls++
			j.Passed, j.Score, j.Reason, j.Source, j.Model = strings.Contains(j.Text, "7"), 0.9, "counts the orders", "model", "go-judge"
			return nil
		},
	}
}

// kinds are the events of a trace after start, by kind.
func kinds(t testing.TB, data []byte) []string {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	var out []string
	for _, ev := range events[1:] {
		out = append(out, ev.Kind)
	}
	return out
}

// swap replaces old by new in the one line of the trace that holds old.
func swap(t testing.TB, data []byte, old, new string) []byte {
	t.Helper()
	require.Equal(t, 1, bytes.Count(data, []byte(old)), "%s is not on exactly one line", old)
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

// The oracle asks the simulated user (agent.ask), the engine shows it the reply, and the final
// verifier asks a judge: with the stand-ins, every answer and verdict is recomputed on replay.
func TestSimulatedUserStandInsReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(simTaskSrc)
	data := recordWith(t, f, episode.Oracle{}, nil)
	require.Equal(t, []string{"user", "sim_user", "call", "result", "call", "result", "reply", "sim_user", "turn_end", "judge", "end"}, kinds(t, data))
	assert.Contains(t, string(data), `"content":"The March report, please.","done":false,"source":"stand-in"`)
	assert.Contains(t, string(data), `"passed":true,"score":1.0,"reason":"names the count","source":"stand-in"`)
	r := replay(t, f, data)
	require.True(t, r.Matched(), "%v", r.Divergence)

	t.Run("a changed answer is the divergence at its event", func(t *testing.T) {
		r := replay(t, f, swap(t, data, `"The March report, please."`, `"The April report, please."`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "sim_user", d.Event)
		assert.Equal(t, 3, d.Line)
		assert.Equal(t, []string{`content: recorded "The April report, please.", replayed "The March report, please."`}, d.Diffs)
	})
	t.Run("a changed verdict is the divergence at its event", func(t *testing.T) {
		r := replay(t, f, swap(t, data, `"reason":"names the count"`, `"reason":"vague"`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "judge", d.Event)
		assert.Equal(t, -1, d.Turn)
		assert.Equal(t, []string{`reason: recorded "vague", replayed "names the count"`}, d.Diffs)
	})
}

// With models, the trace records their answers; the replay gives them back without any model,
// and the oracle's agent.ask gets the recorded answer (the April report, not the stand-in's March).
func TestSimulatedUserModelsReplayWithoutModels(t *testing.T) {
	t.Parallel()
	f := newFixture(simTaskSrc)
	calls := 0
	data := recordWith(t, f, episode.Oracle{}, goModels(&calls))
	require.Equal(t, 3, calls, "two exchanges and one verdict")
	assert.Contains(t, string(data), `"path":"/reports/april.md"`)
	assert.Contains(t, string(data), `"source":"model","model":"go-user","request":[{"role":"system"`)
	assert.Contains(t, string(data), `"source":"model","model":"go-judge"`)

	r := replay(t, f, data)
	require.True(t, r.Matched(), "%v", r.Divergence)
	assert.Equal(t, 3, calls, "the replay asked no model")

	t.Run("a changed answer shows in what depends on it", func(t *testing.T) {
		// the oracle reads the report the answer names, and the next exchange's request holds the answer
		r := replay(t, f, swap(t, data, `"content":"The April one.","done":false`, `"content":"The March one.","done":false`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "call", d.Event)
		assert.Equal(t, []string{`args.path: recorded "/reports/april.md", replayed "/reports/march.md"`}, d.Diffs)
	})
	t.Run("a changed verdict shows in the verifier's checks", func(t *testing.T) {
		r := replay(t, f, swap(t, data, `"reason":"counts the orders"`, `"reason":"misses the count"`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "end", d.Event)
		assert.Contains(t, d.Diffs, `checks[1].message: recorded "judge: Says how many orders the month had.: counts the orders", replayed "judge: Says how many orders the month had.: misses the count"`)
	})
	t.Run("another message to the user is the divergence at its exchange", func(t *testing.T) {
		r := replay(t, f, swap(t, data, `"said":"Which report should I summarise?"`, `"said":"Which report, please?"`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "sim_user", d.Event)
		assert.Equal(t, 3, d.Line)
		assert.Equal(t, []string{"the simulated user was asked something else:", `said: recorded "Which report, please?", replayed "Which report should I summarise?"`}, d.Diffs)
	})
	t.Run("another request is the divergence at its exchange", func(t *testing.T) {
		events, err := trace.Read(bytes.NewReader(data))
		require.NoError(t, err)
		sha := events[2].Body.(*trace.SimUser).RequestSHA256
		r := replay(t, f, swap(t, data, sha, strings.Repeat("0", 64)))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "sim_user", d.Event)
		require.NotEmpty(t, d.Diffs)
		assert.Equal(t, "request_sha256: recorded "+strings.Repeat("0", 64)+", replayed "+sha+
			": the request to the user model differs (its declaration, or the turn before this exchange)", d.Diffs[0])
	})
	t.Run("a verdict asked about another text is the divergence at the judge event", func(t *testing.T) {
		r := replay(t, f, swap(t, data, `"text":"Summary: April: 7 orders"`, `"text":"Summary: none"`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "judge", d.Event)
		assert.Equal(t, []string{"the judge was asked something else:", `text: recorded "Summary: none", replayed "Summary: April: 7 orders"`}, d.Diffs)
	})
}

// A user model or a judge model that fails for good ends the episode with model-error; the
// replay ends the same way without asking anything.
func TestModelFailuresReplay(t *testing.T) {
	t.Parallel()
	refused := &modelagent.RequestError{Model: "m", URL: "http://127.0.0.1:1/v1", Message: "connection refused", Attempts: 1}
	calls := 0
	working := goModels(&calls)
	for _, c := range []struct {
		name   string
		models *episode.Models
	}{
		{"the user model", &episode.Models{User: func(context.Context, *episode.UserAsk) error { return refused }}},
		{"the user model at the reply", &episode.Models{User: func(ctx context.Context, x *episode.UserAsk) error {
			if x.Round > 0 {
				return refused
			}
			return working.User(ctx, x)
		}}},
		{"the judge model", &episode.Models{Judge: func(context.Context, *episode.JudgeCall) error { return refused }}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(simTaskSrc)
			data := recordWith(t, f, episode.Oracle{}, c.models)
			events, err := trace.Read(bytes.NewReader(data))
			require.NoError(t, err)
			end := events[len(events)-1].Body.(*trace.End)
			require.NotNil(t, end.Error)
			require.Equal(t, episode.ModelError, end.Error.Code, end.Error.Message)
			r := replay(t, f, data)
			assert.True(t, r.Matched(), "%v", r.Divergence)
		})
	}
}

// simModelAnswers play a model agent in the simulated turn: it asks which report, reads and
// writes the one the user names, then reports.
var simModelAnswers = []chattest.Answer{
	say("Which report do you mean, March or April?"),
	calls("", chattest.Call("c1", "fs_read", `{"path":"/reports/april.md"}`)),
	calls("", chattest.Call("c2", "fs_write", `{"path":"/out/summary.md","content":"April: 7 orders"}`)),
	say("Summary: April had 7 orders."),
}

// queueServer is a fake model that gives the answers in order.
func queueServer(t testing.TB, answers ...chattest.Answer) *chattest.Server {
	return chattest.New(t, chattest.InOrder(answers...))
}

// A model agent whose text goes to a user model (fake servers through runtime/simmodel), judged
// by a judge model: the trace replays with the servers gone.
func TestModelAgentWithSimulatedUserReplays(t *testing.T) {
	t.Parallel()
	f := newFixture(simTaskSrc)
	agentSrv := queueServer(t, simModelAnswers...)
	userSrv := queueServer(t, say("April, please."), say("DONE"))
	judgeSrv := queueServer(t, say("```json\n{\"passed\": true, \"score\": 0.75, \"reason\": \"Names the count.\"}\n```"))
	agent, err := modelagent.New(modelagent.Config{Model: "agent-model", BaseURL: agentSrv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	models, err := simmodel.New(&modelagent.Config{Model: "user-model", BaseURL: userSrv.BaseURL(), MaxRetries: -1},
		&modelagent.Config{Model: "judge-model", BaseURL: judgeSrv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	data := recordWith(t, f, agent, models)
	require.Equal(t, []string{"user", "assistant", "sim_user", "assistant", "call", "result", "assistant", "call", "result",
		"assistant", "sim_user", "reply", "turn_end", "judge", "end"}, kinds(t, data))
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	end := events[len(events)-1].Body.(*trace.End)
	assert.True(t, end.Passed, "%+v", end)
	assert.Equal(t, 0, bytes.Count(data, []byte(`"source":"stand-in"`)))
	agentSrv.Close()
	userSrv.Close()
	judgeSrv.Close()

	r := replay(t, f, data)
	require.True(t, r.Matched(), "%v", r.Divergence)

	t.Run("an answer the trace says was done is the divergence where the model goes on", func(t *testing.T) {
		// with the first answer done, the turn ends at the question: the trace goes on instead
		r := replay(t, f, swap(t, data, `"content":"April, please.","done":false`, `"content":"","done":true`))
		require.False(t, r.Matched())
		d := r.Divergence
		assert.Equal(t, "assistant", d.Event)
		assert.Equal(t, 5, d.Line)
		assert.Equal(t, []string{"event: recorded assistant, replayed reply (turn 0)"}, d.Diffs)
	})
}

// A trace of an agent that cannot run again re-issues its messages to the user with its calls.
func TestScriptedAgentAsksAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(simTaskSrc)
	agent := &episode.Scripted{Label: "custom",
		Calls: [][]episode.ScriptedCall{{
			{Ask: true, Said: "Which report should I summarise?"},
			{Name: "fs_read", Args: mustObject(t, `{"path":"/reports/march.md"}`)},
		}},
		Replies: []string{"March: 12 orders"}}
	data := recordWith(t, f, agent, nil)
	require.Equal(t, []string{"user", "sim_user", "call", "result", "reply", "sim_user", "turn_end", "judge", "end"}, kinds(t, data))
	r := replay(t, f, data)
	require.True(t, r.Matched(), "%v", r.Divergence)
	assert.Contains(t, strings.Join(r.Notes, "\n"), `the agent "custom" cannot be run again`)
}

// The replay's models are the recorded ones only where the trace needs them: a trace without
// models' answers (of an older engine, or with stand-ins) asks the stand-ins again.
func TestReplayOfTaskWithoutSimulatedUser(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	data := record(t, f.task(t), f.src, 0)
	assert.NotContains(t, kinds(t, data), "sim_user")
	assert.NotContains(t, kinds(t, data), "judge")
	r := replay(t, f, data)
	assert.True(t, r.Matched(), "%v", r.Divergence)
}

func mustObject(t testing.TB, s string) *jsonv.Object {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	require.NoError(t, err)
	return v.(*jsonv.Object)
}

// A model agent whose question the user model fails to answer: the replay fails the same way.
func TestModelAgentUserModelFailureReplays(t *testing.T) {
	t.Parallel()
	f := newFixture(simTaskSrc)
	agentSrv := queueServer(t, simModelAnswers...)
	userSrv := queueServer(t, chattest.Error(http.StatusUnauthorized, "bad key", "invalid_request_error"))
	agent, err := modelagent.New(modelagent.Config{Model: "agent-model", BaseURL: agentSrv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	models, err := simmodel.New(&modelagent.Config{Model: "user-model", BaseURL: userSrv.BaseURL(), MaxRetries: -1}, nil)
	require.NoError(t, err)
	data := recordWith(t, f, agent, models)
	require.Equal(t, []string{"user", "assistant", "end"}, kinds(t, data))
	assert.Contains(t, string(data), `"code":"model-error","message":"turn 0: simulated user: model user-model at `)
	agentSrv.Close()
	userSrv.Close()
	r := replay(t, f, data)
	assert.True(t, r.Matched(), "%v", r.Divergence)
}

// A stand-in that fails ends the episode at its own position; the replay runs it again and fails
// the same way.
func TestStandInFailuresReplay(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"the user's stand-in":  strings.Replace(simTaskSrc, `return "The March report, please."`, "return 1", 1),
		"the judge's stand-in": strings.Replace(simTaskSrc, `return ("12" in text, "names the count")`, `fail("no verdict")`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(src)
			data := recordWith(t, f, episode.Oracle{}, nil)
			events, err := trace.Read(bytes.NewReader(data))
			require.NoError(t, err)
			end := events[len(events)-1].Body.(*trace.End)
			require.NotNil(t, end.Error)
			require.NotNil(t, end.Error.Line, "%s", end.Error.Message)
			r := replay(t, f, data)
			assert.True(t, r.Matched(), "%v", r.Divergence)
		})
	}
}
