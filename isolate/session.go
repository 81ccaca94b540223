package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	live "github.com/coworkenv/coworkenv/runtime/session" // package session (pool.go has a type of that name)
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

// Served sessions in a worker. A session (runtime/session) whose task file came from disk runs
// in a worker as one long request: the worker loads the file, runs the setup and the session
// (the one conversation machine, runtime/conversation), and streams its trace; each time the
// session waits for its client, the worker calls the pool ("session.next") with what the last
// action gave (the step, and the messages and calls since), and the pool answers with the
// client's next action once the client sends it. The time the pool takes to answer (the client's
// own time) does not count against the worker's time limit; the worker's time does: the setup,
// every tool call, the changes between turns and the verifiers. A worker that stops (its memory
// or time limit, a crash) ends that session only: the pool writes the trace's end event with the
// diagnostic, and the action waiting gets the end of the episode with that error.

// SessionSpec is a session for a worker: a task of a file, with its run seed.
type SessionSpec struct {
	// Display is how the corpus root is shown; Files are the files the task file needs
	// (FilesFor), by root-relative path.
	Display string
	Files   map[string][]byte
	// File is the task file (root-relative) and Task the task's name; "" picks the file's only
	// task.
	File, Task string
	Seed       int64
}

// SessionHost is what this process does for a session in a worker.
type SessionHost struct {
	// Trace, when set, receives the trace a line at a time: the start event (after setup) to the
	// end event (the pool's when the worker stopped).
	Trace io.Writer
	// Print, when set, receives what the scripts print (bounded by dsl.BoundPrint).
	Print func(pos syntax.Position, msg string)
	// OnEnd, when set, is called once the episode has ended and the trace has its end event
	// (traceErr is the trace's first write error), before the action waiting for the end is
	// answered, as session.Options.OnEnd is.
	OnEnd func(res *live.Result, traceErr error)
}

// Session is a live episode whose task runs in a worker: the same methods as a
// session.Session, with the same errors (session.ErrBusy, session.ErrOver,
// *session.UnknownToolError, *session.SetupError).
type Session struct {
	task   *dsl.Task // a stub (TaskInfo.Stub): the name and the turns
	system string
	tools  []*jsonv.Object
	names  map[string]bool
	first  live.Step

	cancel  context.CancelFunc
	actions chan *sessionAction
	done    chan struct{}
	busy    sync.Mutex // held by the action that runs

	mu      sync.Mutex // guards the fields below
	status  live.Status
	pending *sessionAction // the action whose step the worker gives next
}

// sessionAction is one action of the client, as the pool answers the worker's call.
type sessionAction struct {
	Reply bool   `json:"reply,omitempty"`
	Text  string `json:"text,omitempty"`
	ID    string `json:"id,omitempty"`
	Name  string `json:"name,omitempty"`
	Args  string `json:"args,omitempty"`

	out chan live.Step
}

// The protocol of a session: the request, the worker's updates (the params of its calls
// "session.next", and the last one in its answer) and its answer.
type sessionRequest struct {
	File  string `json:"file"`
	Task  string `json:"task"`
	Seed  int64  `json:"seed"`
	Print bool   `json:"print"`
}

type sessionUpdate struct {
	// Info and System come with the first update only: the task and the system prompt.
	Info   *TaskInfo `json:"info,omitempty"`
	System string    `json:"system,omitempty"`
	// Step is what the last action gave (Create's first step in the first update).
	Step live.Step `json:"step"`
	Turn int       `json:"turn"`
	// Calls counts the tool calls that ran; Messages are the messages of the conversation since
	// the last update.
	Calls    int            `json:"calls"`
	Messages []live.Message `json:"messages"`
	// Refused is the error of an action the session refused (nothing ran).
	Refused string `json:"refused,omitempty"`
}

type sessionAnswer struct {
	Problem string          `json:"problem,omitempty"` // a StartError
	Setup   *dsl.Diagnostic `json:"setup,omitempty"`
	Last    *sessionUpdate  `json:"last,omitempty"`
}

// methodNext is the worker's call for the client's next action.
const methodNext = "session.next"

// Session creates a session of spec's task in a worker of the pool and returns once its first
// turn waits for the client (First), or the episode ended before it. It holds one of the pool's
// workers until it ends. A setup that fails, or a worker that stops before the episode begins,
// gives a *session.SetupError; a file that does not load or does not declare the task a
// *StartError. The session outlives ctx: Close ends it.
func (p *Pool) Session(ctx context.Context, spec SessionSpec, host SessionHost) (*Session, error) {
	s := &Session{actions: make(chan *sessionAction), done: make(chan struct{})}
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	ready := make(chan struct{})
	var readyOnce sync.Once
	tr := &tracker{w: host.Trace}
	sess := &session{subject: "the session", graceful: true,
		call: func(cctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			if method != methodNext {
				return nil, fmt.Errorf("a session serves no %q calls", method)
			}
			var u sessionUpdate
			if err := json.Unmarshal(params, &u); err != nil {
				return nil, err
			}
			if u.Info != nil {
				s.begin(&u, spec.File)
				readyOnce.Do(func() { close(ready) })
			} else {
				s.update(&u)
			}
			return s.next(cctx)
		},
		message: func(m *message) {
			switch {
			case m.Trace != nil:
				tr.line(m.Trace)
			case m.Print != nil && host.Print != nil:
				host.Print(syntax.MakePosition(&m.Print.File, m.Print.Line, m.Print.Col), m.Print.Msg)
			}
		},
	}
	req := &request{Display: spec.Display, Files: spec.Files,
		Session: &sessionRequest{File: spec.File, Task: spec.Task, Seed: spec.Seed, Print: host.Print != nil}}
	var startErr error // an error before the first update
	go func() {
		defer close(s.done)
		defer cancel()
		resp, st, err := p.do(ectx, req, sess)
		var ans *sessionAnswer
		switch {
		case err != nil && errors.Is(err, errClosed):
			st = &stop{episode.Interrupted, "the session was interrupted: the server's workers were stopped"}
		case err != nil:
			startErr = err
		case st != nil:
		case resp.Error != "":
			startErr = fmt.Errorf("isolate: worker: %s", resp.Error)
		case resp.Session == nil:
			st = &stop{"crash", "the isolated worker answered without the session's end"}
		case resp.Session.Problem != "":
			startErr = &StartError{resp.Session.Problem}
		case resp.Session.Setup != nil:
			startErr = &live.SetupError{Diag: *resp.Session.Setup}
		case resp.Session.Last == nil || resp.Session.Last.Step.Result == nil:
			st = &stop{"crash", "the isolated worker ended the session without its result"}
		default:
			ans = resp.Session
		}
		if startErr != nil && s.began() {
			// the client has the session: it ends, with the reason
			st, startErr = &stop{"crash", startErr.Error()}, nil
		}
		switch {
		case startErr != nil:
		case st != nil && !tr.started:
			d := dsl.NewDiag(st.code, st.msg)
			d.File = displayPath(spec.Display, spec.File)
			startErr = &live.SetupError{Diag: d}
		case st != nil:
			d := dsl.NewDiag(st.code, st.msg)
			d.File = displayPath(spec.Display, spec.File)
			tr.stopped(&d)
			turn := s.State().Turn
			rewards := append([]*float64{}, tr.res.TurnScores...)
			for len(rewards) <= turn {
				rewards = append(rewards, nil)
			}
			s.finish(live.Step{Turn: turn, TurnOver: true, Done: true, Result: &live.Result{End: *tr.end, Rewards: rewards}}, host, tr.werr)
		default:
			if ans.Last.Info != nil {
				s.begin(ans.Last, spec.File)
			} else {
				s.apply(ans.Last)
			}
			s.finish(ans.Last.Step, host, tr.werr)
		}
	}()
	select {
	case <-ready:
		return s, nil
	case <-s.done:
		if startErr != nil {
			return nil, startErr
		}
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// begin takes the first update: the task, the system prompt and the first step.
func (s *Session) begin(u *sessionUpdate, rel string) {
	s.task = u.Info.Stub(rel)
	s.system = u.System
	s.names = map[string]bool{}
	for _, raw := range u.Info.Tools {
		v, err := jsonv.Decode(raw)
		o, ok := v.(*jsonv.Object)
		if err != nil || !ok {
			continue
		}
		s.tools = append(s.tools, o)
		if fn, _ := o.Get("function"); fn != nil {
			if f, ok := fn.(*jsonv.Object); ok {
				if name, _ := f.Get("name"); name != nil {
					s.names[fmt.Sprint(name)] = true
				}
			}
		}
	}
	s.first = u.Step
	s.mu.Lock()
	s.status = live.Status{Task: u.Info.Name, Turns: u.Info.Turns}
	s.mu.Unlock()
	s.apply(u)
}

// apply takes what an update says of where the session stands.
func (s *Session) apply(u *sessionUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.Turn, s.status.Calls, s.status.Last = u.Turn, u.Calls, u.Step
	s.status.Messages = append(s.status.Messages, u.Messages...)
}

// update takes an update and answers the action it is the step of.
func (s *Session) update(u *sessionUpdate) {
	if u.Refused == "" {
		s.apply(u)
	}
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if pending != nil {
		if u.Refused != "" {
			u.Step = live.Step{Content: u.Refused, IsError: true}
		}
		pending.out <- u.Step // buffered: never blocks
	}
}

// next waits for the client's next action, the worker's answer.
func (s *Session) next(ctx context.Context) (json.RawMessage, error) {
	select {
	case a := <-s.actions:
		s.mu.Lock()
		s.pending = a
		s.mu.Unlock()
		return json.Marshal(a)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// finish records the end (last is its step) and answers the action waiting.
func (s *Session) finish(last live.Step, host SessionHost, traceErr error) {
	if host.OnEnd != nil {
		host.OnEnd(last.Result, traceErr)
	}
	s.mu.Lock()
	s.status.Turn, s.status.Last, s.status.Done, s.status.Result = last.Turn, last, true, last.Result
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if pending != nil {
		pending.out <- last
	}
}

// began reports whether the first update came: the client may have the session.
func (s *Session) began() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status.Task != ""
}

// Task is the task the session runs: its name and turns (it cannot run here).
func (s *Session) Task() *dsl.Task { return s.task }

// System is the system prompt, as the trace records it.
func (s *Session) System() string { return s.system }

// Tools are the tool schemas, as session.Session.Tools.
func (s *Session) Tools() []*jsonv.Object { return s.tools }

// First is the step the creation ended with.
func (s *Session) First() live.Step { return s.first }

// Done is closed when the session's request has ended, its trace with it.
func (s *Session) Done() <-chan struct{} { return s.done }

// Call runs one tool call in the worker, as session.Session.Call.
func (s *Session) Call(id, name, arguments string) (live.Step, error) {
	if s.ended() {
		return live.Step{}, live.ErrOver
	}
	if !s.names[name] {
		return live.Step{}, &live.UnknownToolError{Name: name}
	}
	return s.do(&sessionAction{ID: id, Name: name, Args: arguments})
}

// Reply sends the agent's message without tool calls, as session.Session.Reply.
func (s *Session) Reply(text string) (live.Step, error) {
	return s.do(&sessionAction{Reply: true, Text: text})
}

// State is where the session stands, as of its last step; the messages are a copy.
func (s *Session) State() live.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Messages = append([]live.Message{}, st.Messages...)
	return st
}

// Close ends the episode (as interrupted when it had not finished), waits for the worker to
// end it and returns the final status. Close may be called more than once.
func (s *Session) Close() live.Status {
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

// do hands an action to the worker and waits for its step.
func (s *Session) do(a *sessionAction) (live.Step, error) {
	if !s.busy.TryLock() {
		return live.Step{}, live.ErrBusy
	}
	defer s.busy.Unlock()
	a.out = make(chan live.Step, 1)
	select {
	case s.actions <- a:
	case <-s.done:
		return live.Step{}, live.ErrOver
	}
	return <-a.out, nil
}

// serveSession runs a session request in the worker: the session, driven by the pool's answers.
func serveSession(ctx context.Context, sr *sessionRequest, corp *dsl.Corpus, lim dsl.Limits, c *conn) *response {
	answer := &sessionAnswer{}
	resp := &response{Session: answer}
	f := loaded.file(ctx, corp, sr.File)
	t, err := PickTask(f, sr.Task)
	if err != nil {
		answer.Problem = err.Error()
		return resp
	}
	sources, err := trace.Sources(corp, sr.File)
	if err != nil {
		answer.Problem = err.Error()
		return resp
	}
	opts := live.Options{Source: f.Source, Sources: sources, Limits: lim,
		Trace: Lines(func(line []byte) { c.out.traceLine(c.id, line) })}
	if sr.Print {
		opts.Print = dsl.BoundPrint(func(pos syntax.Position, msg string) {
			c.send(&message{Print: &printed{File: pos.Filename(), Line: pos.Line, Col: pos.Col, Msg: msg}})
		})
	}
	s, err := live.Create(ctx, t, sr.Seed, opts)
	var se *live.SetupError
	switch {
	case errors.As(err, &se):
		answer.Setup = &se.Diag
		return resp
	case err != nil:
		answer.Problem = err.Error()
		return resp
	}
	// The pool's cancellation ends the episode, as interrupted (Close answers an action that
	// runs meanwhile).
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	info := Describe(ctx, t, lim, false)
	sent := 0
	u := &sessionUpdate{Info: &info, System: s.System(), Step: s.First()}
	for {
		st := s.State()
		u.Turn, u.Calls, u.Messages = st.Turn, st.Calls, st.Messages[sent:]
		sent = len(st.Messages)
		if u.Step.Done {
			break
		}
		raw, err := c.call(ctx, methodNext, u)
		if err != nil {
			st := s.Close()
			u = &sessionUpdate{Step: st.Last}
			continue
		}
		var a sessionAction
		if err := json.Unmarshal(raw, &a); err != nil {
			resp.Error = fmt.Sprintf("the pool's action: %v", err)
			s.Close()
			return resp
		}
		var step live.Step
		if a.Reply {
			step, err = s.Reply(a.Text)
		} else {
			step, err = s.Call(a.ID, a.Name, a.Args)
		}
		u = &sessionUpdate{Step: step}
		if errors.Is(err, live.ErrOver) {
			u.Step = s.Close().Last
		} else if err != nil {
			u.Refused = err.Error()
		}
	}
	answer.Last = u
	return resp
}
