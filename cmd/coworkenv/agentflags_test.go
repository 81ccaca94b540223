package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const copyNoteTask = `
def _setup(ws):
    ws.mail.address = "priya@halden.example"
    ws.fs.write("/notes/todo.txt", "call the bank")

def _verify(ws, ep):
    check(ws.fs.exists("/notes/done.txt") and ws.fs.read("/notes/done.txt") == "call the bank", "the note is copied")
    check(len([a for a in ws.history.actions(kind = "file") if a.key == "/notes/done.txt"]) == 1, "written once")
    check(claims.states(ep.reply, "call the bank"), "the reply says what the note says")

def _solve(agent):
    t = agent.call("fs_read", path = "/notes/todo.txt")
    agent.call("fs_write", path = "/notes/done.txt", content = t)
    agent.reply("It says: " + t)

task(
    name = "copy-note",
    capabilities = ["files.organize"],
    prompt = "Copy /notes/todo.txt to /notes/done.txt and tell me what it says.",
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
    max_calls_per_turn = 6,
)
`

// copyNotePolicy solves copy-note: read the note, write the copy, say what it says.
func copyNotePolicy(msgs []map[string]any) string {
	tools := toolMessages(msgs)
	switch len(tools) {
	case 0:
		return chatCalls("", chatCall("c1", "fs_read", `{"path":"/notes/todo.txt"}`))
	case 1:
		content := tools[0]["content"].(string) // a text result is its text
		args, _ := json.Marshal(map[string]string{"path": "/notes/done.txt", "content": content})
		return chatCalls("Copying it now.", chatCall("c2", "fs_write", string(args)))
	}
	return chatSay("Done. The note says: call the bank.")
}

func modelEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", "")
}

// A scripted model solves a task through `run --agent openai --trace`; the trace records the
// system prompt that was sent, and replays without the model.
func TestRunOpenAISolvesTask(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	file := filepath.Join(dir, "copy.star")
	tr := filepath.Join(dir, "copy.jsonl")
	code, out, errs := cli(t, "run", file, "--agent", "openai", "--model", "fake-model", "--base-url", f.url(),
		"--temperature", "0", "--max-tokens", "500", "--trace", tr)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
	assert.Contains(t, out, "agent openai")
	assert.Contains(t, out, "passed")

	reqs := f.requests()
	require.Len(t, reqs, 3)
	temp, ok := reqs[0]["temperature"]
	assert.True(t, ok, "temperature 0 is sent")
	assert.Equal(t, 0.0, temp)
	assert.Equal(t, "fake-model", reqs[0]["model"])
	assert.EqualValues(t, 500, reqs[0]["max_tokens"])
	sent := reqs[0]["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, "system", sent["role"])
	want := modelagent.DefaultSystemPrompt("priya@halden.example", "2026-01-05T09:00:00Z")
	assert.Equal(t, want, sent["content"])

	fh, err := os.Open(tr)
	require.NoError(t, err)
	events, err := trace.Read(fh)
	fh.Close()
	require.NoError(t, err)
	assert.Equal(t, "openai", events[0].Str("agent"))
	assert.Equal(t, want, events[0].Str("system"), "the trace records the prompt sent")
	kinds := []string{}
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []string{"start", "user", "assistant", "call", "result", "assistant", "call", "result", "assistant", "reply", "turn_end", "end"}, kinds)
	assert.NotNil(t, events[2].Value("usage"))
	assert.True(t, events[len(events)-1].Bool("passed"))

	code, out, errs = cli(t, "replay", tr, "--corpus", dir)
	assert.Equal(t, 0, code, "replay needs no model:\n%s%s", out, errs)
	assert.Len(t, f.requests(), 3)
}

// --system replaces the prompt, with {address} and {now} filled in from the state after setup;
// --model alone selects the openai agent.
func TestRunOpenAISystemOverride(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	tr := filepath.Join(dir, "t.jsonl")
	code, out, errs := cli(t, "run", filepath.Join(dir, "copy.star"), "--model", "fake-model", "--base-url", f.url(),
		"--system", "You help {address}. It is {now}.", "--trace", tr, "--json")
	require.Equal(t, 0, code, "%s%s", out, errs)
	var end map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &end))
	assert.Equal(t, true, end["passed"])
	want := "You help priya@halden.example. It is 2026-01-05T09:00:00Z."
	sent := f.requests()[0]["messages"].([]any)[0].(map[string]any)
	assert.Equal(t, want, sent["content"])
	_, hasTemp := f.requests()[0]["temperature"]
	assert.False(t, hasTemp, "no --temperature: the server's default")
	lines := readLines(t, tr)
	assert.Equal(t, want, lines[0]["system"])
}

func TestAgentFlagErrors(t *testing.T) {
	modelEnv(t)
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	file := filepath.Join(dir, "copy.star")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "openai"}, "needs --model"},
		{[]string{"--agent", "gpt"}, "unknown agent"},
		{[]string{"--agent", "oracle", "--model", "m"}, "--model: only for --agent openai"},
		{[]string{"--agent", "noop", "--temperature", "0.5"}, "--temperature: only for --agent openai"},
		{[]string{"--model", "m", "--temperature", "hot"}, "temperature"},
		{[]string{"--model", "m", "--temperature", "-1"}, "temperature"},
		{[]string{"--model", "m", "--max-tokens", "-5"}, "--max-tokens"},
		{[]string{"--model", "m", "--retries", "-1"}, "--retries"},
		{[]string{"--model", "m", "--base-url", "localhost:8000"}, "not an http(s) URL"},
		{[]string{"--model", "m", "--api-key", "k"}, "api-key"},
	} {
		for _, cmd := range []string{"run", "rollout"} {
			args := append([]string{cmd, file}, tc.args...)
			if cmd == "rollout" {
				args = append(args, "--out", t.TempDir())
			}
			code, _, errs := cli(t, args...)
			assert.Equal(t, 2, code, "%v", args)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one-line error for %v: %q", args, errs)
			assert.Contains(t, errs, tc.want, "%v", args)
		}
	}
	// the key comes from the environment only; the OpenAI API needs one
	t.Setenv("OPENAI_API_KEY", "")
	code, _, errs := cli(t, "run", file, "--model", "m")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "OPENAI_API_KEY")
}

// copyNoteTextPolicy solves copy-note as a model served without a tool parser: its calls are
// hermes text, the first beside its reasoning.
func copyNoteTextPolicy(msgs []map[string]any) string {
	tools := toolMessages(msgs)
	switch len(tools) {
	case 0:
		return chattest.Completion{Message: chattest.WithReasoning("Reading it.\n"+chattest.Hermes("fs_read", `{"path": "/notes/todo.txt"}`),
			"reasoning", "The note is in /notes/todo.txt.")}.String()
	case 1:
		content := tools[0]["content"].(string) // a text result is its text
		args, _ := json.Marshal(map[string]string{"path": "/notes/done.txt", "content": content})
		return chatSay(chattest.Hermes("fs_write", string(args)))
	}
	return chatSay("Done. The note says: call the bank.")
}

// The request options reach the server, in this process and through an isolated worker (the
// header values from this process, which the worker never sees); the trace describes the model
// with the header names only, records the calls read from text, and replays.
func TestRunOpenAIRequestOptions(t *testing.T) {
	for _, mode := range []string{"--in-process", "--isolated"} {
		t.Run(mode, func(t *testing.T) {
			modelEnv(t)
			f := newChatFake(t, copyNoteTextPolicy)
			dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
			tr := filepath.Join(dir, "copy.jsonl")
			args := []string{"run", filepath.Join(dir, "copy.star"), "--model", "fake-model", "--base-url", f.url(), "--trace", tr,
				"--top-p", "0.9", "--stop", "</s>", "--stop", "END", "--extra-body", `{"top_k": 20, "chat_template_kwargs": {"enable_thinking": true}}`,
				"--header", "X-Api-Version: 2", "--header", "x-secret-token:  s3cret", "--tool-call-format", "hermes", "--reasoning-history", "keep"}
			if mode == "--in-process" {
				args = append(args, mode)
			}
			code, out, errs := cli(t, args...)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			assert.Contains(t, out, "passed")
			assert.Contains(t, out, "(tool calls read from the text: hermes)", "the transcript says where the calls came from")

			reqs := f.srv.Requests()
			require.Len(t, reqs, 3)
			for _, r := range reqs {
				assert.Equal(t, "2", r.Header.Get("X-Api-Version"))
				assert.Equal(t, "s3cret", r.Header.Get("X-Secret-Token"))
				assert.Equal(t, 0.9, r.JSON["top_p"])
				assert.Equal(t, []any{"</s>", "END"}, r.JSON["stop"])
				assert.EqualValues(t, 20, r.JSON["top_k"])
				assert.Equal(t, map[string]any{"enable_thinking": true}, r.JSON["chat_template_kwargs"])
			}
			asst := reqs[1].Messages[2]
			assert.Equal(t, "Reading it.", asst["content"])
			assert.Equal(t, "The note is in /notes/todo.txt.", asst["reasoning_content"], "--reasoning-history keep")
			assert.Equal(t, "call_1_1", asst["tool_calls"].([]any)[0].(map[string]any)["id"])

			data, err := os.ReadFile(tr)
			require.NoError(t, err)
			assert.NotContains(t, string(data), "s3cret")
			lines := readLines(t, tr)
			model, err := json.Marshal(lines[0]["model"])
			require.NoError(t, err)
			assert.JSONEq(t, `{"name":"fake-model","base_url":"`+f.url()+`","request":{"top_p":0.9,"stop":["</s>","END"],"top_k":20,`+
				`"chat_template_kwargs":{"enable_thinking":true}},"headers":["X-Api-Version","X-Secret-Token"],"tool_call_format":"hermes","reasoning_history":"keep"}`,
				string(model))
			assert.Equal(t, "hermes", lines[2]["calls_from"])
			assert.Equal(t, "Reading it.", lines[2]["content"])
			assert.Contains(t, lines[2]["raw"], "<tool_call>")
			assert.Equal(t, "The note is in /notes/todo.txt.", lines[2]["reasoning"])

			code, out, errs = cli(t, "replay", tr, "--corpus", dir)
			assert.Equal(t, 0, code, "replay needs no model:\n%s%s", out, errs)
			assert.Len(t, f.requests(), 3)
		})
	}
}

// --tool-choice is sent as tool_choice with the tools, in this process and through an isolated
// worker, and the trace records it; without the flag no request carries tool_choice (vLLM
// then needs --enable-auto-tool-choice) and the trace has none.
func TestRunToolChoice(t *testing.T) {
	for _, mode := range []string{"--in-process", "--isolated"} {
		for _, choice := range []string{"", "none"} {
			t.Run(mode+"/"+choice, func(t *testing.T) {
				modelEnv(t)
				f := newChatFake(t, copyNotePolicy)
				dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
				tr := filepath.Join(dir, "copy.jsonl")
				args := []string{"run", filepath.Join(dir, "copy.star"), "--model", "fake-model", "--base-url", f.url(), "--trace", tr}
				if choice != "" {
					args = append(args, "--tool-choice", choice)
				}
				if mode == "--in-process" {
					args = append(args, mode)
				}
				code, out, errs := cli(t, args...)
				require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, errs)
				reqs := f.srv.Requests()
				require.NotEmpty(t, reqs)
				for _, r := range reqs {
					require.NotEmpty(t, r.JSON["tools"])
					got, sent := r.JSON["tool_choice"]
					if choice == "" {
						assert.False(t, sent, "not sent unless given: %v", got)
					} else {
						assert.Equal(t, choice, got)
					}
				}
				model := readLines(t, tr)[0]["model"].(map[string]any)
				if choice == "" {
					assert.NotContains(t, model, "tool_choice")
				} else {
					assert.Equal(t, choice, model["tool_choice"])
				}
			})
		}
	}
}

func TestRequestOptionFlagErrors(t *testing.T) {
	modelEnv(t)
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	file := filepath.Join(dir, "copy.star")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "oracle", "--top-p", "0.5"}, "--top-p: only for --agent openai"},
		{[]string{"--agent", "noop", "--header", "X-A: 1"}, "--header: only for --agent openai"},
		{[]string{"--agent", "oracle", "--tool-call-format", "hermes"}, "--tool-call-format: only for --agent openai"},
		{[]string{"--model", "m", "--top-p", "2"}, "--top-p: top_p 2 must be a number from 0 to 1"},
		{[]string{"--model", "m", "--stop", ""}, "--stop: "},
		{[]string{"--model", "m", "--extra-body", "[1]"}, "--extra-body: must be a JSON object"},
		{[]string{"--model", "m", "--extra-body", "{"}, "--extra-body: not JSON"},
		{[]string{"--model", "m", "--extra-body", `{"model": "x"}`}, `--extra-body: the extra body may not set "model"`},
		{[]string{"--model", "m", "--header", "X-A=1"}, "--header: \"X-A=1\" is not 'Name: value'"},
		{[]string{"--model", "m", "--header", "Content-Length: 3"}, "--header: "},
		{[]string{"--model", "m", "--tool-call-format", "json"}, "--tool-call-format: tool call format \"json\" is not one of"},
		{[]string{"--model", "m", "--reasoning-history", "sometimes"}, "--reasoning-history: "},
		{[]string{"--model", "m", "--tool-choice", "always"}, `--tool-choice: tool choice "always" is not one of auto, none, required`},
		{[]string{"--agent", "oracle", "--tool-choice", "auto"}, "--tool-choice: only for --agent openai"},
	} {
		for _, cmd := range []string{"run", "rollout"} {
			args := append([]string{cmd, file}, tc.args...)
			if cmd == "rollout" {
				args = append(args, "--out", t.TempDir())
			}
			code, _, errs := cli(t, args...)
			assert.Equal(t, 2, code, "%v", args)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one-line error for %v: %q", args, errs)
			assert.Contains(t, errs, tc.want, "%v", args)
		}
	}
}

// A rollout's manifest records the request options that change episodes (header names, not
// values): a resume with another header value goes on, one with another extra body is refused;
// without them the manifest is as before.
func TestRolloutManifestRequestOptions(t *testing.T) {
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	out := filepath.Join(t.TempDir(), "o")
	args := []string{"rollout", corpus, "--model", "fake-model", "--base-url", f.url(), "--samples", "1", "--out", out,
		"--tool-choice", "required", "--top-p", "0.5", "--extra-body", `{"top_k": 5}`, "--header", "X-Token: one", "--tool-call-format", "native", "--reasoning-history", "drop"}
	code, stdout, errs := cli(t, args...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	var manifest map[string]any
	require.NoError(t, json.Unmarshal([]byte(dirContents(t, out)["rollout.json"]), &manifest))
	assert.Equal(t, 0.5, manifest["top_p"])
	assert.Equal(t, map[string]any{"top_k": 5.0}, manifest["extra_body"])
	assert.Equal(t, []any{"X-Token"}, manifest["headers"])
	assert.Equal(t, "native", manifest["tool_call_format"])
	assert.Equal(t, "drop", manifest["reasoning_history"])
	assert.Equal(t, "required", manifest["tool_choice"])
	for _, r := range f.srv.Requests() {
		assert.Equal(t, "required", r.JSON["tool_choice"], "through the rollout's workers")
	}
	assert.NotContains(t, dirContents(t, out)["rollout.json"], "one")

	args[len(args)-5] = "X-Token: two"
	code, stdout, errs = cli(t, args...)
	assert.Equal(t, 0, code, "another header value resumes:\n%s%s", stdout, errs)
	args[len(args)-7] = `{"top_k": 6}`
	code, _, errs = cli(t, args...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "extra_body")

	plain := filepath.Join(t.TempDir(), "p")
	code, stdout, errs = cli(t, "rollout", corpus, "--model", "fake-model", "--base-url", f.url(), "--samples", "1", "--out", plain)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	manifest = nil
	require.NoError(t, json.Unmarshal([]byte(dirContents(t, plain)["rollout.json"]), &manifest))
	for _, k := range []string{"top_p", "stop", "extra_body", "headers", "tool_call_format", "reasoning_history", "tool_choice"} {
		assert.NotContains(t, manifest, k)
	}
}
