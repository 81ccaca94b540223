package simmodel_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/simmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUserAnswer(t *testing.T) {
	long := strings.Repeat("é", simmodel.MaxAnswer) // two bytes each
	for _, c := range []struct {
		name, text, content string
		done                bool
	}{
		{"an answer", "  The report goes to /reports/q3.md.\n", "The report goes to /reports/q3.md.", false},
		{"done", "DONE", "", true},
		{"done in lower case with a dot", "done.", "", true},
		{"done with exclamation marks", " Done!! ", "", true},
		{"a last line DONE drops the text before it", "Thanks, that is all I needed.\nDONE", "", true},
		{"DONE inside a sentence is not done", "I am not DONE yet: which month?", "I am not DONE yet: which month?", false},
		{"DONE on a first line only is not done", "DONE\nwait, one more thing", "DONE\nwait, one more thing", false},
		{"a think block is taken out", "<think>The agent asks about the month.</think>\nMarch, please.", "March, please.", false},
		{"a closing think tag only", "the template opened it</think> March.", "March.", false},
		{"a think block and then DONE", "<think>all good</think>DONE", "", true},
		{"an empty answer is done", "  \n", "", true},
		{"only thinking is done", "<think>cut off while thinking", "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			content, done := simmodel.UserAnswer(c.text)
			assert.Equal(t, c.content, content)
			assert.Equal(t, c.done, done)
		})
	}
	t.Run("a long answer is cut at a character", func(t *testing.T) {
		content, done := simmodel.UserAnswer(long)
		assert.False(t, done)
		assert.Equal(t, simmodel.MaxAnswer, len(content))
		assert.True(t, strings.HasPrefix(long, content))
	})
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		name, text string
		passed     bool
		score      float64
		reason     string
	}{
		{"a plain object", `{"passed": true, "score": 0.9, "reason": "Names the owner."}`, true, 0.9, "Names the owner."},
		{"in a code fence with text around", "Here is my verdict:\n```json\n{\"passed\": false, \"score\": 0.2, \"reason\": \"Wrong date.\"}\n```\nHope it helps.",
			false, 0.2, "Wrong date."},
		{"after a think block that holds braces", "<think>maybe {\"passed\": true}</think>{\"passed\": false, \"score\": 0, \"reason\": \"no\"}", false, 0, "no"},
		{"a score over 1 is clamped", `{"passed": true, "score": 7}`, true, 1, ""},
		{"a negative score is clamped", `{"passed": false, "score": -2, "reason": "bad"}`, false, 0, "bad"},
		{"without passed, a score of 0.5 passes", `{"score": 0.5, "reason": "half"}`, true, 0.5, "half"},
		{"without passed, a score under 0.5 fails", `{"score": 0.49}`, false, 0.49, ""},
		{"without a score, a pass scores 1", `{"passed": true, "reason": "ok"}`, true, 1, "ok"},
		{"without a score, a fail scores 0", `{"passed": false}`, false, 0, ""},
		{"values written as strings", `{"passed": "true", "score": "0.75"}`, true, 0.75, ""},
		{"null is no value", `{"passed": null, "score": 0.8}`, true, 0.8, ""},
		{"a verdict inside another object", `{"verdict": {"passed": true, "score": 1, "reason": "fine"}}`, true, 1, "fine"},
		{"an object that is no verdict comes first", `{"note": "x"} then {"passed": false, "score": 0.1, "reason": "late"}`, false, 0.1, "late"},
		{"the reason is made one line", "{\"passed\": true, \"score\": 1, \"reason\": \" first\\n\\nsecond \\t third \"}", true, 1, "first second third"},
		{"no JSON at all", "The reply looks right to me.", false, 0, "the judge's answer was not a verdict: The reply looks right to me."},
		{"JSON without a verdict", `{"answer": "yes"}`, false, 0, `the judge's answer was not a verdict: {"answer": "yes"}`},
		{"a cut-off object", `{"passed": true, "score": 0.`, false, 0, `the judge's answer was not a verdict: {"passed": true, "score": 0.`},
		{"an empty answer", "", false, 0, "the judge's answer was not a verdict: it was empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			passed, score, reason := simmodel.Verdict(c.text)
			assert.Equal(t, c.passed, passed)
			assert.Equal(t, c.score, score)
			assert.Equal(t, c.reason, reason)
		})
	}
	t.Run("the quote of an answer that is no verdict is its first 80 characters, on one line", func(t *testing.T) {
		text := strings.Repeat("ab\n", 50)
		_, _, reason := simmodel.Verdict(text)
		want := "the judge's answer was not a verdict: " + strings.Join(strings.Fields(strings.Repeat("ab\n", 27)[:80]), " ") + "…"
		assert.Equal(t, want, reason)
	})
	t.Run("a long reason is cut", func(t *testing.T) {
		_, _, reason := simmodel.Verdict(`{"passed": true, "reason": "` + strings.Repeat("x", 5000) + `"}`)
		assert.Equal(t, strings.Repeat("x", simmodel.MaxReason), reason)
	})
	t.Run("many braces are no trap", func(t *testing.T) {
		passed, _, reason := simmodel.Verdict(strings.Repeat(`{"a":`, 200000))
		assert.False(t, passed)
		assert.Contains(t, reason, "not a verdict")
	})
}

// request is a conversation the engine could build for a model inside the task.
func request(system string, turns ...string) []jsonv.Value {
	out := []jsonv.Value{jsonv.NewObject("role", "system", "content", system)}
	for i, s := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, jsonv.NewObject("role", role, "content", s))
	}
	return out
}

func say(text string) chattest.Answer { return chattest.Answer{Body: chattest.Say(text)} }

// noSleep makes retries immediate.
func noSleep(context.Context, time.Duration) error { return nil }

func TestModelsSendTheEnginesRequest(t *testing.T) {
	users := chattest.New(t, chattest.InOrder(say("It is for the March report."), say("Perfect.\nDONE")))
	judges := chattest.New(t, chattest.InOrder(say("```json\n{\"passed\": true, \"score\": 0.8, \"reason\": \"Polite and complete.\"}\n```")))
	m, err := simmodel.New(
		&modelagent.Config{Model: " user-model ", BaseURL: users.BaseURL(), APIKey: "user-key"},
		&modelagent.Config{Model: "judge-model", BaseURL: judges.BaseURL(), APIKey: "judge-key"})
	require.NoError(t, err)
	require.NotNil(t, m.User)
	require.NotNil(t, m.Judge)

	x := &episode.UserAsk{Turn: 0, Said: "Which report?", Request: request("You are Dana.", "Send the report.", "Which report?")}
	require.NoError(t, m.User(context.Background(), x))
	assert.Equal(t, "It is for the March report.", x.Content)
	assert.False(t, x.Done)
	assert.Equal(t, "model", x.Source)
	assert.Equal(t, "user-model", x.Model)

	x2 := &episode.UserAsk{Turn: 0, Round: 1, Said: "Sent.", Request: request("You are Dana.", "Send the report.", "Which report?", "It is for the March report.", "Sent.")}
	require.NoError(t, m.User(context.Background(), x2))
	assert.Equal(t, "", x2.Content)
	assert.True(t, x2.Done)

	reqs := users.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "user-model", reqs[0].Model)
	assert.Equal(t, "Bearer user-key", reqs[0].Header.Get("Authorization"))
	assert.Nil(t, reqs[0].Tools, "a simulated user gets no tools")
	var roles, contents []string
	for _, msg := range reqs[0].Messages {
		roles = append(roles, msg["role"].(string))
		contents = append(contents, msg["content"].(string))
	}
	assert.Equal(t, []string{"system", "user", "assistant"}, roles)
	assert.Equal(t, []string{"You are Dana.", "Send the report.", "Which report?"}, contents)
	assert.Len(t, reqs[1].Messages, 5)

	turn := 0
	j := &episode.JudgeCall{Turn: &turn, Rubric: "polite", Text: "Dear Dana, ...", Request: request("You are a strict judge.", "Rubric: polite\nText: Dear Dana, ...")}
	require.NoError(t, m.Judge(context.Background(), j))
	assert.True(t, j.Passed)
	assert.Equal(t, 0.8, j.Score)
	assert.Equal(t, "Polite and complete.", j.Reason)
	assert.Equal(t, "model", j.Source)
	assert.Equal(t, "judge-model", j.Model)
	jr := judges.Requests()
	require.Len(t, jr, 1)
	assert.Equal(t, "judge-model", jr[0].Model)
	assert.Equal(t, "Bearer judge-key", jr[0].Header.Get("Authorization"))
}

func TestOnlyTheModelsGiven(t *testing.T) {
	m, err := simmodel.New(nil, nil)
	require.NoError(t, err)
	assert.Nil(t, m, "no model: the stand-ins answer")

	srv := chattest.New(t, chattest.InOrder())
	m, err = simmodel.New(nil, &modelagent.Config{Model: "j", BaseURL: srv.BaseURL()})
	require.NoError(t, err)
	assert.Nil(t, m.User)
	assert.NotNil(t, m.Judge)

	_, err = simmodel.New(&modelagent.Config{Model: "", BaseURL: srv.BaseURL()}, nil)
	assert.ErrorContains(t, err, "the user model")
	_, err = simmodel.New(nil, &modelagent.Config{Model: "j", BaseURL: "ftp://x"})
	assert.ErrorContains(t, err, "the judge model")
}

// A request that fails for good is a *modelagent.RequestError (model-error) after the retries;
// one that fails now and then is retried.
func TestModelFailures(t *testing.T) {
	srv := chattest.New(t, chattest.InOrder(
		chattest.Error(http.StatusServiceUnavailable, "busy", ""), say("Yes, March."),
		chattest.Error(http.StatusBadRequest, "bad request", "invalid_request_error"),
		chattest.Error(http.StatusServiceUnavailable, "busy", ""), chattest.Error(http.StatusServiceUnavailable, "still busy", ""),
	))
	var retries int
	cfg := modelagent.Config{Model: "u", BaseURL: srv.BaseURL(), MaxRetries: 1, Sleep: noSleep,
		OnRetry: func(int, time.Duration, error) { retries++ }}
	m, err := simmodel.New(&cfg, &cfg)
	require.NoError(t, err)

	x := &episode.UserAsk{Said: "Which month?", Request: request("You are Dana.", "Send it.", "Which month?")}
	require.NoError(t, m.User(context.Background(), x))
	assert.Equal(t, "Yes, March.", x.Content)
	assert.Equal(t, 1, retries)

	err = m.User(context.Background(), &episode.UserAsk{Request: request("s", "u")})
	var re *modelagent.RequestError
	require.True(t, errors.As(err, &re), "%T %v", err, err)
	assert.Equal(t, 400, re.Code)
	var coded episode.CodedError
	require.True(t, errors.As(err, &coded))
	assert.Equal(t, episode.ModelError, coded.DiagCode())

	err = m.Judge(context.Background(), &episode.JudgeCall{Rubric: "r", Text: "t", Request: request("s", "u")})
	require.True(t, errors.As(err, &re), "%T %v", err, err)
	assert.Equal(t, 503, re.Code)
	assert.Equal(t, 2, re.Attempts)
}

// A request that is not chat messages never reaches the model.
func TestRequestNotMessages(t *testing.T) {
	srv := chattest.New(t, chattest.InOrder(say("hi")))
	m, err := simmodel.New(&modelagent.Config{Model: "u", BaseURL: srv.BaseURL()}, nil)
	require.NoError(t, err)
	err = m.User(context.Background(), &episode.UserAsk{Request: []jsonv.Value{"not a message"}})
	assert.ErrorContains(t, err, "not a list of chat messages")
	err = m.User(context.Background(), &episode.UserAsk{})
	assert.ErrorContains(t, err, "no message")
	assert.Empty(t, srv.Requests())
}
