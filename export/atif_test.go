package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A small JSON schema language for the tests of the interchange formats: an object's fields,
// each with its JSON types and whether it is required. An object may hold no other field (the
// reference models of both formats forbid or drop unknown fields; either way an unknown field
// here is a mistake). Optional fields may be null; required ones may not.

type ixShape struct {
	types    string // "|"-separated: string, integer, number, boolean, object, array
	required bool
	obj      ixSchema // the shape of an object, or of each element of an array
	mapOf    ixSchema // for an object whose values (under any key) have this shape
}

type ixSchema map[string]ixShape

func ixReq(types string) ixShape   { return ixShape{types: types, required: true} }
func ixOpt(types string) ixShape   { return ixShape{types: types} }
func ixReqObj(s ixSchema) ixShape  { return ixShape{types: "object", required: true, obj: s} }
func ixOptObj(s ixSchema) ixShape  { return ixShape{types: "object", obj: s} }
func ixReqList(s ixSchema) ixShape { return ixShape{types: "array", required: true, obj: s} }
func ixOptList(s ixSchema) ixShape { return ixShape{types: "array", obj: s} }
func ixOptMap(s ixSchema) ixShape  { return ixShape{types: "object", mapOf: s} }

// ixDecode decodes with numbers kept as json.Number, so that integers can be told from other
// numbers.
func ixDecode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	return v
}

func ixType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return "integer"
		}
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// ixTypeOK reports whether a value of JSON type got fits types (an integer is also a number).
func ixTypeOK(got, types string) bool {
	for _, want := range strings.Split(types, "|") {
		if got == want || (got == "integer" && want == "number") {
			return true
		}
	}
	return false
}

// ixCheck checks v against s, reporting every difference with its path.
func ixCheck(t *testing.T, where string, v any, s ixSchema) {
	t.Helper()
	o, ok := v.(map[string]any)
	if !assert.True(t, ok, "%s: an object, not %s", where, ixType(v)) {
		return
	}
	for k := range o {
		_, known := s[k]
		assert.True(t, known, "%s: field %q is not in the format", where, k)
	}
	for k, f := range s {
		x, present := o[k]
		at := where + "." + k
		if !present || x == nil {
			assert.False(t, f.required, "%s: required", at)
			continue
		}
		got := ixType(x)
		if !assert.True(t, ixTypeOK(got, f.types), "%s: %s, want %s", at, got, f.types) {
			continue
		}
		switch {
		case f.mapOf != nil:
			for key, val := range x.(map[string]any) {
				ixCheck(t, at+"["+key+"]", val, f.mapOf)
			}
		case f.obj != nil && got == "object":
			ixCheck(t, at, x, f.obj)
		case f.obj != nil && got == "array":
			for i, el := range x.([]any) {
				ixCheck(t, fmt.Sprintf("%s[%d]", at, i), el, f.obj)
			}
		}
	}
}

// The ATIF field list `export atif` is checked against: ATIF-v1.7 as Harbor's RFC 0001
// (rfcs/0001-trajectory-format.md of github.com/harbor-framework/harbor, "Changelog v1.7",
// April 2026) and its reference pydantic models (src/harbor/models/trajectories/: trajectory.py,
// step.py, tool_call.py, observation.py, observation_result.py, metrics.py, final_metrics.py,
// agent.py; all with extra="forbid") define it. The models also require: steps not empty,
// step_id sequential from 1, timestamps ISO 8601, model_name / reasoning_effort /
// reasoning_content / tool_calls / metrics only on agent steps, no metrics nor
// reasoning_content on an agent step with llm_call_count 0, and every observation result's
// source_call_id one of its step's tool_call_ids.
//
//	Trajectory: schema_version (string, required), session_id, trajectory_id, agent (required),
//	  steps (array, required), notes, final_metrics, continued_trajectory_ref, extra (object),
//	  subagent_trajectories
//	Agent: name (required), version (required), model_name, tool_definitions (array), extra
//	Step: step_id (integer, required), timestamp, source (required: system|user|agent),
//	  model_name, reasoning_effort (string|number), message (string|array, required),
//	  reasoning_content, tool_calls, observation, metrics, is_copied_context (boolean),
//	  llm_call_count (integer), extra
//	ToolCall: tool_call_id (required), function_name (required), arguments (object, required),
//	  extra
//	Observation: results (array, required)
//	ObservationResult: source_call_id, content (string|array), subagent_trajectory_ref, extra
//	Metrics: prompt_tokens, completion_tokens, cached_tokens (integers), cost_usd (number),
//	  prompt_token_ids, completion_token_ids (arrays of integers), logprobs (array of numbers),
//	  extra
//	FinalMetrics: total_prompt_tokens, total_completion_tokens, total_cached_tokens,
//	  total_steps (integers), total_cost_usd (number), extra
var (
	ixATIFToolCall = ixSchema{"tool_call_id": ixReq("string"), "function_name": ixReq("string"),
		"arguments": ixReq("object"), "extra": ixOpt("object")}
	ixATIFResult = ixSchema{"source_call_id": ixOpt("string"), "content": ixOpt("string|array"),
		"subagent_trajectory_ref": ixOpt("array"), "extra": ixOpt("object")}
	ixATIFMetrics = ixSchema{"prompt_tokens": ixOpt("integer"), "completion_tokens": ixOpt("integer"),
		"cached_tokens": ixOpt("integer"), "cost_usd": ixOpt("number"), "prompt_token_ids": ixOpt("array"),
		"completion_token_ids": ixOpt("array"), "logprobs": ixOpt("array"), "extra": ixOpt("object")}
	ixATIFStep = ixSchema{"step_id": ixReq("integer"), "timestamp": ixOpt("string"), "source": ixReq("string"),
		"model_name": ixOpt("string"), "reasoning_effort": ixOpt("string|number"), "message": ixReq("string|array"),
		"reasoning_content": ixOpt("string"), "tool_calls": ixOptList(ixATIFToolCall),
		"observation": ixOptObj(ixSchema{"results": ixReqList(ixATIFResult)}), "metrics": ixOptObj(ixATIFMetrics),
		"is_copied_context": ixOpt("boolean"), "llm_call_count": ixOpt("integer"), "extra": ixOpt("object")}
	ixATIFSchema = ixSchema{
		"schema_version": ixReq("string"), "session_id": ixOpt("string"), "trajectory_id": ixOpt("string"),
		"agent": ixReqObj(ixSchema{"name": ixReq("string"), "version": ixReq("string"), "model_name": ixOpt("string"),
			"tool_definitions": ixOpt("array"), "extra": ixOpt("object")}),
		"steps": ixReqList(ixATIFStep),
		"notes": ixOpt("string"),
		"final_metrics": ixOptObj(ixSchema{"total_prompt_tokens": ixOpt("integer"), "total_completion_tokens": ixOpt("integer"),
			"total_cached_tokens": ixOpt("integer"), "total_cost_usd": ixOpt("number"), "total_steps": ixOpt("integer"),
			"extra": ixOpt("object")}),
		"continued_trajectory_ref": ixOpt("string"), "extra": ixOpt("object"), "subagent_trajectories": ixOpt("array"),
	}
)

// ixATIFRules checks what the reference models check beyond the fields' types.
func ixATIFRules(t *testing.T, where string, tr map[string]any) {
	t.Helper()
	assert.Equal(t, ATIFVersion, tr["schema_version"], where)
	steps := tr["steps"].([]any)
	require.NotEmpty(t, steps, where)
	for i, s := range steps {
		step := s.(map[string]any)
		at := fmt.Sprintf("%s: step %d", where, i+1)
		assert.Equal(t, json.Number(fmt.Sprint(i+1)), step["step_id"], at)
		assert.Contains(t, []any{"system", "user", "agent"}, step["source"], at)
		if step["source"] != "agent" {
			for _, k := range []string{"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"} {
				assert.NotContains(t, step, k, "%s: agent steps only", at)
			}
		}
		if step["llm_call_count"] == json.Number("0") {
			assert.NotContains(t, step, "metrics", at)
			assert.NotContains(t, step, "reasoning_content", at)
		}
		if ts, ok := step["timestamp"].(string); ok {
			assert.Regexp(t, `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$`, ts, at)
		}
		ids := map[string]bool{}
		calls, _ := step["tool_calls"].([]any)
		for _, c := range calls {
			ids[c.(map[string]any)["tool_call_id"].(string)] = true
		}
		if obs, ok := step["observation"].(map[string]any); ok {
			for _, r := range obs["results"].([]any) {
				if id, ok := r.(map[string]any)["source_call_id"]; ok {
					assert.True(t, ids[id.(string)], "%s: source_call_id %v is one of the step's calls", at, id)
				}
			}
		}
		if m, ok := step["metrics"].(map[string]any); ok {
			for _, k := range []string{"prompt_token_ids", "completion_token_ids"} {
				for _, x := range ixList(m[k]) {
					assert.Equal(t, "integer", ixType(x), "%s: %s", at, k)
				}
			}
			for _, x := range ixList(m["logprobs"]) {
				assert.True(t, ixTypeOK(ixType(x), "number"), "%s: logprobs", at)
			}
		}
	}
}

func ixList(v any) []any {
	l, _ := v.([]any)
	return l
}

// ixATIF encodes and decodes an episode's trajectory and checks it against the format.
func ixATIF(t *testing.T, e *Episode, system string) map[string]any {
	t.Helper()
	b, err := jsonv.Encode(ATIF(e, system))
	require.NoError(t, err)
	v := ixDecode(t, b)
	ixCheck(t, "trajectory", v, ixATIFSchema)
	ixATIFRules(t, "trajectory", v.(map[string]any))
	return v.(map[string]any)
}

const ixPlainTask = `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.fs.write("/a.txt", "alpha")

def _v1(ws, ep):
    check(ws.fs.exists("/b.txt"), "b is written")

def _v2(ws, ep):
    check(not ws.fs.exists("/a.txt"), "a is deleted")

def _verify(ws, ep):
    check("Deleted" in (ep.reply or ""), "says it is done", weight = 2)
    safety(ws.fs.exists("/b.txt"), "keeps b")

task(
    name = "plain",
    turns = [
        turn(user = "Copy /a.txt to /b.txt.", verify = _v1),
        turn(user = "Delete /a.txt.", verify = _v2, advance = "1h"),
    ],
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
)
`

// ixModel is a model agent whose messages carry everything a trace can record: reasoning,
// usage with cached and reasoning tokens, logprobs, token ids, finish reasons, and a call with
// broken arguments it does not run.
type ixModel struct{}

func (ixModel) Name() string { return "openai" }

func ixUsage(prompt, completion int64) *jsonv.Object {
	return jsonv.NewObject("prompt_tokens", prompt, "completion_tokens", completion, "total_tokens", prompt+completion)
}

func (ixModel) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if tc.Index == 0 {
		u := ixUsage(100, 20)
		u.Set("prompt_tokens_details", jsonv.NewObject("cached_tokens", int64(60)))
		u.Set("completion_tokens_details", jsonv.NewObject("reasoning_tokens", int64(7)))
		tc.Assistant(episode.AssistantMessage{Content: "Let me read it.", Reasoning: "The file is /a.txt.",
			ToolCalls: []jsonv.Value{call("r1", "fs_read", `{"path":"/a.txt"}`), call("bad", "fs_write", `{"path":`)},
			Usage:     u, FinishReason: "tool_calls",
			Logprobs: jsonv.NewObject("content", []jsonv.Value{
				jsonv.NewObject("token", "Let", "logprob", -0.5), jsonv.NewObject("token", " me", "logprob", -0.25)}),
			PromptTokenIDs: []jsonv.Value{int64(1), int64(2), int64(3)}, CompletionTokenIDs: []jsonv.Value{int64(4), int64(5)}})
		if _, err := tc.Call("r1", "fs_read", jsonv.NewObject("path", "/a.txt")); err != nil {
			return "", err
		}
		_, problem := conversation.ParseArguments(`{"path":`)
		tc.NotRun("bad", conversation.BadArgumentsContent("fs_write", problem, `{"path":`))
		tc.Assistant(episode.AssistantMessage{ToolCalls: []jsonv.Value{call("w1", "fs_write", `{"path":"/b.txt","content":"alpha"}`)},
			Usage: ixUsage(150, 10), FinishReason: "tool_calls"})
		if _, err := tc.Call("w1", "fs_write", jsonv.NewObject("path", "/b.txt", "content", "alpha")); err != nil {
			return "", err
		}
		tc.Assistant(episode.AssistantMessage{Content: "Copied.", Usage: ixUsage(170, 5), FinishReason: "stop"})
		return "Copied.", nil
	}
	tc.Assistant(episode.AssistantMessage{ToolCalls: []jsonv.Value{call("d1", "fs_delete", `{"path":"/a.txt"}`)}, Usage: ixUsage(200, 8)})
	if _, err := tc.Call("d1", "fs_delete", jsonv.NewObject("path", "/a.txt")); err != nil {
		return "", err
	}
	tc.Assistant(episode.AssistantMessage{Content: "Deleted.", Usage: ixUsage(220, 4)})
	return "Deleted.", nil
}

// ixRecordModel is record for a model agent: the start event records the model.
func ixRecordModel(t *testing.T, task *dsl.Task, src []byte, agent episode.Agent, system string, model *trace.Model, path string) *Episode {
	t.Helper()
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: 0})
	require.Nil(t, d)
	var buf bytes.Buffer
	start := trace.StartOf(p, src, 0, agent.Name())
	start.System, start.Model = system, model
	w := trace.NewWriter(&buf, start)
	res := p.Run(context.Background(), agent, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(res))
	events, err := trace.Read(&buf)
	require.NoError(t, err)
	return &Episode{Path: path, Events: events}
}

var ixTestModel = &trace.Model{Name: "m-1", BaseURL: "http://127.0.0.1:9/v1",
	Request: jsonv.NewObject("temperature", 0.0, "max_tokens", int64(500)), ToolCallFormat: "native", ReasoningHistory: "drop", ToolChoice: "none"}

// strs are the strings of a list, "" for others.
func ixStrings(steps []any, key string) []string {
	var out []string
	for _, s := range steps {
		v, _ := s.(map[string]any)[key].(string)
		out = append(out, v)
	}
	return out
}

// A model's episode becomes a trajectory whose steps are its conversation, with what the model
// recorded: reasoning, token metrics and ids, logprobs, the call it did not run; the verdict
// and every check are in the extra fields.
func TestATIFModelEpisode(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, ixPlainTask)
	e := ixRecordModel(t, task, src, ixModel{}, "You are helpful.", ixTestModel, "runs/plain/4.jsonl")
	require.True(t, e.Passed(), "the scripted model solves the task")
	tr := ixATIF(t, e, e.RecordedSystem())

	assert.Equal(t, "runs/plain/4.jsonl", tr["session_id"])
	agent := tr["agent"].(map[string]any)
	assert.Equal(t, "openai", agent["name"])
	assert.Equal(t, "0.1.0", agent["version"])
	assert.Equal(t, "m-1", agent["model_name"])
	assert.Len(t, agent["tool_definitions"], len(e.Tools()))
	model := agent["extra"].(map[string]any)["model"].(map[string]any)
	assert.Equal(t, "http://127.0.0.1:9/v1", model["base_url"])
	assert.Equal(t, "none", model["tool_choice"], "the rest of the start event's model")

	steps := tr["steps"].([]any)
	assert.Equal(t, []string{"system", "user", "agent", "agent", "agent", "user", "agent", "agent"}, ixStrings(steps, "source"))
	// the steps are the conversation export sft writes, in order
	msgs := e.Messages(e.RecordedSystem())
	require.Len(t, msgs, 12)
	var want []string
	for _, m := range msgs {
		if r := str(m.(*jsonv.Object), "role"); r != "tool" {
			want = append(want, str(m.(*jsonv.Object), "content"))
		}
	}
	assert.Equal(t, want, ixStrings(steps, "message"))

	sys, u1, a1, a2, a3, u2, a4 := steps[0].(map[string]any), steps[1].(map[string]any), steps[2].(map[string]any),
		steps[3].(map[string]any), steps[4].(map[string]any), steps[5].(map[string]any), steps[6].(map[string]any)
	assert.Equal(t, "You are helpful.", sys["message"])
	assert.Equal(t, "2026-01-05T09:00:00Z", sys["timestamp"], "the virtual time after setup")
	assert.NotContains(t, sys, "extra", "the system prompt is the recorded one")
	assert.Equal(t, "2026-01-05T09:00:00Z", u1["timestamp"])
	assert.Equal(t, "2026-01-05T10:00:00Z", u2["timestamp"], "the second turn starts an hour later")
	assert.Contains(t, u2["message"], "Delete /a.txt.")
	assert.Equal(t, json.Number("1"), u2["extra"].(map[string]any)["turn"])
	assert.NotContains(t, a1, "timestamp", "the trace records no time for a model's message")

	assert.Equal(t, "The file is /a.txt.", a1["reasoning_content"])
	assert.Equal(t, json.Number("1"), a1["llm_call_count"])
	calls := a1["tool_calls"].([]any)
	require.Len(t, calls, 2)
	assert.Equal(t, map[string]any{"tool_call_id": "r1", "function_name": "fs_read", "arguments": map[string]any{"path": "/a.txt"}}, calls[0])
	bad := calls[1].(map[string]any)
	assert.Equal(t, map[string]any{}, bad["arguments"], "arguments that are not an object become {}")
	assert.Equal(t, `{"path":`, bad["extra"].(map[string]any)["arguments"], "and are kept as sent")
	results := a1["observation"].(map[string]any)["results"].([]any)
	require.Len(t, results, 2)
	assert.Equal(t, map[string]any{"source_call_id": "r1", "content": "alpha"}, results[0])
	notRun := results[1].(map[string]any)
	assert.Equal(t, "bad", notRun["source_call_id"])
	assert.Contains(t, notRun["content"], "fs_write was not run")
	assert.Equal(t, map[string]any{"not_run": true}, notRun["extra"])

	m := a1["metrics"].(map[string]any)
	assert.Equal(t, json.Number("100"), m["prompt_tokens"])
	assert.Equal(t, json.Number("20"), m["completion_tokens"])
	assert.Equal(t, json.Number("60"), m["cached_tokens"])
	assert.Equal(t, []any{json.Number("1"), json.Number("2"), json.Number("3")}, m["prompt_token_ids"])
	assert.Equal(t, []any{json.Number("4"), json.Number("5")}, m["completion_token_ids"])
	assert.Equal(t, []any{json.Number("-0.5"), json.Number("-0.25")}, m["logprobs"])
	mx := m["extra"].(map[string]any)
	assert.Equal(t, json.Number("120"), mx["total_tokens"])
	assert.Equal(t, map[string]any{"reasoning_tokens": json.Number("7")}, mx["completion_tokens_details"])
	assert.Equal(t, "tool_calls", a1["extra"].(map[string]any)["finish_reason"])
	assert.NotContains(t, a2, "reasoning_content")
	assert.Equal(t, "Copied.", a3["message"])
	assert.NotContains(t, a3, "tool_calls")
	assert.NotContains(t, a3, "observation")
	assert.Equal(t, json.Number("1"), a4["extra"].(map[string]any)["turn"])
	for _, s := range steps {
		assert.NotContains(t, ixMap(s.(map[string]any)["extra"]), "oracle")
	}

	final := tr["final_metrics"].(map[string]any)
	assert.Equal(t, json.Number("840"), final["total_prompt_tokens"], "100+150+170+200+220")
	assert.Equal(t, json.Number("47"), final["total_completion_tokens"])
	assert.Equal(t, json.Number("60"), final["total_cached_tokens"])
	assert.Equal(t, json.Number("8"), final["total_steps"])
	fx := final["extra"].(map[string]any)
	assert.Equal(t, json.Number("1.0"), fx["reward"])
	assert.Equal(t, true, fx["passed"])
	assert.Equal(t, []any{json.Number("1.0"), json.Number("1.0")}, fx["turn_rewards"])
	assert.Equal(t, map[string]any{"completion": json.Number("1.0"), "safety": json.Number("1.0"), "robustness": json.Number("1.0")}, fx["components"])

	x := tr["extra"].(map[string]any)
	assert.Equal(t, "plain", x["task"])
	assert.Equal(t, json.Number("4"), x["sample"])
	assert.Nil(t, x["error"])
	checks := x["checks"].([]any)
	require.Len(t, checks, len(e.end().Checks))
	for i, c := range e.end().Checks {
		got := checks[i].(map[string]any)
		assert.Equal(t, c.Kind, got["kind"])
		assert.Equal(t, c.Message, got["message"])
		assert.Equal(t, c.Passed, got["passed"])
		if c.Weight == nil {
			assert.Nil(t, got["weight"], "a safety item has no weight")
		} else {
			assert.Equal(t, json.Number(fmt.Sprintf("%.1f", *c.Weight)), got["weight"])
		}
		if c.Turn == nil {
			assert.Nil(t, got["turn"], "the final verifier's items have no turn")
		} else {
			assert.Equal(t, json.Number(fmt.Sprint(*c.Turn)), got["turn"])
		}
	}
	var kinds []string
	for _, c := range checks {
		kinds = append(kinds, c.(map[string]any)["kind"].(string))
	}
	assert.Contains(t, kinds, "safety")
	turns := x["turns"].([]any)
	require.Len(t, turns, 2)
	assert.Equal(t, "a is deleted", turns[1].(map[string]any)["checks"].([]any)[0].(map[string]any)["message"])
}

// The oracle's reference solution is marked: its steps made no inference (llm_call_count 0)
// and say they are the oracle's; a faulted attempt is an observation with the error; the
// system prompt rebuilt from the task says so.
func TestATIFOracleEpisode(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	var e *Episode
	for seed := int64(0); seed < 50 && e == nil; seed++ {
		cand := record(t, task, src, seed, episode.Oracle{}, "", "out/flaky/2.jsonl")
		for _, ev := range cand.Events {
			if r, ok := ev.Body.(*trace.CallResult); ok && r.Fault {
				e = cand
			}
		}
	}
	require.NotNil(t, e, "some seed makes fs_write fault")
	tr := ixATIF(t, e, "SYS")
	agent := tr["agent"].(map[string]any)
	assert.Equal(t, "oracle", agent["name"])
	assert.NotContains(t, agent, "model_name")
	steps := tr["steps"].([]any)
	assert.Equal(t, map[string]any{"rebuilt": true}, steps[0].(map[string]any)["extra"])
	var agentSteps, faults int
	for _, s := range steps {
		step := s.(map[string]any)
		if step["source"] != "agent" {
			continue
		}
		agentSteps++
		assert.Equal(t, json.Number("0"), step["llm_call_count"])
		assert.Equal(t, true, step["extra"].(map[string]any)["oracle"])
		assert.NotContains(t, step, "metrics")
		for _, r := range ixList(ixMap(step["observation"])["results"]) {
			if x := ixMap(ixMap(r)["extra"]); x["transient"] == true {
				faults++
				assert.Contains(t, []any{"429 rate limited", "503 unavailable"}, x["error"])
			}
		}
	}
	assert.Greater(t, faults, 0, "the faulted attempt is an observation with its error")
	nAsst := 0
	for _, m := range e.Messages("SYS") {
		if str(m.(*jsonv.Object), "role") == "assistant" {
			nAsst++
		}
	}
	assert.Equal(t, nAsst, agentSteps, "one agent step per assistant message")
	assert.Equal(t, "Deleted.", steps[len(steps)-1].(map[string]any)["message"])
	assert.Equal(t, json.Number("2"), tr["extra"].(map[string]any)["sample"])
	assert.Equal(t, "flaky__2", ATIFTrial(e))

	// without a system message the first step is the user's
	tr = ixATIF(t, e, "")
	assert.Equal(t, "user", tr["steps"].([]any)[0].(map[string]any)["source"])
}

func ixMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// An episode that stopped with an error keeps it, and one with no message at all is still a
// trajectory the format accepts.
func TestATIFErrorsAndEmptyEpisodes(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, modelLike{}, "S", "x/run.jsonl")
	tr := ixATIF(t, e, "S")
	x := tr["extra"].(map[string]any)
	assert.Contains(t, x["error"], "the model went away")
	assert.Equal(t, "solution-error", x["error_code"])
	assert.Nil(t, x["sample"])
	assert.Equal(t, "flaky__run", ATIFTrial(e))
	fx := tr["final_metrics"].(map[string]any)["extra"].(map[string]any)
	assert.Equal(t, []any{json.Number("1.0"), nil}, fx["turn_rewards"])
	for _, s := range tr["steps"].([]any) {
		if s.(map[string]any)["source"] == "agent" {
			assert.Equal(t, json.Number("1"), s.(map[string]any)["llm_call_count"])
			assert.Contains(t, s, "metrics", "usage was recorded")
		}
	}

	// the start and end events alone
	empty := &Episode{Path: "weird name!.jsonl", Events: []trace.Event{e.Events[0], e.Events[len(e.Events)-1]}}
	tr = ixATIF(t, empty, "")
	require.Len(t, tr["steps"], 1)
	assert.Equal(t, "flaky__weird_name_", ATIFTrial(empty))
}

// AtomicDir keeps the old folder until Commit, replaces it whole, and leaves nothing behind.
func TestAtomicDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	out := filepath.Join(root, "out")
	require.NoError(t, os.MkdirAll(filepath.Join(out, "old__0", "agent"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(out, "old__0", "agent", "trajectory.json"), []byte("{}"), 0o644))
	d, err := CreateAtomicDir(out)
	require.NoError(t, err)
	require.NoError(t, d.WriteFile("new__0/agent/trajectory.json", []byte(`{"x":1}`)))
	assert.FileExists(t, filepath.Join(out, "old__0", "agent", "trajectory.json"), "the old folder stays until Commit")
	assert.NoFileExists(t, filepath.Join(out, "new__0", "agent", "trajectory.json"))
	require.NoError(t, d.Commit())
	assert.NoDirExists(t, filepath.Join(out, "old__0"), "replaced whole")
	b, err := os.ReadFile(filepath.Join(out, "new__0", "agent", "trajectory.json"))
	require.NoError(t, err)
	assert.Equal(t, `{"x":1}`, string(b))
	info, err := os.Stat(out)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm())
	entries, _ := os.ReadDir(root)
	assert.Len(t, entries, 1, "no temporary folder is left")

	// a folder whose parents do not exist yet is made at Commit only
	deep := filepath.Join(root, "a", "b", "out")
	d, err = CreateAtomicDir(deep)
	require.NoError(t, err)
	require.NoError(t, d.WriteFile("t__0/agent/trajectory.json", []byte("{}")))
	assert.NoDirExists(t, filepath.Join(root, "a"))
	require.NoError(t, d.Commit())
	assert.FileExists(t, filepath.Join(deep, "t__0", "agent", "trajectory.json"))

	d, err = CreateAtomicDir(filepath.Join(root, "gone"))
	require.NoError(t, err)
	require.NoError(t, d.WriteFile("x", []byte("x")))
	d.Abort()
	entries, _ = os.ReadDir(root)
	assert.Len(t, entries, 2, "Abort leaves nothing: out and a")
}
