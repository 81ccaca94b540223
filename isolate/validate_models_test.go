package isolate_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingWorker is a worker that writes its environment to DIR/env and a copy of everything
// the pool writes to it to DIR/stdin: `TESTBINARY __recording_worker DIR --memory-limit N`. It
// is dispatched here, before TestMain.
const recordingWorker = "__recording_worker"

func init() {
	if len(os.Args) < 3 || os.Args[1] != recordingWorker {
		return
	}
	dir := os.Args[2]
	if err := os.WriteFile(filepath.Join(dir, "env"), []byte(strings.Join(os.Environ(), "\n")), 0o644); err != nil {
		panic(err)
	}
	log, err := os.Create(filepath.Join(dir, "stdin"))
	if err != nil {
		panic(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	in := os.Stdin
	go func() {
		// a line reaches the worker only once it is in the file
		io.Copy(io.MultiWriter(log, w), in)
		w.Close()
	}()
	os.Stdin = r
	os.Exit(isolate.WorkerMain(os.Args[3:]))
}

// modelsCorpus is validate's testdata/models: a task with a simulated user who names the report
// to summarise (pick-report) and one whose verifier asks a judge (judged-summary).
func modelsCorpus() *dsl.Corpus {
	return dsl.NewCorpus(os.DirFS("../validate/testdata/models"), ".", "models")
}

// withholding is a user model that does not say which report it means; fairJudge passes a text
// that gives April's 7 orders.
func withholding(t *testing.T) *chattest.Server {
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if strings.Contains(strings.ToLower(lastContent(r)), "which report") {
			return chattest.Answer{Body: chattest.Say("I don't know, sorry.")}
		}
		return chattest.Answer{Body: chattest.Say("DONE")}
	})
}

func fairJudge(t *testing.T) *chattest.Server {
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		v, _ := json.Marshal(map[string]any{"passed": chattest.GivesOnlyCount(chattest.JudgedText(lastContent(r)), 7, "seven", "orders"), "reason": "read it"})
		return chattest.Answer{Body: chattest.Say(string(v))}
	})
}

func lastContent(r *chattest.Request) string {
	c, _ := r.Messages[len(r.Messages)-1]["content"].(string)
	return c
}

// A validation with task models in workers gives the report the validation in this process
// gives, with the models' finding ("with the task models: " unsolved), after asking the models
// exactly as often. The requests go out from this process with its key, which the worker never
// has: not in its environment, not in anything the pool writes to it.
func TestValidateCorpusWithModelsInWorker(t *testing.T) {
	const key = "sk-pool-secret"
	t.Setenv("OPENAI_API_KEY", key)
	user, judge := withholding(t), fairJudge(t)
	tm := &isolate.TaskModels{
		User:  isolate.SettingsOf(modelagent.Config{Model: "user-model", BaseURL: user.BaseURL(), MaxRetries: -1}),
		Judge: isolate.SettingsOf(modelagent.Config{Model: "judge-model", BaseURL: judge.BaseURL(), MaxRetries: -1}),
		Base:  modelagent.Config{APIKey: key},
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	p := newPool(t, isolate.Options{Workers: 1, Command: []string{exe, recordingWorker, dir}})
	got, err := isolate.ValidateCorpusWith(context.Background(), p, modelsCorpus(), nil, isolate.ValidateOptions{Models: tm})
	require.NoError(t, err)
	asked := len(user.Requests()) + len(judge.Requests())
	require.NotZero(t, len(user.Requests()))
	require.NotZero(t, len(judge.Requests()))

	models, err := tm.Models()
	require.NoError(t, err)
	want, err := validate.Corpus(context.Background(), modelsCorpus(), nil, validate.Options{Jobs: 2, Models: models})
	require.NoError(t, err)
	assert.Equal(t, reportJSON(want), reportJSON(got))
	assert.Equal(t, 2*asked, len(user.Requests())+len(judge.Requests()), "the same runs asked the models in the worker and here")

	require.Len(t, got.Tasks, 2)
	assert.Equal(t, "ok", got.Tasks[0].Status, "judged-summary: the judge model agrees with the stand-in")
	pick := got.Tasks[1]
	require.Equal(t, "pick-report", pick.Task)
	require.Len(t, pick.Diagnostics, 1)
	assert.Equal(t, "unsolved", pick.Diagnostics[0].Code)
	assert.True(t, strings.HasPrefix(pick.Diagnostics[0].Message, validate.ModelsPrefix), pick.Diagnostics[0].Message)

	for _, r := range append(user.Requests(), judge.Requests()...) {
		assert.Equal(t, "Bearer "+key, r.Header.Get("Authorization"))
	}
	env, err := os.ReadFile(filepath.Join(dir, "env"))
	require.NoError(t, err)
	assert.NotContains(t, string(env), key)
	sent, err := os.ReadFile(filepath.Join(dir, "stdin"))
	require.NoError(t, err)
	assert.Contains(t, string(sent), `"model":"user-model"`, "the worker was given the models' settings")
	assert.Contains(t, string(sent), `"model":"judge-model"`)
	assert.NotContains(t, string(sent), key)
	assert.NotContains(t, reportJSON(got), key)
}

// A user model's retries wait in this process, which is told about them with the model named;
// a model that fails for good is one model-error per task, in a worker as here.
func TestValidateModelRetriesAndFailureInWorker(t *testing.T) {
	var calls atomic.Int32
	user := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if calls.Add(1) == 1 {
			return chattest.Error(http.StatusServiceUnavailable, "busy", "")
		}
		return chattest.Error(http.StatusUnauthorized, "bad key", "invalid_request_error")
	})
	var retries []string
	var slept atomic.Int32
	tm := &isolate.TaskModels{
		User: isolate.SettingsOf(modelagent.Config{Model: "u", BaseURL: user.BaseURL(), MaxRetries: 1}),
		Base: modelagent.Config{APIKey: "sk-pool",
			Sleep:   func(context.Context, time.Duration) error { slept.Add(1); return nil },
			OnRetry: func(attempt int, delay time.Duration, reason error) { retries = append(retries, reason.Error()) }},
	}
	p := newPool(t, isolate.Options{Workers: 1})
	got, err := isolate.ValidateCorpusWith(context.Background(), p, modelsCorpus(), []string{"pick_report.star"}, isolate.ValidateOptions{Models: tm})
	require.NoError(t, err)
	assert.Equal(t, []string{"the user model: HTTP 503 Service Unavailable"}, retries)
	assert.EqualValues(t, 1, slept.Load(), "the worker waited in the pool")
	assert.Len(t, user.Requests(), 2, "one request and its retry, then the check with the models gave up")
	require.Len(t, got.Tasks, 1)
	tr := got.Tasks[0]
	require.Len(t, tr.Diagnostics, 1)
	assert.Equal(t, episode.ModelError, tr.Diagnostics[0].Code)
	assert.Contains(t, tr.Diagnostics[0].Message, validate.ModelsPrefix+"a model's request failed for good")
	assert.Contains(t, tr.Diagnostics[0].Message, "HTTP 401 Unauthorized: bad key")

	calls.Store(0)
	tm.Base.OnRetry, tm.Base.Sleep = nil, func(context.Context, time.Duration) error { return nil }
	models, err := tm.Models()
	require.NoError(t, err)
	want, err := validate.Corpus(context.Background(), modelsCorpus(), []string{"pick_report.star"}, validate.Options{Models: models})
	require.NoError(t, err)
	assert.Equal(t, reportJSON(want), reportJSON(got))
}
