package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Inspect. `export inspect` writes the episodes as one Inspect AI eval log in its JSON format
// (version InspectLogVersion), which `inspect view` and read_eval_log open.
//
//   - Each episode is a sample. Its id is the task's name and its epoch the sample number plus
//     one, so that the samples of a rollout are epochs of one sample, as Inspect shows repeated
//     attempts; a trace that is not a rollout sample (or a second episode with the same task and
//     number) takes the next free epoch of its task.
//   - The sample's messages are the conversation of Messages in Inspect's ChatMessage shapes:
//     tool calls have their arguments as a JSON object (arguments that are not one become {}
//     and parse_error says why), the model's reasoning is a reasoning content part before the
//     text, a tool message names its function, and a tool error or a call not run is its error.
//   - The sample has one score, "coworkenv": the value is the reward (the end score), the answer
//     the last assistant message, the explanation the checks that failed (and the episode's
//     error), and the metadata the verdict, components, per-turn rewards and every check.
//   - The eval's task is the task's name when every episode is of one task, "coworkenv"
//     otherwise; its model the model's name the start events record ("coworkenv/AGENT" for
//     agents that are not models, "coworkenv/mixed" when episodes differ); its results the mean
//     reward, its standard error and the share of passed episodes, over every episode.
//   - The log's times come from the traces' virtual clocks, never from the wall clock: created
//     and started_at are the earliest start time, completed_at the latest time a trace records
//     (the start of a sample is its start event's time); a log whose traces record no time
//     says 1970-01-01T00:00:00Z. Ids (eval_id, run_id, task_id) are hashes of the traces'
//     paths, tasks, seeds and final states, so that the same traces give the same log.

// InspectLogVersion is the version of Inspect's eval log format `export inspect` writes.
const InspectLogVersion = 2

// InspectScorer is the name of the one score of each sample.
const InspectScorer = "coworkenv"

// InspectLog gathers the samples of an eval log; Write writes it.
type InspectLog struct {
	samples  [][]byte // each sample, encoded
	ids      []string // the sample ids, in the order they first appear
	epochs   map[string]map[int64]bool
	values   []float64 // every sample's reward
	byID     map[string][]float64
	passed   int
	tasks    []string
	files    []string
	models   []string
	agents   []string
	baseURLs []string
	config   *jsonv.Object // the generate config of the first model that recorded one
	engine   string
	usage    map[string]*modelUsage
	first    time.Time // the earliest virtual time, zero when none
	last     time.Time // the latest
	hash     []byte
	maxEpoch int64
}

// modelUsage is an Inspect ModelUsage being summed.
type modelUsage struct {
	input, output, total, cacheRead, reasoning int64
	hasCacheRead, hasReasoning                 bool
}

func (u *modelUsage) add(n usageNumbers) {
	u.input += n.prompt
	u.output += n.completion
	if n.hasTotal {
		u.total += n.total
	} else {
		u.total += n.prompt + n.completion
	}
	if n.hasCached {
		u.cacheRead, u.hasCacheRead = u.cacheRead+n.cached, true
	}
	if n.hasReasoning {
		u.reasoning, u.hasReasoning = u.reasoning+n.reasoning, true
	}
}

func (u *modelUsage) object() *jsonv.Object {
	o := jsonv.NewObject("input_tokens", u.input, "output_tokens", u.output, "total_tokens", u.total)
	if u.hasCacheRead {
		o.Set("input_tokens_cache_read", u.cacheRead)
	}
	if u.hasReasoning {
		o.Set("reasoning_tokens", u.reasoning)
	}
	return o
}

// NewInspectLog starts an eval log.
func NewInspectLog() *InspectLog {
	return &InspectLog{epochs: map[string]map[int64]bool{}, byID: map[string][]float64{},
		usage: map[string]*modelUsage{}}
}

// Len is the number of samples.
func (l *InspectLog) Len() int { return len(l.samples) }

// addOnce appends s to list unless it is there.
func addOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// inspectModel is the model an episode's messages come from, as the eval names it.
func inspectModel(e *Episode) string {
	if m := e.start().Model; m != nil && m.Name != "" {
		return m.Name
	}
	return "coworkenv/" + e.Agent()
}

// seeTime widens the log's time span to the virtual time s ("" and other text are ignored).
func (l *InspectLog) seeTime(s string) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return
	}
	if l.first.IsZero() || t.Before(l.first) {
		l.first = t
	}
	if l.last.IsZero() || t.After(l.last) {
		l.last = t
	}
}

// Add adds an episode as a sample; system is its system message ("" when none).
func (l *InspectLog) Add(e *Episode, system string) error {
	start := e.start()
	id := e.Task()
	if l.epochs[id] == nil {
		l.epochs[id] = map[int64]bool{}
		l.ids = append(l.ids, id)
	}
	epoch := int64(e.Sample()) + 1
	if epoch < 1 || l.epochs[id][epoch] {
		epoch = 1
		for l.epochs[id][epoch] {
			epoch++
		}
	}
	l.epochs[id][epoch] = true
	l.maxEpoch = max(l.maxEpoch, epoch)

	model := inspectModel(e)
	l.tasks = addOnce(l.tasks, e.Task())
	if f, ok := e.OutFile().(string); ok {
		l.files = addOnce(l.files, f)
	}
	l.models = addOnce(l.models, model)
	l.agents = addOnce(l.agents, e.Agent())
	if start.Model != nil {
		l.baseURLs = addOnce(l.baseURLs, start.Model.BaseURL)
		if l.config == nil {
			l.config = generateConfig(start.Model.Request)
		}
	}
	if l.engine == "" {
		l.engine = engineVersion(start.Engine)
	}
	l.seeTime(start.Now)
	for _, ev := range e.Events {
		if u, ok := ev.Body.(*trace.User); ok {
			l.seeTime(u.Now)
		}
	}

	messages, output, usage := inspectMessages(e, system, model)
	score := e.Score()
	l.values = append(l.values, score)
	l.byID[id] = append(l.byID[id], score)
	if e.Passed() {
		l.passed++
	}
	sampleUsage := &jsonv.Object{}
	if usage != nil {
		sampleUsage.Set(model, usage.object())
		if l.usage[model] == nil {
			l.usage[model] = &modelUsage{}
		}
		sum := l.usage[model]
		sum.input, sum.output, sum.total = sum.input+usage.input, sum.output+usage.output, sum.total+usage.total
		if usage.hasCacheRead {
			sum.cacheRead, sum.hasCacheRead = sum.cacheRead+usage.cacheRead, true
		}
		if usage.hasReasoning {
			sum.reasoning, sum.hasReasoning = sum.reasoning+usage.reasoning, true
		}
	}

	input := ""
	for _, ev := range e.Events {
		if u, ok := ev.Body.(*trace.User); ok {
			input = u.Content
			break
		}
	}
	var sampleNo jsonv.Value
	if n := e.Sample(); n >= 0 {
		sampleNo = int64(n)
	}
	metadata := jsonv.NewObject("task", e.Task(), "group", e.Group(), "file", e.OutFile(), "trace", strings.ReplaceAll(e.Path, "\\", "/"),
		"sample", sampleNo, "seed", e.Seed(), "agent", e.Agent())
	if sp := e.SplitOf(); sp != "" {
		metadata.Set("split", sp)
	}
	if msg := e.Error(); msg != "" {
		metadata.Set("error", msg)
		metadata.Set("error_code", e.ErrorCode())
	}
	sample := jsonv.NewObject(
		"id", id,
		"epoch", epoch,
		"input", input,
		"target", "",
		"messages", messages,
		"output", output,
		"scores", jsonv.NewObject(InspectScorer, inspectScore(e, output)),
		"metadata", metadata,
		"store", &jsonv.Object{},
		"events", []jsonv.Value{},
		"model_usage", sampleUsage,
	)
	if ts := virtualTime(start.Now); ts != "" {
		sample.Set("started_at", ts)
	}
	sample.Set("attachments", &jsonv.Object{})
	b, err := jsonv.Encode(sample)
	if err != nil {
		return err
	}
	l.samples = append(l.samples, b)

	h := sha256.New()
	if l.hash != nil {
		h.Write(l.hash)
	}
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s\n", e.Path, e.Task(), e.Seed(), e.end().State)
	l.hash = h.Sum(nil)
	return nil
}

// generateConfig is the Inspect GenerateConfig of a model's recorded request settings: the
// temperature, top_p, max_tokens and stop sequences (other settings have no field there).
func generateConfig(req *jsonv.Object) *jsonv.Object {
	out := &jsonv.Object{}
	if req == nil {
		return out
	}
	if v, ok := req.Get("temperature"); ok {
		if f, ok := jsonv.Number(v); ok {
			out.Set("temperature", f)
		}
	}
	if v, ok := req.Get("top_p"); ok {
		if f, ok := jsonv.Number(v); ok {
			out.Set("top_p", f)
		}
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if v, ok := req.Get(k); ok {
			if n, ok := whole(v); ok {
				out.Set("max_tokens", n)
				break
			}
		}
	}
	if v, ok := req.Get("stop"); ok {
		switch x := v.(type) {
		case string:
			out.Set("stop_seqs", []jsonv.Value{x})
		case []jsonv.Value:
			var seqs []jsonv.Value
			for _, s := range x {
				if s, ok := s.(string); ok {
					seqs = append(seqs, s)
				}
			}
			if len(seqs) > 0 {
				out.Set("stop_seqs", seqs)
			}
		}
	}
	return out
}

// stopReason is Inspect's stop reason for a chat-completions finish_reason.
func stopReason(finish string) string {
	switch finish {
	case "stop", "tool_calls", "content_filter":
		return finish
	case "function_call":
		return "tool_calls"
	case "length":
		return "max_tokens"
	}
	return "unknown"
}

// inspectMessages are an episode's messages in Inspect's shapes, its output (the last
// assistant message as the model's output) and its token usage (nil when none is recorded).
func inspectMessages(e *Episode, system, model string) ([]jsonv.Value, *jsonv.Object, *modelUsage) {
	var msgs []jsonv.Value
	var usage *modelUsage
	var lastMsg *jsonv.Object
	lastText, lastStop := "", "unknown"
	fromModel := e.FromModel()
	for _, it := range e.conversation(system) {
		content := str(it.msg, "content")
		switch it.role {
		case "system", "user":
			msgs = append(msgs, jsonv.NewObject("role", it.role, "content", content))
		case "assistant":
			m := jsonv.NewObject("role", "assistant")
			if it.asst != nil && it.asst.Reasoning != "" {
				parts := []jsonv.Value{jsonv.NewObject("type", "reasoning", "reasoning", it.asst.Reasoning)}
				if content != "" {
					parts = append(parts, jsonv.NewObject("type", "text", "text", content))
				}
				m.Set("content", parts)
			} else {
				m.Set("content", content)
			}
			names := map[string]string{}
			tc, _ := it.msg.Get("tool_calls")
			list, _ := tc.([]jsonv.Value)
			if len(list) > 0 {
				calls := make([]jsonv.Value, len(list))
				for i, c := range list {
					id, name, args := callParts(asObject(c))
					names[id] = name
					parsed, problem := conversation.ParseArguments(args)
					call := jsonv.NewObject("id", id, "function", name)
					if problem != "" {
						call.Set("arguments", &jsonv.Object{})
						call.Set("parse_error", problem)
					} else {
						call.Set("arguments", parsed)
					}
					call.Set("type", "function")
					calls[i] = call
				}
				m.Set("tool_calls", calls)
			}
			if fromModel {
				m.Set("model", model)
			}
			msgs = append(msgs, m)
			lastMsg, lastText = m, content
			switch {
			case it.asst != nil && it.asst.FinishReason != "":
				lastStop = stopReason(it.asst.FinishReason)
			case len(list) > 0:
				lastStop = "tool_calls"
			default:
				lastStop = "stop"
			}
			if it.asst != nil && it.asst.Usage != nil {
				if usage == nil {
					usage = &modelUsage{}
				}
				usage.add(usageOf(it.asst.Usage))
			}
			for _, a := range it.tools {
				id := str(a.msg, "tool_call_id")
				t := jsonv.NewObject("role", "tool", "content", str(a.msg, "content"), "tool_call_id", id, "function", names[id])
				switch {
				case a.result != nil && a.result.Error != nil:
					t.Set("error", jsonv.NewObject("type", "unknown", "message", *a.result.Error))
				case a.result == nil:
					kind, msg := "unknown", conversation.NotRun
					for _, c := range list {
						cid, name, args := callParts(asObject(c))
						if cid == id {
							if _, problem := conversation.ParseArguments(args); problem != "" {
								kind, msg = "parsing", name+" was not run: "+problem
							}
							break
						}
					}
					t.Set("error", jsonv.NewObject("type", kind, "message", msg))
				}
				msgs = append(msgs, t)
			}
		}
	}
	if msgs == nil {
		msgs = []jsonv.Value{}
	}
	output := jsonv.NewObject("model", model)
	if lastMsg != nil {
		output.Set("choices", []jsonv.Value{jsonv.NewObject("message", lastMsg, "stop_reason", lastStop)})
	} else {
		output.Set("choices", []jsonv.Value{})
	}
	output.Set("completion", lastText)
	if usage != nil {
		output.Set("usage", usage.object())
	}
	return msgs, output, usage
}

// inspectScore is a sample's score.
func inspectScore(e *Episode, output *jsonv.Object) *jsonv.Object {
	var failed []string
	checks := e.end().Checks
	for _, c := range checks {
		if !c.Passed {
			failed = append(failed, "failed "+c.Kind+": "+c.Message)
		}
	}
	if msg := e.Error(); msg != "" {
		failed = append(failed, "error: "+msg)
	}
	explanation := strings.Join(failed, "\n")
	switch {
	case explanation != "":
	case len(checks) == 0:
		explanation = "no check"
	case len(checks) == 1:
		explanation = "the check passed"
	default:
		explanation = fmt.Sprintf("all %d checks passed", len(checks))
	}
	answer, _ := output.Get("completion")
	meta := jsonv.NewObject("passed", e.Passed(), "components", e.Components(), "turn_rewards", e.TurnRewards(),
		"checks", checkObjects(checks), "turns", e.turnVerdicts())
	return jsonv.NewObject("value", e.Score(), "answer", answer, "explanation", explanation, "metadata", meta)
}

// shortID is a 22-character id from the log's hash, as long as Inspect's.
func (l *InspectLog) shortID(kind string) string {
	h := sha256.Sum256(append([]byte(kind+"\x00"), l.hash...))
	return hex.EncodeToString(h[:])[:22]
}

// metric is an Inspect EvalMetric.
func metric(name string, v float64) *jsonv.Object {
	return jsonv.NewObject("name", name, "value", v, "params", &jsonv.Object{})
}

// Write writes the eval log: the header (version, status, eval, plan, results, stats) first,
// then the samples and their reductions, as Inspect orders them.
func (l *InspectLog) Write(w io.Writer) error {
	task, model := "coworkenv", "coworkenv/mixed"
	if len(l.tasks) == 1 {
		task = l.tasks[0]
	}
	if len(l.models) == 1 {
		model = l.models[0]
	}
	created := "1970-01-01T00:00:00Z"
	if !l.first.IsZero() {
		created = l.first.UTC().Format(time.RFC3339)
	}
	completed := created
	if !l.last.IsZero() {
		completed = l.last.UTC().Format(time.RFC3339)
	}
	ids := make([]jsonv.Value, len(l.ids))
	for i, id := range l.ids {
		ids[i] = id
	}
	dataset := jsonv.NewObject("name", task)
	if len(l.files) == 1 {
		dataset.Set("location", l.files[0])
	}
	dataset.Set("samples", int64(len(l.ids)))
	dataset.Set("sample_ids", ids)
	dataset.Set("shuffled", false)
	config := l.config
	if config == nil || len(l.models) != 1 {
		config = &jsonv.Object{}
	}
	spec := jsonv.NewObject(
		"eval_id", l.shortID("eval"),
		"run_id", l.shortID("run"),
		"created", created,
		"task", task,
		"task_id", l.shortID("task"),
		"task_version", int64(0),
	)
	if len(l.files) == 1 {
		spec.Set("task_file", l.files[0])
	}
	spec.Set("task_attribs", &jsonv.Object{})
	spec.Set("task_args", &jsonv.Object{})
	spec.Set("dataset", dataset)
	spec.Set("model", model)
	spec.Set("model_generate_config", config)
	if len(l.models) == 1 && len(l.baseURLs) == 1 {
		spec.Set("model_base_url", l.baseURLs[0])
	}
	spec.Set("model_args", &jsonv.Object{})
	spec.Set("config", jsonv.NewObject("epochs", max(l.maxEpoch, 1)))
	engine := l.engine
	if engine == "" {
		engine = engineVersion(trace.Engine)
	}
	spec.Set("packages", jsonv.NewObject("coworkenv", engine))

	steps := make([]jsonv.Value, len(l.agents))
	for i, a := range l.agents {
		steps[i] = jsonv.NewObject("solver", "coworkenv/"+a, "params", &jsonv.Object{})
	}
	plan := jsonv.NewObject("name", "plan", "steps", steps, "config", &jsonv.Object{})

	n := len(l.values)
	mean, stderr, passRate := 0.0, 0.0, 0.0
	if n > 0 {
		for _, v := range l.values {
			mean += v
		}
		mean /= float64(n)
		passRate = float64(l.passed) / float64(n)
	}
	if n > 1 {
		ss := 0.0
		for _, v := range l.values {
			ss += (v - mean) * (v - mean)
		}
		stderr = math.Sqrt(ss / float64(n-1) / float64(n))
	}
	metrics := jsonv.NewObject("mean", metric("mean", mean), "stderr", metric("stderr", stderr), "pass_rate", metric("pass_rate", passRate))
	score := jsonv.NewObject("name", InspectScorer, "scorer", InspectScorer, "scored_samples", int64(n), "unscored_samples", int64(0),
		"params", &jsonv.Object{}, "metrics", metrics)
	scores := []jsonv.Value{score}
	if n == 0 {
		scores = []jsonv.Value{} // no episode: no metric rather than a mean of 0
	}
	results := jsonv.NewObject("total_samples", int64(n), "completed_samples", int64(n), "scores", scores)

	usage := &jsonv.Object{}
	for _, m := range l.models { // in the order the models first appear, not the map's
		if u := l.usage[m]; u != nil {
			usage.Set(m, u.object())
		}
	}
	stats := jsonv.NewObject("started_at", created, "completed_at", completed, "model_usage", usage)

	reduced := make([]jsonv.Value, len(l.ids))
	for i, id := range l.ids {
		vs := l.byID[id]
		sum := 0.0
		for _, v := range vs {
			sum += v
		}
		reduced[i] = jsonv.NewObject("value", sum/float64(len(vs)), "sample_id", id)
	}
	reductions := []jsonv.Value{}
	if n > 0 {
		reductions = append(reductions, jsonv.NewObject("scorer", InspectScorer, "reducer", "mean", "samples", reduced))
	}

	var b bytes.Buffer
	b.WriteString("{")
	field := func(k string, v jsonv.Value) error {
		enc, err := jsonv.Encode(v)
		if err != nil {
			return err
		}
		if k != "version" {
			b.WriteString(",")
		}
		b.WriteString(jsonv.MustEncode(k) + ":")
		b.Write(enc)
		return nil
	}
	for _, kv := range []struct {
		k string
		v jsonv.Value
	}{{"version", int64(InspectLogVersion)}, {"status", "success"}, {"eval", spec}, {"plan", plan},
		{"results", results}, {"stats", stats}} {
		if err := field(kv.k, kv.v); err != nil {
			return err
		}
	}
	b.WriteString(`,"samples":[`)
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	for i, s := range l.samples {
		if i > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		if _, err := w.Write(s); err != nil {
			return err
		}
	}
	b.Reset()
	b.WriteString("]")
	if err := field("reductions", reductions); err != nil {
		return err
	}
	b.WriteString("}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// WriteFile writes the eval log to path through a temporary file beside it and a rename, so
// that path holds the old file or the whole new one.
func (l *InspectLog) WriteFile(path string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if err := l.Write(f); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
