package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// summariseTask has a simulated user who knows which report they mean, and a final verifier that
// asks a judge whether the reply gives the count.
const summariseTask = `
def _setup(ws):
    ws.mail.address = "dana@halden.example"
    ws.fs.write("/reports/march.md", "March: 12 orders")
    ws.fs.write("/reports/april.md", "April: 7 orders")

def _user(said, round):
    if "which" in said.lower():
        return "The March one."
    return None

def _judge(text):
    return ("orders" in text, "names a count")

def _verify(ws, ep):
    check(ws.fs.exists("/out/summary.md"), "the summary is written")
    judge(text = ep.reply or "", rubric = "Gives the number of orders of the month the user asked about.", stand_in = _judge)

def _solve(agent):
    answer = agent.ask("Which report do you mean?")
    month = "april" if "April" in answer else "march"
    t = agent.call("fs_read", path = "/reports/" + month + ".md")
    agent.call("fs_write", path = "/out/summary.md", content = t)
    agent.reply("Summary: " + t)

task(
    name = "summarise",
    prompt = simulated_user(
        opening = "Summarise the report for me.",
        persona = "Dana, who runs a small shop",
        goal = "a one-line summary of the April report",
        facts = {"report": "the April report"},
        stand_in = _user,
    ),
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
    max_calls_per_turn = 6,
)
`

// summarisePolicy is the agent model: it asks which report, reads the one the user's answer
// names, writes the summary and says what it wrote.
func summarisePolicy(msgs []map[string]any) string {
	var users []string
	for _, m := range msgs {
		if m["role"] == "user" {
			c, _ := m["content"].(string)
			users = append(users, c)
		}
	}
	tools := toolMessages(msgs)
	switch {
	case len(users) < 2:
		return chatSay("Which report do you mean?")
	case len(tools) == 0:
		month := "march"
		if strings.Contains(users[1], "April") {
			month = "april"
		}
		return chatCalls("", chatCall("c1", "fs_read", `{"path":"/reports/`+month+`.md"}`))
	case len(tools) == 1:
		content := tools[0]["content"].(string) // a text result is its text
		args, _ := json.Marshal(map[string]string{"path": "/out/summary.md", "content": content})
		return chatCalls("", chatCall("c2", "fs_write", string(args)))
	}
	return chatSay("Summary: April had 7 orders.")
}

// lastContent is the content of a request's last message.
func lastContent(msgs []map[string]any) string {
	if len(msgs) == 0 {
		return ""
	}
	c, _ := msgs[len(msgs)-1]["content"].(string)
	return c
}

// userPolicy is the user model: it names the April report when asked which, and is done after.
func userPolicy(msgs []map[string]any) string {
	if strings.Contains(lastContent(msgs), "Which report") {
		return chatSay("The April one, please.")
	}
	return chatSay("DONE")
}

// judgePolicy is the judge model: it passes a text that gives April's 7 orders.
func judgePolicy(msgs []map[string]any) string {
	passed := strings.Contains(lastContent(msgs), "7 orders")
	v, _ := json.Marshal(map[string]any{"passed": passed, "score": 0.9, "reason": "Gives the count."})
	return chatSay("```json\n" + string(v) + "\n```")
}

// fakes are the three models of an episode of summariseTask.
type fakes struct{ agent, user, judge *chatFake }

func newFakes(t *testing.T) *fakes {
	return &fakes{newChatFake(t, summarisePolicy), newChatFake(t, userPolicy), newChatFake(t, judgePolicy)}
}

// flags are the flags of the three models.
func (f *fakes) flags() []string {
	return []string{"--agent", "openai", "--model", "agent-model", "--base-url", f.agent.url(),
		"--user-model", "user-model", "--user-base-url", f.user.url(), "--judge-model", "judge-model", "--judge-base-url", f.judge.url()}
}

func (f *fakes) close() {
	f.agent.srv.Close()
	f.user.srv.Close()
	f.judge.srv.Close()
}

// run with a user model and a judge model: the model agent asks its question, the user model
// answers through the pool, the judge model judges the reply; the transcript shows the
// exchanges and the verdict, the trace records them, and the replay needs none of the models.
// In a worker and in this process, the trace is the same.
func TestRunWithUserAndJudgeModels(t *testing.T) {
	modelEnv(t)
	f := newFakes(t)
	dir := writeFiles(t, map[string]string{"summarise.star": summariseTask})
	task := filepath.Join(dir, "summarise.star")
	tr := filepath.Join(dir, "t.jsonl")
	code, out, errs := cli(t, append([]string{"run", task, "--trace", tr}, f.flags()...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	for _, want := range []string{
		"assistant: Which report do you mean?\nuser (round 0): The April one, please.\n",
		"  → fs_read {\"path\":\"/reports/april.md\"}",
		"assistant: Summary: April had 7 orders.\n  (user is satisfied)\n\n── final verifier ──\n  judge: passed (0.9) Gives the count.\n",
		"✓ check  judge: Gives the number of orders of the month the user asked about.: Gives the count.",
	} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, 1, strings.Count(out, "── final verifier ──"))
	assert.Equal(t, 1, strings.Count(out, "Summary: April had 7 orders."), "the reply the user was satisfied with is shown once")

	lines := readLines(t, tr)
	var kinds []string
	for _, l := range lines {
		kinds = append(kinds, l["event"].(string))
	}
	assert.Equal(t, []string{"start", "user", "assistant", "sim_user", "assistant", "call", "result", "assistant", "call", "result",
		"assistant", "sim_user", "reply", "turn_end", "judge", "end"}, kinds)
	assert.Equal(t, "user-model", lines[3]["model"])
	assert.Equal(t, "judge-model", lines[14]["model"])
	assert.Equal(t, true, lines[15]["passed"])
	require.Len(t, f.user.requests(), 2)
	require.Len(t, f.judge.requests(), 1)
	for _, fk := range []*chatFake{f.agent, f.user, f.judge} {
		for _, r := range fk.srv.Requests() {
			assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
		}
	}

	isolated, err := os.ReadFile(tr)
	require.NoError(t, err)
	here := filepath.Join(dir, "here.jsonl")
	code, out, errs = cli(t, append([]string{"run", task, "--in-process", "--trace", here}, f.flags()...)...)
	require.Equal(t, 0, code, "%s%s", out, errs)
	inProcess, err := os.ReadFile(here)
	require.NoError(t, err)
	assert.Equal(t, string(inProcess), string(isolated), "the same episode in a worker and here")

	f.close()
	code, out, errs = cli(t, "replay", tr, "--corpus", dir)
	assert.Equal(t, 0, code, "replay needs no model:\n%s%s", out, errs)
	code, out, errs = cli(t, "replay", tr, "--corpus", dir, "--in-process")
	assert.Equal(t, 0, code, "%s%s", out, errs)
}

// The oracle against a real user model: agent.ask gets the model's answer (the April report,
// where the stand-in says March); the judge without a model is the stand-in.
func TestRunOracleWithUserModel(t *testing.T) {
	modelEnv(t)
	f := newFakes(t)
	dir := writeFiles(t, map[string]string{"summarise.star": summariseTask})
	tr := filepath.Join(dir, "t.jsonl")
	code, out, errs := cli(t, "run", filepath.Join(dir, "summarise.star"), "--user-model", "user-model", "--user-base-url", f.user.url(), "--trace", tr)
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "agent oracle")
	assert.Contains(t, out, "user (round 0): The April one, please.")
	assert.Contains(t, out, "judge: passed (1.0) names a count")
	data, err := os.ReadFile(tr)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"path":"/reports/april.md"`)
	assert.Contains(t, string(data), `"source":"model","model":"user-model"`)
	assert.Contains(t, string(data), `"reason":"names a count","source":"stand-in"`)
	assert.Empty(t, f.agent.requests())
	assert.Empty(t, f.judge.requests())

	// without models, the stand-ins answer
	code, out, errs = cli(t, "run", filepath.Join(dir, "summarise.star"))
	require.Equal(t, 0, code, "%s%s", out, errs)
	assert.Contains(t, out, "user (round 0): The March one.")
	assert.Len(t, f.user.requests(), 2)

	f.close()
	code, out, errs = cli(t, "replay", tr, "--corpus", dir)
	assert.Equal(t, 0, code, "%s%s", out, errs)
}

// A rollout with the models records them in its manifest (resuming with others is refused), and
// its traces export: sft keeps the user's answers within the turn, rl carries the rounds and the
// judges' verdicts.
func TestRolloutAndExportWithTaskModels(t *testing.T) {
	modelEnv(t)
	f := newFakes(t)
	corpus := writeFiles(t, map[string]string{"summarise.star": summariseTask})
	out := filepath.Join(t.TempDir(), "o")
	args := append([]string{"rollout", corpus, "--samples", "2", "--jobs", "2", "--out", out}, f.flags()...)
	code, stdout, errs := cli(t, args...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	data, err := os.ReadFile(filepath.Join(out, "rollout.json"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	assert.Equal(t, "user-model", m["user_model"])
	assert.Equal(t, "judge-model", m["judge_model"])
	assert.Len(t, f.user.requests(), 4)

	// resumed with the same models: nothing runs again
	code, stdout, errs = cli(t, args...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Len(t, f.user.requests(), 4)
	// another user model is another rollout
	other := append([]string{}, args...)
	for i, a := range other {
		if a == "user-model" {
			other[i] = "another-user"
		}
	}
	code, _, errs = cli(t, other...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `user_model "user-model", this run has "another-user"`)

	// in this process, the agent brings the models (isolate.WithModels): the same traces
	here := filepath.Join(t.TempDir(), "here")
	code, stdout, errs = cli(t, append([]string{"rollout", corpus, "--samples", "2", "--jobs", "2", "--out", here, "--in-process"}, f.flags()...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	for _, sample := range []string{"0.jsonl", "1.jsonl"} {
		a, err := os.ReadFile(filepath.Join(out, "summarise", sample))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(here, "summarise", sample))
		require.NoError(t, err)
		assert.Equal(t, string(a), string(b))
		assert.Contains(t, string(b), `"source":"model","model":"user-model"`)
	}
	assert.Len(t, f.user.requests(), 8)
	f.close()

	rl := filepath.Join(t.TempDir(), "rl.jsonl")
	code, stdout, errs = cli(t, "export", "rl", out, "--out", rl, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	lines := readLines(t, rl)
	require.Len(t, lines, 2)
	for _, line := range lines {
		assert.Equal(t, []any{1.0}, line["turn_rounds"])
		assert.Equal(t, []any{map[string]any{"turn": nil, "rubric": "Gives the number of orders of the month the user asked about.",
			"passed": true, "score": 0.9, "reason": "Gives the count."}}, line["judges"])
		assert.Equal(t, 1.0, line["reward"])
	}

	sft := filepath.Join(t.TempDir(), "sft.jsonl")
	code, stdout, errs = cli(t, "export", "sft", out, "--out", sft, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	rows := readLines(t, sft)
	require.Len(t, rows, 2)
	var said []string
	for _, msg := range rows[0]["messages"].([]any) {
		m := msg.(map[string]any)
		if c, ok := m["content"].(string); ok && m["role"] != "system" && m["role"] != "tool" {
			said = append(said, m["role"].(string)+": "+c)
		}
	}
	assert.Equal(t, []string{"user: Summarise the report for me.", "assistant: Which report do you mean?", "user: The April one, please.",
		"assistant: ", "assistant: ", "assistant: Summary: April had 7 orders."}, said)
}

// The flags of the models inside a task are checked before anything runs.
func TestTaskModelFlags(t *testing.T) {
	modelEnv(t)
	dir := writeFiles(t, map[string]string{"summarise.star": summariseTask})
	task := filepath.Join(dir, "summarise.star")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--user-base-url", "http://127.0.0.1:1/v1"}, "--user-base-url: only with --user-model NAME"},
		{[]string{"--judge-base-url", "http://127.0.0.1:1/v1"}, "--judge-base-url: only with --judge-model NAME"},
		{[]string{"--user-model", " "}, "--user-model: the model name is empty"},
		{[]string{"--judge-model", "j", "--judge-base-url", "ftp://x"}, `--judge-base-url: base URL "ftp://x" is not an http(s) URL`},
	} {
		code, _, errs := cli(t, append([]string{"run", task}, c.args...)...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errs, c.want, "%v", c.args)
	}
	t.Setenv("OPENAI_API_KEY", "")
	code, _, errs := cli(t, "run", task, "--judge-model", "j")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "OPENAI_API_KEY is not set; --judge-model at https://api.openai.com/v1 needs it")
}
