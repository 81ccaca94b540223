package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/validate/redteam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validate --red-team-model: a fake red team answers every task with a known hack (a total of
// 2000, which holds 200) and a careful run (another greeting). On the weak and brittle verifier
// they are hackable and careful-run-fails, each with its run; on the sound one neither is said,
// and --red-team-keep writes the runs beside it. A later validate, without any model, plays the
// kept runs: unchanged, the task stays ok; with its verifier weakened, the old hack is caught as
// recorded-hack-passes. The same in a worker and in this process.
func TestValidateRedTeam(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"--isolate", "--in-process"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			model := chattest.New(t, func(r *chattest.Request) chattest.Answer {
				return chattest.Answer{Body: chattest.Say("```json\n" + tasktest.Q3Runs("any") + "```")}
			})
			dir := writeFiles(t, map[string]string{
				"weak.star":  tasktest.Q3Reply("q3-weak", tasktest.Q3Weak),
				"sound.star": tasktest.Q3Reply("q3-sound", tasktest.Q3Sound),
			})
			weak, sound := filepath.Join(dir, "weak.star"), filepath.Join(dir, "sound.star")
			code, out, errs := cli(t, "validate", weak, sound, mode, "--red-team-model", "red", "--red-team-base-url", model.BaseURL(), "--red-team-keep")
			assert.Equal(t, 0, code, "warnings only: %s%s", out, errs)
			assert.Contains(t, out, `weak.star:21:1: warning[hackable]: hack 1 of the red team (red) passes (score 1.0; failed: no item): "a total of 2000, which holds 200"; the run: {"task":"q3-weak"`)
			assert.Contains(t, out, `weak.star:12:5: warning[careful-run-fails]: careful run 1 of the red team (red) fails`)
			assert.NotContains(t, out, "sound.star.runs.json", "nothing was kept before the check")
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "sound.star:") {
					assert.NotContains(t, l, "hackable", "a sound verifier: the red team's hack fails")
					assert.NotContains(t, l, "careful-run-fails", "a sound verifier: its careful run passes")
				}
			}
			assert.Contains(t, errs, "red team (red): 2 tasks attacked, 2 requests, 200 prompt + 40 completion = 240 tokens")
			assert.Len(t, model.Requests(), 2, "one request per task that passed the checks")

			_, err := os.Stat(weak + ".runs.json")
			assert.True(t, os.IsNotExist(err), "a task with a warning keeps no run")
			kept, err := os.ReadFile(sound + ".runs.json")
			require.NoError(t, err)
			assert.Equal(t, 2, strings.Count(string(kept), `"task":"q3-sound"`), string(kept))

			// later, without a model: the kept runs play again
			code, out, errs = cli(t, "validate", sound, mode)
			assert.Equal(t, 0, code, "%s%s", out, errs)
			assert.NotContains(t, out, "recorded-", "the kept runs behave on the verifier they were kept for")
			require.NoError(t, os.WriteFile(sound, []byte(tasktest.Q3Reply("q3-sound", `"200" in body`)), 0o644))
			code, out, _ = cli(t, "validate", sound, mode)
			assert.Equal(t, 0, code)
			assert.Contains(t, out, `warning[recorded-hack-passes]: the hack recorded as run 1 of `+sound+`.runs.json (line 2) passes (score 1.0; failed: no item): "a total of 2000, which holds 200"`)
			assert.Len(t, model.Requests(), 2, "no model was asked")
		})
	}
}

// The red team's flags: only with --red-team-model, counts not negative and not both 0.
func TestValidateRedTeamFlags(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"sound.star": tasktest.Q3Reply("q3-sound", tasktest.Q3Sound)})
	sound := filepath.Join(dir, "sound.star")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--red-team-hacks", "2"}, "--red-team-hacks: only with --red-team-model NAME"},
		{[]string{"--red-team-model", " "}, "--red-team-model: the model name is empty"},
		{[]string{"--red-team-model", "m", "--red-team-base-url", "http://127.0.0.1:1/v1", "--red-team-hacks", "0", "--red-team-careful", "0"}, "both 0"},
		{[]string{"--red-team-model", "m", "--red-team-base-url", "http://127.0.0.1:1/v1", "--red-team-careful", "-1"}, "must not be negative"},
	} {
		code, _, errs := cli(t, append([]string{"validate", sound}, tc.args...)...)
		assert.Equal(t, 2, code, errs)
		assert.Contains(t, errs, tc.want)
	}
}

// generate asks its model to be the red team by default; --no-red-team asks nothing of it, and
// --red-team-hacks N says how many hacks the prompt asks for.
func TestGenerateRedTeamFlags(t *testing.T) {
	t.Parallel()
	srv := genFake(t, map[int64][]string{0: {"```python\n" + goldenTask(t, "loan-return-date") + "```"}})
	args := func(more ...string) []string {
		return append([]string{"generate", "--capability", "mail.reply", "--count", "1", "--out", t.TempDir(),
			"--corpus", genCorpus, "--model", "m", "--base-url", srv.URL + "/v1", "--jobs", "1"}, more...)
	}
	redTeam := func() (n int, prompt string) {
		for _, r := range srv.Requests() {
			if sys, _ := r.Messages[0]["content"].(string); sys == redteam.System {
				n++
				prompt, _ = r.Messages[1]["content"].(string)
			}
		}
		return n, prompt
	}
	code, stdout, stderr := genMain(t, args("--no-red-team")...)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "red team:")
	n, _ := redTeam()
	assert.Equal(t, 0, n)
	code, stdout, stderr = genMain(t, args("--red-team-hacks", "7")...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "red team: 1 request,")
	n, prompt := redTeam()
	assert.Equal(t, 1, n)
	assert.Contains(t, prompt, "- 7 hacks")
	assert.Contains(t, prompt, "- 2 careful runs")
	code, _, stderr = genMain(t, args("--red-team-careful", "-1")...)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "must not be negative")
}

// validate's models share one cache: with a user and a judge model, every request body reaches
// its model once, though the runs of a check ask many again.
func TestValidateModelsAskEachRequestOnce(t *testing.T) {
	modelEnv(t)
	user, judge := newChatFake(t, reportUserPolicy("The April one, please.")), newChatFake(t, countJudgePolicy)
	dir := modelTasks(t)
	code, out, errs := cli(t, append([]string{"validate", dir}, taskModelArgs(user, judge)...)...)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	for _, f := range []*chatFake{user, judge} {
		reqs := f.srv.Requests()
		require.NotEmpty(t, reqs)
		seen := map[string]bool{}
		for _, r := range reqs {
			assert.False(t, seen[string(r.Body)], "sent twice: %.200s", r.Body)
			seen[string(r.Body)] = true
		}
	}
}
