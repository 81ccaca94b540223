package trace_test

import (
	"bytes"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func textAnswer(content string) chattest.Answer {
	return chattest.Answer{Body: chattest.Completion{Message: chattest.Text(content)}.String()}
}

// textCallAnswers solve noFaults with every call written as text in one format (or as the
// legacy function_call): write is the format's call of a tool with a JSON object's text.
func textCallAnswers(write func(name, args string) chattest.Answer) []chattest.Answer {
	return []chattest.Answer{
		write("mail_read", `{"id": "m1"}`),
		write("ship_order", `{"order": "o1"}`),
		write("mail_reply", `{"id": "m1", "body": "Shipped o1."}`),
		say("Shipped."),
		write("fs_read", `{"path": "/stock.csv"}`),
		write("fs_write", `{"path": "/report.md", "content": "A: 1 left\n"}`),
		say("Report written."),
	}
}

// A model that writes its calls as text, in any format, makes a trace that records where each
// call came from and the raw text, passes, and replays.
func TestTextToolCallTracesReplay(t *testing.T) {
	t.Parallel()
	qwen := func(name, args string) string {
		v, err := jsonv.DecodeString(args)
		require.NoError(t, err)
		var params [][2]string
		for _, m := range v.(*jsonv.Object).Members {
			params = append(params, [2]string{m.Key, m.Value.(string)})
		}
		return chattest.QwenXML(name, params...)
	}
	cases := []struct {
		from  string
		write func(name, args string) chattest.Answer
	}{
		{"hermes", func(n, a string) chattest.Answer { return textAnswer("On it.\n" + chattest.Hermes(n, a)) }},
		{"qwen-xml", func(n, a string) chattest.Answer { return textAnswer(qwen(n, a)) }},
		{"llama", func(n, a string) chattest.Answer { return textAnswer(chattest.Llama(n, a)) }},
		{"llama", func(n, a string) chattest.Answer { return textAnswer("<|python_tag|>" + chattest.Llama(n, a)) }},
		{"mistral", func(n, a string) chattest.Answer { return textAnswer(chattest.MistralList(chattest.MistralCall(n, a))) }},
		{"mistral", func(n, a string) chattest.Answer { return textAnswer(chattest.MistralArgs(n, a)) }},
		{"function_call", func(n, a string) chattest.Answer {
			return chattest.Answer{Body: chattest.Completion{Finish: "function_call", Message: chattest.WithFunctionCall("", n, a)}.String()}
		}},
		{"hermes in reasoning", func(n, a string) chattest.Answer {
			return chattest.Answer{Body: chattest.Completion{Message: chattest.WithReasoning("", "reasoning", "Next step.\n"+chattest.Hermes(n, a))}.String()}
		}},
	}
	for _, c := range cases {
		t.Run(c.from, func(t *testing.T) {
			f := newFixture(noFaults)
			data := recordModel(t, f.task(t), f.src, textCallAnswers(c.write)...)
			events, err := trace.Read(bytes.NewReader(data))
			require.NoError(t, err)
			end := events[len(events)-1].Body.(*trace.End)
			assert.True(t, end.Passed, "%v", end.Checks)
			calls, asked := 0, 0
			for _, ev := range events {
				switch b := ev.Body.(type) {
				case *trace.Call:
					calls++
				case *trace.Assistant:
					if len(b.ToolCalls) == 0 {
						continue
					}
					asked++
					assert.Equal(t, c.from, b.CallsFrom)
					if c.from == "hermes" {
						assert.Equal(t, "On it.", b.Content)
						assert.Contains(t, b.Raw, "<tool_call>")
					}
					if c.from == "hermes in reasoning" {
						assert.Equal(t, "Next step.", b.Reasoning)
					}
				}
			}
			assert.Equal(t, 5, calls)
			assert.Equal(t, 5, asked)
			r := replay(t, f, data)
			assert.True(t, r.Matched(), "%v", r.Divergence)
		})
	}
}

// Text the agent took a call from is what the trace says it ran: a call's arguments changed in
// the recorded message diverge on replay.
func TestTamperedTextCallTrace(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	orig := lines(recordModel(t, f.task(t), f.src, textCallAnswers(func(n, a string) chattest.Answer {
		return textAnswer(chattest.Hermes(n, a))
	})...))
	require.True(t, replay(t, f, join(orig)).Matched())
	i := find(t, orig, 0, `"event":"assistant"`, `ship_order`)
	call := find(t, orig, 0, `"event":"call"`, `"ship_order"`)
	d := tamper(t, f, edit(t, orig, i, `{\"order\":\"o1\"}`, `{\"order\":\"o2\"}`), call+1, "call", "ship_order")
	assert.Equal(t, []string{`args.order: recorded "o1", replayed "o2"`}, d.Diffs)
}

// Logprobs, token ids, the finish reason and the note of an answer that gave nothing usable are
// in the trace, and such a trace replays.
func TestTraceRecordsLogprobsTokenIDsAndNotes(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	logprobs := `{"content":[{"token":"Sh","logprob":-0.5,"top_logprobs":[]}]}`
	data := recordModel(t, f.task(t), f.src,
		chattest.Answer{Body: chattest.AddFields(chattest.Say("Shipped."), map[string]string{"prompt_token_ids": "[1,2,3]"},
			map[string]string{"logprobs": logprobs, "token_ids": "[11,12]"})},
		chattest.Answer{Body: chattest.Completion{Message: `{"role":"assistant","content":null}`}.String()},
	)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	var asst []*trace.Assistant
	for _, ev := range events {
		if a, ok := ev.Body.(*trace.Assistant); ok {
			asst = append(asst, a)
		}
	}
	require.Len(t, asst, 2)
	assert.JSONEq(t, logprobs, jsonv.MustEncode(asst[0].Logprobs))
	assert.Equal(t, "[1,2,3]", jsonv.MustEncode(asst[0].PromptTokenIDs))
	assert.Equal(t, "[11,12]", jsonv.MustEncode(asst[0].CompletionTokenIDs))
	assert.Equal(t, "stop", asst[0].FinishReason)
	assert.Equal(t, "", asst[0].Note)
	assert.Equal(t, "the answer had no text and no tool call", asst[1].Note)
	assert.True(t, replay(t, f, data).Matched())
}
