package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// ATIF. `export atif` writes an episode as a trajectory of Harbor's Agent Trajectory Interchange
// Format, the version ATIFVersion names: the JSON document Harbor stores as agent/trajectory.json
// in each trial's folder.
//
//   - The steps are the conversation of Messages, in order: a "system" step for the system
//     message, a "user" step per user message (as the model was shown it), and an "agent" step
//     per assistant message with its tool calls (arguments as a JSON object) and, as its
//     observation, the tool messages that answer them (source_call_id is the call's id).
//   - The system and user steps carry the virtual time of the trace (start and user events) as
//     their timestamp; agent steps have none, as the trace records no time for them.
//   - A model's agent step has its reasoning (reasoning_content), its token usage, token ids and
//     logprobs (metrics) and llm_call_count 1. An agent that is not a model (the oracle's reference
//     solution, noop, scripted agents) made no inference: its steps have llm_call_count 0, which
//     the format defines as a deterministic dispatch that SFT pipelines leave out, and the
//     oracle's steps also have "oracle": true in their extra.
//   - The verdict has no place of its own in the format: final_metrics.extra holds the reward
//     (the end score), its components, the per-turn rewards and the verdict; the root's extra
//     holds where the episode comes from and every check of the end event and of each turn_end.
//
// Every object is one the format's reference models accept: no field outside the format (what
// is ours goes in an "extra"), fields of agent steps only on agent steps, step ids from 1.

// ATIFVersion is the ATIF schema_version `export atif` writes.
const ATIFVersion = "ATIF-v1.7"

// convItem is one message of an episode's conversation, with the events it comes from.
type convItem struct {
	msg  *jsonv.Object // the message, as Messages gives it
	role string
	turn int              // the turn the message belongs to (0 for the system message)
	user *trace.User      // the user event of a user message that opened a turn
	asst *trace.Assistant // the model's event of an assistant message (model traces)
	// rebuilt is true for an assistant message rebuilt from the call and reply events of an
	// agent that is not a model.
	rebuilt bool
	tools   []toolAnswer // the tool messages that answer an assistant message's calls, in order
}

// toolAnswer is a tool message with the result event it shows (nil for a call not run).
type toolAnswer struct {
	msg    *jsonv.Object
	result *trace.CallResult
}

// conversation is the conversation (MessagesWith, with the tool messages the model agent
// recorded for calls it did not run) with, for each message, the events it was made of (the
// history keeps them: trace.History). The tool messages that follow an assistant message are its
// answers.
func (e *Episode) conversation(system string) []*convItem {
	hist := e.History(true)
	msgs := MessageOptions{RecordedNotRun: true}.render(system, hist)
	fromModel := e.FromModel()
	users := map[int]*trace.User{} // the user event of each turn
	results := map[string][]*trace.CallResult{}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.User:
			users[b.Turn] = b
		case *trace.CallResult:
			results[b.ID] = append(results[b.ID], b)
		}
	}
	var out []*convItem
	if system != "" {
		out = append(out, &convItem{msg: msgs[0].(*jsonv.Object), role: "system"})
		msgs = msgs[1:]
	}
	var last *convItem // the last assistant message
	opened := map[int]bool{}
	for i, h := range hist[1:] {
		m := msgs[i].(*jsonv.Object)
		it := &convItem{msg: m, role: h.Role, turn: h.Turn}
		switch h.Role {
		case conversation.User:
			if !opened[h.Turn] {
				opened[h.Turn], it.user = true, users[h.Turn]
			}
		case conversation.Assistant:
			it.rebuilt = !fromModel
			it.asst, _ = h.From.(*trace.Assistant)
			last = it
		case conversation.Tool:
			if last != nil {
				a := toolAnswer{msg: m}
				if rs := results[h.ToolCallID]; len(rs) > 0 {
					a.result, results[h.ToolCallID] = rs[0], rs[1:]
				}
				last.tools = append(last.tools, a)
			}
			continue
		}
		out = append(out, it)
	}
	return out
}

// callParts are a tool call's id, name and arguments as sent.
func callParts(c *jsonv.Object) (id, name, args string) {
	fn, _ := c.Get("function")
	fo, _ := fn.(*jsonv.Object)
	return str(c, "id"), str(fo, "name"), str(fo, "arguments")
}

// virtualTime is s when it is an RFC 3339 time (the trace's virtual clock), "" otherwise.
func virtualTime(s string) string {
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return ""
	}
	return s
}

// checkObjects are the trace's checks as JSON objects: kind, message, weight (null for safety
// items), passed, turn (null for the task's final verifier).
func checkObjects(cs []trace.Check) []jsonv.Value {
	out := make([]jsonv.Value, len(cs))
	for i, c := range cs {
		var weight, turn jsonv.Value
		if c.Weight != nil {
			weight = *c.Weight
		}
		if c.Turn != nil {
			turn = int64(*c.Turn)
		}
		out[i] = jsonv.NewObject("kind", c.Kind, "message", c.Message, "weight", weight, "passed", c.Passed, "turn", turn)
	}
	return out
}

// turnVerdicts are the turn_end events: turn, score (null without a verifier), truncated and
// checks.
func (e *Episode) turnVerdicts() []jsonv.Value {
	out := []jsonv.Value{}
	for _, ev := range e.Events {
		if t, ok := ev.Body.(*trace.TurnEnd); ok {
			var score jsonv.Value
			if t.Score != nil {
				score = *t.Score
			}
			out = append(out, jsonv.NewObject("turn", int64(t.Turn), "score", score, "truncated", t.Truncated,
				"checks", checkObjects(t.Checks)))
		}
	}
	return out
}

// whole is a JSON number as an int64 when it is whole.
func whole(v jsonv.Value) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

// usageNumbers are the token counts of a usage object (chat-completions shape): prompt,
// completion, cached (prompt_tokens_details.cached_tokens) and reasoning
// (completion_tokens_details.reasoning_tokens) tokens; ok says which were given.
type usageNumbers struct {
	prompt, completion, total, cached, reasoning int64
	hasPrompt, hasCompletion, hasTotal           bool
	hasCached, hasReasoning                      bool
}

func usageOf(u *jsonv.Object) usageNumbers {
	var n usageNumbers
	if u == nil {
		return n
	}
	get := func(o *jsonv.Object, k string) (int64, bool) {
		if o == nil {
			return 0, false
		}
		v, _ := o.Get(k)
		return whole(v)
	}
	n.prompt, n.hasPrompt = get(u, "prompt_tokens")
	n.completion, n.hasCompletion = get(u, "completion_tokens")
	n.total, n.hasTotal = get(u, "total_tokens")
	pd, _ := u.Get("prompt_tokens_details")
	n.cached, n.hasCached = get(asObject(pd), "cached_tokens")
	cd, _ := u.Get("completion_tokens_details")
	n.reasoning, n.hasReasoning = get(asObject(cd), "reasoning_tokens")
	return n
}

func asObject(v jsonv.Value) *jsonv.Object {
	o, _ := v.(*jsonv.Object)
	return o
}

// tokenIDs are token ids as whole numbers, ok false when one is not.
func tokenIDs(vs []jsonv.Value) ([]jsonv.Value, bool) {
	out := make([]jsonv.Value, len(vs))
	for i, v := range vs {
		n, ok := whole(v)
		if !ok {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// flatLogprobs are the logprobs of each completion token of a chat-completions logprobs object
// ({"content": [{"token", "logprob", ...}]}), ok false for another shape.
func flatLogprobs(l *jsonv.Object) ([]jsonv.Value, bool) {
	c, _ := l.Get("content")
	list, ok := c.([]jsonv.Value)
	if !ok {
		return nil, false
	}
	out := make([]jsonv.Value, len(list))
	for i, t := range list {
		lp, _ := asObject(t).Get("logprob")
		f, ok := jsonv.Number(lp)
		if !ok {
			return nil, false
		}
		out[i] = f
	}
	return out, true
}

// atifMetrics is the metrics object of a model's message, nil when it recorded none.
func atifMetrics(a *trace.Assistant) *jsonv.Object {
	m := &jsonv.Object{}
	extra := &jsonv.Object{}
	u := usageOf(a.Usage)
	if u.hasPrompt {
		m.Set("prompt_tokens", u.prompt)
	}
	if u.hasCompletion {
		m.Set("completion_tokens", u.completion)
	}
	if u.hasCached {
		m.Set("cached_tokens", u.cached)
	}
	if ids, ok := tokenIDs(a.PromptTokenIDs); ok && len(ids) > 0 {
		m.Set("prompt_token_ids", ids)
	} else if len(a.PromptTokenIDs) > 0 {
		extra.Set("prompt_token_ids", a.PromptTokenIDs)
	}
	if ids, ok := tokenIDs(a.CompletionTokenIDs); ok && len(ids) > 0 {
		m.Set("completion_token_ids", ids)
	} else if len(a.CompletionTokenIDs) > 0 {
		extra.Set("completion_token_ids", a.CompletionTokenIDs)
	}
	if a.Logprobs != nil {
		if lp, ok := flatLogprobs(a.Logprobs); ok {
			m.Set("logprobs", lp)
		} else {
			extra.Set("logprobs", a.Logprobs)
		}
	}
	if a.Usage != nil {
		// what the format has no field for: total_tokens, the details, a provider's own counts
		for _, mem := range a.Usage.Members {
			switch mem.Key {
			case "prompt_tokens", "completion_tokens":
			default:
				extra.Set(mem.Key, mem.Value)
			}
		}
	}
	if extra.Len() > 0 {
		m.Set("extra", extra)
	}
	if m.Len() == 0 {
		return nil
	}
	return m
}

// atifToolCalls are the tool calls of an assistant message in the format's shape; arguments
// that are not a JSON object become {} and the call's extra keeps them as sent, with the
// problem.
func atifToolCalls(m *jsonv.Object) (calls []jsonv.Value, ids map[string]bool) {
	ids = map[string]bool{}
	tc, _ := m.Get("tool_calls")
	list, _ := tc.([]jsonv.Value)
	for _, c := range list {
		id, name, args := callParts(asObject(c))
		ids[id] = true
		parsed, problem := conversation.ParseArguments(args)
		call := jsonv.NewObject("tool_call_id", id, "function_name", name)
		if problem != "" {
			call.Set("arguments", &jsonv.Object{})
			call.Set("extra", jsonv.NewObject("arguments", args, "problem", problem))
		} else {
			call.Set("arguments", parsed)
		}
		calls = append(calls, call)
	}
	return calls, ids
}

// ATIF is the trajectory of an episode (see ATIF above); system is its system message ("" when
// none).
func ATIF(e *Episode, system string) *jsonv.Object {
	start := e.start()
	oracle := e.Agent() == "oracle"
	steps := []jsonv.Value{}
	var prompt, completion, cached int64
	var hasPrompt, hasCompletion, hasCached bool
	for _, it := range e.conversation(system) {
		step := jsonv.NewObject("step_id", int64(len(steps)+1))
		content := str(it.msg, "content")
		switch it.role {
		case "system":
			if ts := virtualTime(start.Now); ts != "" {
				step.Set("timestamp", ts)
			}
			step.Set("source", "system")
			step.Set("message", content)
			if e.RecordedSystem() == "" {
				// rebuilt from the task: the trace does not record it
				step.Set("extra", jsonv.NewObject("rebuilt", true))
			}
		case "user":
			if it.user != nil {
				if ts := virtualTime(it.user.Now); ts != "" {
					step.Set("timestamp", ts)
				}
			}
			step.Set("source", "user")
			step.Set("message", content)
			step.Set("extra", jsonv.NewObject("turn", int64(it.turn)))
		case "assistant":
			step.Set("source", "agent")
			step.Set("message", content)
			if it.asst != nil && it.asst.Reasoning != "" {
				step.Set("reasoning_content", it.asst.Reasoning)
			}
			calls, ids := atifToolCalls(it.msg)
			if len(calls) > 0 {
				step.Set("tool_calls", calls)
			}
			if len(it.tools) > 0 {
				results := make([]jsonv.Value, 0, len(it.tools))
				for _, a := range it.tools {
					r := &jsonv.Object{}
					if id := str(a.msg, "tool_call_id"); ids[id] {
						r.Set("source_call_id", id)
					}
					r.Set("content", str(a.msg, "content"))
					switch {
					case a.result == nil:
						r.Set("extra", jsonv.NewObject("not_run", true))
					case a.result.Error != nil:
						r.Set("extra", jsonv.NewObject("error", *a.result.Error, "transient", a.result.Fault))
					}
					results = append(results, r)
				}
				step.Set("observation", jsonv.NewObject("results", results))
			}
			extra := jsonv.NewObject("turn", int64(it.turn))
			switch {
			case it.asst != nil:
				if m := atifMetrics(it.asst); m != nil {
					step.Set("metrics", m)
					u := usageOf(it.asst.Usage)
					prompt, hasPrompt = prompt+u.prompt, hasPrompt || u.hasPrompt
					completion, hasCompletion = completion+u.completion, hasCompletion || u.hasCompletion
					cached, hasCached = cached+u.cached, hasCached || u.hasCached
				}
				step.Set("llm_call_count", int64(1))
				for _, kv := range [][2]string{{"finish_reason", it.asst.FinishReason}, {"calls_from", it.asst.CallsFrom},
					{"raw", it.asst.Raw}, {"note", it.asst.Note}} {
					if kv[1] != "" {
						extra.Set(kv[0], kv[1])
					}
				}
			case it.rebuilt:
				step.Set("llm_call_count", int64(0))
				if oracle {
					extra.Set("oracle", true)
				}
			}
			step.Set("extra", extra)
		}
		steps = append(steps, step)
	}
	if len(steps) == 0 {
		// the format wants a step: the episode stopped before its first message
		steps = append(steps, jsonv.NewObject("step_id", int64(1), "source", "system", "message", "",
			"extra", jsonv.NewObject("note", "the episode has no message")))
	}

	agent := jsonv.NewObject("name", e.Agent(), "version", engineVersion(start.Engine))
	if start.Model != nil && start.Model.Name != "" {
		agent.Set("model_name", start.Model.Name)
	}
	agent.Set("tool_definitions", e.Tools())
	if start.Model != nil {
		model := jsonv.NewObject("base_url", start.Model.BaseURL, "request", start.Model.Request,
			"tool_call_format", start.Model.ToolCallFormat, "reasoning_history", start.Model.ReasoningHistory)
		if len(start.Model.Headers) > 0 {
			model.Set("headers", start.Model.Headers)
		}
		if start.Model.ToolChoice != "" {
			model.Set("tool_choice", start.Model.ToolChoice)
		}
		agent.Set("extra", jsonv.NewObject("model", model))
	}

	final := &jsonv.Object{}
	if hasPrompt {
		final.Set("total_prompt_tokens", prompt)
	}
	if hasCompletion {
		final.Set("total_completion_tokens", completion)
	}
	if hasCached {
		final.Set("total_cached_tokens", cached)
	}
	final.Set("total_steps", int64(len(steps)))
	final.Set("extra", jsonv.NewObject("reward", e.Score(), "passed", e.Passed(), "components", e.Components(),
		"turn_rewards", e.TurnRewards()))

	var sample, errv, code jsonv.Value
	if n := e.Sample(); n >= 0 {
		sample = int64(n)
	}
	if msg := e.Error(); msg != "" {
		errv, code = msg, e.ErrorCode()
	}
	extra := jsonv.NewObject("task", e.Task(), "group", e.Group(), "file", e.OutFile(), "trace", filepath.ToSlash(e.Path),
		"sample", sample, "seed", e.Seed(), "error", errv, "error_code", code,
		"checks", checkObjects(e.end().Checks), "turns", e.turnVerdicts())
	if sp := e.SplitOf(); sp != "" {
		extra.Set("split", sp)
	}

	return jsonv.NewObject(
		"schema_version", ATIFVersion,
		"session_id", filepath.ToSlash(e.Path),
		"agent", agent,
		"steps", steps,
		"final_metrics", final,
		"extra", extra,
	)
}

// engineVersion is the version in an engine name ("coworkenv/0.1.0" gives "0.1.0"), the name
// itself when it has none.
func engineVersion(engine string) string {
	for i := len(engine) - 1; i >= 0; i-- {
		if engine[i] == '/' {
			return engine[i+1:]
		}
	}
	if engine == "" {
		return "unknown"
	}
	return engine
}

// unsafeName matches what may not stand in a folder name of ATIFTrial.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ATIFTrial is the name of an episode's trial folder, as Harbor names trials (TASK__ID): the
// task and the sample number of a rollout trace, or the trace's file name for other traces.
// Characters other than letters, digits, '.', '_' and '-' become '_'.
func ATIFTrial(e *Episode) string {
	id := ""
	if n := e.Sample(); n >= 0 {
		id = strconv.Itoa(n)
	} else {
		id = filepath.Base(e.Path)
		if ext := filepath.Ext(id); ext == ".jsonl" {
			id = id[:len(id)-len(ext)]
		}
	}
	name := unsafeName.ReplaceAllString(e.Task(), "_") + "__" + unsafeName.ReplaceAllString(id, "_")
	if name[0] == '.' {
		name = "_" + name[1:]
	}
	return name
}

// AtomicDir is a folder written beside its path and renamed onto it by Commit, so that the path
// never holds half an export: it holds the old folder (or nothing) until Commit, then the whole
// new one.
type AtomicDir struct {
	path string
	tmp  string
	err  error
}

// CreateAtomicDir starts writing the folder path. Its parent need not exist yet: the temporary
// folder is made in the nearest folder above path that does, and Commit makes the rest.
func CreateAtomicDir(path string) (*AtomicDir, error) {
	base := filepath.Dir(path)
	for {
		if info, err := os.Stat(base); err == nil && info.IsDir() {
			break
		}
		up := filepath.Dir(base)
		if up == base {
			break
		}
		base = up
	}
	tmp, err := os.MkdirTemp(base, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %v", base, pe.Err)
		}
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return &AtomicDir{path: path, tmp: tmp}, nil
}

// WriteFile writes the file rel (a slash-separated path inside the folder), making its folders.
func (d *AtomicDir) WriteFile(rel string, data []byte) error {
	if d.err != nil {
		return d.err
	}
	p := filepath.Join(d.tmp, filepath.FromSlash(rel))
	err := os.MkdirAll(filepath.Dir(p), 0o755)
	if err == nil {
		err = os.WriteFile(p, data, 0o644)
	}
	d.err = err
	return err
}

// Commit renames the folder onto its path, replacing the folder there.
func (d *AtomicDir) Commit() error {
	err := d.err
	if err == nil {
		err = os.MkdirAll(filepath.Dir(d.path), 0o755)
	}
	old := ""
	if err == nil {
		if _, serr := os.Lstat(d.path); serr == nil {
			// move the old folder aside (under a fresh name beside the new one) before the rename
			old, err = os.MkdirTemp(filepath.Dir(d.tmp), "."+filepath.Base(d.path)+".old*")
			if err == nil {
				if err = os.Remove(old); err == nil {
					err = os.Rename(d.path, old)
				}
			}
			if err != nil {
				old = ""
			}
		}
	}
	if err == nil {
		if err = os.Rename(d.tmp, d.path); err != nil && old != "" {
			os.Rename(old, d.path) // put the old folder back
			old = ""
		}
	}
	if old != "" {
		os.RemoveAll(old)
	}
	if err != nil {
		os.RemoveAll(d.tmp)
	}
	return err
}

// Abort drops the temporary folder.
func (d *AtomicDir) Abort() { os.RemoveAll(d.tmp) }
