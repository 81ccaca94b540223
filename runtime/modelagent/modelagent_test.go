package modelagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/conformance"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const copyNote = `
def _setup(ws):
    ws.mail.address = "priya@halden.example"
    ws.fs.write("/notes/todo.txt", "call the bank")

def _verify(ws, ep):
    check(ws.fs.exists("/notes/done.txt") and ws.fs.read("/notes/done.txt") == "call the bank", "the note is copied")
    check("bank" in (ep.reply or ""), "the reply says what the note says")

def _solve(agent):
    t = agent.call("fs_read", path = "/notes/todo.txt")
    agent.call("fs_write", path = "/notes/done.txt", content = t)
    agent.reply("It says: " + t)

task(
    name = "copy-note",
    prompt = "Copy /notes/todo.txt to /notes/done.txt and tell me what it says.",
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
    max_calls_per_turn = 6,
)
`

const twoTurns = `
def _setup(ws):
    ws.mail.address = "priya@halden.example"

task(
    name = "two-turns",
    turns = [turn(user = "First question?"), turn(user = "Second question?", advance = "1d")],
    tools = ["fs"],
    setup = _setup,
)
`

func run(t *testing.T, p *episode.Prepared, a episode.Agent) (*episode.Result, *observer) {
	t.Helper()
	obs := &observer{}
	res := p.Run(context.Background(), a, episode.RunOptions{Observer: obs})
	return res, obs
}

// (1) A model that solves a task through tool calls passes, and everything it did is reported.
func TestSolvesTaskThroughToolCalls(t *testing.T) {
	f := newFake(t,
		calls("", call("c1", "fs_read", `{"path":"/notes/todo.txt"}`)),
		calls("Copying it now.", call("c2", "fs_write", `{"path":"/notes/done.txt","content":"call the bank"}`)),
		say("Done. The note says: call the bank."),
	)
	a, _ := newAgent(t, f, nil)
	p := prepare(t, copyNote)
	res, obs := run(t, p, a)
	require.Nil(t, res.Err, "%v", res.AgentErr)
	assert.True(t, res.Passed)
	assert.Equal(t, 1.0, res.Score)
	assert.Equal(t, "openai", res.Agent)
	require.Len(t, res.Calls, 2)
	assert.Equal(t, "c1", res.Calls[0].ID)
	assert.Equal(t, "fs_read", res.Calls[0].Name)
	assert.Equal(t, "c2", res.Calls[1].ID)
	assert.Equal(t, "Done. The note says: call the bank.", res.Turns[0].Reply)

	reqs := f.requests()
	require.Len(t, reqs, 3)
	assert.Equal(t, "test-model", reqs[0]["model"])
	msgs := messages(t, reqs[2])
	require.Len(t, msgs, 6) // system, user, assistant, tool, assistant, tool
	assert.Equal(t, "user", msgs[1]["role"])
	assert.Equal(t, "Copy /notes/todo.txt to /notes/done.txt and tell me what it says.", msgs[1]["content"])
	assert.Equal(t, "tool", msgs[3]["role"])
	assert.Equal(t, "c1", msgs[3]["tool_call_id"])
	assert.Equal(t, "call the bank", msgs[3]["content"])
	assert.Equal(t, "Copying it now.", msgs[4]["content"])
	assert.Equal(t, "c2", msgs[5]["tool_call_id"])

	require.Len(t, obs.assistant, 3)
	assert.JSONEq(t, `[{"id":"c1","type":"function","function":{"name":"fs_read","arguments":"{\"path\":\"/notes/todo.txt\"}"}}]`, obs.assistant[0].toolCalls)
	assert.JSONEq(t, `{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}`, obs.assistant[0].usage)
	assert.Equal(t, "Copying it now.", obs.assistant[1].content)
	assert.Equal(t, "null", obs.assistant[2].toolCalls)

	hist := a.Messages()
	require.Len(t, hist, 7)
	assert.Equal(t, "assistant", hist[6].Role)
}

// (1b) The shared conformance task, solved by a model that reads the id from the search result.
func TestSolvesConformanceTask(t *testing.T) {
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("the conformance suite is not there")
	}
	corpus := dsl.NewCorpus(os.DirFS(dir), ".", dir)
	file := corpus.LoadFile(context.Background(), "ok/crm_renewal_lookup.star")
	require.Empty(t, file.Diags)
	require.Len(t, file.Tasks, 1)
	p, d := episode.Prepare(context.Background(), file.Tasks[0], episode.Options{})
	require.Nil(t, d)

	getTraders := func(req map[string]any) string {
		msgs := req["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		var hits []map[string]any
		if err := json.Unmarshal([]byte(last["content"].(string)), &hits); err != nil {
			t.Errorf("search result: %v", err)
		}
		id := ""
		for _, h := range hits {
			if h["name"] == "Northwind Traders" {
				id = h["id"].(string)
			}
		}
		return completion("tool_calls", `{"role":"assistant","content":null,"tool_calls":[`+call("call_b", "crm_get", `{"id":"`+id+`"}`)+`]}`)
	}
	f := newFake(t,
		calls("", call("call_a", "crm_search", `{"query":"northwind"}`)),
		reply{fn: getTraders},
		say("Northwind Traders renews on 2026-03-31, ARR is EUR 184,000, and Lena Duarte owns the account."),
	)
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, p, a)
	require.Nil(t, res.Err, "%v", res.AgentErr)
	assert.True(t, res.Passed, "failed: %v", res.FailedItems())
	require.Len(t, res.Calls, 2)
	assert.False(t, res.Calls[1].IsError, res.Calls[1].Error)
}

// (2) Broken JSON arguments: the tool is not run, the model gets a tool error naming the
// problem, and it recovers in the next request.
func TestBrokenArgumentsRecover(t *testing.T) {
	broken := `{"path": "/notes/todo.txt"`
	f := newFake(t,
		calls("", call("c1", "fs_read", broken)),
		calls("", call("c2", "fs_read", `{"path":"/notes/todo.txt"}`)),
		calls("", call("c3", "fs_write", `{"path":"/notes/done.txt","content":"call the bank"}`)),
		say("The note says call the bank; copied."),
	)
	a, _ := newAgent(t, f, nil)
	res, obs := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.Err, "%v", res.AgentErr)
	assert.True(t, res.Passed)
	require.Len(t, res.Calls, 2, "the broken call is not run")
	assert.Equal(t, "c2", res.Calls[0].ID)

	reqs := f.requests()
	require.Len(t, reqs, 4)
	msgs := messages(t, reqs[1])
	require.Len(t, msgs, 4)
	asst := msgs[2]["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, "{}", asst["function"].(map[string]any)["arguments"], "the history carries arguments servers can parse")
	tool := msgs[3]
	assert.Equal(t, "tool", tool["role"])
	assert.Equal(t, "c1", tool["tool_call_id"])
	var content map[string]any
	require.NoError(t, json.Unmarshal([]byte(tool["content"].(string)), &content))
	assert.Contains(t, content["error"], "not valid JSON")
	assert.Contains(t, content["error"], "fs_read")
	assert.Contains(t, content["error"], broken)

	// the trace keeps what the model sent
	assert.Contains(t, obs.assistant[0].toolCalls, `"arguments":"{\"path\": \"/notes/todo.txt\""`)
}

// Arguments that are JSON but not an object are refused the same way.
func TestNonObjectArguments(t *testing.T) {
	f := newFake(t,
		calls("", call("c1", "fs_read", `["/notes/todo.txt"]`)),
		say("I could not read it."),
	)
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	assert.Empty(t, res.Calls)
	var content map[string]any
	require.NoError(t, json.Unmarshal([]byte(messages(t, f.requests()[1])[3]["content"].(string)), &content))
	assert.Contains(t, content["error"], `fs_read was not run: the arguments must be a JSON object, not an array. The arguments were: ["/notes/todo.txt"].`)
}

// (3) 429 twice, then an answer: two retries after backoff delays, then the episode goes on.
func TestRetriesOn429(t *testing.T) {
	limited := `{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`
	f := newFake(t,
		status(http.StatusTooManyRequests, limited),
		status(http.StatusTooManyRequests, limited),
		say("Hello."),
	)
	var retries []int
	a, sleeps := newAgent(t, f, func(c *modelagent.Config) {
		c.Backoff = 10 * time.Millisecond
		c.OnRetry = func(attempt int, d time.Duration, reason error) {
			retries = append(retries, attempt)
			assert.Contains(t, reason.Error(), "429")
		}
	})
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	assert.Equal(t, "Hello.", res.Turns[0].Reply)
	assert.Len(t, f.requests(), 3)
	assert.Equal(t, []int{1, 2}, retries)
	require.Len(t, *sleeps, 2)
	// exponential with jitter: the n-th delay is between half and all of base·2^(n-1)
	assert.True(t, (*sleeps)[0] >= 5*time.Millisecond && (*sleeps)[0] <= 10*time.Millisecond, "%v", (*sleeps)[0])
	assert.True(t, (*sleeps)[1] >= 10*time.Millisecond && (*sleeps)[1] <= 20*time.Millisecond, "%v", (*sleeps)[1])
	// the retried body is the same request
	raw := f.rawRequests()
	assert.Equal(t, raw[0], raw[2])
}

// Retries are bounded; the error says how often it tried. A Retry-After header is honoured up
// to MaxBackoff.
func TestRetriesGiveUp(t *testing.T) {
	down := reply{status: http.StatusServiceUnavailable, body: `{"error":{"message":"overloaded"}}`, header: map[string]string{"Retry-After": "1"}}
	f := newFake(t, down, down, down, down)
	a, sleeps := newAgent(t, f, func(c *modelagent.Config) {
		c.MaxRetries = 2
		c.MaxBackoff = 50 * time.Millisecond
	})
	res, _ := run(t, prepare(t, copyNote), a)
	require.NotNil(t, res.Err)
	assert.Equal(t, "model-error", res.Err.Code)
	var re *modelagent.RequestError
	require.ErrorAs(t, res.AgentErr, &re)
	assert.Equal(t, 503, re.Code)
	assert.Equal(t, 3, re.Attempts)
	assert.Contains(t, res.AgentErr.Error(), "overloaded")
	assert.Contains(t, res.AgentErr.Error(), "gave up after 3 attempts")
	assert.Equal(t, 1, f.left())
	assert.Equal(t, []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}, *sleeps)
}

// A timed-out attempt is retried; a dropped connection too.
func TestRetriesTimeoutAndDrop(t *testing.T) {
	f := newFake(t, reply{hang: true}, reply{drop: true}, say("Late but here."))
	var reasons []string
	a, sleeps := newAgent(t, f, func(c *modelagent.Config) {
		c.Timeout = 50 * time.Millisecond
		c.OnRetry = func(_ int, _ time.Duration, reason error) { reasons = append(reasons, reason.Error()) }
	})
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	assert.Equal(t, "Late but here.", res.Turns[0].Reply)
	assert.Len(t, *sleeps, 2)
	require.Len(t, reasons, 2)
	assert.Contains(t, reasons[0], "no answer within 50ms")
	assert.Contains(t, reasons[1], "EOF")
}

// A server that is not there is not retried for ever, and the episode ends with model-error.
func TestUnreachableServer(t *testing.T) {
	f := newFake(t)
	url := f.srv.URL
	f.srv.Close()
	a, err := modelagent.New(modelagent.Config{Model: "m", BaseURL: url + "/v1", MaxRetries: 2, Backoff: time.Millisecond})
	require.NoError(t, err)
	res, _ := run(t, prepare(t, copyNote), a)
	var re *modelagent.RequestError
	require.ErrorAs(t, res.AgentErr, &re)
	assert.Equal(t, 3, re.Attempts)
	assert.Equal(t, 0, re.Code)
	assert.Contains(t, res.AgentErr.Error(), "connection refused")
	require.NotNil(t, res.Err)
	assert.Equal(t, "model-error", res.Err.Code)
}

// (4) finish_reason length truncates the turn; the cut-off tool call is not run.
func TestLengthTruncatesTurn(t *testing.T) {
	f := newFake(t, reply{body: completion("length",
		`{"role":"assistant","content":"Let me write the fi","tool_calls":[`+call("c1", "fs_write", `{"path":"/notes/done.txt","content":"cal`)+`]}`)})
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Turns, 1)
	assert.True(t, res.Turns[0].Truncated)
	assert.Equal(t, "Let me write the fi", res.Turns[0].Reply)
	assert.Empty(t, res.Calls)
	assert.False(t, res.Passed)
	hist := a.Messages()
	last := hist[len(hist)-1]
	assert.Equal(t, "tool", last.Role, "every tool call in the history has its tool message")
	assert.Equal(t, "c1", last.ToolCallID)
}

// (5) Temperature 0 is really sent; nil sends none; other values as given.
func TestTemperature(t *testing.T) {
	for _, tc := range []struct {
		name string
		temp *float64
		want any
	}{
		{"zero", ptr(0), 0.0},
		{"set", ptr(0.7), 0.7},
		{"unset", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, say("Hi."))
			a, _ := newAgent(t, f, func(c *modelagent.Config) { c.Temperature = tc.temp; c.MaxTokens = 256 })
			res, _ := run(t, prepare(t, copyNote), a)
			require.Nil(t, res.AgentErr)
			req := f.requests()[0]
			got, ok := req["temperature"]
			if tc.want == nil {
				assert.False(t, ok, "no temperature: %s", f.rawRequests()[0])
				return
			}
			require.True(t, ok, "temperature is in %s", f.rawRequests()[0])
			assert.Equal(t, tc.want, got)
			assert.Equal(t, 256.0, req["max_tokens"])
		})
	}
}

func ptr(f float64) *float64 { return &f }

// Models that reject max_tokens get max_completion_tokens.
func TestMaxCompletionTokensForReasoningModels(t *testing.T) {
	f := newFake(t, say("Hi."))
	a, _ := newAgent(t, f, func(c *modelagent.Config) { c.Model = "o3-mini"; c.MaxTokens = 512 })
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	req := f.requests()[0]
	assert.Equal(t, 512.0, req["max_completion_tokens"])
	assert.NotContains(t, req, "max_tokens")
}

// (6) Several tool calls in one message run in order; the text beside them is kept.
func TestSeveralToolCallsInOrder(t *testing.T) {
	f := newFake(t,
		calls("I'll do all three.",
			call("a", "fs_write", `{"path":"/x.txt","content":"1"}`),
			call("b", "fs_write", `{"path":"/x.txt","content":"2"}`),
			call("c", "fs_read", `{"path":"/x.txt"}`),
		),
		say("x.txt holds 2."),
	)
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Calls, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{res.Calls[0].ID, res.Calls[1].ID, res.Calls[2].ID})
	assert.Equal(t, `"2"`, res.Calls[2].Content, "the calls ran in order")

	msgs := messages(t, f.requests()[1])
	require.Len(t, msgs, 6)
	assert.Equal(t, "I'll do all three.", msgs[2]["content"])
	assert.Len(t, msgs[2]["tool_calls"], 3)
	for i, id := range []string{"a", "b", "c"} {
		assert.Equal(t, "tool", msgs[3+i]["role"])
		assert.Equal(t, id, msgs[3+i]["tool_call_id"])
	}
}

// (7) tool_calls null, [] or absent: the message is the reply.
func TestNoToolCallsEndsTurn(t *testing.T) {
	for name, msg := range map[string]string{
		"null":   `{"role":"assistant","content":"All done.","tool_calls":null}`,
		"empty":  `{"role":"assistant","content":"All done.","tool_calls":[]}`,
		"absent": `{"role":"assistant","content":"All done."}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, reply{body: completion("stop", msg)})
			a, _ := newAgent(t, f, nil)
			res, obs := run(t, prepare(t, copyNote), a)
			require.Nil(t, res.AgentErr)
			assert.Equal(t, "All done.", res.Turns[0].Reply)
			assert.False(t, res.Turns[0].Truncated)
			assert.Len(t, f.requests(), 1)
			require.Len(t, obs.assistant, 1)
			assert.Equal(t, "null", obs.assistant[0].toolCalls)
		})
	}
}

// (8) A 400 aborts the episode with a clear error and no retry.
func TestBadRequestAborts(t *testing.T) {
	for name, body := range map[string]string{
		"openai": `{"error":{"message":"Invalid schema for function 'fs_read'","type":"invalid_request_error"}}`,
		"vllm":   `{"object":"error","message":"Invalid schema for function 'fs_read'","type":"BadRequestError","code":400}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, status(http.StatusBadRequest, body), say("never"))
			a, sleeps := newAgent(t, f, nil)
			res, _ := run(t, prepare(t, copyNote), a)
			require.NotNil(t, res.Err)
			assert.False(t, res.Passed)
			assert.Equal(t, "model-error", res.Err.Code, "a failed request is not the agent's error")
			var re *modelagent.RequestError
			require.ErrorAs(t, res.AgentErr, &re)
			assert.Equal(t, 400, re.Code)
			assert.Equal(t, "Invalid schema for function 'fs_read'", re.Message)
			assert.Contains(t, res.Err.Message, "HTTP 400 Bad Request: Invalid schema for function 'fs_read'")
			assert.Contains(t, res.Err.Message, "test-model")
			assert.Len(t, f.requests(), 1)
			assert.Empty(t, *sleeps)
		})
	}
}

// (9) The default system prompt states the role, the user's address and the virtual time.
func TestDefaultSystemPrompt(t *testing.T) {
	f := newFake(t, say("Hi."))
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	sys := messages(t, f.requests()[0])[0]
	assert.Equal(t, "system", sys["role"])
	content := sys["content"].(string)
	assert.Contains(t, content, "coworker")
	assert.Contains(t, content, "priya@halden.example")
	assert.Contains(t, content, "Monday, 2026-01-05T09:00:00Z")
	assert.Equal(t, modelagent.DefaultSystemPrompt("priya@halden.example", "2026-01-05T09:00:00Z"), content)
}

func TestCustomSystemPrompt(t *testing.T) {
	f := newFake(t, say("Hi."))
	a, _ := newAgent(t, f, func(c *modelagent.Config) { c.System = "Assist {address}. Now: {now}." })
	run(t, prepare(t, copyNote), a)
	assert.Equal(t, "Assist priya@halden.example. Now: 2026-01-05T09:00:00Z.", messages(t, f.requests()[0])[0]["content"])
}

// (10) Every request carries the task's tool schemas, as the episode shows them.
func TestRequestsCarryToolSchemas(t *testing.T) {
	f := newFake(t, calls("", call("c1", "fs_list", `{}`)), say("Listed."))
	a, _ := newAgent(t, f, nil)
	p := prepare(t, copyNote)
	res, _ := run(t, p, a)
	require.Nil(t, res.AgentErr)
	want := make([]any, len(p.Task.Tools))
	for i, tool := range p.Task.Tools {
		require.NoError(t, json.Unmarshal([]byte(jsonv.MustEncode(tool.Schema())), &want[i]))
	}
	require.NotEmpty(t, want)
	for _, req := range f.requests() {
		assert.Equal(t, want, req["tools"])
	}
	// and in the task's order, parameters in schema order
	raw := f.rawRequests()[0]
	var names []string
	for _, m := range regexp.MustCompile(`"name":"(fs_[a-z]+)"`).FindAllStringSubmatch(raw, -1) {
		names = append(names, m[1])
	}
	var order []string
	for _, tool := range p.Task.Tools {
		order = append(order, tool.Name)
	}
	assert.Equal(t, order, names)
}

// Servers that leave out ids, send "" or an object as arguments, or repeat ids.
func TestLenientServers(t *testing.T) {
	noID := `{"type":"function","function":{"name":"fs_list","arguments":""}}`
	objArgs := `{"id":"dup","type":"function","function":{"name":"fs_read","arguments":{"path":"/notes/todo.txt"}}}`
	dup := `{"id":"dup","function":{"name":"fs_list","arguments":null}}`
	f := newFake(t,
		reply{body: completion("tool_calls", `{"role":"assistant","tool_calls":[`+noID+`,`+objArgs+`]}`)},
		reply{body: completion("stop", `{"role":"assistant","content":null,"tool_calls":[`+dup+`]}`)},
		reply{body: `{"choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"Done"},{"type":"text","text":"."}]},"finish_reason":"stop"}]}`},
	)
	a, _ := newAgent(t, f, nil)
	res, obs := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Calls, 3)
	assert.Equal(t, "call_1_1", res.Calls[0].ID)
	assert.False(t, res.Calls[0].IsError, res.Calls[0].Error)
	assert.Equal(t, "dup", res.Calls[1].ID)
	assert.Equal(t, `"call the bank"`, res.Calls[1].Content)
	assert.Equal(t, "call_1_3", res.Calls[2].ID, "a repeated id is replaced")
	assert.False(t, res.Calls[2].IsError, res.Calls[2].Error)
	assert.Equal(t, "Done.", res.Turns[0].Reply)
	assert.Nil(t, a.Messages()[len(a.Messages())-1].ToolCalls)
	assert.Equal(t, "null", obs.assistant[2].usage, "no usage sent, none reported")

	msgs := messages(t, f.requests()[1])
	tcs := msgs[2]["tool_calls"].([]any)
	assert.Equal(t, "call_1_1", tcs[0].(map[string]any)["id"])
	assert.Equal(t, "{}", tcs[0].(map[string]any)["function"].(map[string]any)["arguments"])
	assert.Equal(t, "call_1_1", msgs[3]["tool_call_id"])
	assert.Equal(t, "dup", msgs[4]["tool_call_id"])
	assert.JSONEq(t, `[{"id":"call_1_3","type":"function","function":{"name":"fs_list","arguments":""}}]`, obs.assistant[1].toolCalls)
}

// An unknown tool is a tool error the model sees; the episode records it.
func TestUnknownTool(t *testing.T) {
	f := newFake(t, calls("", call("c1", "web_search", `{"q":"x"}`)), say("Sorry."))
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, copyNote), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Calls, 1)
	assert.True(t, res.Calls[0].IsError)
	msgs := messages(t, f.requests()[1])
	assert.JSONEq(t, `{"error":"unknown tool \"web_search\""}`, msgs[3]["content"].(string))
}

// An injected fault is a tool error marked transient, which says that nothing was applied and
// when to retry.
func TestFaultIsTransient(t *testing.T) {
	src := strings.Replace(copyNote, "max_calls_per_turn = 6,", `max_calls_per_turn = 6, faults = {"rate": 1.0, "tools": ["fs_read"]},`, 1)
	f := newFake(t, calls("", call("c1", "fs_read", `{"path":"/notes/todo.txt"}`)), say("The file system is down."))
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, src), a)
	require.Nil(t, res.AgentErr)
	require.Len(t, res.Calls, 1)
	require.True(t, res.Calls[0].Fault)
	var content map[string]any
	require.NoError(t, json.Unmarshal([]byte(messages(t, f.requests()[1])[3]["content"].(string)), &content))
	assert.Equal(t, true, content["transient"])
	assert.Equal(t, res.Calls[0].Error, content["error"])
	assert.Equal(t, false, content["applied"], "a fault applies nothing")
	assert.Contains(t, content["retry"], "call it again now with the same arguments")
	// and a tool error that is not a fault says neither
	assert.Equal(t, `{"error":"boom"}`, conversation.ToolErrorContent("boom", false))
}

// max_calls_per_turn ends the turn; the reply is the last text; the history stays valid.
func TestMaxCallsPerTurn(t *testing.T) {
	src := strings.Replace(copyNote, "max_calls_per_turn = 6", "max_calls_per_turn = 2", 1)
	f := newFake(t,
		calls("Looking.", call("c1", "fs_list", `{}`)),
		calls("", call("c2", "fs_list", `{}`), call("c3", "fs_list", `{}`), call("c4", "fs_list", `{}`)),
	)
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, src), a)
	require.Nil(t, res.AgentErr)
	assert.True(t, res.Turns[0].Truncated)
	assert.Equal(t, "Looking.", res.Turns[0].Reply)
	assert.Len(t, res.Calls, 2)
	hist := a.Messages()
	var toolIDs []string
	for _, m := range hist {
		if m.Role == "tool" {
			toolIDs = append(toolIDs, m.ToolCallID)
		}
	}
	assert.Equal(t, []string{"c1", "c2", "c3", "c4"}, toolIDs)
}

// A model that keeps sending broken arguments still ends the turn.
func TestBrokenArgumentsBounded(t *testing.T) {
	src := strings.Replace(copyNote, "max_calls_per_turn = 6", "max_calls_per_turn = 2", 1)
	bad := calls("", call("", "fs_read", `{`))
	f := newFake(t, bad, bad, bad, bad)
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, src), a)
	require.Nil(t, res.AgentErr)
	assert.True(t, res.Turns[0].Truncated)
	assert.Len(t, f.requests(), 3)
	assert.Empty(t, res.Calls)
}

// The conversation goes on across turns; an empty reply goes back with content "".
func TestConversationAcrossTurns(t *testing.T) {
	f := newFake(t, say(""), say("Second answer."))
	a, _ := newAgent(t, f, nil)
	res, _ := run(t, prepare(t, twoTurns), a)
	require.Nil(t, res.AgentErr)
	assert.Equal(t, "", res.Turns[0].Reply)
	assert.Equal(t, "Second answer.", res.Turns[1].Reply)
	msgs := messages(t, f.requests()[1])
	require.Len(t, msgs, 4)
	assert.Equal(t, "First question?", msgs[1]["content"])
	assert.Equal(t, map[string]any{"role": "assistant", "content": ""}, msgs[2])
	// turn 2 advances the clock a day: the model is told, in front of the user's words
	assert.Equal(t, "(It is now Tuesday, 2026-01-06T09:00:00Z.)\n\nSecond question?", msgs[3]["content"])
	assert.Contains(t, f.rawRequests()[1], `{"role":"assistant","content":""}`)
	assert.Len(t, a.Messages(), 5)
}

// The user message carries a note of the time only when the clock moved since the model was
// last told.
func TestUserContent(t *testing.T) {
	assert.Equal(t, "hi", conversation.UserContent("hi", "2026-01-05T09:00:00Z", "2026-01-05T09:00:00Z"))
	assert.Equal(t, "(It is now Monday, 2026-01-05T11:00:00Z.)\n\nhi", conversation.UserContent("hi", "2026-01-05T11:00:00Z", "2026-01-05T09:00:00Z"))
	assert.Equal(t, "hi", conversation.UserContent("hi", "", "2026-01-05T09:00:00Z"), "traces written before times were recorded")
}

// One agent per episode: a second episode is refused.
func TestAgentIsForOneEpisode(t *testing.T) {
	f := newFake(t, say("One."), say("Two."))
	a, _ := newAgent(t, f, nil)
	p := prepare(t, copyNote)
	res, _ := run(t, p, a)
	require.Nil(t, res.AgentErr)
	res, _ = run(t, p, a)
	require.Error(t, res.AgentErr)
	assert.Contains(t, res.AgentErr.Error(), "one agent with New per episode")
	assert.Len(t, f.requests(), 1)
}

// Ctrl-C: a cancelled context ends the turn promptly with the context's error.
func TestCancel(t *testing.T) {
	f := newFake(t, reply{hang: true})
	a, _ := newAgent(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	res := prepare(t, copyNote).Run(ctx, a, episode.RunOptions{})
	assert.Less(t, time.Since(start), 5*time.Second)
	require.NotNil(t, res.Err)
	assert.Equal(t, "interrupted", res.Err.Code)
	assert.True(t, errors.Is(res.AgentErr, context.Canceled), "%v", res.AgentErr)
}

// Cancelling during a backoff delay returns at once, with the real sleep.
func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t, status(http.StatusTooManyRequests, `{}`), say("never"))
	a, err := modelagent.New(modelagent.Config{Model: "m", BaseURL: f.srv.URL + "/v1", Backoff: time.Hour, MaxBackoff: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	res := prepare(t, copyNote).Run(ctx, a, episode.RunOptions{})
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.True(t, errors.Is(res.AgentErr, context.Canceled), "%v", res.AgentErr)
}

func TestAPIKey(t *testing.T) {
	f := newFake(t, say("Hi."), say("Hi."))
	a, _ := newAgent(t, f, func(c *modelagent.Config) { c.APIKey = "sk-test" })
	run(t, prepare(t, copyNote), a)
	b, _ := newAgent(t, f, nil)
	run(t, prepare(t, copyNote), b)
	assert.Equal(t, []string{"Bearer sk-test", ""}, f.auth())
}

func TestNewValidates(t *testing.T) {
	for name, cfg := range map[string]modelagent.Config{
		"no model":    {},
		"bad url":     {Model: "m", BaseURL: "localhost:8000"},
		"bad scheme":  {Model: "m", BaseURL: "ftp://x/v1"},
		"negative t":  {Model: "m", Temperature: ptr(-1)},
		"negative mt": {Model: "m", MaxTokens: -1},
	} {
		_, err := modelagent.New(cfg)
		assert.Error(t, err, name)
	}
	_, err := modelagent.New(modelagent.Config{Model: "m"})
	assert.NoError(t, err)
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"OPENAI_BASE_URL": "http://env:8000/v1", "OPENAI_API_KEY": "sk-env"}
	getenv := func(k string) string { return env[k] }
	c := modelagent.FromEnv(modelagent.Config{Model: "m"}, getenv)
	assert.Equal(t, "http://env:8000/v1", c.BaseURL)
	assert.Equal(t, "sk-env", c.APIKey)
	c = modelagent.FromEnv(modelagent.Config{Model: "m", BaseURL: "http://flag/v1"}, getenv)
	assert.Equal(t, "http://flag/v1", c.BaseURL, "a flag wins over the environment")
}
