package validate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/simmodel"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/models holds pick_report.star (a simulated user names the report to summarise) and
// judged_summary.star (a judge reads the reply); both validate ok with their stand-ins.
func modelsCorpus() *dsl.Corpus {
	return dsl.NewCorpus(os.DirFS("testdata/models"), ".", "testdata/models")
}

// lastMessage is the content of a request's last message.
func lastMessage(r *chattest.Request) string {
	c, _ := r.Messages[len(r.Messages)-1]["content"].(string)
	return c
}

// userModel is a fake user model that answers the question about the report with answer, and
// is done with anything else.
func userModel(t *testing.T, answer string) *chattest.Server {
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if strings.Contains(strings.ToLower(lastMessage(r)), "which report") {
			return chattest.Answer{Body: chattest.Say(answer)}
		}
		return chattest.Answer{Body: chattest.Say("DONE")}
	})
}

// judgeModel is a fake judge model that passes a text when pass says so.
func judgeModel(t *testing.T, pass func(text string) bool) *chattest.Server {
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		v, _ := json.Marshal(map[string]any{"passed": pass(chattest.JudgedText(lastMessage(r))), "reason": "read it"})
		return chattest.Answer{Body: chattest.Say(string(v))}
	})
}

// modelsOf are the models of the fake servers (nil: that one is left to the stand-ins).
func modelsOf(t *testing.T, user, judge *chattest.Server) *episode.Models {
	t.Helper()
	var u, j *modelagent.Config
	if user != nil {
		u = &modelagent.Config{Model: "user-model", BaseURL: user.BaseURL(), APIKey: "sk-test", MaxRetries: -1}
	}
	if judge != nil {
		j = &modelagent.Config{Model: "judge-model", BaseURL: judge.BaseURL(), APIKey: "sk-test", MaxRetries: -1}
	}
	m, err := simmodel.New(u, j)
	require.NoError(t, err)
	return m
}

func validateModels(t *testing.T, models *episode.Models) map[string]*validate.TaskReport {
	t.Helper()
	rep, err := validate.Corpus(context.Background(), modelsCorpus(), nil, validate.Options{Jobs: 2, Models: models})
	require.NoError(t, err)
	out := map[string]*validate.TaskReport{}
	for _, tr := range rep.Tasks {
		out[tr.Task] = tr
	}
	return out
}

// A user model that withholds what the stand-in tells: the reference then summarises the wrong
// report, which only the check with the models shows, as unsolved with the prefix; the check
// with the stand-ins still passes (its summary of the oracle is the stand-in's).
func TestValidateUserModelWithholds(t *testing.T) {
	user := userModel(t, "I don't know, sorry.")
	reps := validateModels(t, modelsOf(t, user, nil))
	tr := reps["pick-report"]
	require.Equal(t, "invalid", tr.Status, "%v", tr.Diagnostics)
	require.Len(t, tr.Diagnostics, 1, "%v", tr.Diagnostics)
	d := tr.Diagnostics[0]
	assert.Equal(t, "unsolved", d.Code)
	assert.True(t, strings.HasPrefix(d.Message, validate.ModelsPrefix+"the oracle episode does not pass"), d.Message)
	assert.Contains(t, d.Message, "the summary gives April's 7 orders")
	assert.True(t, tr.Oracle.Passed, "the report's oracle is the one with the stand-ins")
	assert.NotEmpty(t, user.Requests())
	for _, r := range user.Requests() {
		assert.Equal(t, "user-model", r.Model)
	}

	assert.Equal(t, "ok", reps["judged-summary"].Status, "a task without a simulated user is not asked of a user model")
}

// A user model that gives the fact passes both ways: the task stays ok, and the model was asked
// in the reference, the noop and the mutation runs.
func TestValidateUserModelAgrees(t *testing.T) {
	user := userModel(t, "The April one, please.")
	reps := validateModels(t, modelsOf(t, user, nil))
	tr := reps["pick-report"]
	assert.Equal(t, "ok", tr.Status, "%v", tr.Diagnostics)
	assert.Empty(t, tr.Diagnostics)
	// the oracle asks once and is answered, then its reply is shown (DONE); a run of the check
	// with the stand-ins asks no model
	asked := 0
	for _, r := range user.Requests() {
		if strings.Contains(strings.ToLower(lastMessage(r)), "which report") {
			asked++
		}
	}
	assert.Greater(t, asked, 2, "the reference and the replays asked the model")
}

// A judge model stricter than the stand-in leaves the reference unsolved with the models; one
// that agrees keeps the task ok. Judges are found by running the check with the stand-ins: a
// task whose verifiers ask none is not checked again.
func TestValidateJudgeModel(t *testing.T) {
	strict := judgeModel(t, func(string) bool { return false })
	reps := validateModels(t, modelsOf(t, nil, strict))
	tr := reps["judged-summary"]
	require.Equal(t, "invalid", tr.Status)
	require.Len(t, tr.Diagnostics, 1, "%v", tr.Diagnostics)
	assert.Equal(t, "unsolved", tr.Diagnostics[0].Code)
	assert.True(t, strings.HasPrefix(tr.Diagnostics[0].Message, validate.ModelsPrefix), tr.Diagnostics[0].Message)
	assert.Equal(t, "ok", reps["pick-report"].Status, "no judge there")
	for _, r := range strict.Requests() {
		assert.NotContains(t, lastMessage(r), "Which report")
	}

	// a fair judge: the text gives 7 orders (in digits or in words) and no other count
	fair := judgeModel(t, func(text string) bool { return chattest.GivesOnlyCount(text, 7, "seven", "orders") })
	reps = validateModels(t, modelsOf(t, nil, fair))
	assert.Equal(t, "ok", reps["judged-summary"].Status, "%v", reps["judged-summary"].Diagnostics)
	assert.NotEmpty(t, fair.Requests())
}

// A model whose requests fail is said once, as model-error with the prefix and the reason, and
// it is asked once per task: the rest of the check with the models gives up at once. The check
// with the stand-ins is not touched.
func TestValidateModelDown(t *testing.T) {
	down := chattest.New(t, func(*chattest.Request) chattest.Answer {
		return chattest.Error(http.StatusUnauthorized, "bad key", "invalid_request_error")
	})
	reps := validateModels(t, modelsOf(t, down, down))
	for _, name := range []string{"pick-report", "judged-summary"} {
		tr := reps[name]
		require.Len(t, tr.Diagnostics, 1, "%s: %v", name, tr.Diagnostics)
		d := tr.Diagnostics[0]
		assert.Equal(t, episode.ModelError, d.Code)
		assert.Equal(t, dsl.Error, d.Severity)
		assert.True(t, strings.HasPrefix(d.Message, validate.ModelsPrefix+"a model's request failed for good"), d.Message)
		assert.Contains(t, d.Message, "HTTP 401 Unauthorized: bad key")
		assert.Contains(t, d.Message, "this says nothing about the task")
		assert.True(t, tr.Oracle.Passed)
	}
	assert.Len(t, down.Requests(), 2, "one failed request per task")
}

// Models change nothing for a task that has neither a simulated user nor a judge, nor for any
// task without them: the report is the one without models, and no model is asked.
func TestValidateModelsLeaveOtherTasks(t *testing.T) {
	srv := userModel(t, "April.")
	c := dsl.NewCorpus(os.DirFS("testdata/golden"), ".", "testdata/golden")
	without, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2})
	require.NoError(t, err)
	with, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2, Models: modelsOf(t, srv, srv)})
	require.NoError(t, err)
	assert.Equal(t, reportJSON(without), reportJSON(with))
	assert.Empty(t, srv.Requests())
}

func reportJSON(r *validate.Report) string { return jsonv.MustEncode(r.JSON()) }
