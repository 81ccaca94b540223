package trace

import (
	"context"
	"fmt"
	"reflect"
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
	var start *Start
	if len(events) > 0 {
		start, _ = events[0].Body.(*Start)
	}
	if start == nil {
		return nil, fmt.Errorf("the trace has no start event")
	}
	res := &Result{Task: start.Task, File: start.File, RecordedSHA: start.FileSHA256}
	task, src, err := load(res.File, res.Task)
	if err != nil {
		return nil, err
	}
	res.CurrentSHA = FileSHA256(src)
	res.TaskChanged = res.CurrentSHA != res.RecordedSHA

	startLine := events[0].Line
	p, d := episode.Prepare(ctx, task, episode.Options{Seed: start.Seed})
	if d != nil {
		res.Divergence = &Divergence{Line: startLine, Event: start.Kind(), Turn: -1, Diffs: []string{"setup now fails: " + d.String()}}
		return res, nil
	}
	if got := p.Base.Hash(); got != start.State {
		res.Divergence = &Divergence{Line: startLine, Event: start.Kind(), Turn: -1,
			Diffs: []string{fmt.Sprintf("state after setup: recorded %s, replayed %s", start.State, got)}}
		return res, nil
	}

	agent := &episode.Scripted{Label: start.Agent}
	var expect []Event
	replied := map[int]bool{}
	for _, ev := range events[1:] {
		turn := ev.Turn()
		for len(agent.Calls) <= turn {
			agent.Calls = append(agent.Calls, nil)
			agent.Replies = append(agent.Replies, "")
			agent.Truncated = append(agent.Truncated, false)
			agent.Errors = append(agent.Errors, nil)
		}
		switch b := ev.Body.(type) {
		case *Call:
			id := b.ID
			if engineID.MatchString(id) {
				id = "" // the engine numbers its own calls: a missing or moved call shows in the ids
			}
			agent.Calls[turn] = append(agent.Calls[turn], episode.ScriptedCall{ID: id, Name: b.Name, Args: b.Args})
		case *Reply:
			agent.Replies[turn] = b.Content
			replied[turn] = true
			expect = append(expect, ev)
		case *TurnEnd:
			agent.Truncated[turn] = b.Truncated
			expect = append(expect, ev)
		case *User, *CallResult, *End:
			expect = append(expect, ev)
		}
	}
	// An agent that failed (a solution error, a model that could not be reached) left a turn
	// without a reply and an error in the end event: fail the same way at the same turn.
	if end, ok := events[len(events)-1].Body.(*End); ok && end.Error != nil {
		for turn := range agent.Calls {
			if !replied[turn] {
				agent.Errors[turn] = &episode.DiagError{Diag: end.Error.Diagnostic()}
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

// comparer is an episode.Observer that checks each replayed event against the next recorded one:
// it builds the replayed event as the Writer would and compares the two field by field.
type comparer struct {
	expect []Event
	events []Event
	next   int
	div    *Divergence
}

// take is the next recorded event, which must be a T.
func take[T Body](c *comparer, turn int) (Event, T, bool) {
	var rec T
	if c.div != nil {
		return Event{}, rec, false
	}
	kind := rec.Kind()
	if c.next >= len(c.expect) {
		c.div = &Divergence{Line: c.events[len(c.events)-1].Line, Event: kind, Turn: turn,
			Diffs: []string{fmt.Sprintf("the replay has a %s event (turn %d) that the trace does not", kind, turn+1)}}
		return Event{}, rec, false
	}
	ev := c.expect[c.next]
	c.next++
	rec, ok := ev.Body.(T)
	if !ok {
		c.div = &Divergence{Line: ev.Line, Event: ev.Kind, Turn: ev.Turn(),
			Diffs: []string{fmt.Sprintf("event: recorded %s, replayed %s (turn %d)", ev.Kind, kind, turn+1)}}
		return Event{}, rec, false
	}
	return ev, rec, true
}

func (c *comparer) diverge(ev Event, turn int, diffs []string) {
	if len(diffs) == 0 || c.div != nil {
		return
	}
	d := &Divergence{Line: ev.Line, Event: ev.Kind, Turn: turn, Diffs: diffs}
	if res, ok := ev.Body.(*CallResult); ok {
		for _, e := range c.events {
			if call, ok := e.Body.(*Call); ok && call.ID == res.ID && e.Line < ev.Line {
				d.Tool, d.Args = call.Name, jsonv.MustEncode(call.Args)
			}
		}
	}
	c.div = d
}

func (c *comparer) OnUser(turn int, content, state, now string) {
	if ev, rec, ok := take[*User](c, turn); ok {
		// the turn is where take found it; now is not compared (older traces lack it)
		c.diverge(ev, turn, diffEvents(rec, &User{Turn: rec.Turn, Content: content, State: state, Now: rec.Now}))
	}
}

func (c *comparer) OnAssistant(int, string, []jsonv.Value, *jsonv.Object) {}
func (c *comparer) OnCall(*episode.Call)                                  {}

func (c *comparer) OnResult(call *episode.Call) {
	ev, rec, ok := take[*CallResult](c, call.Turn)
	if !ok {
		return
	}
	got := resultOf(call)
	var diffs []string
	if rec.ID != got.ID {
		diffs = append(diffs, fmt.Sprintf("call id: recorded %s, replayed %s (a call before it is missing, extra or moved)", rec.ID, got.ID))
	}
	diffs = append(diffs, diffJSONText("content", rec.Content, got.Content)...)
	got.Turn, got.ID, got.Content = rec.Turn, rec.ID, rec.Content // compared above
	c.diverge(ev, call.Turn, append(diffs, diffEvents(rec, got)...))
}

func (c *comparer) OnReply(turn int, content string) {
	if ev, rec, ok := take[*Reply](c, turn); ok {
		c.diverge(ev, turn, diffEvents(rec, &Reply{Turn: rec.Turn, Content: content}))
	}
}

func (c *comparer) OnTurnEnd(t *episode.TurnResult) {
	if ev, rec, ok := take[*TurnEnd](c, t.Index); ok {
		got := turnEndOf(t)
		got.Turn = rec.Turn
		c.diverge(ev, t.Index, diffEvents(rec, got))
	}
}

func (c *comparer) end(r *episode.Result) {
	if ev, rec, ok := take[*End](c, -1); ok {
		c.diverge(ev, -1, diffEvents(rec, EndOf(r)))
	}
}

// diffEvents lists the fields where two events of one kind differ, in the fields' order:
// strings as text, other values path by path.
func diffEvents(rec, got Body) []string {
	if reflect.DeepEqual(rec, got) {
		return nil // the usual case, without building JSON values
	}
	s, rv := schemaOf(rec)
	_, gv := schemaOf(got)
	var diffs []string
	for _, f := range s.fields {
		a, b := f.get(rv.Field(f.index)), f.get(gv.Field(f.index))
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok {
			diffs = append(diffs, diffString(f.name, as, bs)...)
		} else {
			diffs = append(diffs, diffJSON(f.name, a, b)...)
		}
	}
	return diffs
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
