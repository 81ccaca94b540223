package trace

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/stdlib/timemod"
)

// The conversation a trace records, through the conversation machine (runtime/conversation)
// that made it: the recorded model's messages are its source (recordedTurn), for a replay
// against the live episode (modelReplay) and for History, against the trace itself.

// modelReplay is a model agent whose model answers with the recorded messages: the conversation
// machine runs each turn with them, as runtime/modelagent's agent and a served session run it
// with theirs. The trace does not record why a turn stopped early (an answer cut off at the
// token limit, finish_reason length, runs none of its calls; one past max_calls_per_turn ends the
// turn): in a turn recorded as truncated or ended by the agent's error, the last message's calls
// run as far as the trace shows them running (conversation.Answer.Stopped), and a last message
// without calls in a truncated turn is a cut-off one. The tool messages of calls not run are the
// recorded ones (the agent's text, like its messages).
type modelReplay struct {
	plan   *plan
	cmp    *comparer
	system string
	conv   *conversation.Conversation
}

func (m *modelReplay) Name() string { return m.plan.script.Label }

func (m *modelReplay) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if m.conv == nil {
		m.conv = conversation.New(m.system, tc.SetupNow()).InZone(tc.Task().Location)
	}
	i := tc.Index
	env := &replayEnv{Env: conversation.Live(tc), hasNot: m.plan.hasNot, told: map[string]bool{}}
	if i < len(m.plan.notRun) {
		env.recorded = m.plan.notRun[i]
	}
	return m.conv.Turn(ctx, env, &recordedTurn{plan: m.plan, turn: i, cmp: m.cmp})
}

// history is the conversation the replay made (nil before its first turn).
func (m *modelReplay) history() []conversation.Message {
	if m.conv == nil {
		return nil
	}
	return m.conv.Messages()
}

// replayEnv tells the live episode of a call not run with the tool message the trace records
// for it. A trace of an older engine records none: the episode is then told nothing.
type replayEnv struct {
	conversation.Env
	recorded []*NotRun // the turn's
	hasNot   bool      // the trace records not_run events
	told     map[string]bool
}

func (e *replayEnv) NotRun(c conversation.Call, content string) string {
	if e.told[c.ID] {
		return content
	}
	for _, n := range e.recorded {
		if n.ID == c.ID {
			e.told[c.ID] = true
			return e.Env.NotRun(c, n.Content)
		}
	}
	if e.hasNot {
		e.told[c.ID] = true
		return e.Env.NotRun(c, content) // the trace lacks it: the comparer says so
	}
	return content
}

// recordedTurn gives the recorded messages of one turn. With a comparer (a replay), a tool call
// not in the shape the model agent records, and a turn whose messages run out where the agent
// would ask the model again, are divergences; without one (History), the calls are read as
// export reads them, each message's calls run as far as the trace shows them running, and the
// turn ends where its messages do.
type recordedTurn struct {
	plan *plan
	turn int
	cmp  *comparer
	k    int // the next message
}

// errNoMore ends a turn of History whose recorded messages ran out.
var errNoMore = errors.New("no more recorded messages")

func (r *recordedTurn) Next(context.Context, *conversation.Conversation) (conversation.Answer, error) {
	p, i := r.plan, r.turn
	var msgs []Event
	if i < len(p.msgs) {
		msgs = p.msgs[i]
	}
	truncated := i < len(p.script.Truncated) && p.script.Truncated[i]
	if r.k >= len(msgs) {
		// the agent would ask the model again: the turn ends here only by the agent's error or a cut-off
		switch {
		case i < len(p.script.Errors) && p.script.Errors[i] != nil:
			return conversation.Answer{}, p.script.Errors[i]
		case truncated:
			return conversation.Answer{}, conversation.ErrTruncated
		case r.cmp == nil:
			return conversation.Answer{}, errNoMore
		}
		r.cmp.diverge(r.cmp.here(), i, []string{fmt.Sprintf("the model agent would ask the model for another message in turn %d "+
			"(the last one asks for tools or was answered by the simulated user, or there is none), but the trace has none and does not end the turn by a cut-off or an error", i)})
		return conversation.Answer{}, errStop
	}
	ev := msgs[r.k]
	r.k++
	a := ev.Body.(*Assistant)
	calls, bad := recordedCalls(a, r.cmp != nil)
	if bad >= 0 {
		r.cmp.diverge(ev, i, []string{fmt.Sprintf("tool_calls[%d]: not a tool call as the model agent records it (id, type, function with name and arguments): %s", bad, show(a.ToolCalls[bad]))})
		return conversation.Answer{}, errStop
	}
	ans := conversation.Answer{Text: a.Content, Reasoning: a.Reasoning, Calls: calls, Report: a.Message(), From: a}
	final := r.k == len(msgs)
	switch {
	case final && truncated && len(calls) == 0:
		ans.Cut = true
	case r.cmp == nil || final && (truncated || i == p.failed):
		ans.Stopped, ans.Ran = true, p.runs[i][r.k-1]
	}
	return ans, nil
}

// recordedCalls are the tool calls of an assistant event. Strictly, each must be the object the
// model agent records, {"id", "type", "function": {"name", "arguments"}} with string values and
// nothing else: bad is the index of the first that is not (-1 when all are). Otherwise they are
// read as export reads them: arguments "" or null are "{}", arguments that are not a string are
// encoded as one, and what is missing is "".
func recordedCalls(a *Assistant, strict bool) (calls []conversation.Call, bad int) {
	for i, v := range a.ToolCalls {
		o, _ := v.(*jsonv.Object)
		var fn *jsonv.Object
		if o != nil {
			f, _ := o.Get("function")
			fn, _ = f.(*jsonv.Object)
		}
		id, iok := str(o, "id")
		typ, tok := str(o, "type")
		name, nok := str(fn, "name")
		arguments, aok := str(fn, "arguments")
		if strict {
			if o == nil || o.Len() != 3 || fn == nil || fn.Len() != 2 || !iok || !tok || !nok || !aok {
				return nil, i
			}
		} else if x, _ := fn.Get("arguments"); x != nil && !aok {
			arguments = jsonv.MustEncode(x)
		}
		calls = append(calls, conversation.Call{ID: id, Type: typ, Name: name, Arguments: arguments})
	}
	return calls, -1
}

func str(o *jsonv.Object, k string) (string, bool) {
	if o == nil {
		return "", false
	}
	v, _ := o.Get(k)
	s, ok := v.(string)
	return s, ok
}

// History is the conversation a trace records, as the conversation machine keeps it: the
// conversation its agent had with the model, made again from the trace alone (no task is loaded).
//
//   - A model's trace (one with assistant events, or of the openai agent) is made from the
//     model's messages as a replay makes it, each call answered by its recorded result. A call
//     not run is answered, with recordedNotRun, by the tool message the trace records for it;
//     otherwise, and in traces of older engines that record none, by the one the machine gives
//     arguments that are not a JSON object, or {"error": "the tool was not run"}.
//   - The trace of another agent (oracle, noop, scripted) is made as if a model had sent each
//     call event as a message with that one call, each question to a simulated user that was
//     answered (agent.ask) as a message with its text, and the reply as the turn's last message.
//
// The system message is the one the start event records ("" when none). A simulated user's
// answer is a user message when the agent saw it: not when the user was done, nor when it
// answered the reply that ended the turn. Each assistant message's From is the event it was made
// from (*Assistant, *Call, *SimUser or *Reply).
func History(events []Event, recordedNotRun bool) []conversation.Message {
	if len(events) == 0 {
		return nil
	}
	start, _ := events[0].Body.(*Start)
	if start == nil {
		return nil
	}
	conv := conversation.New(start.System, start.Now)
	if loc, err := timemod.Location(start.TimeZone); err == nil {
		conv.InZone(loc)
	}
	h := &historyOf{events: events, model: FromModel(events), recordedNotRun: recordedNotRun,
		results: map[string][]*CallResult{}, notRun: map[string][]string{}, asks: map[int][]ask{}}
	var users []int // the user events
	for i, ev := range events {
		switch b := ev.Body.(type) {
		case *User:
			users = append(users, i)
		case *CallResult:
			h.results[b.ID] = append(h.results[b.ID], b)
		case *NotRun:
			h.notRun[b.ID] = append(h.notRun[b.ID], b.Content)
		case *SimUser:
			answer, ok := simAnswer(events, i, b)
			if h.model || ok {
				h.asks[b.Turn] = append(h.asks[b.Turn], ask{answer: answer, ok: ok})
			}
		}
	}
	var p *plan
	if h.model {
		p = planOf(events)
	}
	for _, at := range users {
		u := events[at].Body.(*User)
		env := &historyEnv{h: h, user: u}
		var src conversation.Source = &scriptTurn{h: h, turn: u.Turn, at: at}
		if p != nil {
			src = &recordedTurn{plan: p, turn: u.Turn}
		}
		conv.Turn(context.Background(), env, src) // a turn the agent's error ended ends with it here too
	}
	return conv.Messages()
}

// FromModel reports whether a model made the episode of a trace: its agent is the model agent, or
// it has assistant events (a served session's, a replay's).
func FromModel(events []Event) bool {
	if len(events) > 0 {
		if s, ok := events[0].Body.(*Start); ok && s.Agent == modelAgent {
			return true
		}
	}
	for _, ev := range events {
		if _, ok := ev.Body.(*Assistant); ok {
			return true
		}
	}
	return false
}

// historyOf is what History reads from the trace.
type historyOf struct {
	events         []Event
	model          bool
	recordedNotRun bool
	results        map[string][]*CallResult // by call id, in order
	notRun         map[string][]string      // the recorded tool messages of calls not run, by call id
	// asks are the exchanges with a simulated user by turn, in order: for a model, every one
	// (each answers a message of the model); for another agent, those whose answer it saw.
	asks map[int][]ask
}

// ask is an exchange with a simulated user: the agent saw its answer when ok.
type ask struct {
	answer string
	ok     bool
}

// simAnswer is the answer of the simulated user in the sim_user event at index i as the agent saw
// it: none when the user was done, or when it answered the agent's final reply (the turn ended
// there: the agent never saw that answer).
func simAnswer(events []Event, i int, b *SimUser) (string, bool) {
	if b.Done {
		return "", false
	}
	for _, ev := range events[i+1:] {
		switch ev.Body.(type) {
		case *Judge:
			continue
		case *Reply, *TurnEnd, *End:
			return "", false
		}
		return b.Content, true
	}
	return "", false
}

// historyEnv is a recorded turn as the episode's side of the conversation: its calls are
// answered by their results.
type historyEnv struct {
	h    *historyOf
	user *User
}

func (e *historyEnv) Index() int    { return e.user.Turn }
func (e *historyEnv) User() string  { return e.user.Content }
func (e *historyEnv) Now() string   { return e.user.Now }
func (e *historyEnv) MaxCalls() int { return math.MaxInt } // the trace shows where the turn stopped
func (e *historyEnv) Truncate()     {}

func (e *historyEnv) Assistant(episode.AssistantMessage) {}

func (e *historyEnv) Simulated() bool { return len(e.h.asks[e.user.Turn]) > 0 }

// Ask gives the turn's next exchange; there is none after the last.
func (e *historyEnv) Ask(string) (string, bool, error) {
	asks := e.h.asks[e.user.Turn]
	if len(asks) == 0 {
		return "", true, nil
	}
	e.h.asks[e.user.Turn] = asks[1:]
	return asks[0].answer, !asks[0].ok, nil
}

func (e *historyEnv) Call(id, name string, args *jsonv.Object) (*episode.Call, error) {
	rs := e.h.results[id]
	if len(rs) == 0 {
		return nil, episode.ErrTruncated
	}
	r := rs[0]
	e.h.results[id] = rs[1:]
	c := &episode.Call{ID: id, Name: name, Args: args, Content: r.Content, Fault: r.Fault}
	if r.Error != nil {
		c.IsError, c.Error = true, *r.Error
	}
	return c, nil
}

func (e *historyEnv) NotRun(c conversation.Call, content string) string {
	if ns := e.h.notRun[c.ID]; e.h.recordedNotRun && len(ns) > 0 {
		e.h.notRun[c.ID] = ns[1:]
		return ns[0]
	}
	if _, problem := conversation.ParseArguments(c.Arguments); problem != "" {
		return conversation.BadArgumentsContent(c.Name, problem, c.Arguments)
	}
	return conversation.ToolErrorContent(conversation.NotRun, false)
}

// scriptTurn gives the messages of a turn of an agent that is not a model: a call per call
// event, the questions whose answers it saw, and its reply.
type scriptTurn struct {
	h    *historyOf
	turn int
	at   int // the next event
}

func (s *scriptTurn) Next(context.Context, *conversation.Conversation) (conversation.Answer, error) {
	events := s.h.events
	for ; s.at < len(events); s.at++ {
		ev := events[s.at]
		if ev.Turn() != s.turn {
			continue
		}
		switch b := ev.Body.(type) {
		case *Call:
			s.at++
			args := b.Args
			if args == nil {
				args = &jsonv.Object{}
			}
			return conversation.Answer{Calls: []conversation.Call{{ID: b.ID, Name: b.Name, Arguments: jsonv.MustEncode(args)}}, From: b}, nil
		case *SimUser:
			if _, ok := simAnswer(events, s.at, b); ok {
				s.at++
				return conversation.Answer{Text: b.Said, From: b}, nil
			}
		case *Reply:
			s.at = len(events)
			return conversation.Answer{Text: b.Content, From: b}, nil
		}
	}
	return conversation.Answer{}, errNoMore
}
