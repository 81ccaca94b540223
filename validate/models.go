package validate

import (
	"context"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// The check with the task models (Options.Models). A task is first checked with the stand-ins of
// its simulated users and judges, exactly as without models; a task the models would answer
// for is then checked again, every run of it with the models answering. The second check finds
// what the stand-ins hide: a reference that only passes because the stand-in tells it what it
// asks, a verifier whose judge a real model reads differently.

// needsModels reports whether m would answer for something in t: a simulated user of one of its
// turns (m.User), or a judge its verifiers asked in the check with the stand-ins (m.Judge; a
// judge() call is only known when it runs).
func needsModels(t *dsl.Task, m *episode.Models, judged bool) bool {
	if m.Judge != nil && judged {
		return true
	}
	return m.User != nil && t.Simulated()
}

// checkWithModels checks the task again with the models answering, and adds what that check
// finds and the check with the stand-ins did not (the same diagnostic is not said twice), its
// message prefixed with ModelsPrefix. A model request that failed for good is said once: the
// check could not finish, which says nothing about the task.
func (v *taskCheck) checkWithModels() {
	g := &guard{models: v.opts.Models}
	m := &taskCheck{ctx: v.ctx, t: v.t, opts: v.opts, rep: &TaskReport{Task: v.t.Name, File: v.t.File}, models: g.wrap()}
	m.run()
	have := map[dsl.Diagnostic]bool{}
	for _, d := range v.rep.Diagnostics {
		have[d] = true
	}
	var failed *dsl.Diagnostic
	for _, d := range m.rep.Diagnostics {
		switch {
		case have[d]:
			continue
		case d.Code == episode.ModelError:
			if failed == nil {
				failed = &d
			}
			continue
		}
		have[d] = true
		d.Message = ModelsPrefix + d.Message
		v.rep.Diagnostics = append(v.rep.Diagnostics, d)
	}
	if err := g.failure(); failed == nil && err != nil && v.ctx.Err() == nil {
		// the failure ended a run under another code (a verifier that caught it, say)
		d := dsl.NewDiag(episode.ModelError, err.Error()).At(v.t.Pos)
		failed = &d
	}
	if failed != nil {
		d := *failed
		d.Message = ModelsPrefix + "a model's request failed for good, so the task was not checked against the models to the end (this says nothing about the task; the check with the stand-ins stands): " + d.Message
		v.rep.Diagnostics = append(v.rep.Diagnostics, d)
	}
}

// guard passes the requests of one check on to the models until one fails; from then on every
// request fails at once with that error, so that a model that is down costs one failed request
// (and its retries) per task, not one per run.
type guard struct {
	models *episode.Models

	mu  sync.Mutex
	err error
}

func (g *guard) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// pass runs one request unless an earlier one failed, and remembers its failure.
func (g *guard) pass(ask func() error) error {
	if err := g.failure(); err != nil {
		return err
	}
	err := ask()
	if err != nil {
		g.mu.Lock()
		if g.err == nil {
			g.err = err
		}
		g.mu.Unlock()
	}
	return err
}

// wrap is the guarded models.
func (g *guard) wrap() *episode.Models {
	out := &episode.Models{}
	if user := g.models.User; user != nil {
		out.User = func(ctx context.Context, x *episode.UserAsk) error {
			return g.pass(func() error { return user(ctx, x) })
		}
	}
	if judge := g.models.Judge; judge != nil {
		out.Judge = func(ctx context.Context, j *episode.JudgeCall) error {
			return g.pass(func() error { return judge(ctx, j) })
		}
	}
	return out
}

// judgeWatch is an observer that notes whether a judge gave a verdict. The runs of a check follow
// one another, so it needs no lock.
type judgeWatch struct{ judged bool }

func (w *judgeWatch) OnJudge(*episode.JudgeCall)                 { w.judged = true }
func (w *judgeWatch) OnUser(int, string, string, string)         {}
func (w *judgeWatch) OnAssistant(int, *episode.AssistantMessage) {}
func (w *judgeWatch) OnNotRun(int, string, string)               {}
func (w *judgeWatch) OnUserAsk(*episode.UserAsk)                 {}
func (w *judgeWatch) OnCall(*episode.Call)                       {}
func (w *judgeWatch) OnResult(*episode.Call)                     {}
func (w *judgeWatch) OnReply(int, string)                        {}
func (w *judgeWatch) OnTurnEnd(*episode.TurnResult)              {}
