package isolate

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker's call for a model inside the task is served only for a model the episode names, to
// that model's base URL, with the pool's key and without the agent model's extra headers; the
// worker is given the settings and never the key.
func TestTaskModelCalls(t *testing.T) {
	t.Parallel()
	srv := chattest.New(t, func(r *chattest.Request) chattest.Answer { return chattest.Answer{Body: chattest.Say("hi")} })
	other := chattest.New(t, func(r *chattest.Request) chattest.Answer { return chattest.Answer{Body: chattest.Say("no")} })
	base := modelagent.Config{Model: "agent-model", BaseURL: other.BaseURL(), APIKey: "sk-pool", Headers: http.Header{"X-Agent-Secret": {"s"}}}
	a := Agent{Name: "openai", Model: SettingsOf(base), User: SettingsOf(modelagent.Config{Model: "u", BaseURL: srv.BaseURL()})}

	sent, err := json.Marshal(a)
	require.NoError(t, err)
	assert.NotContains(t, string(sent), "sk-pool")
	assert.NotContains(t, string(sent), `"s"`)

	call := func(role, url string) (json.RawMessage, error) {
		params, err := json.Marshal(&httpCall{Method: http.MethodPost, URL: url, Header: http.Header{"Authorization": {"Bearer stolen"}}, Body: []byte(`{"model":"u","messages":[]}`)})
		require.NoError(t, err)
		cfg, err := taskModel(a, role, base)
		if err != nil {
			return nil, err
		}
		return serveModel(context.Background(), cfg, "http", params)
	}
	_, err = call(RoleUser, srv.BaseURL()+"/chat/completions")
	require.NoError(t, err)
	require.Len(t, srv.Requests(), 1)
	assert.Equal(t, "Bearer sk-pool", srv.Requests()[0].Header.Get("Authorization"))
	assert.Empty(t, srv.Requests()[0].Header.Get("X-Agent-Secret"), "the agent's headers are the agent's")

	_, err = call(RoleUser, other.BaseURL()+"/chat/completions")
	assert.ErrorContains(t, err, "the worker may only send the model's requests to "+srv.BaseURL())
	_, err = call(RoleJudge, srv.BaseURL()+"/chat/completions")
	assert.EqualError(t, err, "the episode has no judge model")
	_, err = call("agent", srv.BaseURL()+"/chat/completions")
	assert.EqualError(t, err, `unknown model "agent"`)
	assert.Len(t, srv.Requests(), 1)
	assert.Empty(t, other.Requests())
}
