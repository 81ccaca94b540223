package trace

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// Loader finds the task a trace names: its file as recorded, and its name. It returns the task
// and the file's current bytes (for the file_sha256 comparison).
type Loader func(file, task string) (*dsl.Task, []byte, error)

// Divergence is the first place where a replay differs from its trace.
type Divergence struct {
	Line  int    // the trace line (event number) that differs
	Event string // its kind
	Turn  int    // -1 when not in a turn
	Tool  string // for results: the call's tool and arguments
	Args  string
	// Diffs lists what differs, one "field: recorded X, replayed Y" per line.
	Diffs []string
}

// Result of a replay.
type Result struct {
	Task        string
	File        string
	TaskChanged bool // the task file's sha256 differs from the recorded one
	RecordedSHA string
	CurrentSHA  string
	Divergence  *Divergence
}

// Matched reports whether the replay reproduced the trace.
func (r *Result) Matched() bool { return r.Divergence == nil }

// Replay re-issues every recorded call against the task and compares each result (content,
// error and state hash), each user message, reply and turn score, and the end event.
func Replay(ctx context.Context, events []Event, load Loader) (*Result, error) {
	if len(events) == 0 || events[0].Kind != "start" {
		return nil, fmt.Errorf("the trace has no start event")
	}
	start := events[0]
	res := &Result{Task: start.Str("task"), File: start.Str("file"), RecordedSHA: start.Str("file_sha256")}
	task, src, err := load(res.File, res.Task)
	if err != nil {
		return nil, err
	}
	res.CurrentSHA = FileSHA256(src)
	res.TaskChanged = res.CurrentSHA != res.RecordedSHA

	p, d := episode.Prepare(ctx, task, episode.Options{Seed: start.Int("seed")})
	if d != nil {
		res.Divergence = &Divergence{Line: start.Line, Event: "start", Turn: -1, Diffs: []string{"setup now fails: " + d.String()}}
		return res, nil
	}
	if got := p.Base.Hash(); got != start.Str("state") {
		res.Divergence = &Divergence{Line: start.Line, Event: "start", Turn: -1,
			Diffs: []string{fmt.Sprintf("state after setup: recorded %s, replayed %s", start.Str("state"), got)}}
		return res, nil
	}

	agent := &episode.Scripted{Label: start.Str("agent")}
	var expect []Event
	replied := map[int]bool{}
	for _, ev := range events[1:] {
		turn := int(ev.Int("turn"))
		for ev.Kind != "end" && len(agent.Calls) <= turn {
			agent.Calls = append(agent.Calls, nil)
			agent.Replies = append(agent.Replies, "")
			agent.Truncated = append(agent.Truncated, false)
			agent.Errors = append(agent.Errors, nil)
		}
		switch ev.Kind {
		case "call":
			args, _ := ev.Value("args").(*jsonv.Object)
			id := ev.Str("id")
			if engineID.MatchString(id) {
				id = "" // the engine numbers its own calls: a missing or moved call shows in the ids
			}
			agent.Calls[turn] = append(agent.Calls[turn], episode.ScriptedCall{ID: id, Name: ev.Str("name"), Args: args})
		case "reply":
			agent.Replies[turn] = ev.Str("content")
			replied[turn] = true
			expect = append(expect, ev)
		case "turn_end":
			agent.Truncated[turn] = ev.Bool("truncated")
			expect = append(expect, ev)
		case "user", "result", "end":
			expect = append(expect, ev)
		}
	}
	// An agent that failed (a solution error, a model that could not be reached) left a turn
	// without a reply and an error in the end event: fail the same way at the same turn.
	if endErr, ok := events[len(events)-1].Value("error").(*jsonv.Object); ok {
		for turn := range agent.Calls {
			if !replied[turn] {
				agent.Errors[turn] = &episode.DiagError{Diag: diagFromJSON(endErr)}
				break
			}
		}
	}
	cmp := &comparer{expect: expect, events: events}
	r := p.Run(ctx, agent, episode.RunOptions{Observer: cmp})
	cmp.end(r)
	res.Divergence = cmp.div
	return res, nil
}

// engineID matches the call ids the engine assigns (agents without ids of their own).
var engineID = regexp.MustCompile(`^call_[0-9]+$`)

func diagFromJSON(o *jsonv.Object) dsl.Diagnostic {
	get := func(k string) jsonv.Value { v, _ := o.Get(k); return v }
	code, _ := get("code").(string)
	msg, _ := get("message").(string)
	file, _ := get("file").(string)
	line, _ := get("line").(int64)
	col, _ := get("col").(int64)
	d := dsl.Diagnostic{Code: code, Message: msg, File: file, Line: int(line), Col: int(col)}
	if c, ok := dsl.CodeByID(code); ok {
		d.Severity = c.Severity
	}
	return d
}

// comparer is an episode.Observer that checks each replayed event against the next recorded one.
type comparer struct {
	expect []Event
	events []Event
	next   int
	div    *Divergence
}

func (c *comparer) take(kind string, turn int) (Event, bool) {
	if c.div != nil {
		return Event{}, false
	}
	if c.next >= len(c.expect) {
		c.div = &Divergence{Line: c.events[len(c.events)-1].Line, Event: kind, Turn: turn,
			Diffs: []string{fmt.Sprintf("the replay has a %s event (turn %d) that the trace does not", kind, turn+1)}}
		return Event{}, false
	}
	ev := c.expect[c.next]
	c.next++
	if ev.Kind != kind {
		c.div = &Divergence{Line: ev.Line, Event: ev.Kind, Turn: int(ev.Int("turn")),
			Diffs: []string{fmt.Sprintf("event: recorded %s, replayed %s (turn %d)", ev.Kind, kind, turn+1)}}
		return Event{}, false
	}
	return ev, true
}

func (c *comparer) diverge(ev Event, turn int, diffs []string) {
	if len(diffs) == 0 || c.div != nil {
		return
	}
	d := &Divergence{Line: ev.Line, Event: ev.Kind, Turn: turn, Diffs: diffs}
	if ev.Kind == "result" {
		for _, e := range c.events {
			if e.Kind == "call" && e.Str("id") == ev.Str("id") && e.Line < ev.Line {
				d.Tool, d.Args = e.Str("name"), jsonv.MustEncode(e.Value("args"))
			}
		}
	}
	c.div = d
}

func (c *comparer) OnUser(turn int, content, state, now string) {
	if ev, ok := c.take("user", turn); ok {
		var diffs []string
		diffs = append(diffs, diffString("content", ev.Str("content"), content)...)
		diffs = append(diffs, diffString("state", ev.Str("state"), state)...)
		c.diverge(ev, turn, diffs)
	}
}

func (c *comparer) OnAssistant(int, string, []jsonv.Value, *jsonv.Object) {}
func (c *comparer) OnCall(*episode.Call)                                  {}

func (c *comparer) OnResult(call *episode.Call) {
	ev, ok := c.take("result", call.Turn)
	if !ok {
		return
	}
	var diffs []string
	if ev.Str("id") != call.ID {
		diffs = append(diffs, fmt.Sprintf("call id: recorded %s, replayed %s (a call before it is missing, extra or moved)", ev.Str("id"), call.ID))
	}
	diffs = append(diffs, diffJSONText("content", ev.Str("content"), call.Content)...)
	var recErr, gotErr jsonv.Value
	recErr = ev.Value("error")
	if call.IsError {
		gotErr = call.Error
	}
	diffs = append(diffs, diffJSON("error", recErr, gotErr)...)
	if ev.Bool("fault") != call.Fault {
		diffs = append(diffs, fmt.Sprintf("fault: recorded %v, replayed %v", ev.Bool("fault"), call.Fault))
	}
	diffs = append(diffs, diffString("state", ev.Str("state"), call.State)...)
	c.diverge(ev, call.Turn, diffs)
}

func (c *comparer) OnReply(turn int, content string) {
	if ev, ok := c.take("reply", turn); ok {
		c.diverge(ev, turn, diffString("content", ev.Str("content"), content))
	}
}

func (c *comparer) OnTurnEnd(t *episode.TurnResult) {
	ev, ok := c.take("turn_end", t.Index)
	if !ok {
		return
	}
	var score jsonv.Value
	if t.Score != nil {
		score = *t.Score
	}
	var diffs []string
	diffs = append(diffs, diffJSON("score", ev.Value("score"), score)...)
	if ev.Bool("truncated") != t.Truncated {
		diffs = append(diffs, fmt.Sprintf("truncated: recorded %v, replayed %v", ev.Bool("truncated"), t.Truncated))
	}
	diffs = append(diffs, diffJSON("checks", ev.Value("checks"), Checks(t.Items))...)
	c.diverge(ev, t.Index, diffs)
}

func (c *comparer) end(r *episode.Result) {
	ev, ok := c.take("end", -1)
	if !ok {
		return
	}
	got := EndEvent(r)
	var diffs []string
	for _, k := range []string{"score", "passed", "completion", "safety", "robustness", "checks", "state", "error"} {
		a, _ := ev.Obj.Get(k)
		b, _ := got.Get(k)
		diffs = append(diffs, diffJSON(k, a, b)...)
	}
	c.diverge(ev, -1, diffs)
}

func diffString(field, rec, got string) []string {
	if rec == got {
		return nil
	}
	return []string{fmt.Sprintf("%s: recorded %s, replayed %s", field, quote(rec), quote(got))}
}

// diffJSONText compares two JSON texts value by value (so a reordered key is no difference),
// falling back to the text when either does not parse.
func diffJSONText(field, rec, got string) []string {
	if rec == got {
		return nil
	}
	a, err1 := jsonv.DecodeString(rec)
	b, err2 := jsonv.DecodeString(got)
	if err1 != nil || err2 != nil {
		return diffString(field, rec, got)
	}
	return diffJSON(field, a, b)
}

// diffJSON lists the paths where two JSON values differ, as "path: recorded X, replayed Y".
func diffJSON(path string, a, b jsonv.Value) []string {
	if jsonv.Equal(a, b) {
		return nil
	}
	var out []string
	walkDiff(path, a, b, &out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… and %d more differences", len(out)-20))
	}
	return out
}

func walkDiff(path string, a, b jsonv.Value, out *[]string) {
	if jsonv.Equal(a, b) {
		return
	}
	switch x := a.(type) {
	case *jsonv.Object:
		y, ok := b.(*jsonv.Object)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for _, k := range x.Keys() {
			keys[k] = true
		}
		for _, k := range y.Keys() {
			keys[k] = true
		}
		var names []string
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			av, aok := x.Get(k)
			bv, bok := y.Get(k)
			switch {
			case !aok:
				*out = append(*out, fmt.Sprintf("%s.%s: recorded (absent), replayed %s", path, k, show(bv)))
			case !bok:
				*out = append(*out, fmt.Sprintf("%s.%s: recorded %s, replayed (absent)", path, k, show(av)))
			default:
				walkDiff(path+"."+k, av, bv, out)
			}
		}
		return
	case []jsonv.Value:
		y, ok := b.([]jsonv.Value)
		if !ok {
			break
		}
		n := len(x)
		if len(y) > n {
			n = len(y)
		}
		for i := 0; i < n; i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(x):
				*out = append(*out, fmt.Sprintf("%s: recorded (absent), replayed %s", p, show(y[i])))
			case i >= len(y):
				*out = append(*out, fmt.Sprintf("%s: recorded %s, replayed (absent)", p, show(x[i])))
			default:
				walkDiff(p, x[i], y[i], out)
			}
		}
		return
	}
	*out = append(*out, fmt.Sprintf("%s: recorded %s, replayed %s", path, show(a), show(b)))
}

func show(v jsonv.Value) string {
	s, err := jsonv.Encode(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return shorten(string(s), 200)
}

func quote(s string) string { return shorten(fmt.Sprintf("%q", s), 200) }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// String describes the divergence in a few lines.
func (d *Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "event %d (%s", d.Line, d.Event)
	if d.Turn >= 0 {
		fmt.Fprintf(&b, ", turn %d", d.Turn+1)
	}
	if d.Tool != "" {
		fmt.Fprintf(&b, ", %s %s", d.Tool, shorten(d.Args, 200))
	}
	b.WriteString(") differs:\n")
	for _, l := range d.Diffs {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}
