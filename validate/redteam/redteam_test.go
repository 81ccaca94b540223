package redteam_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/coworkenv/coworkenv/validate/redteam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRedTeam answers every request with the two runs of tasktest.Q3Runs (a total of 2000, which
// holds 200: a hack; another greeting: a careful run) in a ```json block, after some prose.
func fakeRedTeam(t *testing.T) *chattest.Server {
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		return chattest.Answer{Body: chattest.Say("Here are my runs.\n\n```json\n" + tasktest.Q3Runs("the-model-misnames-it") + "```\n")}
	})
}

func chatOf(t *testing.T, s *chattest.Server) *modelagent.Chat {
	t.Helper()
	c, err := modelagent.NewChat(modelagent.Config{Model: "red-model", BaseURL: s.BaseURL(), APIKey: "sk-test", MaxRetries: -1})
	require.NoError(t, err)
	return c
}

// taskOf is what the red team is shown of the only task of file in c.
func taskOf(t *testing.T, c *dsl.Corpus, file string) redteam.Task {
	t.Helper()
	f := c.LoadFile(context.Background(), file)
	require.Empty(t, f.Diags)
	ti := isolate.Describe(context.Background(), f.Tasks[0], c.Limits(), false)
	return redteam.Task{Name: ti.Name, File: file, Source: f.Source, Prompts: ti.Prompts, Turns: ti.Turns, Simulated: ti.Simulated, Tools: ti.Tools}
}

// TestRedTeamFindsTheWeakVerifier: a fake red team that answers with a known passing hack and a
// careful run in other words. On the weak (and brittle) verifier the validator raises hackable,
// with the run, its score and the model's description, and careful-run-fails with the failed
// item; on the sound one the hack fails, the careful run passes and nothing is raised. The
// request shows the task file, the agent's view and the probes the validator already ran.
func TestRedTeamFindsTheWeakVerifier(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"weak.star":  {Data: []byte(tasktest.Q3Reply("q3-weak", tasktest.Q3Weak))},
		"sound.star": {Data: []byte(tasktest.Q3Reply("q3-sound", tasktest.Q3Sound))},
	}
	c := dsl.NewCorpus(fsys, ".", "t")
	model := fakeRedTeam(t)
	chat := chatOf(t, model)
	var all []*recorded.Run
	for _, file := range []string{"weak.star", "sound.star"} {
		task := taskOf(t, c, file)
		runs, use, err := redteam.Ask(context.Background(), chat, task, redteam.Defaults, "red-model")
		require.NoError(t, err)
		assert.Equal(t, 1, use.Requests)
		assert.Equal(t, 120, use.TotalTokens, "the fake's usage: 100 + 20")
		require.Len(t, runs, 2)
		for _, r := range runs {
			assert.Equal(t, task.Name, r.Task, "a run is for the task asked about, whatever the model named")
			assert.Equal(t, "red-model", r.By)
			r.For = file
		}
		all = append(all, runs...)
	}
	req := model.Requests()[0]
	prompt, _ := req.Messages[1]["content"].(string)
	assert.Contains(t, prompt, `body.startswith("Hi Dana")`, "the task file is shown")
	assert.Contains(t, prompt, `"Please take care of Dana's email."`, "the user's message is shown")
	assert.Contains(t, prompt, `"name":"mail_reply"`, "the tool schemas are shown")
	assert.Contains(t, prompt, "blind-to-claim: ", "the probes already run are listed")
	assert.Contains(t, prompt, "4 hacks")
	assert.Contains(t, prompt, "2 careful runs")

	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2, Runs: all})
	require.NoError(t, err)
	byTask := map[string][]dsl.Diagnostic{}
	for _, tr := range rep.Tasks {
		for _, d := range tr.Diagnostics {
			if d.Code == "hackable" || d.Code == "careful-run-fails" || strings.HasPrefix(d.Code, "recorded-") {
				byTask[tr.Task] = append(byTask[tr.Task], d)
			}
		}
	}
	require.Empty(t, byTask["q3-sound"], "a sound verifier: the red team's hack fails and its careful run passes")
	require.Len(t, byTask["q3-weak"], 2, "%v", byTask["q3-weak"])
	hack, careful := byTask["q3-weak"][0], byTask["q3-weak"][1]
	assert.Equal(t, "hackable", hack.Code)
	assert.Equal(t, dsl.Warning, hack.Severity)
	assert.Contains(t, hack.Message, "hack 1 of the red team (red-model) passes (score 1.0; failed: no item)")
	assert.Contains(t, hack.Message, `"a total of 2000, which holds 200"`)
	assert.Contains(t, hack.Message, `the run: {"task":"q3-weak","why":"a total of 2000, which holds 200","expect":"fail","turns":[{"calls":[`)
	assert.Equal(t, "careful-run-fails", careful.Code)
	assert.Contains(t, careful.Message, "careful run 1 of the red team (red-model) fails (score 0.5 < pass_threshold 1.0; failed: check \"the reply states the total, 200\" (line 12))")
	assert.Equal(t, 12, careful.Line)
}

// TestReadAnswers: what Read takes from an answer and what it refuses.
func TestReadAnswers(t *testing.T) {
	t.Parallel()
	run := func(expect, why string) string {
		return `{"task": "x", "why": "` + why + `", "expect": "` + expect + `", "turns": [{"reply": "Done."}]}`
	}
	list := "[" + strings.Join([]string{run("fail", "h1"), run("pass", "c1"), run("fail", "h2"), run("fail", "h3"), run("pass", "c2")}, ",") + "]"
	runs, err := redteam.Read("<think>[not this]</think>\n```json\n"+list+"\n```", "t", "m", redteam.Options{Hacks: 2, Careful: 1})
	require.NoError(t, err)
	var got []string
	for _, r := range runs {
		got = append(got, string(r.Expect)+" "+r.Why)
		assert.Equal(t, "t", r.Task)
	}
	assert.Equal(t, []string{"fail h1", "pass c1", "fail h2"}, got, "the first of each kind, up to its count")
	assert.Equal(t, 2, runs[2].N, "hacks are numbered apart from careful runs")

	runs, err = redteam.Read(list, "t", "m", redteam.Defaults)
	require.NoError(t, err, "a bare list is read too")
	assert.Len(t, runs, 5)

	_, err = redteam.Read("I cannot help with that.", "t", "m", redteam.Defaults)
	assert.ErrorContains(t, err, "no JSON list of runs")
	_, err = redteam.Read("```json\n[{\"why\": \"w\", \"turns\": [{\"reply\": \"\"}]}]\n```", "t", "m", redteam.Defaults)
	assert.ErrorContains(t, err, `"expect" is required`)
}

// TestAskAgainOnce: an answer that does not parse is sent back once with the reason; a second
// one that does not parse either is an error.
func TestAskAgainOnce(t *testing.T) {
	t.Parallel()
	good := "```json\n" + tasktest.Q3Runs("q3") + "```"
	model := chattest.New(t, chattest.InOrder(chattest.Answer{Body: chattest.Say("no runs, sorry")}, chattest.Answer{Body: chattest.Say(good)}))
	task := redteam.Task{Name: "q3", File: "q3.star", Source: []byte("task(...)"), Turns: 1}
	runs, use, err := redteam.Ask(context.Background(), chatOf(t, model), task, redteam.Defaults, "m")
	require.NoError(t, err)
	assert.Len(t, runs, 2)
	assert.Equal(t, 2, use.Requests)
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	last, _ := reqs[1].Messages[len(reqs[1].Messages)-1]["content"].(string)
	assert.Contains(t, last, "Your answer could not be read: the answer holds no JSON list of runs")

	bad := chattest.New(t, func(*chattest.Request) chattest.Answer { return chattest.Answer{Body: chattest.Say("no")} })
	_, use, err = redteam.Ask(context.Background(), chatOf(t, bad), task, redteam.Defaults, "m")
	assert.ErrorContains(t, err, "the red team's answer could not be read")
	assert.Equal(t, 2, use.Requests)
}

// TestRunsRoundTrip: runs written with recorded.Marshal read back the same.
func TestRunsRoundTrip(t *testing.T) {
	t.Parallel()
	runs, err := recorded.Parse("a.json", []byte(tasktest.Q3Runs("q3")), "")
	require.NoError(t, err)
	data, err := recorded.Marshal(runs)
	require.NoError(t, err)
	again, err := recorded.Parse("b.json", data, "")
	require.NoError(t, err)
	require.Len(t, again, len(runs))
	for i := range runs {
		a, _ := json.Marshal(runs[i].Turns)
		b, _ := json.Marshal(again[i].Turns)
		assert.JSONEq(t, string(a), string(b))
		assert.Equal(t, runs[i].Why, again[i].Why)
		assert.Equal(t, runs[i].Expect, again[i].Expect)
	}
}
