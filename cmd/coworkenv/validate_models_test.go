package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coworkenv/coworkenv/internal/chattest"
)

// modelTasks copies validate's testdata/models (pick_report.star: a simulated user names the
// report to summarise; judged_summary.star: a judge reads the reply) to a new folder.
func modelTasks(t *testing.T) string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{"pick_report.star", "judged_summary.star"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "validate", "testdata", "models", name))
		require.NoError(t, err)
		files[name] = string(data)
	}
	return writeFiles(t, files)
}

// reportUserPolicy is a user model that says which report it means with answer.
func reportUserPolicy(answer string) func(msgs []map[string]any) string {
	return func(msgs []map[string]any) string {
		if strings.Contains(strings.ToLower(lastContent(msgs)), "which report") {
			return chatSay(answer)
		}
		return chatSay("DONE")
	}
}

// countJudgePolicy is a judge model that passes a text that gives April's 7 orders (in digits or
// in words) and no other count; it reads the text after the rubric (which quotes the claims).
func countJudgePolicy(msgs []map[string]any) string {
	ok := chattest.GivesOnlyCount(chattest.JudgedText(lastContent(msgs)), 7, "seven", "orders")
	v, _ := json.Marshal(map[string]any{"passed": ok, "reason": "read it"})
	return chatSay(string(v))
}

// taskModelArgs are the flags that name the fake user and judge models.
func taskModelArgs(user, judge *chatFake) []string {
	return []string{"--user-model", "user-model", "--user-base-url", user.url(), "--judge-model", "judge-model", "--judge-base-url", judge.url()}
}

// validate with a user model that withholds which report it means: the task that passes with
// its stand-in is unsolved with the models, said with the prefix; the judged task stays ok. In
// workers (task files from disk) and --in-process, the report is the same; the key goes out with
// the requests and nowhere else.
func TestValidateWithTaskModels(t *testing.T) {
	modelEnv(t)
	user, judge := newChatFake(t, reportUserPolicy("I don't know, sorry.")), newChatFake(t, countJudgePolicy)
	dir := modelTasks(t)
	args := append([]string{"validate", "--json", dir}, taskModelArgs(user, judge)...)
	code, isolated, errs := modelCLI(t, args...)
	require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", isolated, errs)
	asked := len(user.requests()) + len(judge.requests())
	require.NotZero(t, len(user.requests()))
	require.NotZero(t, len(judge.requests()))

	code, here, errs := modelCLI(t, append(args, "--in-process")...)
	require.Equal(t, 1, code, "stderr:\n%s", errs)
	assert.Equal(t, isolated, here)
	assert.Equal(t, 2*asked, len(user.requests())+len(judge.requests()), "the same runs asked the models")

	var rep struct {
		Tasks []struct {
			Task        string `json:"task"`
			Status      string `json:"status"`
			Diagnostics []struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"diagnostics"`
		} `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(here), &rep))
	require.Len(t, rep.Tasks, 2)
	assert.Equal(t, "judged-summary", rep.Tasks[0].Task)
	assert.Equal(t, "ok", rep.Tasks[0].Status)
	assert.Equal(t, "pick-report", rep.Tasks[1].Task)
	assert.Equal(t, "invalid", rep.Tasks[1].Status)
	require.Len(t, rep.Tasks[1].Diagnostics, 1)
	assert.Equal(t, "unsolved", rep.Tasks[1].Diagnostics[0].Code)
	assert.True(t, strings.HasPrefix(rep.Tasks[1].Diagnostics[0].Message, "with the task models: the oracle episode does not pass"), rep.Tasks[1].Diagnostics[0].Message)

	for _, r := range append(user.srv.Requests(), judge.srv.Requests()...) {
		assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
	}
	assert.NotContains(t, isolated+here+errs, "sk-test")

	// the text output says it too
	code, out, _ := modelCLI(t, append([]string{"validate", dir, "--in-process"}, taskModelArgs(user, judge)...)...)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "error[unsolved]: with the task models: the oracle episode does not pass")
}

// Models that agree with the stand-ins leave every task ok, --strict too; without models the
// same tasks validate ok and no model is asked.
func TestValidateTaskModelsAgree(t *testing.T) {
	modelEnv(t)
	user, judge := newChatFake(t, reportUserPolicy("The April one, please.")), newChatFake(t, countJudgePolicy)
	dir := modelTasks(t)
	code, out, errs := modelCLI(t, append([]string{"validate", "--strict", dir}, taskModelArgs(user, judge)...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	assert.Contains(t, out, "2 tasks: 2 ok, 0 warn, 0 invalid")
	asked := len(user.requests()) + len(judge.requests())
	assert.NotZero(t, asked)

	code, out, errs = modelCLI(t, "validate", "--strict", dir)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	assert.Contains(t, out, "2 tasks: 2 ok, 0 warn, 0 invalid")
	assert.Equal(t, asked, len(user.requests())+len(judge.requests()), "no model without the flags")
}

// A model that refuses every request is one model-error per task it would answer for, with the
// prefix, and the command fails; the flags are checked as run checks them.
func TestValidateTaskModelFlags(t *testing.T) {
	modelEnv(t)
	dir := modelTasks(t)
	refusing := newChatFake(t, func([]map[string]any) string { return "!{\"error\":{\"message\":\"no such model\"}}" })
	code, out, _ := modelCLI(t, "validate", dir, "--user-model", "u", "--user-base-url", refusing.url())
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "no such model")
	assert.Contains(t, out, "error[model-error]: with the task models: a model's request failed for good")
	assert.Equal(t, 1, strings.Count(out, "model-error"), "the judged task has no simulated user:\n%s", out)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--user-base-url", "http://127.0.0.1:1/v1"}, "--user-base-url: only with --user-model NAME"},
		{[]string{"--judge-model", " "}, "--judge-model: the model name is empty"},
		{[]string{"--judge-model", "j", "--judge-base-url", "ftp://x"}, `--judge-base-url: base URL "ftp://x" is not an http(s) URL`},
	} {
		code, _, errs := modelCLI(t, append([]string{"validate", dir}, tc.args...)...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, errs, tc.want)
	}
	t.Setenv("OPENAI_API_KEY", "")
	code, _, errs := modelCLI(t, "validate", dir, "--judge-model", "j")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "OPENAI_API_KEY is not set; --judge-model at https://api.openai.com/v1 needs it")
}
