package episode

import (
	"context"
	"errors"
	"fmt"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"sort"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/stdlib/wsmod"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Agent acts in an episode: for each turn it calls tools through the TurnContext and answers.
type Agent interface {
	Name() string
	// Turn runs one turn and returns the reply. An error aborts the episode.
	Turn(ctx context.Context, tc *TurnContext) (string, error)
}

// Observer sees an episode as it happens (transcripts, traces).
type Observer interface {
	// OnUser is the user's message of a turn, the state hash and the virtual time when it is said.
	OnUser(turn int, content, state, now string)
	// OnAssistant is a model's message (see AssistantMessage).
	OnAssistant(turn int, m *AssistantMessage)
	// OnNotRun is the tool message a model agent sent for a tool call of the model that it did
	// not run (arguments that are not a JSON object, a turn that ended before the call).
	OnNotRun(turn int, id, content string)
	// OnUserAsk is one exchange with a simulated user within a turn (see UserAsk).
	OnUserAsk(x *UserAsk)
	// OnJudge is one verdict of a judge in a verifier (see JudgeCall), before the verifier goes on.
	OnJudge(j *JudgeCall)
	OnCall(c *Call)   // before the call runs (Content, Error and State are empty)
	OnResult(c *Call) // after it ran
	OnReply(turn int, content string)
	OnTurnEnd(t *TurnResult)
}

// Observers sends every event to each observer in turn.
type Observers []Observer

func (m Observers) OnUser(turn int, content, state, now string) {
	for _, o := range m {
		o.OnUser(turn, content, state, now)
	}
}

func (m Observers) OnAssistant(turn int, msg *AssistantMessage) {
	for _, o := range m {
		o.OnAssistant(turn, msg)
	}
}

func (m Observers) OnNotRun(turn int, id, content string) {
	for _, o := range m {
		o.OnNotRun(turn, id, content)
	}
}

func (m Observers) OnUserAsk(x *UserAsk) {
	for _, o := range m {
		o.OnUserAsk(x)
	}
}

func (m Observers) OnJudge(j *JudgeCall) {
	for _, o := range m {
		o.OnJudge(j)
	}
}

func (m Observers) OnCall(c *Call) {
	for _, o := range m {
		o.OnCall(c)
	}
}

func (m Observers) OnResult(c *Call) {
	for _, o := range m {
		o.OnResult(c)
	}
}

func (m Observers) OnReply(turn int, content string) {
	for _, o := range m {
		o.OnReply(turn, content)
	}
}

func (m Observers) OnTurnEnd(t *TurnResult) {
	for _, o := range m {
		o.OnTurnEnd(t)
	}
}

// RunOptions tune one episode.
type RunOptions struct {
	Observer Observer
	// NoFaults turns fault injection off (the validator's mutation replays).
	NoFaults bool
	// NoVerify runs no verifier (the reference run behind ws.reference).
	NoVerify bool
	// SkipBefore, when k > 0, leaves out the `before` of turn k (1-based): the validator's
	// blind-to-change check runs a turn's reference on the state as it was without the change.
	SkipBefore int
	// Models answers for the simulated users and judges of the task; nil uses their stand-ins.
	Models *Models
}

// Run runs one episode from the prepared state. Everything that goes wrong inside the episode
// is in Result.Err; a cancelled context ends it the same way, with the code `interrupted`.
func (p *Prepared) Run(ctx context.Context, agent Agent, ro RunOptions) *Result {
	e := &run{p: p, ctx: ctx, agent: agent, obs: ro.Observer, models: ro.Models, noFaults: ro.NoFaults, noVerify: ro.NoVerify, skipBefore: ro.SkipBefore, cur: p.Base.Fork(), attempts: map[string]int{}, queried: map[string]bool{}}
	e.res = &Result{Task: p.Task.Name, Agent: agent.Name(), Seed: p.Seed, StartState: p.Base.Hash()}
	e.exec()
	r := e.res
	r.Err = interrupted(ctx, r.Err)
	r.Completion, r.Safety, r.Score = Score(r.Items)
	if r.Err != nil {
		// an episode that stopped on an error earns nothing, whatever its verifiers saw so far
		r.Score, r.Completion = 0, 0
	}
	r.Completion, r.Score = round(r.Completion), round(r.Score)
	r.Passed = r.Err == nil && passes(r.Score, p.Task.PassThreshold)
	r.Robustness = Robustness(r.Calls)
	for name := range e.queried {
		r.Queried = append(r.Queried, name)
	}
	sort.Strings(r.Queried)
	e.cur.Freeze()
	r.Final = e.cur
	r.FinalState = e.cur.Hash()
	return r
}

type run struct {
	p        *Prepared
	ctx      context.Context
	agent    Agent
	obs      Observer
	models   *Models
	cur      *workspace.State
	res      *Result
	turn     int
	noFaults bool
	noVerify bool
	// skipBefore is RunOptions.SkipBefore
	skipBefore int
	attempts   map[string]int  // per tool, for fault draws
	queried    map[string]bool // tool names verifiers asked about through ep.called
}

func (e *run) exec() {
	t := e.p.Task
	for i, turn := range t.Turns {
		e.turn = i
		tr := &TurnResult{Index: i}
		e.res.Turns = append(e.res.Turns, tr)
		e.cur.SetActor("", i)
		if turn.Advance > 0 {
			if err := e.cur.Clock().Advance(turn.AdvanceText); err != nil {
				e.res.Err = fmtDiag("script-error", "turn %d: advance: %v", i, err)
				return
			}
		}
		if turn.Before != nil && e.skipBefore != i+1 {
			ws := wsmod.New(e.cur, wsmod.Options{Initial: e.p.Base})
			if _, err := dsl.Call(e.ctx, e.p.Limits, "before", turn.Before, starlark.Tuple{ws}, nil, e.p.prepare(nil)); err != nil {
				d := dsl.ErrorDiag("script-error", err)
				d.Message = fmt.Sprintf("turn %d: before: %s", i, d.Message)
				e.res.Err = &d
				return
			}
		}
		tr.StateBefore = e.cur.Hash()
		user, d := e.userMessage(turn)
		if d != nil {
			e.res.Err = d
			return
		}
		tr.User = user
		if e.obs != nil {
			e.obs.OnUser(i, user, tr.StateBefore, e.cur.Clock().NowString())
		}
		tc := &TurnContext{e: e, Index: i, User: user, Turn: turn, result: tr}
		reply, err := e.agent.Turn(e.ctx, tc)
		tc.over = true
		if tc.failed != nil {
			err = tc.failed // a failed exchange ends the episode, whatever the agent made of it
		}
		if err != nil {
			e.res.AgentErr = err
			var de *DiagError
			var ce CodedError
			switch {
			case errors.As(err, &de):
				e.res.Err = &de.Diag
			case errors.As(err, &ce):
				e.res.Err = fmtDiag(ce.DiagCode(), "turn %d: %s agent: %v", i, e.agent.Name(), err)
			default:
				e.res.Err = fmtDiag("solution-error", "turn %d: %s agent: %v", i, e.agent.Name(), err)
			}
			return
		}
		tr.Reply, tr.Answered = reply, true
		if e.obs != nil {
			e.obs.OnReply(i, reply)
		}
		if turn.Sim != nil && !tc.userDone {
			// the user sees the reply too, and may say it is done; the turn ends either way
			if _, d := e.exchange(tc, reply); d != nil {
				e.res.Err = d
				return
			}
		}
		tr.End = e.cur.Fork()
		tr.End.Freeze()
		if turn.Verify != nil && !e.noVerify {
			items, d := e.verify(turn.Verify, intPtr(i))
			tr.Items = items
			e.res.Items = append(e.res.Items, items...)
			if d != nil {
				e.res.Err = d
				zero := 0.0
				tr.Score = &zero
			} else {
				_, _, s := Score(items)
				s = round(s)
				tr.Score = &s
			}
		}
		if e.obs != nil {
			e.obs.OnTurnEnd(tr)
		}
		if e.res.Err != nil {
			return
		}
	}
	if t.Verify != nil && !e.noVerify {
		items, d := e.verify(t.Verify, nil)
		e.res.Items = append(e.res.Items, items...)
		if d != nil {
			e.res.Err = d
		}
	}
}

func (e *run) userMessage(turn *dsl.Turn) (string, *dsl.Diagnostic) {
	if turn.UserFn == nil {
		return turn.User, nil
	}
	ws := wsmod.New(e.cur, wsmod.Options{ReadOnly: true, Reason: "in a user function", Initial: e.p.Base})
	v, err := dsl.Call(e.ctx, e.p.Limits, "user", turn.UserFn, starlark.Tuple{ws, e.epValue()}, nil, e.p.prepare(nil))
	if err != nil {
		d := dsl.ErrorDiag("script-error", err)
		d.Message = fmt.Sprintf("turn %d: user: %s", e.turn, d.Message)
		return "", &d
	}
	s, ok := v.(starlark.String)
	if !ok {
		return "", fmtDiag("script-error", "turn %d: user: returned %s, want string", e.turn, v.Type())
	}
	return string(s), nil
}

// verify runs one verifier on a read-only view of the current state.
func (e *run) verify(fn starlark.Callable, turn *int) ([]dsl.CheckItem, *dsl.Diagnostic) {
	c := &dsl.Collector{Turn: turn, Judge: e.judge(turn)}
	ref := func() (*workspace.State, error) { return e.p.referenceState(turn) }
	ws := wsmod.New(e.cur, wsmod.Options{ReadOnly: true, Reason: "in a verifier", Initial: e.p.Base, Reference: ref})
	_, err := dsl.Call(e.ctx, e.p.Limits, "verify", fn, starlark.Tuple{ws, e.epValue()}, nil, e.p.prepare(func(th *starlark.Thread) {
		dsl.SetCollector(th, c)
		claims.SetEnv(th, claimsEnv(e.p.Task, e.cur, func(u claims.Use) { e.res.Claims = append(e.res.Claims, u) }))
	}))
	if err != nil {
		var d dsl.Diagnostic
		var de *DiagError
		var je *judgeError
		switch {
		case errors.As(err, &de): // a judge's stand-in that failed, at its own position
			d = de.Diag
		case errors.As(err, &je): // a judge model that failed: model-error when the error says so
			d = dsl.ErrorDiag(modelCode(je.err, "verify-error"), err)
		default:
			d = dsl.ErrorDiag("verify-error", err)
		}
		if turn != nil {
			d.Message = fmt.Sprintf("turn %d verifier: %s", *turn, d.Message)
		} else {
			d.Message = "verifier: " + d.Message
		}
		return c.Items, &d
	}
	return c.Items, nil
}

// TurnContext is an agent's access to one turn: the user message, the tools, and Call.
type TurnContext struct {
	e      *run
	Index  int
	User   string
	Turn   *dsl.Turn
	result *TurnResult
	calls  int
	// the simulated user (Ask): it said it was done, or an exchange failed; over is set when the
	// agent's turn returned
	userDone bool
	failed   *DiagError
	over     bool
}

// Task is the task being run.
func (tc *TurnContext) Task() *dsl.Task { return tc.e.p.Task }

// AssistantMessage is a model's message as a model agent reports it.
type AssistantMessage struct {
	// Content is the message's text, without tool calls the agent took out of it and without a
	// leading <think> block.
	Content string
	// ToolCalls are the tool calls (a JSON array in the chat-completions shape, with the ids the
	// calls run under and the arguments as the model sent them), nil for none.
	ToolCalls []jsonv.Value
	// Usage is the token usage, nil when unknown.
	Usage *jsonv.Object
	// Reasoning is the model's reasoning (reasoning_content, reasoning, or a leading <think>
	// block), "" when none.
	Reasoning string
	// Raw is the content as the model sent it when the agent took tool calls or a <think> block
	// out of it; "" when Content is what it sent.
	Raw string
	// CallsFrom says where the tool calls were read from when not from the tool_calls field:
	// "function_call", or a text format (hermes, qwen-xml, llama, mistral) with " in reasoning"
	// when they stood in the reasoning. "" for native tool calls.
	CallsFrom string
	// FinishReason is the choice's finish_reason as the server sent it.
	FinishReason string
	// Logprobs is the choice's logprobs object, nil when the server sent none.
	Logprobs *jsonv.Object
	// PromptTokenIDs and CompletionTokenIDs are the token ids the server returned (vLLM,
	// SGLang), nil when none.
	PromptTokenIDs, CompletionTokenIDs []jsonv.Value
	// Note says why the message gave nothing the agent could use (no text and no tool call, an
	// answer cut off at the token limit...), "" when it did.
	Note string
}

// Assistant reports a model's message to the observer (traces). Agents that are not models
// never call it.
func (tc *TurnContext) Assistant(m AssistantMessage) {
	if tc.e.obs != nil {
		tc.e.obs.OnAssistant(tc.Index, &m)
	}
}

// NotRun reports the tool message a model agent sent for a tool call it did not run (traces).
func (tc *TurnContext) NotRun(id, content string) {
	if tc.e.obs != nil {
		tc.e.obs.OnNotRun(tc.Index, id, content)
	}
}

// Tools are the schemas the agent is shown, in the task's order.
func (tc *TurnContext) Tools() []*jsonv.Object {
	out := make([]*jsonv.Object, len(tc.e.p.Task.Tools))
	for i, t := range tc.e.p.Task.Tools {
		out[i] = t.Schema()
	}
	return out
}

// Truncated reports whether the turn reached max_calls_per_turn.
func (tc *TurnContext) Truncated() bool { return tc.result.Truncated }

// Truncate ends the turn as truncated (a model that ran out of tokens).
func (tc *TurnContext) Truncate() { tc.result.Truncated = true }

// Replies so far (earlier turns).
func (tc *TurnContext) Replies() []string {
	out := make([]string, 0, len(tc.e.res.Turns))
	for _, t := range tc.e.res.Turns[:tc.Index] {
		out = append(out, t.Reply)
	}
	return out
}

// Now is the virtual clock.
func (tc *TurnContext) Now() string { return tc.e.cur.Clock().NowString() }

// SetupNow is the virtual clock right after setup, before any turn moved it: the time a model's
// system prompt states (trace start events record it as "now").
func (tc *TurnContext) SetupNow() string { return tc.e.p.Base.Clock().NowString() }

// Address is the user's mail address.
func (tc *TurnContext) Address() string { return tc.e.cur.Mail().Address() }

// ErrTruncated is returned by Call when the turn has reached max_calls_per_turn.
var ErrTruncated = errors.New("the turn reached max_calls_per_turn")

// Call runs one tool call through exactly the interface an agent has: arguments are checked
// against the schema, faults are injected, and the call is recorded. id may be "" (the episode
// numbers calls). It returns ErrTruncated, and runs nothing, once the turn is full.
func (tc *TurnContext) Call(id, name string, args *jsonv.Object) (*Call, error) {
	return tc.callAt(syntax.Position{}, id, name, args)
}

func (tc *TurnContext) callAt(pos syntax.Position, id, name string, args *jsonv.Object) (*Call, error) {
	e := tc.e
	if tc.result.Truncated {
		return nil, ErrTruncated
	}
	if tc.calls >= e.p.Task.MaxCallsPerTurn {
		tc.result.Truncated = true
		return nil, ErrTruncated
	}
	if err := e.ctx.Err(); err != nil {
		return nil, err
	}
	tc.calls++
	if id == "" {
		id = fmt.Sprintf("call_%d", len(e.res.Calls)+1)
	}
	if args == nil {
		args = &jsonv.Object{}
	}
	argsErr := tools.CheckArgsLimits(args)
	if argsErr != nil {
		args = &jsonv.Object{} // not kept: arguments over a limit may not fit in a trace line
	}
	c := &Call{Turn: tc.Index, ID: id, Name: name, Args: args, Pos: pos}
	e.res.Calls = append(e.res.Calls, c)
	if e.obs != nil {
		e.obs.OnCall(c)
	}
	before := e.cur.Hash()
	if argsErr != nil {
		c.IsError, c.Error = true, argsErr.Error()
	} else {
		e.invoke(c)
	}
	c.State = e.cur.Hash()
	c.Changed = c.State != before
	if c.IsError {
		c.Content = "null"
	}
	if e.obs != nil {
		e.obs.OnResult(c)
	}
	return c, nil
}

func (e *run) invoke(c *Call) {
	fail := func(msg string) { c.IsError, c.Error = true, tools.ErrorText(msg) }
	spec, ok := e.p.Task.Tool(c.Name)
	if !ok {
		fail(fmt.Sprintf("unknown tool %q", c.Name))
		return
	}
	args, err := spec.CheckParams(c.Args) // callAt checked the limits
	if err != nil {
		fail(err.Error())
		return
	}
	if f := e.p.Task.Faults; f != nil && !e.noFaults {
		n := e.attempts[c.Name]
		e.attempts[c.Name]++
		hit, msg := false, ""
		if f.Fires(c.Name, n+1) {
			hit, msg = true, "503 unavailable"
		} else if contains(f.Tools, c.Name) {
			hit, msg = faultDraw(f, e.p.Seed, c.Name, n)
		}
		if hit {
			c.Fault = true
			fail(msg)
			return
		}
	}
	// Every call runs on a fork that is kept only when the call succeeds, so a failed call
	// (a tool error, fail() in an impl) never leaves half its changes behind.
	next := e.cur.Fork()
	next.SetActor(workspace.ActorAgent, c.Turn)
	var result jsonv.Value
	if spec.Builtin {
		result, err = spec.Run(next, args)
	} else {
		result, err = e.callImpl(spec, next, args, c)
	}
	if err != nil {
		fail(err.Error())
		return
	}
	content, err := jsonv.Encode(result)
	if err != nil {
		fail(fmt.Sprintf("tool %s returned a value that is not JSON: %v", c.Name, err))
		return
	}
	if err := tools.CheckResult(c.Name, content); err != nil {
		fail(err.Error())
		return
	}
	c.Content = string(content)
	next.SetActor("", c.Turn)
	e.cur = next
}

// callImpl runs a task-defined tool. fail(msg) becomes the tool error msg verbatim; any other
// error is a tool error too, and is kept as a script diagnostic for the validator.
func (e *run) callImpl(spec *dsl.ToolSpec, st *workspace.State, args *jsonv.Object, c *Call) (jsonv.Value, error) {
	kwargs := make([]starlark.Tuple, 0, args.Len())
	for _, m := range args.Members {
		kwargs = append(kwargs, starlark.Tuple{starlark.String(m.Key), starconv.FromJSON(m.Value)})
	}
	ws := wsmod.New(st, wsmod.Options{Initial: e.p.Base})
	v, err := dsl.Call(e.ctx, e.p.Limits, spec.Name, spec.Impl, starlark.Tuple{ws}, kwargs, e.p.prepare(nil))
	if err != nil {
		var ee *starlark.EvalError
		if errors.As(err, &ee) && isFail(ee) {
			return nil, errors.New(trimFail(ee.Msg))
		}
		d := dsl.ErrorDiag("solution-error", err)
		d.Message = fmt.Sprintf("tool %s crashed: %s", spec.Name, d.Message)
		c.ScriptErr = &d
		return nil, fmt.Errorf("tool %s failed: %s", spec.Name, dsl.ErrorDiag("script-error", err).Message)
	}
	j, err := starconv.ToJSON(v)
	if err != nil {
		return nil, fmt.Errorf("tool %s returned a value that is not JSON: %v", spec.Name, err)
	}
	return j, nil
}

// isFail reports whether the error was raised by fail() directly in the impl or below it.
func isFail(ee *starlark.EvalError) bool {
	stack := ee.CallStack
	return len(stack) > 0 && stack[len(stack)-1].Name == "fail"
}

func trimFail(s string) string {
	const p = "fail: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Robustness is the share of faulted attempts that a later call of the same tool recovered
// (1.0 when no fault fired).
func Robustness(calls []*Call) float64 {
	faults, recovered := 0, 0
	for i, c := range calls {
		if !c.Fault {
			continue
		}
		faults++
		for _, later := range calls[i+1:] {
			if later.Name == c.Name && later.Succeeded() {
				recovered++
				break
			}
		}
	}
	if faults == 0 {
		return 1
	}
	return round(float64(recovered) / float64(faults))
}

// epValue builds the verify context `ep` from what happened so far.
func (e *run) epValue() starlark.Value {
	replies := make([]starlark.Value, 0, len(e.res.Turns))
	for _, t := range e.res.Turns {
		if t.Answered {
			replies = append(replies, starlark.String(t.Reply))
		}
	}
	var last starlark.Value = starlark.None
	if len(replies) > 0 {
		last = replies[len(replies)-1]
	}
	return &epValue{turn: e.turn, replies: starlark.NewList(replies), reply: last, raw: e.res.Calls, turns: e.res.Turns, queried: e.queried}
}

func callValue(c *Call) starlark.Value {
	var res starlark.Value = starlark.None
	if r := c.Result(); r != nil {
		res = starconv.FromJSON(r)
	}
	var errv starlark.Value = starlark.None
	if c.IsError {
		errv = starlark.String(c.Error)
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"name":   starlark.String(c.Name),
		"args":   starconv.FromJSON(c.Args),
		"result": res,
		"error":  errv,
		"fault":  starlark.Bool(c.Fault),
		"turn":   starlark.MakeInt(c.Turn),
		"id":     starlark.String(c.ID),
	})
}

type epValue struct {
	turn    int
	replies *starlark.List
	reply   starlark.Value
	calls   *starlark.List
	raw     []*Call
	turns   []*TurnResult
	asks    *starlark.List
	queried map[string]bool
}

func (v *epValue) String() string        { return "<ep>" }
func (v *epValue) Type() string          { return "ep" }
func (v *epValue) Freeze()               {}
func (v *epValue) Truth() starlark.Bool  { return true }
func (v *epValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: ep") }
func (v *epValue) AttrNames() []string   { return epMembers.AttrNames() }

func (v *epValue) Attr(name string) (starlark.Value, error) { return epMembers.Attr(v, name) }

// epMembers is the one table of the `ep` value: its attributes and methods, the binding of the
// methods' arguments, and their documentation (Reference).
var epMembers = dsl.NewMembers("ep",
	dsl.Member[*epValue]{Func: dsl.Func{Name: "ep.turn",
		Doc: "Index of the turn being scored, from 0; in the final verifier the last turn's index; in a `user` function the turn being asked."},
		Get: func(v *epValue) starlark.Value { return starlark.MakeInt(v.turn) }},
	dsl.Member[*epValue]{Func: dsl.Func{Name: "ep.replies",
		Doc: "The agent's reply per turn so far (a first-turn `user` function sees `[]`)."},
		Get: func(v *epValue) starlark.Value { return v.replies }},
	dsl.Member[*epValue]{Func: dsl.Func{Name: "ep.reply",
		Doc: "The last reply, or None before the first one."},
		Get: func(v *epValue) starlark.Value { return v.reply }},
	dsl.Member[*epValue]{Func: dsl.Func{Name: "ep.calls",
		Doc: "Every tool call attempt so far, as structs with `id`, `name`, `args` (a dict, as the agent sent them), `result` (decoded, or None), `error` (a string, or None), `fault` (an injected transient error) and `turn`."},
		Get: (*epValue).callList},
	dsl.Member[*epValue]{Func: dsl.Func{Name: "ep.asks",
		Doc: "Every exchange with a simulated user so far, in order, as structs with `turn`, `round` (the user's answers before it in the turn), `said` (the agent's message), `answer` (\"\" when the user was done), `done` and `source` (`stand-in`, `model`, or `rounds` when they were spent). A verifier can require that a fact was asked for before it was used; the last exchange of a turn is the reply shown to the user."},
		Get: (*epValue).askList},
	dsl.Member[*epValue]{Func: dsl.Func{Name: "ep.called", Params: []dsl.Param{dsl.Req("name"), dsl.Rest("args")},
		Doc: "How many calls to `name` succeeded with at least these argument values."},
		Call: (*epValue).called},
)

// callList is ep.calls, built on first use: most verifiers never look at the calls.
func (v *epValue) callList() starlark.Value {
	if v.calls == nil {
		calls := make([]starlark.Value, len(v.raw))
		for i, c := range v.raw {
			calls[i] = callValue(c)
		}
		v.calls = starlark.NewList(calls)
	}
	return v.calls
}

// askList is ep.asks, built on first use.
func (v *epValue) askList() starlark.Value {
	if v.asks == nil {
		var asks []starlark.Value
		for _, t := range v.turns {
			for _, x := range t.Asks {
				asks = append(asks, starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
					"turn":   starlark.MakeInt(x.Turn),
					"round":  starlark.MakeInt(x.Round),
					"said":   starlark.String(x.Said),
					"answer": starlark.String(x.Content),
					"done":   starlark.Bool(x.Done),
					"source": starlark.String(x.Source),
				}))
			}
		}
		v.asks = starlark.NewList(asks)
	}
	return v.asks
}

// called counts successful calls to name whose arguments include the given values.
func (v *epValue) called(thread *starlark.Thread, a *dsl.Args) (starlark.Value, error) {
	name, err := a.Str("name")
	if err != nil {
		return nil, err
	}
	want, err := argsJSON("ep.called: "+name, a.Rest())
	if err != nil {
		return nil, err
	}
	if v.queried != nil {
		v.queried[name] = true
	}
	n := 0
	for _, c := range v.raw {
		if c.Name != name || !c.Succeeded() {
			continue
		}
		ok := true
		for _, w := range want.Members {
			got, present := c.Args.Get(w.Key)
			if !present || !jsonv.Equal(got, w.Value) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return starlark.MakeInt(n), nil
}
