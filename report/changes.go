package report

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/starlark"
)

// Changes are the state changes of an episode, found by replaying its trace (Replay).
type Changes struct {
	// Turns holds, by turn, what changed from the end of the turn before (the state after setup,
	// for the first) to when the user spoke: the turn's `before` script. Nil past the replay.
	Turns []*StateChange
	// Calls holds, by call event in the trace's order, what the call changed. Nil past the
	// replay.
	Calls []*StateChange
	// Note says why some or all changes are missing ("" when every turn and call has its own).
	Note string
	// where is the task file replayed, as shown
	where string
}

// StateChange is what changed in the workspace between two states, service by service (only
// the services that changed, in the order of services.All).
type StateChange struct {
	Services []ServiceChange
}

// Empty reports whether nothing changed.
func (c *StateChange) Empty() bool { return c == nil || len(c.Services) == 0 }

// ServiceChange is what changed in one service: the entries added, changed and removed (paths,
// message ids, event ids, "collection/id" keys; services.Sections), and the actions of the
// history that did it, with the entries before and after.
type ServiceChange struct {
	Service, Entry          string
	Added, Changed, Removed []string
	Actions                 []ChangeAction
}

// ChangeAction is one action of the workspace's history (workspace.Action): its operation, its
// key (and new key for a move), and the entry before and after it as JSON text ("" for none),
// as scripts see it in ws.history, cut at MaxShown bytes.
type ChangeAction struct {
	Op, Key, To   string
	Before, After string
}

// MaxShown bounds one value a page shows (an argument, a result, an entry): the rest is cut,
// and the page says how much.
const MaxShown = 64 << 10

// maxActions bounds the actions a page shows for one call; the added, changed and removed keys
// are all shown.
const maxActions = 200

// Replay replays the episode of a trace against its task for the state changes: it prepares the
// task with the recorded seed and makes the recorded calls again, turn by turn, in order, reading
// the state when each turn starts and after each call, and checks each state against the hash the
// trace records. Where the replay no longer matches the trace (the task file changed since, say),
// the changes stop, and Note says where and why.
//
// The agent's side is re-issued, not re-run: the recorded calls are the calls, whoever made them
// (an oracle, a model, a remote client); faults are injected as they were (the same tools, in the
// same order, with the same seed). The messages to a simulated user are not sent again (they
// change nothing), nor are verifiers run. The state is read through a tool of the replay's own
// that changes nothing, called between the recorded calls, so the engine runs exactly as it does
// for any agent.
func Replay(ctx context.Context, task *dsl.Task, events []trace.Event, lim dsl.Limits) *Changes {
	ch := &Changes{}
	start, ok := events[0].Body.(*trace.Start)
	if !ok {
		ch.Note = "the trace has no start event"
		return ch
	}
	probe := &statesProbe{name: probeName(task)}
	t := *task
	t.Tools = append(slices.Clone(task.Tools), &dsl.ToolSpec{Tool: probe.tool(), Builtin: true})
	// room for a probe after each call (a recorded turn that hit the limit has no more calls
	// than the limit)
	t.MaxCallsPerTurn = 2*task.MaxCallsPerTurn + 2
	p, d := episode.Prepare(ctx, &t, episode.Options{Seed: start.Seed, Limits: lim})
	if d != nil {
		ch.Note = "the task's setup fails now: " + d.String()
		return ch
	}
	start.HashStates(p)
	if got := p.Base.Hash(); got != start.State {
		ch.Note = fmt.Sprintf("the state after setup is not the one the trace records (%s, now %s): the task changed since the trace was recorded", short(start.State), short(got))
		return ch
	}

	script, calls, users := planOf(events, probe.name)
	p.Run(ctx, script, episode.RunOptions{NoVerify: true})

	turns := len(users)
	prev := p.Base
	k := 0 // the next call event
	for turn := 0; turn < turns; turn++ {
		at, ok := probe.states[probeKey{turn, -1}]
		if !ok || (users[turn] != "" && at.Hash() != users[turn]) {
			ch.Note = fmt.Sprintf("the replay does not reach the state the trace records when the user speaks in turn %d; no changes are shown from there", turn)
			return ch
		}
		ch.Turns = append(ch.Turns, stateChange(prev, at))
		prev = at
		for ; k < len(calls) && calls[k].turn == turn; k++ {
			c := calls[k]
			after, ok := probe.states[probeKey{turn, k}]
			switch {
			case !ok:
				ch.Note = fmt.Sprintf("the replay did not make call %s (turn %d) again; no changes are shown from there", c.id, turn)
				return ch
			case c.state == "":
				ch.Note = fmt.Sprintf("the trace records no result of call %s (turn %d); no changes are shown from there", c.id, turn)
				return ch
			case after.Hash() != c.state:
				ch.Note = fmt.Sprintf("the replay differs from the trace after call %s (turn %d): the state is not the one recorded (%s, replayed %s); no changes are shown from there",
					c.id, turn, short(c.state), short(after.Hash()))
				return ch
			}
			ch.Calls = append(ch.Calls, stateChange(prev, after))
			prev = after
		}
	}
	return ch
}

// recordedCall is a call event of the trace: its turn, id, and the state hash its result
// records ("" when it has none).
type recordedCall struct {
	turn  int
	id    string
	state string
}

// planOf is the agent that re-issues a trace's calls and replies (trace.Script), with a probe
// when each turn starts (key -1) and after each call (key: the call's index in the trace); the
// calls, and the state hash recorded when the user speaks in each turn ("" for a turn without a
// user event). The messages to a simulated user are left out (they change nothing), and each
// call keeps its recorded id (the engine would number its own calls otherwise, the probes
// counted).
func planOf(events []trace.Event, probe string) (*episode.Scripted, []recordedCall, []string) {
	rec := trace.Script(events)
	s := &episode.Scripted{Label: "report", Replies: rec.Replies, Truncated: rec.Truncated, Errors: rec.Errors}
	var calls []recordedCall
	users := make([]string, len(rec.Calls))
	byTurn := make([][]int, len(rec.Calls)) // by turn: the indexes of its calls in calls
	byID := map[string]int{}                // call id -> index of the call waiting for its result
	for _, ev := range events[1:] {
		switch b := ev.Body.(type) {
		case *trace.User:
			users[b.Turn] = b.State
		case *trace.Call:
			k := len(calls)
			calls = append(calls, recordedCall{turn: b.Turn, id: b.ID})
			byTurn[b.Turn] = append(byTurn[b.Turn], k)
			byID[b.ID] = k
		case *trace.CallResult:
			if k, ok := byID[b.ID]; ok {
				calls[k].state = b.State
				delete(byID, b.ID)
			}
		}
	}
	for turn, recorded := range rec.Calls {
		script := []episode.ScriptedCall{probeCall(probe, turn, -1)}
		for _, c := range recorded {
			if c.Ask {
				continue
			}
			k := byTurn[turn][0]
			byTurn[turn] = byTurn[turn][1:]
			c.ID = calls[k].id
			script = append(script, c, probeCall(probe, turn, k))
		}
		s.Calls = append(s.Calls, script)
	}
	return s, calls, users
}

func probeCall(name string, turn, k int) episode.ScriptedCall {
	return episode.ScriptedCall{ID: fmt.Sprintf("report_probe_%d_%d", turn, k), Name: name,
		Args: jsonv.NewObject("turn", int64(turn), "call", int64(k))}
}

type probeKey struct{ turn, call int }

// statesProbe is the replay's tool that reads the state: each call keeps a frozen copy of the
// state it runs on, under its arguments, and changes nothing.
type statesProbe struct {
	name   string
	states map[probeKey]*workspace.State
}

func (p *statesProbe) tool() *tools.Tool {
	p.states = map[probeKey]*workspace.State{}
	return &tools.Tool{Name: p.name, Description: "reads the state for the report",
		Params: []tools.Param{{Name: "turn", Type: "integer", Required: true}, {Name: "call", Type: "integer", Required: true}},
		Run: func(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
			turn, _ := args.Get("turn")
			call, _ := args.Get("call")
			t, _ := jsonv.Number(turn)
			c, _ := jsonv.Number(call)
			snap := st.Fork()
			snap.Freeze()
			p.states[probeKey{int(t), int(c)}] = snap
			return nil, nil
		}}
}

// probeName is a tool name the task does not use.
func probeName(t *dsl.Task) string {
	name := "report_state_probe"
	for i := 2; ; i++ {
		if _, taken := t.Tool(name); !taken {
			return name
		}
		name = "report_state_probe_" + strconv.Itoa(i)
	}
}

// stateChange is what changed from before to after.
func stateChange(before, after *workspace.State) *StateChange {
	sc := &StateChange{}
	secs := services.Sections(workspace.Diff(before, after))
	actions := after.History(before)
	for _, sec := range secs {
		if sec.Empty() {
			continue
		}
		svc := ServiceChange{Service: sec.Service.Name, Entry: sec.Service.Entry,
			Added: sec.Added, Changed: sec.Changed, Removed: sec.Removed}
		for _, a := range actions {
			if !sec.Service.HasKind(a.Kind) {
				continue
			}
			if len(svc.Actions) == maxActions {
				svc.Actions = append(svc.Actions, ChangeAction{Op: fmt.Sprintf("(%d more actions not shown)", countKind(actions, sec.Service.HasKind)-maxActions)})
				break
			}
			svc.Actions = append(svc.Actions, ChangeAction{Op: a.Op, Key: a.Key, To: a.To,
				Before: entryText(sec.Service.Value, a.Before()), After: entryText(sec.Service.Value, a.After())})
		}
		sc.Services = append(sc.Services, svc)
	}
	return sc
}

func countKind(actions []workspace.Action, has func(string) bool) int {
	n := 0
	for _, a := range actions {
		if has(a.Kind) {
			n++
		}
	}
	return n
}

// entryText is an entry of an action as scripts see it, as indented JSON ("" for none).
func entryText(value func(any) starlark.Value, e any) string {
	if e == nil || value == nil {
		return ""
	}
	v := value(e)
	if v == nil {
		return ""
	}
	j, err := starconv.ToJSON(v)
	if err != nil {
		return cut(v.String())
	}
	if s, ok := j.(string); ok { // a file's content: as text
		return cut(s)
	}
	return prettyValue(j)
}

// short is a state hash cut for a sentence.
func short(h string) string {
	if len(h) > 19 {
		return h[:19] + "…"
	}
	return h
}
