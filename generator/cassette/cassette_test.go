package cassette_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/generator/cassette"
	"github.com/stretchr/testify/require"
)

func post(t *testing.T, rt http.RoundTripper, ctx context.Context, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://model.invalid/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), nil
}

func TestRecordAndReplay(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n++
		if n == 2 {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, "slow down")
			return
		}
		w.Write(bytes.ToUpper(body))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "c.cassette")
	rec, err := cassette.NewRecorder(path, false, "m", &rewrite{srv.URL})
	require.NoError(t, err)
	a0, a1 := cassette.WithAttempt(context.Background(), 0), cassette.WithAttempt(context.Background(), 1)
	for _, x := range []struct {
		ctx  context.Context
		body string
	}{{a1, `{"q":"one"}`}, {a0, `{"q":"zero"}`}, {a1, `{"q":"two"}`}} {
		_, _, err := post(t, rec, x.ctx, x.body)
		require.NoError(t, err)
	}
	_, _, err = post(t, rec, context.Background(), "{}")
	require.ErrorContains(t, err, "carries no attempt")
	require.NoError(t, rec.Close())

	// A line cut short by a kill is ignored.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	f.WriteString(`{"attempt":5,"seq":0,"requ`)
	f.Close()

	p, err := cassette.Load(path)
	require.NoError(t, err)
	require.Equal(t, "m", p.Model())
	require.Equal(t, 3, p.Len())
	// attempts replay in any order; within one, in order
	code, body, err := post(t, p, a0, `{"q":"zero"}`)
	require.NoError(t, err)
	require.Equal(t, 429, code)
	require.Equal(t, "slow down", body)
	code, body, err = post(t, p, a1, `{"q":"one"}`)
	require.NoError(t, err)
	require.Equal(t, 200, code)
	require.Equal(t, `{"Q":"ONE"}`, body)
	_, _, err = post(t, p, a1, `{"q":"TWO"}`)
	require.ErrorContains(t, err, `attempt 1, request 2 differs from the recording`)
	require.ErrorContains(t, err, `recorded …{"q":"two"}… now …{"q":"TWO"}…`)
	_, _, err = post(t, p, a0, `{"q":"more"}`)
	require.ErrorContains(t, err, "attempt 0 makes request 2, which was not recorded")

	_, err = cassette.Load(filepath.Join(t.TempDir(), "none"))
	require.Error(t, err)
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("{}\n"), 0o644)
	_, err = cassette.Load(bad)
	require.ErrorContains(t, err, "not a cassette")
}

// rewrite sends requests to a test server.
type rewrite struct{ base string }

func (r *rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	u := *req.URL
	out := req.Clone(req.Context())
	s := strings.TrimPrefix(r.base, "http://")
	u.Host = s
	out.URL = &u
	out.Host = s
	return http.DefaultTransport.RoundTrip(out)
}
