package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// chatFake is an OpenAI chat-completions server whose answers come from a policy: a function
// of the conversation so far (an answer starting with "!" is sent as a 400 error with the rest
// as its body). A policy (rather than a queue of answers) keeps the answers right
// when many episodes talk to the server at once.
type chatFake struct {
	t      *testing.T
	srv    *httptest.Server
	policy func(msgs []map[string]any) string // returns a completion body
	mu     sync.Mutex
	reqs   []map[string]any
}

func newChatFake(t *testing.T, policy func(msgs []map[string]any) string) *chatFake {
	t.Helper()
	f := &chatFake{t: t, policy: policy}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the base URL to give --base-url.
func (f *chatFake) url() string { return f.srv.URL + "/v1" }

func (f *chatFake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"fake: unexpected path"}}`, http.StatusNotFound)
		return
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("fake: request is not JSON: %v", err)
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	raw, _ := req["messages"].([]any)
	msgs := make([]map[string]any, len(raw))
	for i, m := range raw {
		msgs[i], _ = m.(map[string]any)
	}
	w.Header().Set("Content-Type", "application/json")
	answer := f.policy(msgs)
	if rest, ok := strings.CutPrefix(answer, "!"); ok {
		w.WriteHeader(http.StatusBadRequest)
		answer = rest
	}
	fmt.Fprint(w, answer)
}

func (f *chatFake) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.reqs...)
}

// chatCompletion is an answer with one choice; msg is the message's JSON.
func chatCompletion(finish, msg string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1767603600,"model":"fake-model",` +
		`"choices":[{"index":0,"message":` + msg + `,"finish_reason":"` + finish + `"}],` +
		`"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chatSay is an answer with text and no tool call.
func chatSay(text string) string {
	return chatCompletion("stop", `{"role":"assistant","content":`+jsonText(text)+`}`)
}

// chatCall is one tool call's JSON.
func chatCall(id, name, args string) string {
	return `{"id":` + jsonText(id) + `,"type":"function","function":{"name":` + jsonText(name) + `,"arguments":` + jsonText(args) + `}}`
}

// chatCalls is an answer with tool calls, and text beside them ("" for null).
func chatCalls(text string, calls ...string) string {
	content := "null"
	if text != "" {
		content = jsonText(text)
	}
	return chatCompletion("tool_calls", `{"role":"assistant","content":`+content+`,"tool_calls":[`+strings.Join(calls, ",")+`]}`)
}

// toolMessages are the tool messages of a conversation.
func toolMessages(msgs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		if m["role"] == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// modelCLI runs the command line.
func modelCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeFiles writes files (relative path -> content) under a new temporary folder.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

// readLines reads a JSON Lines file into decoded objects.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" && i == 0 {
			break
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), "line %d of %s", i+1, path)
		out = append(out, m)
	}
	return out
}
