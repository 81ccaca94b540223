package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `coworkenv serve` listens where it says, serves the corpus it is given with its token, and on
// Ctrl-C (here: its context) closes every session, whose trace ends, and exits 0.
func TestServeCommand(t *testing.T) {
	t.Parallel()
	p := writeTask(t, helloTask)
	traces := filepath.Join(t.TempDir(), "traces")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs, codes := make(chan string, 1), make(chan int, 1)
	var out, errs bytes.Buffer
	go func() {
		codes <- serveUntil(ctx, []string{"--addr", "127.0.0.1:0", "--traces", traces, "--token", "t0k", p}, &out, &errs, nil,
			func(addr string) { addrs <- addr })
	}()
	var addr string
	select {
	case addr = <-addrs:
	case code := <-codes:
		t.Fatalf("serve ended with %d: %s", code, errs.String())
	}

	post := func(path, body, token string) (int, map[string]any) {
		req, err := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var v map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		return resp.StatusCode, v
	}
	status, _ := post("/sessions", `{"task": "hello"}`, "")
	assert.Equal(t, http.StatusUnauthorized, status)
	status, created := post("/sessions", `{"task": "hello"}`, "t0k")
	require.Equal(t, http.StatusCreated, status, "%v", created)
	assert.Equal(t, "s1", created["id"])
	status, step := post("/sessions/s1/call", `{"name": "mail_list", "arguments": {}}`, "t0k")
	require.Equal(t, http.StatusOK, status, "%v", step)

	cancel()
	require.Equal(t, 0, <-codes, errs.String())
	assert.Contains(t, out.String(), "listening on http://"+addr)
	data, err := os.ReadFile(filepath.Join(traces, "s1.jsonl.partial"))
	require.NoError(t, err)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err, "the trace has its end")
	end := events[len(events)-1].Body.(*trace.End)
	assert.Equal(t, "interrupted", end.Error.Code)
}

func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "needs a token"},
		{[]string{"--addr", "nonsense"}, "--addr nonsense"},
		{[]string{"--max-sessions", "0"}, "--max-sessions 0"},
		{[]string{"--idle-timeout", "-1s"}, "--idle-timeout"},
		{[]string{filepath.Join(t.TempDir(), "missing")}, "missing"},
	} {
		code, _, errs := cli(t, append([]string{"serve"}, tc.args...)...)
		assert.Equal(t, 2, code, tc.args)
		assert.Contains(t, errs, tc.want)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	}
}
