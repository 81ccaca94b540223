package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Inspect AI eval log field list `export inspect` is checked against, from the pydantic
// models of github.com/UKGovernmentBEIS/inspect_ai at commit 499e6152e7b8 (2026-08-22), log
// format version 2 (LOG_SCHEMA_VERSION in src/inspect_ai/_util/constants.py):
// src/inspect_ai/log/_log.py (EvalLog, EvalSpec, EvalDataset, EvalConfig, EvalPlan, EvalPlanStep,
// EvalResults, EvalScore, EvalMetric, EvalStats, EvalSample, EvalSampleReductions),
// model/_chat_message.py (ChatMessageSystem, User, Assistant, Tool), tool/_tool_call.py
// (ToolCall, ToolCallError), model/_model_output.py (ModelOutput, ChatCompletionChoice,
// ModelUsage), scorer/_metric.py (Score), _util/content.py (ContentText, ContentReasoning).
// log/_recorders/json.py reads a header without the samples only when version, status, eval,
// plan and stats come before "samples"; log/_file.py lists a .json log only when its name starts
// with a time. Fields marked required have no default in the models; the others are the ones
// `export inspect` writes (the models have more, all optional).
//
//	EvalLog: version (integer), status (started|success|cancelled|error), eval (EvalSpec,
//	  required), plan, results, stats, samples, reductions
//	EvalSpec: eval_id, run_id, created (ISO time, required), task (required), task_id,
//	  task_version (integer|string), task_file, task_attribs, task_args, dataset (required),
//	  model (required), model_generate_config, model_base_url, model_args, config (required),
//	  packages (object of strings)
//	EvalDataset: name, location, samples (integer), sample_ids (array), shuffled (boolean)
//	EvalPlan: name, steps (EvalPlanStep: solver (required), params), config
//	EvalResults: total_samples, completed_samples (integers), scores (EvalScore: name, scorer
//	  (required), reducer, scored_samples, unscored_samples, params, metrics (EvalMetric by name:
//	  name, value (number), required; params))
//	EvalStats: started_at, completed_at (ISO time or ""), model_usage (ModelUsage by model)
//	ModelUsage: input_tokens, output_tokens, total_tokens, input_tokens_cache_read,
//	  reasoning_tokens (integers)
//	EvalSample: id (string|integer, required), epoch (integer, required), input (string|array,
//	  required), target (string|array, required), messages, output, scores (Score by scorer),
//	  metadata, store, events, model_usage, started_at, attachments
//	ChatMessage: role (system|user|assistant|tool), content (string|array of content parts,
//	  required); assistant: tool_calls (ToolCall: id, function, arguments (object), required;
//	  parse_error, type), model; tool: tool_call_id, function, error (ToolCallError: type,
//	  message, required)
//	ContentText: type "text", text (required); ContentReasoning: type "reasoning", reasoning
//	  (required)
//	ModelOutput: model, choices (ChatCompletionChoice: message (required), stop_reason),
//	  completion, usage
//	Score: value (required), answer, explanation, metadata
//	EvalSampleReductions: scorer (required), reducer, samples (value (required), sample_id)
var (
	ixInspectUsage   = ixSchema{"input_tokens": ixOpt("integer"), "output_tokens": ixOpt("integer"), "total_tokens": ixOpt("integer"), "input_tokens_cache_read": ixOpt("integer"), "reasoning_tokens": ixOpt("integer")}
	ixInspectMessage = ixSchema{"role": ixReq("string"), "content": ixReq("string|array"), "tool_calls": ixOptList(ixSchema{
		"id": ixReq("string"), "function": ixReq("string"), "arguments": ixReq("object"), "parse_error": ixOpt("string"), "type": ixOpt("string")}),
		"model": ixOpt("string"), "tool_call_id": ixOpt("string"), "function": ixOpt("string"),
		"error": ixOptObj(ixSchema{"type": ixReq("string"), "message": ixReq("string")})}
	ixInspectSample = ixSchema{
		"id": ixReq("string|integer"), "epoch": ixReq("integer"), "input": ixReq("string|array"), "target": ixReq("string|array"),
		"messages": ixOptList(ixInspectMessage),
		"output": ixOptObj(ixSchema{"model": ixOpt("string"), "choices": ixOptList(ixSchema{"message": ixReqObj(ixInspectMessage), "stop_reason": ixOpt("string")}),
			"completion": ixOpt("string"), "usage": ixOptObj(ixInspectUsage)}),
		"scores":   ixOptMap(ixSchema{"value": ixReq("number|string|boolean|array|object"), "answer": ixOpt("string"), "explanation": ixOpt("string"), "metadata": ixOpt("object")}),
		"metadata": ixOpt("object"), "store": ixOpt("object"), "events": ixOpt("array"), "model_usage": ixOptMap(ixInspectUsage),
		"started_at": ixOpt("string"), "attachments": ixOpt("object"),
	}
	ixInspectSchema = ixSchema{
		"version": ixReq("integer"), "status": ixReq("string"),
		"eval": ixReqObj(ixSchema{
			"eval_id": ixOpt("string"), "run_id": ixOpt("string"), "created": ixReq("string"), "task": ixReq("string"), "task_id": ixOpt("string"),
			"task_version": ixOpt("integer|string"), "task_file": ixOpt("string"), "task_attribs": ixOpt("object"), "task_args": ixOpt("object"),
			"dataset": ixReqObj(ixSchema{"name": ixOpt("string"), "location": ixOpt("string"), "samples": ixOpt("integer"), "sample_ids": ixOpt("array"), "shuffled": ixOpt("boolean")}),
			"model":   ixReq("string"), "model_generate_config": ixOpt("object"), "model_base_url": ixOpt("string"), "model_args": ixOpt("object"),
			"config": ixReqObj(ixSchema{"epochs": ixOpt("integer")}), "packages": ixOpt("object"),
		}),
		"plan": ixReqObj(ixSchema{"name": ixOpt("string"), "steps": ixOptList(ixSchema{"solver": ixReq("string"), "params": ixOpt("object")}), "config": ixOpt("object")}),
		"results": ixOptObj(ixSchema{"total_samples": ixOpt("integer"), "completed_samples": ixOpt("integer"), "scores": ixOptList(ixSchema{
			"name": ixReq("string"), "scorer": ixReq("string"), "reducer": ixOpt("string"), "scored_samples": ixOpt("integer"), "unscored_samples": ixOpt("integer"),
			"params": ixOpt("object"), "metrics": ixOptMap(ixSchema{"name": ixReq("string"), "value": ixReq("number"), "params": ixOpt("object")})})}),
		"stats":      ixReqObj(ixSchema{"started_at": ixOpt("string"), "completed_at": ixOpt("string"), "model_usage": ixOptMap(ixInspectUsage)}),
		"samples":    ixOptList(ixInspectSample),
		"reductions": ixOptList(ixSchema{"scorer": ixReq("string"), "reducer": ixOpt("string"), "samples": ixReqList(ixSchema{"value": ixReq("number"), "sample_id": ixOpt("string|integer")})}),
	}
)

// ixInspect writes an eval log of episodes, checks it against the format and decodes it.
func ixInspect(t *testing.T, eps []*Episode, systems []string) (map[string]any, []byte) {
	t.Helper()
	l := NewInspectLog()
	for i, e := range eps {
		require.NoError(t, l.Add(e, systems[i]))
	}
	assert.Equal(t, len(eps), l.Len())
	var b bytes.Buffer
	require.NoError(t, l.Write(&b))
	v := ixDecode(t, b.Bytes())
	ixCheck(t, "log", v, ixInspectSchema)
	log := v.(map[string]any)
	assert.Equal(t, json.Number("2"), log["version"])
	assert.Equal(t, "success", log["status"])
	for i, s := range ixList(log["samples"]) {
		for j, m := range ixList(ixMap(s)["messages"]) {
			ixCheckInspectMessage(t, fmt.Sprintf("sample %d message %d", i, j), ixMap(m))
		}
	}
	// the header comes before the samples (Inspect reads a log's header without them)
	var keys []string
	d := json.NewDecoder(bytes.NewReader(b.Bytes()))
	_, err := d.Token()
	require.NoError(t, err)
	for d.More() {
		k, err := d.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, d.Decode(&skip))
	}
	assert.Equal(t, []string{"version", "status", "eval", "plan", "results", "stats", "samples", "reductions"}, keys)
	return log, b.Bytes()
}

// ixCheckInspectMessage checks what the roles of Inspect's chat messages allow.
func ixCheckInspectMessage(t *testing.T, where string, m map[string]any) {
	t.Helper()
	role := m["role"]
	require.Contains(t, []any{"system", "user", "assistant", "tool"}, role, where)
	if role != "assistant" {
		assert.NotContains(t, m, "tool_calls", where)
		assert.NotContains(t, m, "model", where)
	}
	if role != "tool" {
		for _, k := range []string{"tool_call_id", "function", "error"} {
			assert.NotContains(t, m, k, where)
		}
	}
	for _, p := range ixList(m["content"]) {
		part := ixMap(p)
		switch part["type"] {
		case "text":
			ixCheck(t, where+" text", part, ixSchema{"type": ixReq("string"), "text": ixReq("string")})
		case "reasoning":
			ixCheck(t, where+" reasoning", part, ixSchema{"type": ixReq("string"), "reasoning": ixReq("string")})
		default:
			t.Errorf("%s: content part %v", where, part)
		}
	}
}

func ixNum(v any) float64 {
	f, err := strconv.ParseFloat(string(v.(json.Number)), 64)
	if err != nil {
		panic(err)
	}
	return f
}

// A model's episode is a sample whose messages are Inspect's chat messages: arguments as
// objects, reasoning as a content part, tool errors, the model on assistant messages; its score
// is the reward with the checks; the eval names the model, its settings and the virtual times.
func TestInspectModelEpisode(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, ixPlainTask)
	e := ixRecordModel(t, task, src, ixModel{}, "You are helpful.", ixTestModel, "runs/plain/4.jsonl")
	log, _ := ixInspect(t, []*Episode{e}, []string{e.RecordedSystem()})

	spec := log["eval"].(map[string]any)
	assert.Equal(t, "plain", spec["task"])
	assert.Equal(t, "m-1", spec["model"])
	assert.Equal(t, "http://127.0.0.1:9/v1", spec["model_base_url"])
	assert.Equal(t, map[string]any{"temperature": json.Number("0.0"), "max_tokens": json.Number("500")}, spec["model_generate_config"])
	assert.Equal(t, "2026-01-05T09:00:00Z", spec["created"], "the virtual time, not the wall clock")
	assert.Equal(t, e.File(), spec["task_file"])
	assert.Equal(t, map[string]any{"name": "plain", "location": e.File(), "samples": json.Number("1"), "sample_ids": []any{"plain"}, "shuffled": false}, spec["dataset"])
	assert.Equal(t, map[string]any{"epochs": json.Number("5")}, spec["config"])
	stats := log["stats"].(map[string]any)
	assert.Equal(t, "2026-01-05T09:00:00Z", stats["started_at"])
	assert.Equal(t, "2026-01-05T10:00:00Z", stats["completed_at"], "the latest time the trace records")
	assert.Equal(t, map[string]any{"m-1": map[string]any{"input_tokens": json.Number("840"), "output_tokens": json.Number("47"),
		"total_tokens": json.Number("887"), "input_tokens_cache_read": json.Number("60"), "reasoning_tokens": json.Number("7")}}, stats["model_usage"])

	samples := log["samples"].([]any)
	require.Len(t, samples, 1)
	s := samples[0].(map[string]any)
	assert.Equal(t, "plain", s["id"])
	assert.Equal(t, json.Number("5"), s["epoch"], "sample 4 is epoch 5")
	assert.Equal(t, "Copy /a.txt to /b.txt.", s["input"])
	assert.Equal(t, "2026-01-05T09:00:00Z", s["started_at"])
	msgs := s["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"}, roles)
	a1 := msgs[2].(map[string]any)
	assert.Equal(t, []any{map[string]any{"type": "reasoning", "reasoning": "The file is /a.txt."}, map[string]any{"type": "text", "text": "Let me read it."}}, a1["content"])
	assert.Equal(t, "m-1", a1["model"])
	calls := a1["tool_calls"].([]any)
	assert.Equal(t, map[string]any{"id": "r1", "function": "fs_read", "arguments": map[string]any{"path": "/a.txt"}, "type": "function"}, calls[0])
	bad := calls[1].(map[string]any)
	assert.Equal(t, map[string]any{}, bad["arguments"])
	assert.Contains(t, bad["parse_error"], "not valid JSON")
	assert.Equal(t, map[string]any{"role": "tool", "content": "alpha", "tool_call_id": "r1", "function": "fs_read"}, msgs[3])
	notRun := msgs[4].(map[string]any)
	assert.Equal(t, "fs_write", notRun["function"])
	assert.Equal(t, "parsing", notRun["error"].(map[string]any)["type"])
	assert.Contains(t, notRun["error"].(map[string]any)["message"], "fs_write was not run")
	assert.Equal(t, "", msgs[5].(map[string]any)["content"], "no reasoning: the text as a string")
	assert.Contains(t, msgs[8].(map[string]any)["content"], "Delete /a.txt.")

	out := s["output"].(map[string]any)
	assert.Equal(t, "m-1", out["model"])
	assert.Equal(t, "Deleted.", out["completion"])
	choice := out["choices"].([]any)[0].(map[string]any)
	assert.Equal(t, msgs[len(msgs)-1], choice["message"])
	assert.Equal(t, "stop", choice["stop_reason"])
	assert.Equal(t, stats["model_usage"], s["model_usage"])

	score := s["scores"].(map[string]any)[InspectScorer].(map[string]any)
	assert.Equal(t, json.Number("1.0"), score["value"])
	assert.Equal(t, "Deleted.", score["answer"])
	assert.Equal(t, fmt.Sprintf("all %d checks passed", len(e.end().Checks)), score["explanation"])
	meta := score["metadata"].(map[string]any)
	assert.Equal(t, true, meta["passed"])
	assert.Equal(t, []any{json.Number("1.0"), json.Number("1.0")}, meta["turn_rewards"])
	assert.Len(t, meta["checks"], len(e.end().Checks))
	assert.Len(t, meta["turns"], 2)
	smeta := s["metadata"].(map[string]any)
	assert.Equal(t, "runs/plain/4.jsonl", smeta["trace"])
	assert.Equal(t, e.Group(), smeta["group"])
}

// Oracle rollouts and a model's episode of other tasks make one log: the samples of a task are
// its epochs, metrics summarize every episode, failed checks explain a score, and the same
// traces give the same bytes.
func TestInspectSeveralTasks(t *testing.T) {
	t.Parallel()
	flaky, flakySrc := loadTask(t, flakyTask)
	plain, plainSrc := loadTask(t, ixPlainTask)
	var eps []*Episode
	for i := 0; i < 3; i++ {
		eps = append(eps, record(t, flaky, flakySrc, int64(i), episode.Oracle{}, "", fmt.Sprintf("out/flaky/%d.jsonl", i)))
	}
	eps = append(eps, record(t, flaky, flakySrc, 0, episode.Oracle{}, "", "other/flaky/0.jsonl"))
	eps = append(eps, record(t, plain, plainSrc, 0, episode.Noop{}, "", "noop.jsonl"))
	eps = append(eps, record(t, flaky, flakySrc, 0, modelLike{}, "S", "x/run.jsonl"))
	systems := []string{"SYS", "SYS", "SYS", "SYS", "", "S"}
	log, b := ixInspect(t, eps, systems)
	_, again := ixInspect(t, eps, systems)
	assert.Equal(t, string(b), string(again), "deterministic")

	spec := log["eval"].(map[string]any)
	assert.Equal(t, "coworkenv", spec["task"])
	assert.Equal(t, "coworkenv/mixed", spec["model"])
	assert.Equal(t, eps[0].File(), spec["task_file"], "both tasks are in a file of that name")
	assert.NotContains(t, spec, "model_base_url")
	assert.Equal(t, []any{"flaky", "plain"}, spec["dataset"].(map[string]any)["sample_ids"])
	assert.Equal(t, map[string]any{"epochs": json.Number("5")}, spec["config"])
	plan := log["plan"].(map[string]any)
	assert.Equal(t, []any{map[string]any{"solver": "coworkenv/oracle", "params": map[string]any{}},
		map[string]any{"solver": "coworkenv/noop", "params": map[string]any{}},
		map[string]any{"solver": "coworkenv/openai", "params": map[string]any{}}}, plan["steps"])

	samples := log["samples"].([]any)
	require.Len(t, samples, len(eps))
	type key struct {
		id    string
		epoch string
	}
	var got []key
	for _, s := range samples {
		got = append(got, key{s.(map[string]any)["id"].(string), string(s.(map[string]any)["epoch"].(json.Number))})
	}
	assert.Equal(t, []key{{"flaky", "1"}, {"flaky", "2"}, {"flaky", "3"}, {"flaky", "4"}, {"plain", "1"}, {"flaky", "5"}}, got,
		"a second sample 0 and a trace that is no sample take the next free epochs")

	sum, passed := 0.0, 0
	for i, e := range eps {
		s := samples[i].(map[string]any)
		score := s["scores"].(map[string]any)[InspectScorer].(map[string]any)
		assert.Equal(t, e.Score(), ixNum(score["value"]), e.Path)
		sum += e.Score()
		if e.Passed() {
			passed++
		}
	}
	// the noop fails its checks, and the explanation lists them
	noop := samples[4].(map[string]any)
	noopScore := noop["scores"].(map[string]any)[InspectScorer].(map[string]any)
	assert.Contains(t, noopScore["explanation"], "failed check: b is written")
	assert.Contains(t, noopScore["explanation"], "failed check: a is deleted")
	assert.Equal(t, "Done.", noop["output"].(map[string]any)["completion"], "the noop's reply")
	assert.Equal(t, "coworkenv/noop", noop["output"].(map[string]any)["model"])
	// the model's error is in the explanation and the metadata
	model := samples[5].(map[string]any)
	modelScore := model["scores"].(map[string]any)[InspectScorer].(map[string]any)
	assert.Contains(t, modelScore["explanation"], "error: ")
	assert.Contains(t, model["metadata"].(map[string]any)["error"], "the model went away")
	// the oracle is no model
	oracleMsgs := samples[0].(map[string]any)["messages"].([]any)
	assert.Equal(t, "SYS", oracleMsgs[0].(map[string]any)["content"])
	for _, m := range oracleMsgs {
		assert.NotContains(t, m, "model")
	}

	results := log["results"].(map[string]any)
	assert.Equal(t, json.Number("6"), results["total_samples"])
	score := results["scores"].([]any)[0].(map[string]any)
	metrics := score["metrics"].(map[string]any)
	mean := sum / float64(len(eps))
	assert.InDelta(t, mean, ixNum(metrics["mean"].(map[string]any)["value"]), 1e-9)
	assert.InDelta(t, float64(passed)/float64(len(eps)), ixNum(metrics["pass_rate"].(map[string]any)["value"]), 1e-9)
	ss := 0.0
	for _, e := range eps {
		ss += (e.Score() - mean) * (e.Score() - mean)
	}
	assert.InDelta(t, math.Sqrt(ss/5/6), ixNum(metrics["stderr"].(map[string]any)["value"]), 1e-9)
	red := log["reductions"].([]any)[0].(map[string]any)
	flakySum := 0.0
	for _, e := range append(eps[:4:4], eps[5]) {
		flakySum += e.Score()
	}
	assert.InDelta(t, flakySum/5, ixNum(red["samples"].([]any)[0].(map[string]any)["value"]), 1e-9)
	assert.Equal(t, "flaky", red["samples"].([]any)[0].(map[string]any)["sample_id"])

	// oracle episodes record no usage: only the model's is summed
	usage := log["stats"].(map[string]any)["model_usage"].(map[string]any)
	assert.Equal(t, []string{"coworkenv/openai"}, ixKeys(usage))
	assert.Equal(t, json.Number("45"), usage["coworkenv/openai"].(map[string]any)["total_tokens"], "three messages of 15")
}

func ixKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// An injected fault is a tool message with its error, and the retry that follows succeeds.
func TestInspectToolErrors(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	var e *Episode
	for seed := int64(0); seed < 50 && e == nil; seed++ {
		cand := record(t, task, src, seed, episode.Oracle{}, "", "out/flaky/0.jsonl")
		for _, ev := range cand.Events {
			if r, ok := ev.Body.(*trace.CallResult); ok && r.Fault {
				e = cand
			}
		}
	}
	require.NotNil(t, e, "some seed makes fs_write fault")
	log, _ := ixInspect(t, []*Episode{e}, []string{""})
	faults := 0
	for _, m := range ixList(ixMap(ixList(log["samples"])[0])["messages"]) {
		msg := ixMap(m)
		if msg["role"] != "tool" {
			continue
		}
		if errv, ok := msg["error"]; ok {
			faults++
			assert.Equal(t, "fs_write", msg["function"])
			assert.Equal(t, "unknown", ixMap(errv)["type"])
			assert.Contains(t, []any{"429 rate limited", "503 unavailable"}, ixMap(errv)["message"])
			assert.Contains(t, msg["content"], `"transient":true`, "the content is what the agent was shown")
		}
	}
	assert.Greater(t, faults, 0)

	// a log of no episode has no metric
	log, _ = ixInspect(t, nil, nil)
	assert.Equal(t, []any{}, ixMap(log["results"])["scores"])
	assert.Equal(t, []any{}, log["samples"])
}

// A log of traces that record no time says the Unix epoch; WriteFile replaces a file whole and
// leaves no temporary file.
func TestInspectWriteFile(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, episode.Oracle{}, "", "out/flaky/0.jsonl")
	start := *e.Events[0].Body.(*trace.Start)
	start.Now = ""
	events := append([]trace.Event{{Kind: "start", Body: &start}}, e.Events[1:]...)
	for i, ev := range events {
		if u, ok := ev.Body.(*trace.User); ok {
			u2 := *u
			u2.Now = ""
			events[i] = trace.Event{Kind: ev.Kind, Body: &u2}
		}
	}
	old := &Episode{Path: e.Path, Events: events}
	log, _ := ixInspect(t, []*Episode{old}, []string{""})
	assert.Equal(t, "1970-01-01T00:00:00Z", log["eval"].(map[string]any)["created"])
	_, err := time.Parse(time.RFC3339, log["stats"].(map[string]any)["completed_at"].(string))
	assert.NoError(t, err)
	assert.NotContains(t, log["samples"].([]any)[0], "started_at")

	dir := t.TempDir()
	path := filepath.Join(dir, "2026-01-05T09-00-00_flaky.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
	l := NewInspectLog()
	require.NoError(t, l.Add(e, ""))
	require.NoError(t, l.WriteFile(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v))
	assert.Equal(t, "flaky", v["eval"].(map[string]any)["task"])
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1)
	assert.Error(t, l.WriteFile(filepath.Join(dir, "no", "x.json")))
	entries, _ = os.ReadDir(dir)
	assert.Len(t, entries, 1)
}
