package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The pool sends a worker's model requests to the configured base URL only, with its own key in
// place of any the worker sent.
func TestServeModelSendsOnlyToTheBaseURL(t *testing.T) {
	t.Parallel()
	srv := chattest.New(t, func(r *chattest.Request) chattest.Answer { return chattest.Answer{Body: chattest.Say("hi")} })
	cfg := modelagent.Config{Model: "m", BaseURL: srv.BaseURL() + "/", APIKey: "sk-pool"}
	call := func(method, url string) (json.RawMessage, error) {
		params, err := json.Marshal(&httpCall{Method: method, URL: url, Header: http.Header{"Authorization": {"Bearer stolen"}}, Body: []byte(`{"model":"m","messages":[]}`)})
		require.NoError(t, err)
		return serveModel(context.Background(), cfg, "http", params)
	}
	raw, err := call(http.MethodPost, srv.BaseURL()+"/chat/completions")
	require.NoError(t, err)
	var ans httpCall
	require.NoError(t, json.Unmarshal(raw, &ans))
	assert.Equal(t, http.StatusOK, ans.Status)
	assert.Contains(t, string(ans.Body), `"hi"`)
	require.Len(t, srv.Requests(), 1)
	assert.Equal(t, "Bearer sk-pool", srv.Requests()[0].Header.Get("Authorization"))

	for _, bad := range [][2]string{
		{http.MethodGet, srv.BaseURL() + "/chat/completions"},
		{http.MethodPost, srv.URL + "/elsewhere"},
		{http.MethodPost, "http://127.0.0.1:1/v1/chat/completions"},
		{http.MethodPost, srv.BaseURL() + ".evil.example/chat/completions"},
	} {
		_, err := call(bad[0], bad[1])
		require.Error(t, err, "%v", bad)
		assert.Contains(t, err.Error(), "the worker may only send the model's requests to "+srv.BaseURL())
	}
	assert.Len(t, srv.Requests(), 1, "nothing else was sent")

	_, err = serveModel(context.Background(), cfg, "shell", nil)
	assert.EqualError(t, err, `unknown call "shell"`)
}

// A failed request reaches the worker's model agent as the same kind of error: a timeout, a
// refused connection or a cut answer stays worth a retry, a name that does not resolve does not.
func TestRemoteErrorsKeepTheirKind(t *testing.T) {
	t.Parallel()
	var ne net.Error
	for _, err := range []error{
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true},
		&net.DNSError{Err: "i/o timeout", Name: "x.example", IsTimeout: true},
	} {
		r := &remoteError{failureOf(err)}
		assert.Equal(t, err.Error(), r.Error())
		assert.Equal(t, errors.Is(err, syscall.ECONNREFUSED), errors.Is(r, syscall.ECONNREFUSED))
		assert.Equal(t, errors.As(err, &ne) && ne.Timeout(), errors.As(r, &ne) && ne.Timeout())
		var d1, d2 *net.DNSError
		if errors.As(err, &d1) {
			require.True(t, errors.As(r, &d2))
			assert.Equal(t, d1.IsTimeout, d2.IsTimeout)
			assert.Equal(t, d1.IsNotFound, d2.IsNotFound)
		}
	}
}
