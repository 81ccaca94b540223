package modelagent_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// text is an answer whose message is msg (the finish reason stop).
func text(msg string) reply { return reply{body: completion("stop", chattest.Text(msg))} }

const (
	readArgs  = `{"path": "/notes/todo.txt"}`
	writeArgs = `{"path": "/notes/done.txt", "content": "call the bank"}`
)

// textFormatCases are copy-note solved by a model that writes its calls as text only, one
// format per case: the note is read, then copied.
var textFormatCases = []struct {
	format      string
	read, write string // the contents of the two answers with calls
	readText    string // what is left of the first content without the call
}{
	{"hermes", "I will read the note first.\n" + chattest.Hermes("fs_read", readArgs), chattest.Hermes("fs_write", writeArgs), "I will read the note first."},
	{"qwen-xml", "Reading it.\n\n" + chattest.QwenXML("fs_read", [2]string{"path", "/notes/todo.txt"}),
		chattest.QwenXML("fs_write", [2]string{"path", "/notes/done.txt"}, [2]string{"content", "call the bank"}), "Reading it."},
	{"llama", chattest.Llama("fs_read", readArgs), chattest.Llama("fs_write", writeArgs), ""},
	{"llama", "<|python_tag|>" + chattest.Llama("fs_read", readArgs), "<|python_tag|>" + chattest.Llama("fs_write", writeArgs), ""},
	{"mistral", chattest.MistralList(chattest.MistralCall("fs_read", readArgs)), chattest.MistralList(chattest.MistralCall("fs_write", writeArgs)), ""},
	{"mistral", "Let me look. " + chattest.MistralArgs("fs_read", readArgs), chattest.MistralArgs("fs_write", writeArgs), "Let me look."},
}

// A model that only ever writes its calls as text solves the task: the calls are read in every
// format, by auto and by the format's own name, run under call_<turn>_<n>, reported with the
// format and the raw text, and sent back as tool_calls with the text that is left.
func TestToolCallsWrittenAsText(t *testing.T) {
	for _, c := range textFormatCases {
		for _, setting := range []string{"", c.format} {
			name := setting
			if name == "" {
				name = "default"
			}
			t.Run(c.format+"/"+name+"/"+clipName(c.read), func(t *testing.T) {
				f := newFake(t, text(c.read), text(c.write), say("Done. The note says: call the bank."))
				a, _ := newAgent(t, f, func(cfg *modelagent.Config) { cfg.ToolCallFormat = setting })
				res, obs := run(t, prepare(t, copyNote), a)
				require.Nil(t, res.Err, "%v", res.AgentErr)
				assert.True(t, res.Passed, "%v", res.FailedItems())
				require.Len(t, res.Calls, 2)
				assert.Equal(t, "call_1_1", res.Calls[0].ID)
				assert.Equal(t, "fs_read", res.Calls[0].Name)
				assert.Equal(t, "call_1_2", res.Calls[1].ID)
				assert.False(t, res.Calls[1].IsError, res.Calls[1].Error)

				require.Len(t, obs.assistant, 3)
				m := obs.assistant[0].msg
				assert.Equal(t, c.format, m.CallsFrom)
				assert.Equal(t, c.read, m.Raw, "raw is the content as sent")
				assert.Equal(t, c.readText, m.Content)
				assert.Equal(t, "", m.Note)
				assert.Equal(t, "stop", m.FinishReason)
				require.Len(t, m.ToolCalls, 1)
				assert.JSONEq(t, `{"id":"call_1_1","type":"function","function":{"name":"fs_read","arguments":"{\"path\":\"/notes/todo.txt\"}"}}`,
					jsonv.MustEncode(m.ToolCalls[0]))
				assert.Equal(t, "", obs.assistant[2].msg.CallsFrom)

				// the history: the call as tool_calls, the text without it
				msgs := messages(t, f.requests()[1])
				require.Len(t, msgs, 4)
				assert.Equal(t, c.readText, msgs[2]["content"])
				tcs := msgs[2]["tool_calls"].([]any)
				require.Len(t, tcs, 1)
				assert.Equal(t, "call_1_1", tcs[0].(map[string]any)["id"])
				assert.Equal(t, "call_1_1", msgs[3]["tool_call_id"])
			})
		}
	}
}

func clipName(s string) string {
	if len(s) > 12 {
		s = s[:12]
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// The legacy function_call runs as one call, its arguments a string or an object.
func TestFunctionCall(t *testing.T) {
	f := newFake(t,
		reply{body: completion("function_call", chattest.WithFunctionCall("", "fs_read", readArgs))},
		reply{body: completion("function_call", `{"role":"assistant","content":"Copying.","function_call":{"name":"fs_write","arguments":`+writeArgs+`}}`)},
		say("Done. The note says: call the bank."),
	)
	a, _ := newAgent(t, f, nil)
	res, obs := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.Err, "%v", res.AgentErr)
	assert.True(t, res.Passed, "%v", res.FailedItems())
	require.Len(t, res.Calls, 2)
	assert.Equal(t, "call_1_1", res.Calls[0].ID)
	assert.Equal(t, "function_call", obs.assistant[0].msg.CallsFrom)
	assert.Equal(t, "function_call", obs.assistant[1].msg.CallsFrom)
	assert.Equal(t, "Copying.", obs.assistant[1].content)
	assert.Equal(t, "", obs.assistant[1].msg.Raw, "nothing was taken out of the text")
	msgs := messages(t, f.requests()[1])
	assert.Equal(t, "call_1_1", msgs[2]["tool_calls"].([]any)[0].(map[string]any)["id"])
	_, legacy := msgs[2]["function_call"]
	assert.False(t, legacy, "the history carries tool_calls")
}

// With ToolCallFormat native, text is never read as calls: the answer is the reply.
func TestNativeFormatReadsNoText(t *testing.T) {
	content := "Reading.\n" + chattest.Hermes("fs_read", readArgs)
	for _, format := range []string{"native", "llama"} {
		f := newFake(t, text(content))
		a, _ := newAgent(t, f, func(cfg *modelagent.Config) { cfg.ToolCallFormat = format })
		res, obs := run(t, prepare(t, copyNote), a)
		require.Nil(t, res.AgentErr)
		assert.Empty(t, res.Calls, format)
		assert.Equal(t, content, res.Turns[0].Reply, format)
		assert.Equal(t, "", obs.assistant[0].msg.CallsFrom)
		assert.Equal(t, "", obs.assistant[0].msg.Raw)
		assert.Equal(t, "", obs.assistant[0].msg.Note)
		assert.Equal(t, 1, len(f.requests()), "the turn ended")
	}
}

// Native tool_calls win: text beside them is never read as calls.
func TestNativeCallsWinOverText(t *testing.T) {
	content := "Reading.\n" + chattest.Hermes("fs_write", writeArgs)
	f := newFake(t, calls(content, call("c1", "fs_read", readArgs)), say("It says call the bank."))
	a, _ := newAgent(t, f, nil)
	res, obs := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Calls, 1)
	assert.Equal(t, "fs_read", res.Calls[0].Name)
	assert.Equal(t, content, obs.assistant[0].content)
	assert.Equal(t, "", obs.assistant[0].msg.CallsFrom)
}

// A reply that is JSON but not a call of one of the task's tools stays a reply; one that looks
// like a call it cannot be has a note.
func TestJSONRepliesAreNotCalls(t *testing.T) {
	for _, c := range []struct{ content, note string }{
		{`{"status": "done", "files": ["/notes/done.txt"]}`, ""},
		{`[{"name": "Priya", "role": "owner"}]`, ""},
		{`{"name": "fs_read"}`, ""},
		{`{"name": "Priya", "parameters": {"x": 1}}`, `the text looks like a llama tool call but names "Priya", which is not one of the task's tools`},
		{chattest.Hermes("web_search", `{"q": "bank"}`), `the text looks like a hermes tool call but names "web_search", which is not one of the task's tools`},
		{`<tool_call>{"name": "fs_read", "arguments": {"path": }}</tool_call>`, "the text looks like a hermes tool call but is not valid JSON: "},
		{"[TOOL_CALLS]fs_read{}", "the text looks like a mistral tool call but has no [ARGS] after the tool name"},
	} {
		f := newFake(t, text(c.content))
		a, _ := newAgent(t, f, nil)
		res, obs := run(t, prepare(t, copyNote), a)
		require.Nil(t, res.AgentErr)
		assert.Empty(t, res.Calls, c.content)
		assert.Equal(t, c.content, res.Turns[0].Reply)
		m := obs.assistant[0].msg
		if c.note == "" {
			assert.Equal(t, "", m.Note, c.content)
		} else {
			assert.True(t, strings.HasPrefix(m.Note, c.note), "%s: %q", c.content, m.Note)
		}
	}
}

// Calls written in the reasoning (a template whose thinking was never closed) run; the
// reasoning keeps what is left.
func TestCallsInReasoning(t *testing.T) {
	f := newFake(t,
		reply{body: completion("stop", chattest.WithReasoning("", "reasoning_content", "I should read the note.\n"+chattest.Hermes("fs_read", readArgs)))},
		say("It says call the bank."),
	)
	a, _ := newAgent(t, f, nil)
	res, obs := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Calls, 1)
	m := obs.assistant[0].msg
	assert.Equal(t, "hermes in reasoning", m.CallsFrom)
	assert.Equal(t, "I should read the note.", m.Reasoning)
	assert.Equal(t, "", m.Content)
	assert.Equal(t, "", m.Note)
}

// Reasoning in reasoning_content, in reasoning, or in a <think> block is recorded, and goes
// back on the next request when the history keeps it: by the setting, or by the model's name.
func TestReasoningHistory(t *testing.T) {
	cases := []struct {
		model, setting, field string
		keep                  bool
	}{
		{"test-model", "", "reasoning_content", false},
		{"test-model", "keep", "reasoning", true},
		{"deepseek-reasoner", "", "reasoning_content", true},
		{"DeepSeek-Reasoner", "drop", "reasoning_content", false},
		{"moonshotai/Kimi-K2-Thinking", "", "reasoning", true},
		{"deepseek-ai/DeepSeek-V4-Flash", "auto", "reasoning", true},
		{"qwen3-8b", "", "think", false},
		{"qwen3-8b", "keep", "think", true},
	}
	for _, c := range cases {
		t.Run(c.model+"/"+c.setting+"/"+c.field, func(t *testing.T) {
			msg := `{"role":"assistant","content":null,` + chattest.Quote(c.field) + `:"I need the note first.","tool_calls":[` + call("c1", "fs_read", readArgs) + `]}`
			if c.field == "think" {
				msg = `{"role":"assistant","content":"<think>\nI need the note first.\n</think>\n\n","tool_calls":[` + call("c1", "fs_read", readArgs) + `]}`
			}
			f := newFake(t, reply{body: completion("tool_calls", msg)}, say("It says call the bank."))
			a, _ := newAgent(t, f, func(cfg *modelagent.Config) { cfg.Model, cfg.ReasoningHistory = c.model, c.setting })
			res, obs := run(t, prepare(t, copyNote), a)
			require.Nil(t, res.AgentErr)
			m := obs.assistant[0].msg
			assert.Equal(t, "I need the note first.", m.Reasoning)
			assert.Equal(t, "", m.Content)
			asst := messages(t, f.requests()[1])[2]
			assert.Equal(t, "", asst["content"], "an assistant message with tool calls has content \"\"")
			rc, sent := asst["reasoning_content"]
			assert.Equal(t, c.keep, sent)
			if c.keep {
				assert.Equal(t, "I need the note first.", rc)
			}
			want := "drop"
			if c.keep {
				want = "keep"
			}
			assert.Equal(t, want, a.Describe().ReasoningHistory)
		})
	}
}

// With keep, a past tool-call message whose answer had no reasoning still carries
// "reasoning_content": "" (DeepSeek's thinking mode refuses one without it); with drop it has none.
func TestReasoningHistoryEmptyOnToolCalls(t *testing.T) {
	for _, setting := range []string{"keep", "drop"} {
		msg := `{"role":"assistant","content":null,"tool_calls":[` + call("c1", "fs_read", readArgs) + `]}`
		f := newFake(t, reply{body: completion("tool_calls", msg)}, say("It says call the bank."))
		a, _ := newAgent(t, f, func(cfg *modelagent.Config) { cfg.Model, cfg.ReasoningHistory = "deepseek-v4-flash", setting })
		res, _ := run(t, prepare(t, copyNote), a)
		require.Nil(t, res.AgentErr)
		asst := messages(t, f.requests()[1])[2]
		rc, sent := asst["reasoning_content"]
		assert.Equal(t, setting == "keep", sent, setting)
		if sent {
			assert.Equal(t, "", rc)
		}
	}
}

// A <think> block is taken out of the content, also one whose opening tag the template wrote.
func TestThinkBlocks(t *testing.T) {
	for _, c := range []struct{ content, text, reasoning, note string }{
		{"<think>The note says call the bank.</think>\nIt says call the bank.", "It says call the bank.", "The note says call the bank.", ""},
		{"The note says call the bank.\n</think>\n\nIt says call the bank.", "It says call the bank.", "The note says call the bank.", ""},
		{"<think>Still thinking about", "", "Still thinking about", "the answer had only reasoning, no text and no tool call"},
	} {
		f := newFake(t, text(c.content))
		a, _ := newAgent(t, f, nil)
		res, obs := run(t, prepare(t, copyNote), a)
		require.Nil(t, res.AgentErr)
		m := obs.assistant[0].msg
		assert.Equal(t, c.text, m.Content)
		assert.Equal(t, c.text, res.Turns[0].Reply)
		assert.Equal(t, c.reasoning, m.Reasoning)
		assert.Equal(t, c.content, m.Raw)
		assert.Equal(t, c.note, m.Note)
	}
}

// An answer that gives nothing usable says why.
func TestNotes(t *testing.T) {
	for _, c := range []struct {
		body, note string
	}{
		{completion("stop", `{"role":"assistant","content":null}`), "the answer had no text and no tool call"},
		{completion("stop", chattest.WithReasoning("", "reasoning", "Hmm.")), "the answer had only reasoning, no text and no tool call"},
		{completion("length", chattest.Text("I was about to")), "the answer was cut off at the token limit (finish_reason length)"},
		{completion("content_filter", chattest.Text("")), "the server's content filter stopped the answer (finish_reason content_filter)"},
	} {
		f := newFake(t, reply{body: c.body})
		a, _ := newAgent(t, f, nil)
		res, obs := run(t, prepare(t, copyNote), a)
		require.Nil(t, res.AgentErr)
		require.Len(t, obs.assistant, 1)
		assert.Equal(t, c.note, obs.assistant[0].msg.Note)
	}
}

// top_p, stop, the extra body and the headers reach the server on every request; the extra
// body's keys win; Describe says what was sent, header names only.
func TestRequestOptions(t *testing.T) {
	f := newFake(t, calls("", call("c1", "fs_read", readArgs)), say("It says call the bank."))
	extra, err := jsonv.DecodeString(`{"chat_template_kwargs": {"enable_thinking": false}, "temperature": 0.3, "return_token_ids": true}`)
	require.NoError(t, err)
	a, _ := newAgent(t, f, func(cfg *modelagent.Config) {
		cfg.BaseURL = strings.Replace(cfg.BaseURL, "http://", "http://user:secret@", 1)
		cfg.Temperature, cfg.TopP, cfg.MaxTokens = ptr(0.7), ptr(0.9), 300
		cfg.Stop = []string{"</answer>", "\nUser:"}
		cfg.ExtraBody = extra.(*jsonv.Object)
		cfg.Headers = http.Header{"x-api-version": {"2"}, "X-Trace": {"a", "b"}}
	})
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	reqs := f.srv.Requests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, 0.3, r.JSON["temperature"], "the extra body wins")
		assert.Equal(t, 0.9, r.JSON["top_p"])
		assert.EqualValues(t, 300, r.JSON["max_tokens"])
		assert.Equal(t, []any{"</answer>", "\nUser:"}, r.JSON["stop"])
		assert.Equal(t, map[string]any{"enable_thinking": false}, r.JSON["chat_template_kwargs"])
		assert.Equal(t, true, r.JSON["return_token_ids"])
		assert.Equal(t, "2", r.Header.Get("X-Api-Version"))
		assert.Equal(t, []string{"a", "b"}, r.Header.Values("X-Trace"))
	}
	d := a.Describe()
	assert.Equal(t, "test-model", d.Name)
	assert.Equal(t, f.srv.BaseURL(), d.BaseURL, "no user info")
	assert.Equal(t, `{"temperature":0.3,"top_p":0.9,"max_tokens":300,"stop":["</answer>","\nUser:"],"chat_template_kwargs":{"enable_thinking":false},"return_token_ids":true}`,
		jsonv.MustEncode(d.Request))
	assert.Equal(t, []string{"X-Api-Version", "X-Trace"}, d.Headers)
	assert.Equal(t, "auto", d.ToolCallFormat)
	assert.Equal(t, "drop", d.ReasoningHistory)
	assert.NotContains(t, jsonv.MustEncode(d.Request)+d.BaseURL, "secret")
}

// The tool choice is sent with the tools, as given, and only when given; a request without
// tools (the plain chat of the user and judge models) never carries it; Describe says it.
func TestToolChoice(t *testing.T) {
	t.Parallel()
	for _, choice := range []string{"", "auto", "none", "required"} {
		f := newFake(t, calls("", call("c1", "fs_read", readArgs)), say("It says call the bank."))
		a, _ := newAgent(t, f, func(cfg *modelagent.Config) { cfg.ToolChoice = choice })
		res, _ := run(t, prepare(t, copyNote), a)
		require.Nil(t, res.AgentErr)
		reqs := f.requests()
		require.Len(t, reqs, 2)
		for _, r := range reqs {
			require.NotEmpty(t, r["tools"])
			got, sent := r["tool_choice"]
			if choice == "" {
				assert.False(t, sent, "no tool_choice unless given: %v", got)
			} else {
				assert.Equal(t, choice, got)
			}
		}
		assert.Equal(t, choice, a.Describe().ToolChoice)
		assert.NotContains(t, jsonv.MustEncode(a.Describe().Request), "tool_choice", "not a field of every request")

		g := newFake(t, say("Hello."))
		c, err := modelagent.NewChat(modelagent.Config{Model: "m", BaseURL: g.srv.BaseURL(), ToolChoice: choice})
		require.NoError(t, err)
		_, err = c.Complete(context.Background(), []openai.ChatCompletionMessage{{Role: "user", Content: "Hi"}})
		require.NoError(t, err)
		assert.NotContains(t, g.rawRequests()[0], "tool_choice", "no tools, no tool_choice")
	}
}

// Temperature 0 is written; with nothing set, the request carries none of the fields.
func TestDescribeDefaults(t *testing.T) {
	f := newFake(t)
	a, _ := newAgent(t, f, nil)
	d := a.Describe()
	assert.Equal(t, "{}", jsonv.MustEncode(d.Request))
	assert.Nil(t, d.Headers)
	a, _ = newAgent(t, f, func(cfg *modelagent.Config) {
		cfg.Temperature, cfg.HostHeaders = ptr(0), []string{"x-from-host", "Bad Name"}
		cfg.BaseURL = "https://me:pw@models.example:8443/v1?api-key=secret#part"
	})
	d = a.Describe()
	assert.Equal(t, "https://models.example:8443/v1", d.BaseURL)
	assert.Equal(t, `{"temperature":0.0}`, jsonv.MustEncode(d.Request))
	assert.Equal(t, []string{"X-From-Host"}, d.Headers)
}

func TestRequestOptionsRefused(t *testing.T) {
	obj := func(s string) *jsonv.Object {
		v, err := jsonv.DecodeString(s)
		require.NoError(t, err)
		return v.(*jsonv.Object)
	}
	for _, c := range []struct {
		cfg  modelagent.Config
		want string
	}{
		{modelagent.Config{ExtraBody: obj(`{"model": "other"}`)}, `may not set "model"`},
		{modelagent.Config{ExtraBody: obj(`{"messages": []}`)}, `may not set "messages"`},
		{modelagent.Config{ExtraBody: obj(`{"tools": []}`)}, `may not set "tools"`},
		{modelagent.Config{ExtraBody: obj(`{"stream": true}`)}, `may not set "stream"`},
		{modelagent.Config{Headers: http.Header{"Content-Length": {"1"}}}, "Content-Length"},
		{modelagent.Config{Headers: http.Header{"X Bad": {"1"}}}, "not a header name"},
		{modelagent.Config{Headers: http.Header{"X-Ok": {"a\r\nX-Evil: 1"}}}, "line break"},
		{modelagent.Config{ToolCallFormat: "json"}, `tool call format "json" is not one of auto, native, hermes, qwen-xml, llama, mistral`},
		{modelagent.Config{ReasoningHistory: "sometimes"}, "not auto, keep or drop"},
		{modelagent.Config{ToolChoice: "any"}, `tool choice "any" is not one of auto, none, required`},
		{modelagent.Config{TopP: ptr(1.5)}, "top_p"},
		{modelagent.Config{Stop: []string{""}}, "stop sequence"},
	} {
		c.cfg.Model = "m"
		_, err := modelagent.New(c.cfg)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}

// Logprobs and token ids are recorded: vLLM's prompt_token_ids at the top level, SGLang's in
// the choice; lists that are not token ids are not.
func TestLogprobsAndTokenIDs(t *testing.T) {
	logprobs := `{"content":[{"token":"Done","logprob":-0.25,"bytes":[68,111,110,101],"top_logprobs":[]}]}`
	f := newFake(t,
		reply{body: chattest.AddFields(chattest.Calls("", call("c1", "fs_read", readArgs)),
			map[string]string{"prompt_token_ids": "[1,2,3]"}, map[string]string{"logprobs": logprobs, "token_ids": "[7,8,9]"})},
		reply{body: chattest.AddFields(chattest.Say("Done."), nil, map[string]string{"prompt_token_ids": "[4,5]", "token_ids": `["a"]`, "logprobs": "null"})},
	)
	a, _ := newAgent(t, f, nil)
	res, obs := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, obs.assistant, 2)
	m := obs.assistant[0].msg
	assert.JSONEq(t, logprobs, jsonv.MustEncode(m.Logprobs))
	assert.Equal(t, "[1,2,3]", jsonv.MustEncode(m.PromptTokenIDs))
	assert.Equal(t, "[7,8,9]", jsonv.MustEncode(m.CompletionTokenIDs))
	m = obs.assistant[1].msg
	assert.Nil(t, m.Logprobs)
	assert.Equal(t, "[4,5]", jsonv.MustEncode(m.PromptTokenIDs))
	assert.Nil(t, m.CompletionTokenIDs, "not token ids")
}
