package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// episodeAnswer is the answer to POST /episodes.
type episodeAnswer struct {
	ID         string  `json:"id"`
	Task       string  `json:"task"`
	Seed       int64   `json:"seed"`
	Reward     float64 `json:"reward"`
	Passed     bool    `json:"passed"`
	Components struct {
		Completion float64 `json:"completion"`
		Safety     float64 `json:"safety"`
		Robustness float64 `json:"robustness"`
	} `json:"components"`
	TurnRewards []*float64        `json:"turn_rewards"`
	Checks      []trace.Check     `json:"checks"`
	State       string            `json:"state"`
	Error       *trace.Failure    `json:"error"`
	Messages    []map[string]any  `json:"messages"`
	Tools       []json.RawMessage `json:"tools"`
	Trace       []json.RawMessage `json:"trace"`
	TraceFile   string            `json:"trace_file"`
	TraceError  string            `json:"trace_error"`
}

// runEpisode posts an episode and decodes a 200 answer.
func (c *client) runEpisode(body map[string]any) (int, episodeAnswer, []byte) {
	c.t.Helper()
	status, data := c.do("POST", "/episodes", body, nil)
	var ea episodeAnswer
	if status == http.StatusOK {
		require.NoError(c.t, json.Unmarshal(data, &ea), "%s", data)
	}
	return status, ea, data
}

// oracleModel is a fake model that plays the oracle's actions in order: the n-th answer of the
// conversation is the n-th action, a tool call or a message.
func oracleModel(t *testing.T, acts [][]act) *chattest.Server {
	var flat []act
	for _, turn := range acts {
		flat = append(flat, turn...)
	}
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		n := r.Rounds()
		if n >= len(flat) {
			return chattest.Error(http.StatusBadRequest, "the oracle has no more actions", "")
		}
		a := flat[n]
		if a.reply {
			return chattest.Answer{Body: chattest.Say(a.text)}
		}
		return chattest.Answer{Body: chattest.Calls("", chattest.Call(fmt.Sprintf("call_o%d", n+1), a.name, jsonv.MustEncode(a.args)))}
	})
}

// traceText is the trace of an answer as the JSON Lines file it stands for.
func traceText(events []json.RawMessage) []byte {
	var b bytes.Buffer
	for _, ev := range events {
		b.Write(ev)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// A model that makes the oracle's calls and replies, in a single-turn task, a two-turn task and
// a task whose user is simulated: the episode's reward, its parts, its turn rewards and its
// checks are the oracle's; the conversation is the one the model was sent, and the trace (in the
// answer and in the trace folder) is a model's trace that replays.
func TestEpisodeAgainstOracleModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, c := newServer(t, serve.Options{TraceDir: dir})
	_, tasks := builtin()
	for _, name := range []string{"fuel-surcharge-answer", "carrier-quote-award", "consult-vat-reverse-charge"} {
		t.Run(name, func(t *testing.T) {
			c.t = t
			acts, want := oracleActs(t, tasks[name], 7)
			model := oracleModel(t, acts)
			status, ea, data := c.runEpisode(map[string]any{"task": name, "seed": 7, "model": "policy", "base_url": model.BaseURL()})
			require.Equal(t, http.StatusOK, status, "%s", data)

			assert.Nil(t, ea.Error, "%s", data)
			assert.Equal(t, name, ea.Task)
			assert.Equal(t, int64(7), ea.Seed)
			assert.Equal(t, want.Score, ea.Reward)
			assert.Equal(t, want.Passed, ea.Passed)
			assert.True(t, ea.Passed)
			assert.Equal(t, want.Completion, ea.Components.Completion)
			assert.Equal(t, want.Safety, ea.Components.Safety)
			assert.Equal(t, want.Robustness, ea.Components.Robustness)
			require.Len(t, ea.TurnRewards, len(want.Turns))
			for i, turn := range want.Turns {
				assert.Equal(t, turn.Score, ea.TurnRewards[i], "turn %d", i+1)
			}
			assert.Equal(t, trace.Checks(want.Items), ea.Checks)
			assert.Equal(t, want.FinalState, ea.State)
			assert.Len(t, ea.Tools, len(tasks[name].Tools))

			// the conversation: the last request's messages and the model's last answer
			reqs := model.Requests()
			last := reqs[len(reqs)-1]
			require.Len(t, ea.Messages, len(last.Messages)+1)
			for i, m := range last.Messages {
				assert.Equal(t, m, ea.Messages[i], "message %d", i)
			}
			final := ea.Messages[len(ea.Messages)-1]
			assert.Equal(t, "assistant", final["role"])
			assert.Equal(t, want.Turns[len(want.Turns)-1].Reply, final["content"])

			// the trace: a model's trace, the same in the answer and in the folder, that replays
			require.NotEmpty(t, ea.Trace)
			events, err := trace.Read(bytes.NewReader(traceText(ea.Trace)))
			require.NoError(t, err)
			start := events[0].Body.(*trace.Start)
			assert.Equal(t, "openai", start.Agent)
			require.NotNil(t, start.Model)
			assert.Equal(t, "policy", start.Model.Name)
			assert.Equal(t, ea.Messages[0]["content"], start.System)
			end := events[len(events)-1].Body.(*trace.End)
			assert.Equal(t, *trace.EndOf(want), *end)

			assert.Equal(t, filepath.Join(dir, ea.ID+".jsonl"), ea.TraceFile)
			assert.Empty(t, ea.TraceError)
			file, err := os.ReadFile(ea.TraceFile)
			require.NoError(t, err)
			assert.Equal(t, string(traceText(ea.Trace)), string(file))
			r := replayFile(t, ea.TraceFile)
			assert.True(t, r.Matched(), "%v", r.Divergence)
		})
	}
}

// The sampling settings, the extra body and the headers reach the model server on every request,
// with the key as the bearer token; the trace records the headers' names, and neither the key
// nor a header's value appears in the answer or the trace file.
func TestEpisodePassesSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, c := newServer(t, serve.Options{TraceDir: dir})
	model := chattest.New(t, func(*chattest.Request) chattest.Answer { return chattest.Answer{Body: chattest.Say("Done.")} })
	const key = "sk-test-0123456789abcdef"
	status, ea, data := c.runEpisode(map[string]any{
		"task": "fuel-surcharge-answer", "seed": 3, "model": "policy", "base_url": model.BaseURL() + "/", "api_key": key,
		"temperature": 0.7, "top_p": 0.95, "max_tokens": 512, "stop": []string{"</answer>"}, "tool_choice": "auto",
		"extra_body": json.RawMessage(`{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}, "session_id": "rollout-42"}`),
		"headers":    map[string]string{"X-Session-Id": "route-to-worker-7", "x-trainer-step": "step-000123"},
	})
	require.Equal(t, http.StatusOK, status, "%s", data)

	reqs := model.Requests()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.Equal(t, "policy", r.Model)
		assert.Equal(t, "Bearer "+key, r.Header.Get("Authorization"))
		assert.Equal(t, "route-to-worker-7", r.Header.Get("X-Session-Id"))
		assert.Equal(t, "step-000123", r.Header.Get("X-Trainer-Step"))
		assert.Equal(t, 0.7, r.JSON["temperature"])
		assert.Equal(t, 0.95, r.JSON["top_p"])
		assert.Equal(t, 512.0, r.JSON["max_tokens"])
		assert.Equal(t, []any{"</answer>"}, r.JSON["stop"])
		assert.Equal(t, 20.0, r.JSON["top_k"])
		assert.Equal(t, map[string]any{"enable_thinking": false}, r.JSON["chat_template_kwargs"])
		assert.Equal(t, "rollout-42", r.JSON["session_id"])
		assert.NotEmpty(t, r.Tools)
		assert.Equal(t, "auto", r.JSON["tool_choice"])
	}

	events, err := trace.Read(bytes.NewReader(traceText(ea.Trace)))
	require.NoError(t, err)
	m := events[0].Body.(*trace.Start).Model
	require.NotNil(t, m)
	assert.Equal(t, []any{"X-Session-Id", "X-Trainer-Step"}, m.Headers)
	assert.Equal(t, model.BaseURL(), m.BaseURL)
	assert.Equal(t, "auto", m.ToolChoice)
	file, err := os.ReadFile(ea.TraceFile)
	require.NoError(t, err)
	for _, secret := range []string{key, "route-to-worker-7", "step-000123"} {
		assert.NotContains(t, string(data), secret)
		assert.NotContains(t, string(file), secret)
	}
}

// A model whose endpoint fails ends the episode with model-error, the HTTP status in its
// message, and a reward of 0; a key the server echoes back in its error is taken out of the
// answer and the trace.
func TestEpisodeModelError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, c := newServer(t, serve.Options{TraceDir: dir})
	const key = "sk-live-abcdefghijklmnop"
	model := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		return chattest.Error(http.StatusUnauthorized, "Incorrect API key provided: "+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "invalid_request_error")
	})
	status, ea, data := c.runEpisode(map[string]any{"task": "carrier-quote-award", "model": "policy", "base_url": model.BaseURL(), "api_key": key})
	require.Equal(t, http.StatusOK, status, "%s", data)
	require.NotNil(t, ea.Error)
	assert.Equal(t, episode.ModelError, ea.Error.Code)
	assert.Contains(t, ea.Error.Message, "401")
	assert.Contains(t, ea.Error.Message, "[redacted]")
	assert.Zero(t, ea.Reward)
	assert.False(t, ea.Passed)
	require.Len(t, model.Requests(), 1, "a 401 is not retried")
	assert.NotContains(t, string(data), key)

	end := lastEvent(t, ea.TraceFile)
	assert.Equal(t, episode.ModelError, end.Error.Code)
	file, err := os.ReadFile(ea.TraceFile)
	require.NoError(t, err)
	assert.NotContains(t, string(file), key)
	assert.Contains(t, string(file), "[redacted]")

	// an answer that is not a completion is the model's failure too
	garbage := chattest.New(t, func(*chattest.Request) chattest.Answer { return chattest.Answer{Body: "<html>not json"} })
	status, ea, data = c.runEpisode(map[string]any{"task": "carrier-quote-award", "model": "policy", "base_url": garbage.BaseURL(), "max_retries": 0})
	require.Equal(t, http.StatusOK, status, "%s", data)
	require.NotNil(t, ea.Error)
	assert.Equal(t, episode.ModelError, ea.Error.Code)
}

// What the server refuses before it runs anything: no request reaches the model.
func TestEpisodeRefusals(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, serve.Options{MaxBody: 8192})
	model := chattest.New(t, func(*chattest.Request) chattest.Answer { return chattest.Answer{Body: chattest.Say("hi")} })
	ok := func(change map[string]any) map[string]any {
		body := map[string]any{"task": "fuel-surcharge-answer", "model": "policy", "base_url": model.BaseURL()}
		for k, v := range change {
			if v == nil {
				delete(body, k)
			} else {
				body[k] = v
			}
		}
		return body
	}
	for _, tc := range []struct {
		body   any
		status int
		code   string
	}{
		{ok(map[string]any{"task": nil}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"task": "no-such-task"}), 404, serve.CodeUnknownTask},
		{ok(map[string]any{"model": nil}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"model": "  "}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": nil}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "file:///etc/passwd"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "ftp://example.com/v1"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "unix:///var/run/model.sock"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "localhost:8000/v1"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "http:///v1"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "http://user:secret@127.0.0.1:1/v1"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": model.BaseURL() + "?session=1"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"base_url": "http://[::1"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"extra_body": []int{1}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"extra_body": "top_k=20"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"extra_body": map[string]any{"model": "other"}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"extra_body": map[string]any{"stream": true}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"headers": map[string]any{"Host": "elsewhere"}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"headers": map[string]any{"bad name": "x"}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"headers": map[string]any{"X-A": "line\r\nbreak"}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"headers": map[string]any{"X-A": []string{"a", "b"}}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"temperature": -1}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"top_p": 2}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"max_tokens": -5}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"stop": []string{""}}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"tool_call_format": "xml"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"reasoning_history": "sometimes"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"tool_choice": "always"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"max_retries": -1}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"max_retries": 1000}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"timeout": 0}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"timeout": 1e12}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"temperature": "hot"}), 400, serve.CodeBadRequest},
		{ok(map[string]any{"api_kye": "x"}), 400, serve.CodeBadRequest},
		{`{"task": "fuel-surcharge-answer", "model": `, 400, serve.CodeBadJSON},
		{`{"task": "` + strings.Repeat("x", 9000) + `"}`, 413, serve.CodeBodyTooLarge},
	} {
		status, data := c.do("POST", "/episodes", tc.body, nil)
		assert.Equal(t, tc.status, status, "%v: %s", tc.body, data)
		assert.Equal(t, tc.code, errorCode(t, data), "%v: %s", tc.body, data)
	}
	assert.Empty(t, model.Requests())
	status, data := c.do("GET", "/episodes", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status)
	assert.Equal(t, serve.CodeMethodNotAllowed, errorCode(t, data))

	// a server with a token wants it here too
	_, tc := newServer(t, serve.Options{Token: "t0ken"})
	tc.token = ""
	status, data = tc.do("POST", "/episodes", ok(nil), nil)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, serve.CodeUnauthorized, errorCode(t, data))
}

// stalledModel is a fake model whose requests wait: each tells arrived when it comes in, and
// is answered with a message when release is closed, or not at all if the client gives up first.
func stalledModel(t *testing.T) (m *chattest.Server, arrived chan struct{}, release chan struct{}) {
	arrived, release = make(chan struct{}, 16), make(chan struct{})
	m = chattest.New(t, func(*chattest.Request) chattest.Answer {
		return chattest.Answer{Handler: func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			select {
			case <-release:
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(chattest.Say("Done.")))
			case <-r.Context().Done():
			}
		}}
	})
	return m, arrived, release
}

// An episode counts as a session while it runs: with one place, a session or another episode is
// refused until it ends.
func TestEpisodeCountsAsSession(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, serve.Options{MaxSessions: 1})
	model, arrived, release := stalledModel(t)
	body := map[string]any{"task": "fuel-surcharge-answer", "model": "policy", "base_url": model.BaseURL()}
	type result struct {
		status int
		ea     episodeAnswer
		data   []byte
	}
	done := make(chan result)
	go func() {
		status, data := c.do("POST", "/episodes", body, nil)
		var ea episodeAnswer
		json.Unmarshal(data, &ea)
		done <- result{status, ea, data}
	}()
	<-arrived
	status, data := c.do("POST", "/sessions", map[string]any{"task": "fuel-surcharge-answer"}, nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, serve.CodeTooManySessions, errorCode(t, data))
	status, data = c.do("POST", "/episodes", body, nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, serve.CodeTooManySessions, errorCode(t, data))

	close(release)
	r := <-done
	require.Equal(t, http.StatusOK, r.status, "%s", r.data)
	assert.Nil(t, r.ea.Error)
	c.create("fuel-surcharge-answer", 0) // the place is free again
}

// Closing the server stops a running episode: it ends as interrupted, its trace complete and
// kept under the .partial name, and the answer still comes.
func TestEpisodeStopsOnClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, c := newServer(t, serve.Options{TraceDir: dir})
	model, arrived, _ := stalledModel(t)
	done := make(chan []byte)
	go func() {
		_, data := c.do("POST", "/episodes", map[string]any{"task": "carrier-quote-award", "model": "policy", "base_url": model.BaseURL()}, nil)
		done <- data
	}()
	<-arrived
	srv.Close()
	var ea episodeAnswer
	data := <-done
	require.NoError(t, json.Unmarshal(data, &ea), "%s", data)
	require.NotNil(t, ea.Error, "%s", data)
	assert.Equal(t, episode.Interrupted, ea.Error.Code)
	assert.Equal(t, filepath.Join(dir, ea.ID+".jsonl.partial"), ea.TraceFile)
	end := lastEvent(t, ea.TraceFile)
	assert.Equal(t, episode.Interrupted, end.Error.Code)
	assert.NoFileExists(t, filepath.Join(dir, ea.ID+".jsonl"))
}

// A client that goes away stops its episode: it ends as interrupted, its trace complete under
// the .partial name.
func TestEpisodeStopsWhenClientLeaves(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c0, _ := builtin()
	srv, err := serve.New(serve.Options{Sources: []serve.Source{{Corpus: c0}}, TraceDir: dir})
	require.NoError(t, err)
	defer srv.Close()
	ts := httptest.NewServer(srv)
	model, arrived, _ := stalledModel(t)
	body := `{"task": "carrier-quote-award", "model": "policy", "base_url": "` + model.BaseURL() + `"}`
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", ts.URL+"/episodes", strings.NewReader(body))
	require.NoError(t, err)
	failed := make(chan error)
	go func() {
		resp, err := ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		failed <- err
	}()
	<-arrived
	cancel()
	assert.Error(t, <-failed)
	ts.Close() // returns once the handler has ended
	end := lastEvent(t, filepath.Join(dir, "s1.jsonl.partial"))
	assert.Equal(t, episode.Interrupted, end.Error.Code)
}
