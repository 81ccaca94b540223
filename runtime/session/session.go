// Package session runs live episodes driven from outside. A Session is one episode of a task
// whose agent is a client elsewhere (a model loop behind an HTTP API, a training harness): the
// episode runs on its own goroutine, and each time its agent must act it waits for the client's
// next action, a tool call (Call) or a message (Reply), and hands back what comes of it.
//
// The client is a Source of runtime/conversation, the conversation machine runtime/modelagent's
// agent runs too: the session is the model agent with a model that makes one tool call per
// message, so that a client that relays a model gets what the model agent would have given it,
// and the trace is a model's trace that replays and exports like any other:
//
//   - Call is an assistant message with one tool call. The client gets the tool message: the
//     result's content, or conversation.ToolErrorContent for a tool error or an injected fault.
//     Arguments that are not a JSON object are not run (conversation.BadArgumentsContent), and
//     the attempt counts towards the turn's max_calls_per_turn. A call past that limit is not
//     run (conversation.NotRunLimit) and ends the turn as truncated.
//   - Reply is an assistant message without tool calls: it ends the turn, with the turn's last
//     non-empty text as the reply. In a turn whose user is simulated, a non-empty text goes to
//     the user first (TurnContext.Ask); while the user answers rather than saying it is done, the
//     answer is the next user message of the same turn and the turn goes on.
//
// Every action that ends a turn is answered with the turn's reward (its verifier's score) and
// what comes next: the next turn's user message (with a note of the time when the virtual clock
// moved, conversation.UserContent), or the end of the episode with its result.
//
// One action runs at a time per session: an action while another runs gets ErrBusy. Any number
// of sessions may run at once. Close ends the episode (as interrupted when it had not finished)
// and waits for its goroutine.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

// DefaultAgent is the agent's name in results and traces when Options.Agent is "".
const DefaultAgent = episode.RemoteAgent

// Options tune a session.
type Options struct {
	// Agent is the agent's name in the result and the trace; "" is DefaultAgent.
	Agent string
	// System makes the system prompt the client is shown and the trace records; nil is
	// modelagent.SystemPromptOf("", p): the default prompt with the user's mail address, the time
	// after setup and the user's time zone, as a model agent is given it.
	System func(p *episode.Prepared) string
	// Trace, when set, receives the trace as the episode happens: the start event before Create
	// returns, the end event when the episode ends.
	Trace io.Writer
	// Source is the task file's bytes and Sources the task file and every file it loads
	// (trace.Sources), for the start event; they only matter with Trace.
	Source  []byte
	Sources []trace.Source
	// Limits of every call into a script; the zero value means dsl.DefaultLimits.
	Limits dsl.Limits
	// Print receives what the scripts print; nil drops it.
	Print func(pos syntax.Position, msg string)
	// OnEnd, when set, is called on the episode's goroutine once the episode has ended and the
	// trace has its end event (traceErr is the trace's first write error), before the action
	// waiting for the end is answered: a trace file can be put in place there.
	OnEnd func(res *episode.Result, traceErr error)
}

// Step is what an action gives back (and what Create gives: the first turn's user message).
type Step struct {
	// CallID and Content are a call's: the id it ran under and the tool message's content, as
	// a model would see it. IsError says the content is an error: a tool error, an injected
	// fault (retry it), arguments that were refused, or a call that was not run.
	CallID  string `json:"call_id,omitempty"`
	Content string `json:"content,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// User is the user's next message: a simulated user's answer within the turn, or the
	// opening of the next turn (with a time note when the clock moved). "" when the episode is
	// over, or the turn goes on with the client's next action.
	User string `json:"user,omitempty"`
	// Turn is the turn the episode is in now (0-based): the one User belongs to.
	Turn int `json:"turn"`
	// TurnOver says the action ended a turn (or the episode). Reward is then that turn's score
	// from its verifier, nil when it has none (the score of a task that only has a final
	// verifier is in Result).
	TurnOver bool     `json:"turn_over"`
	Reward   *float64 `json:"reward,omitempty"`
	// Done says the episode is over; Result is its verdict.
	Done   bool    `json:"done"`
	Result *Result `json:"result,omitempty"`
}

// Result is an episode's verdict: the trace's end event (score, passed, completion, safety,
// robustness, the rubric items, the final state and the error that stopped the episode or
// zeroed its score), and each turn's reward.
type Result struct {
	trace.End
	// Rewards are the turns' scores from their verifiers, by turn (nil for a turn without one),
	// for every turn that began.
	Rewards []*float64 `json:"rewards"`
}

// Message is one message of the conversation in the chat-completions shape.
type Message struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is an assistant message's tool call.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // always "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and holds the arguments as JSON text. In Messages, arguments
// that are not a JSON object are "{}" (conversation.HistoryArgs), as the model agent sends its
// history back (servers refuse a history with others); the trace keeps them as they were sent.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Status is where a session stands.
type Status struct {
	Task  string `json:"task"`
	Turn  int    `json:"turn"`  // the turn the episode is in (0-based)
	Turns int    `json:"turns"` // how many turns the task has
	Done  bool   `json:"done"`
	// Calls counts the tool calls that ran (those refused for their arguments or not run left
	// out).
	Calls int `json:"calls"`
	// Last is the last step handed out (Create's first, then each action's).
	Last Step `json:"last"`
	// Messages is the conversation so far, system message first.
	Messages []Message `json:"messages"`
	Result   *Result   `json:"result,omitempty"`
}

var (
	// ErrBusy refuses an action while another action of the session runs.
	ErrBusy = errors.New("the session is busy with another action; send one action at a time")
	// ErrOver refuses an action after the episode ended.
	ErrOver = errors.New("the episode is over")
)

// UnknownToolError refuses a call to a tool the task does not have. Nothing is run or recorded.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string { return fmt.Sprintf("the task has no tool %q", e.Name) }

// SetupError is a task whose setup failed: there is no episode and no trace.
type SetupError struct{ Diag dsl.Diagnostic }

func (e *SetupError) Error() string { return e.Diag.String() }

// Session is one live episode. See the package documentation.
type Session struct {
	task   *dsl.Task
	agent  string
	system string
	tools  []*jsonv.Object
	first  Step

	cancel  context.CancelFunc
	actions chan *action
	done    chan struct{}
	busy    sync.Mutex // held by the action that runs

	// The conversation (its history State reads), and the episode goroutine's own: the action
	// it answers next, where the history stood when it was taken, and what it will be told.
	conv    *conversation.Conversation
	pending *action
	mark    int
	step    Step
	cur     int

	mu     sync.Mutex // guards the fields below, which State reads
	turn   int
	calls  int
	last   Step
	result *Result
	over   bool
}

// action is one action of the client; out receives its step.
type action struct {
	reply bool
	text  string // a reply's
	// a call's id ("" to have one assigned), tool and arguments as JSON text
	id, name, args string
	out            chan Step
}

// Create prepares the task with the run seed (its setup runs, under ctx), opens the trace and
// starts the episode. It returns once the first turn waits for the client (First), or the
// episode ended before it. A setup that fails gives a *SetupError. The episode outlives ctx:
// Close ends it.
func Create(ctx context.Context, task *dsl.Task, seed int64, opts Options) (*Session, error) {
	p, d := episode.Prepare(ctx, task, episode.Options{Seed: seed, Limits: opts.Limits, Print: opts.Print})
	if d != nil {
		return nil, &SetupError{Diag: *d}
	}
	s := &Session{task: task, agent: opts.Agent, actions: make(chan *action), done: make(chan struct{})}
	if s.agent == "" {
		s.agent = DefaultAgent
	}
	if opts.System != nil {
		s.system = opts.System(p)
	} else {
		s.system = modelagent.SystemPromptOf("", p)
	}
	for _, t := range task.Tools {
		s.tools = append(s.tools, t.Schema())
	}
	s.conv = conversation.New(s.system, p.Base.Clock().NowString()).InZone(task.Location)

	obs := episode.Observers{}
	var tw *trace.Writer
	if opts.Trace != nil {
		start := trace.StartOf(p, opts.Source, seed, s.agent)
		start.System, start.Sources = s.system, opts.Sources
		tw = trace.NewWriter(opts.Trace, start)
		obs = append(obs, tw)
	}
	obs = append(obs, observer{s})

	// The episode has its own context: it lives on after the request that made it.
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	start := &action{out: make(chan Step, 1)}
	s.pending = start
	go func() {
		defer close(s.done)
		defer cancel()
		res := p.Run(ectx, remote{s}, episode.RunOptions{Observer: obs})
		var werr error
		if tw != nil {
			werr = tw.End(res)
		}
		if opts.OnEnd != nil {
			opts.OnEnd(res, werr)
		}
		s.finish(res)
	}()
	s.first = <-start.out
	return s, nil
}

// Task is the task the session runs.
func (s *Session) Task() *dsl.Task { return s.task }

// System is the system prompt, as the trace records it.
func (s *Session) System() string { return s.system }

// Tools are the tool schemas in the chat-completions shape, in the task's order, as a model agent
// sends them. They are the session's own: do not change them.
func (s *Session) Tools() []*jsonv.Object { return s.tools }

// First is the step Create ended with: the first turn's user message, or the end of an episode
// that ended before its first turn.
func (s *Session) First() Step { return s.first }

// Done is closed when the episode's goroutine has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Call runs one tool call of the agent: name, and arguments as JSON text (a model's
// function.arguments; "" is {}); id names the call, "" (or an id already used) has one assigned,
// call_<turn>_<n> as the model agent numbers them. A tool the task does not have is an
// *UnknownToolError, and nothing runs. Once taken, an action runs to its end (the task's limits
// bound it); Close ends it early.
func (s *Session) Call(id, name, arguments string) (Step, error) {
	if s.ended() {
		return Step{}, ErrOver
	}
	if _, ok := s.task.Tool(name); !ok {
		return Step{}, &UnknownToolError{Name: name}
	}
	return s.do(&action{id: id, name: name, args: arguments})
}

// Reply sends the agent's message without tool calls: it ends the turn, unless the turn's
// simulated user answers it (see the package documentation).
func (s *Session) Reply(text string) (Step, error) {
	return s.do(&action{reply: true, text: text})
}

// State is where the session stands; the messages are a copy.
func (s *Session) State() Status {
	hist := s.conv.Messages()
	msgs := make([]Message, len(hist))
	for i, m := range hist {
		msgs[i] = messageOf(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{Task: s.task.Name, Turn: s.turn, Turns: len(s.task.Turns), Done: s.over, Calls: s.calls,
		Last: s.last, Messages: msgs, Result: s.result}
}

// History is the conversation so far as the conversation machine keeps it.
func (s *Session) History() []conversation.Message { return s.conv.Messages() }

// messageOf is a message of the history in the chat-completions shape.
func messageOf(m conversation.Message) Message {
	out := Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	for _, c := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: c.ID, Type: "function",
			Function: FunctionCall{Name: c.Name, Arguments: conversation.HistoryArgs(c.Arguments)}})
	}
	return out
}

// Close ends the episode, as interrupted when it had not finished (its trace ends with that
// error), waits for its goroutine and returns the final status. An action that runs meanwhile
// still gets its answer; any later one gets ErrOver. Close may be called more than once.
func (s *Session) Close() Status {
	s.cancel()
	<-s.done
	return s.State()
}

func (s *Session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// do hands an action to the episode and waits for its step. The episode answers every action
// it takes, at the latest when it ends.
func (s *Session) do(a *action) (Step, error) {
	if !s.busy.TryLock() {
		return Step{}, ErrBusy
	}
	defer s.busy.Unlock()
	a.out = make(chan Step, 1)
	select {
	case s.actions <- a:
	case <-s.done:
		return Step{}, ErrOver
	}
	return <-a.out, nil
}

// The episode's side. Everything below runs on the episode's goroutine.

// remote is the episode's agent: the client's actions, as the conversation's source.
type remote struct{ s *Session }

func (r remote) Name() string { return r.s.agent }

// Turn tells the client the user's message and takes its actions until one ends the turn.
func (r remote) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	s := r.s
	s.cur = tc.Index
	s.mu.Lock()
	s.turn = tc.Index
	s.mu.Unlock()
	return s.conv.Turn(ctx, conversation.Live(tc), r)
}

// Next answers the action taken last with its step and gives the client's next action as the
// model's next message.
func (r remote) Next(ctx context.Context, _ *conversation.Conversation) (conversation.Answer, error) {
	a, err := r.s.next(ctx)
	if err != nil {
		return conversation.Answer{}, err
	}
	if a.reply {
		return conversation.Answer{Text: a.text}, nil
	}
	return conversation.Answer{Calls: []conversation.Call{{ID: a.id, Type: "function", Name: a.name, Arguments: a.args}}}, nil
}

// next answers the action taken last with its step and waits for the client's next action.
func (s *Session) next(ctx context.Context) (*action, error) {
	s.deliver()
	select {
	case a := <-s.actions:
		s.pending, s.step, s.mark = a, Step{}, s.conv.Len()
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// told fills the step with what the conversation told the client since its action: the tool
// message of its call, and the user's next message.
func (s *Session) told() {
	s.step.Turn = s.cur
	for _, m := range s.conv.Since(s.mark) {
		switch m.Role {
		case conversation.Tool:
			s.step.CallID, s.step.Content, s.step.IsError = m.ToolCallID, m.Content, m.IsError
		case conversation.User:
			s.step.User = m.Content
		}
	}
}

// deliver answers the pending action, if any, with the step so far.
func (s *Session) deliver() {
	if s.pending == nil {
		return
	}
	s.told()
	s.mu.Lock()
	s.last = s.step
	s.mu.Unlock()
	s.pending.out <- s.step // buffered: never blocks
	s.pending = nil
}

// finish records the end and answers the pending action with it.
func (s *Session) finish(res *episode.Result) {
	r := resultOf(res)
	if s.pending == nil {
		s.step, s.mark = Step{}, s.conv.Len()
	}
	s.told()
	s.step.User = ""
	s.step.TurnOver, s.step.Done, s.step.Result = true, true, r
	s.mu.Lock()
	s.over, s.result, s.last = true, r, s.step
	s.mu.Unlock()
	if s.pending != nil {
		s.pending.out <- s.step
		s.pending = nil
	}
}

// resultOf is the verdict of an episode.
func resultOf(r *episode.Result) *Result {
	rewards := make([]*float64, len(r.Turns))
	for i, t := range r.Turns {
		rewards[i] = t.Score
	}
	return &Result{End: *trace.EndOf(r), Rewards: rewards}
}

// observer keeps what the session tells of the episode: the turns' rewards and the calls.
type observer struct{ s *Session }

func (o observer) OnTurnEnd(t *episode.TurnResult) {
	o.s.step.TurnOver, o.s.step.Reward = true, t.Score
}

func (o observer) OnCall(*episode.Call) {
	o.s.mu.Lock()
	o.s.calls++
	o.s.mu.Unlock()
}

func (observer) OnUser(int, string, string, string)         {}
func (observer) OnAssistant(int, *episode.AssistantMessage) {}
func (observer) OnNotRun(int, string, string)               {}
func (observer) OnUserAsk(*episode.UserAsk)                 {}
func (observer) OnJudge(*episode.JudgeCall)                 {}
func (observer) OnResult(*episode.Call)                     {}
func (observer) OnReply(int, string)                        {}
