package episode

import (
	"context"
	"errors"
	"fmt"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// DiagError carries a diagnostic through an agent's error.
type DiagError struct{ Diag dsl.Diagnostic }

func (e *DiagError) Error() string { return e.Diag.Message }

// Noop replies "Done." to every turn and calls nothing.
type Noop struct{}

func (Noop) Name() string { return "noop" }

func (Noop) Turn(ctx context.Context, tc *TurnContext) (string, error) { return "Done.", nil }

// MaxFaultRetries is how often agent.call retries a call that hit an injected fault.
const MaxFaultRetries = 10

// Oracle runs the task's reference solution: the task-level one for a single-turn task, the
// turn's own otherwise.
type Oracle struct{}

func (Oracle) Name() string { return "oracle" }

func (Oracle) Turn(ctx context.Context, tc *TurnContext) (string, error) {
	sol := tc.Turn.Solution
	if sol == nil {
		d := dsl.NewDiag("no-solution", fmt.Sprintf("turn %d has no solution", tc.Index)).At(tc.Turn.Pos)
		return "", &DiagError{d}
	}
	h := &agentHandle{tc: tc}
	_, err := dsl.Call(ctx, tc.e.p.Limits, "solution", sol, starlark.Tuple{h}, nil, tc.e.p.prepare(nil))
	if err != nil {
		var de *DiagError
		if errors.As(err, &de) {
			// a crash inside a task-defined tool: keep the impl's position, note the call site
			d := de.Diag
			return "", &DiagError{d}
		}
		d := dsl.ErrorDiag("solution-error", err)
		if d.Code == "script-error" {
			d.Code = "solution-error"
		}
		d.Message = fmt.Sprintf("turn %d solution: %s", tc.Index, d.Message)
		return "", &DiagError{d}
	}
	return h.reply, nil
}

// agentHandle is the `agent` value a solution receives.
type agentHandle struct {
	tc      *TurnContext
	reply   string
	replied bool
}

func (h *agentHandle) String() string        { return "<agent>" }
func (h *agentHandle) Type() string          { return "agent" }
func (h *agentHandle) Freeze()               {}
func (h *agentHandle) Truth() starlark.Bool  { return true }
func (h *agentHandle) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: agent") }
func (h *agentHandle) AttrNames() []string   { return agentMembers.AttrNames() }

func (h *agentHandle) Attr(name string) (starlark.Value, error) { return agentMembers.Attr(h, name) }

// agentMembers is the one table of the `agent` value: it binds the arguments of its methods and
// documents them (Reference).
var agentMembers = dsl.NewMembers("agent",
	dsl.Member[*agentHandle]{Func: dsl.Func{Name: "agent.call", Params: []dsl.Param{dsl.Req("name"), dsl.Rest("args")},
		Doc: "Calls a tool through exactly the interface an agent has and returns its decoded result. A tool error stops the solution (`solution-error`); a call that hits an injected fault is retried up to 10 times, each attempt recorded."},
		Call: (*agentHandle).call},
	dsl.Member[*agentHandle]{Func: dsl.Func{Name: "agent.reply", Params: []dsl.Param{dsl.Req("text")},
		Doc: "Ends the turn with a reply; a solution that returns without one replies \"\". A simulated user sees the reply too."},
		Call: (*agentHandle).doReply},
	dsl.Member[*agentHandle]{Func: dsl.Func{Name: "agent.ask", Params: []dsl.Param{dsl.Req("message")},
		Doc: "Sends `message` to the turn's simulated user (see `simulated_user`) and returns its answer, a string: the stand-in's, or a user model's when one is given. It is \"\" once the user is satisfied or has given its `rounds` answers. In a turn whose user is not simulated there is nobody to ask: the call is a `solution-error`."},
		Call: (*agentHandle).ask},
)

func (h *agentHandle) call(thread *starlark.Thread, a *dsl.Args) (starlark.Value, error) {
	name, err := a.Str("name")
	if err != nil {
		return nil, err
	}
	if h.replied {
		return nil, fmt.Errorf("agent.call: %s called after agent.reply ended the turn", name)
	}
	obj, err := argsJSON("agent.call: "+name, a.Rest())
	if err != nil {
		return nil, err
	}
	var pos syntax.Position
	if thread.CallStackDepth() > 1 {
		pos = thread.CallFrame(1).Pos
	}
	for attempt := 0; ; attempt++ {
		c, err := h.tc.callAt(pos, "", name, obj)
		if errors.Is(err, ErrTruncated) {
			return nil, fmt.Errorf("agent.call: %s: the turn reached max_calls_per_turn (%d)", name, h.tc.Task().MaxCallsPerTurn)
		}
		if err != nil {
			return nil, err
		}
		if c.Fault && attempt < MaxFaultRetries {
			continue
		}
		if c.ScriptErr != nil {
			return nil, &DiagError{*c.ScriptErr}
		}
		if c.IsError {
			return nil, fmt.Errorf("agent.call: %s: tool error: %s", name, c.Error)
		}
		return decodeContent(c.Content), nil
	}
}

// argsJSON converts the keyword arguments a "**args" parameter collected to a JSON object, in
// call order; what names the call in errors ("agent.call: fs_write").
func argsJSON(what string, kwargs []starlark.Tuple) (*jsonv.Object, error) {
	obj := &jsonv.Object{Members: make([]jsonv.Member, 0, len(kwargs))}
	for _, kv := range kwargs {
		j, err := starconv.ToJSON(kv[1])
		if err != nil {
			return nil, fmt.Errorf("%s: argument %s: %v", what, kv[0], err)
		}
		obj.Members = append(obj.Members, jsonv.Member{Key: string(kv[0].(starlark.String)), Value: j})
	}
	return obj, nil
}

func (h *agentHandle) ask(thread *starlark.Thread, a *dsl.Args) (starlark.Value, error) {
	msg, err := a.Str("message")
	if err != nil {
		return nil, err
	}
	switch {
	case h.replied:
		return nil, fmt.Errorf("agent.ask: called after agent.reply ended the turn")
	case !h.tc.Simulated():
		return nil, fmt.Errorf("agent.ask: turn %d has no simulated user to ask (declare its user with simulated_user(...))", h.tc.Index)
	}
	resume := dsl.Waiting(thread) // the solution's wall-clock limit does not count a user model's time
	answer, _, err := h.tc.Ask(msg)
	resume()
	if err != nil {
		return nil, err
	}
	return starlark.String(answer), nil
}

func (h *agentHandle) doReply(thread *starlark.Thread, a *dsl.Args) (starlark.Value, error) {
	text, err := a.Str("text")
	if err != nil {
		return nil, err
	}
	if h.replied {
		return nil, fmt.Errorf("agent.reply: the turn already has a reply")
	}
	h.reply, h.replied = text, true
	return starlark.None, nil
}

// ScriptedCall is one call a Scripted agent re-issues, or one message it sends to the turn's
// simulated user.
type ScriptedCall struct {
	ID   string
	Name string
	Args *jsonv.Object
	// Ask, when set, sends Said to the simulated user (TurnContext.Ask) instead of calling a tool.
	Ask  bool
	Said string
}

// RemoteAgent is the name in results and traces of an agent driven from outside the process one
// step at a time (runtime/session): a model's episode whose model the engine never saw. Replay
// treats its traces as a model's.
const RemoteAgent = "remote"

// ScriptedAsk is a message a Scripted agent sends to the turn's simulated user before the turn's
// call number Before (0-based in its Calls of the turn; at or past their end: after them all).
type ScriptedAsk struct {
	Before int
	Said   string
}

// Scripted re-issues recorded calls (and messages to a simulated user) turn by turn and gives
// recorded replies, whatever the tools and the user answer: the replay agent, and the
// validator's mutations (calls left out, replies only).
type Scripted struct {
	Label   string
	Calls   [][]ScriptedCall // per turn
	Replies []string         // per turn
	// Asks are, per turn, messages to the simulated user placed by the index of a call, so that
	// a list of calls with one left out or changed keeps its questions (the validator's
	// mutations of a reference that asks).
	Asks [][]ScriptedAsk
	// Truncated marks turns that end as truncated after their calls (a replay of a trace whose
	// agent ran into max_calls_per_turn).
	Truncated []bool
	// Errors ends a turn with this error after its calls (a replay of an aborted episode).
	Errors []error
}

func (s *Scripted) Name() string { return s.Label }

func (s *Scripted) Turn(ctx context.Context, tc *TurnContext) (string, error) {
	var asks []ScriptedAsk
	if tc.Index < len(s.Asks) {
		asks = s.Asks[tc.Index]
	}
	askUpTo := func(j int) error { // sends the asks placed before call j
		for len(asks) > 0 && asks[0].Before <= j {
			if _, _, err := tc.Ask(asks[0].Said); err != nil {
				return err
			}
			asks = asks[1:]
		}
		return nil
	}
	if tc.Index < len(s.Calls) {
		for j, c := range s.Calls[tc.Index] {
			if err := askUpTo(j); err != nil {
				return "", err
			}
			if c.Ask {
				if _, _, err := tc.Ask(c.Said); err != nil {
					return "", err
				}
				continue
			}
			if _, err := tc.Call(c.ID, c.Name, c.Args); err != nil {
				if errors.Is(err, ErrTruncated) {
					break
				}
				return "", err
			}
		}
	}
	if len(asks) > 0 {
		if err := askUpTo(int(^uint(0) >> 1)); err != nil {
			return "", err
		}
	}
	if tc.Index < len(s.Errors) && s.Errors[tc.Index] != nil {
		return "", s.Errors[tc.Index]
	}
	if tc.Index < len(s.Truncated) && s.Truncated[tc.Index] {
		tc.Truncate()
	}
	if tc.Index < len(s.Replies) {
		return s.Replies[tc.Index], nil
	}
	return "", nil
}
