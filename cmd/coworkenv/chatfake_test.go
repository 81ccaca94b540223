package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/stretchr/testify/require"
)

// chatFake is an OpenAI chat-completions server whose answers come from a policy: a function
// of the conversation so far (an answer starting with "!" is sent as a 400 error with the rest
// as its body). A policy (rather than a queue of answers) keeps the answers right
// when many episodes talk to the server at once.
type chatFake struct {
	srv *chattest.Server
}

func newChatFake(t *testing.T, policy func(msgs []map[string]any) string) *chatFake {
	t.Helper()
	return &chatFake{chattest.New(t, func(r *chattest.Request) chattest.Answer {
		answer := policy(r.Messages)
		if rest, ok := strings.CutPrefix(answer, "!"); ok {
			return chattest.Answer{Status: http.StatusBadRequest, Body: rest}
		}
		return chattest.Answer{Body: answer}
	})}
}

// url is the base URL to give --base-url.
func (f *chatFake) url() string { return f.srv.BaseURL() }

func (f *chatFake) requests() []map[string]any { return f.srv.JSON() }

// chatSay is an answer with text and no tool call.
var chatSay = chattest.Say

// chatCall is one tool call's JSON.
var chatCall = chattest.Call

// chatCalls is an answer with tool calls, and text beside them ("" for null).
var chatCalls = chattest.Calls

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
