package episode

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"go.starlark.net/starlark"
)

// How the models inside a task run (models.go has their types). The engine builds every request
// itself, from the declaration and the episode so far, so that a user model and a judge model
// are told the same whoever asks, and the hash of the request (RequestSHA256) pins what was
// asked: replay gives a recorded answer back only to the same request.
//
// A simulated user: each message an agent sends it goes through TurnContext.Ask, the final reply
// included (the engine asks with the reply when the agent's turn returns, unless the user is
// already done). The user answers at most Rounds times per turn; an Ask after that, or after the
// user said it was done, is recorded with Source "rounds" and asks nobody.
//
// A judge: judge() in a verifier asks the engine (dsl.Collector.Judge), which reports the
// verdict (OnJudge) before the verifier records its item.

// Simulated reports whether the turn's user is a simulated user, who answers the agent's
// messages within the turn (Ask).
func (tc *TurnContext) Simulated() bool { return tc.Turn.Sim != nil }

// Ask sends the agent's message to the turn's simulated user and returns the answer; done says
// the user has nothing more to say in this turn (answer is then ""): it is satisfied, or its
// rounds are spent. An agent that gets done ends its turn. Every call is recorded in
// TurnResult.Asks and reported (OnUserAsk) before Ask returns.
//
// A stand-in that fails, or a user model that fails, ends the episode: Ask returns the error (a
// *DiagError), and so does every later Ask, and the episode ends with it whatever the agent
// does. Asking in a turn without a simulated user is an error.
func (tc *TurnContext) Ask(said string) (answer string, done bool, err error) {
	switch {
	case tc.Turn.Sim == nil:
		return "", true, fmt.Errorf("turn %d has no simulated user: declare its user with simulated_user(...)", tc.Index)
	case tc.failed != nil:
		return "", true, tc.failed
	case tc.over:
		return "", true, fmt.Errorf("turn %d is over", tc.Index)
	}
	if err := tc.e.ctx.Err(); err != nil {
		return "", true, err
	}
	x, d := tc.e.exchange(tc, said)
	if d != nil {
		tc.failed = &DiagError{*d}
		return "", true, tc.failed
	}
	return x.Content, x.Done, nil
}

// exchange is one Ask: the answer of the model, the stand-in, or nobody when the rounds are
// spent.
func (e *run) exchange(tc *TurnContext, said string) (*UserAsk, *dsl.Diagnostic) {
	sim, tr := tc.Turn.Sim, tc.result
	x := &UserAsk{Turn: tc.Index, Round: tr.Rounds, Said: said, Calls: len(tc.e.res.Calls)}
	if tc.userDone || tr.Rounds >= sim.Rounds {
		x.Done, x.Source = true, "rounds"
	} else {
		x.Request = UserRequest(sim, tr.User, tr.Asks, said)
		x.RequestSHA256 = RequestSHA256(x.Request)
		if m := e.models; m != nil && m.User != nil {
			asked := *x
			if err := m.User(e.ctx, x); err != nil {
				return nil, fmtDiag(modelCode(err, "script-error"), "turn %d: simulated user: %v", tc.Index, err)
			}
			// what was asked stays as it was asked
			x.Turn, x.Round, x.Said, x.Calls, x.Request, x.RequestSHA256 = asked.Turn, asked.Round, asked.Said, asked.Calls, asked.Request, asked.RequestSHA256
			if x.Source == "" {
				x.Source = "model"
			}
		} else {
			answer, d := e.standIn(tc, said, x.Round)
			if d != nil {
				return nil, d
			}
			x.Content, x.Source = answer, "stand-in"
		}
		if c := strings.TrimSpace(x.Content); c == "" || c == DoneWord {
			x.Done = true
		}
		if x.Done {
			x.Content = ""
		} else {
			tr.Rounds++
		}
	}
	if x.Done {
		tc.userDone = true
	}
	tr.Asks = append(tr.Asks, x)
	if e.obs != nil {
		e.obs.OnUserAsk(x)
	}
	return x, nil
}

// standIn asks the simulated user's stand-in: stand_in(said, round) -> str or None.
func (e *run) standIn(tc *TurnContext, said string, round int) (string, *dsl.Diagnostic) {
	sim := tc.Turn.Sim
	v, err := dsl.Call(e.ctx, e.p.Limits, "stand_in", sim.StandIn, starlark.Tuple{starlark.String(said), starlark.MakeInt(round)}, nil, e.p.prepare(nil))
	if err != nil {
		d := dsl.ErrorDiag("script-error", err)
		if d.File == "" {
			d = d.At(sim.StandInPos())
		}
		d.Message = fmt.Sprintf("turn %d: simulated user: stand_in: %s", tc.Index, d.Message)
		return "", &d
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return "", nil
	case starlark.String:
		return string(x), nil
	}
	d := dsl.NewDiag("script-error", fmt.Sprintf("turn %d: simulated user: stand_in returned %s, want string or None", tc.Index, v.Type())).At(sim.StandInPos())
	return "", &d
}

// modelCode is the diagnostic code of a model inside the task that failed: the code the error
// names (a CodedError, such as a request that failed for good: model-error), else fallback.
func modelCode(err error, fallback string) string {
	var ce CodedError
	if errors.As(err, &ce) {
		if _, ok := dsl.CodeByID(ce.DiagCode()); ok {
			return ce.DiagCode()
		}
	}
	return fallback
}

// judge is the judge of the verifier of turn (nil: the task's final verifier): a judge model
// when RunOptions.Models has one, else the verifier's stand-in.
func (e *run) judge(turn *int) func(*starlark.Thread, dsl.JudgeQuery) (dsl.Verdict, error) {
	return func(th *starlark.Thread, q dsl.JudgeQuery) (dsl.Verdict, error) {
		rubric := q.RubricWithClaims()
		req := JudgeRequest(rubric, q.Text)
		j := &JudgeCall{Rubric: rubric, Text: q.Text, Request: req, RequestSHA256: RequestSHA256(req)}
		if turn != nil {
			j.Turn = intPtr(*turn)
		}
		if m := e.models; m != nil && m.Judge != nil {
			asked := *j
			resume := dsl.Waiting(th) // the verifier's wall-clock limit does not count the model's time
			err := m.Judge(e.ctx, j)
			resume()
			if err != nil {
				return dsl.Verdict{}, &judgeError{err}
			}
			j.Turn, j.Rubric, j.Text, j.Request, j.RequestSHA256 = asked.Turn, asked.Rubric, asked.Text, asked.Request, asked.RequestSHA256
			if j.Source == "" {
				j.Source = "model"
			}
		} else {
			passed, reason, d := e.judgeStandIn(th, q)
			if d != nil {
				return dsl.Verdict{}, &DiagError{*d}
			}
			j.Passed, j.Reason, j.Source = passed, reason, "stand-in"
			if passed {
				j.Score = 1
			}
		}
		j.Score = clampScore(j.Score, j.Passed)
		if e.obs != nil {
			e.obs.OnJudge(j)
		}
		return dsl.Verdict{Passed: j.Passed, Score: j.Score, Reason: j.Reason}, nil
	}
}

// judgeError is a judge model's failure, as judge() reports it in the verifier.
type judgeError struct{ err error }

func (e *judgeError) Error() string { return "judge: " + e.err.Error() }
func (e *judgeError) Unwrap() error { return e.err }

// judgeStandIn asks the verifier's stand-in: the claims the text must make (checked on the
// verifier's thread th, so that the validator sees them), then stand_in(text) -> bool or (bool,
// reason) when there is one. Both must pass.
func (e *run) judgeStandIn(th *starlark.Thread, q dsl.JudgeQuery) (bool, string, *dsl.Diagnostic) {
	var reasons []string
	for _, c := range q.Claims {
		v, err := c.Holds(th, q.Text)
		if err != nil {
			d := dsl.NewDiag("verify-error", "judge: claims: "+err.Error()).At(q.Pos)
			return false, "", &d
		}
		if !v.OK {
			return false, v.Why, nil
		}
		reasons = append(reasons, v.Why)
	}
	if q.StandIn == nil {
		return true, strings.Join(reasons, "; "), nil
	}
	v, err := dsl.Call(e.ctx, e.p.Limits, "stand_in", q.StandIn, starlark.Tuple{starlark.String(q.Text)}, nil, e.p.prepare(nil))
	if err != nil {
		d := dsl.ErrorDiag("verify-error", err)
		if d.File == "" {
			d = d.At(dsl.FuncPos(q.StandIn, q.Pos))
		}
		d.Message = "judge: stand_in: " + d.Message
		return false, "", &d
	}
	passed, reason, err := dsl.StandInVerdict(v)
	if err != nil {
		d := dsl.NewDiag("verify-error", "judge: stand_in "+err.Error()).At(dsl.FuncPos(q.StandIn, q.Pos))
		return false, "", &d
	}
	return passed, reason, nil
}

// clampScore keeps a judge's score in [0, 1]; a score that is not a number is the verdict's.
func clampScore(score float64, passed bool) float64 {
	switch {
	case math.IsNaN(score):
		if passed {
			return 1
		}
		return 0
	case score < 0:
		return 0
	case score > 1:
		return 1
	}
	return score
}

// UserRequest is the chat-completions conversation a user model is sent for the agent's message
// said: a system message that states who the user is, what they want, what they know and how
// to answer, then the conversation from the user's side (the user's own words are "assistant"
// messages, the agent's are "user" ones): the opening, each earlier exchange of the turn that
// got an answer (exchanges, in order), and said. It states only what the user knows: nothing of
// the task's verifier or solution.
func UserRequest(sim *dsl.SimUser, opening string, exchanges []*UserAsk, said string) []jsonv.Value {
	msgs := []jsonv.Value{chatMessage("system", userSystem(sim)), chatMessage("assistant", opening)}
	for _, x := range exchanges {
		if x.Done {
			continue
		}
		msgs = append(msgs, chatMessage("user", x.Said), chatMessage("assistant", x.Content))
	}
	return append(msgs, chatMessage("user", said))
}

// DoneWord is what a user model answers when it is satisfied or has nothing to add.
const DoneWord = "DONE"

func userSystem(sim *dsl.SimUser) string {
	var b strings.Builder
	b.WriteString("You are role-playing a person who is chatting with an AI assistant. You are that person, not an assistant: do not offer help and do not do the assistant's work.\n\n")
	fmt.Fprintf(&b, "Who you are: %s\n", strings.TrimSpace(sim.Persona))
	fmt.Fprintf(&b, "What you want from this conversation: %s\n", strings.TrimSpace(sim.Goal))
	if w := strings.TrimSpace(sim.DoneWhen); w != "" {
		fmt.Fprintf(&b, "You are satisfied when: %s\n", w)
	}
	if len(sim.Facts) > 0 {
		b.WriteString("\nWhat you know (reveal a fact only when the assistant asks for it, in your own words):\n")
		for _, f := range sim.Facts {
			fmt.Fprintf(&b, "- %s: %s\n", f.Key, f.Value)
		}
	} else {
		b.WriteString("\nYou know nothing more than what your first message says.\n")
	}
	b.WriteString("\nThe conversation starts with your own first message. Answer the assistant's last message briefly, as this person, in plain text. ")
	fmt.Fprintf(&b, "When you are satisfied or have nothing to add, answer exactly %s.", DoneWord)
	return b.String()
}

// JudgeRequest is the chat-completions conversation a judge model is sent: a strict grader's
// instructions, then the rubric and the text.
func JudgeRequest(rubric, text string) []jsonv.Value {
	return []jsonv.Value{
		chatMessage("system", "You are a strict grader. You are given a rubric and a text. Decide whether the text meets the rubric; when in doubt, it does not. "+
			`Answer with one JSON object and nothing else: {"passed": true or false, "score": a number from 0 to 1, "reason": "one line"}.`),
		chatMessage("user", "Rubric:\n"+rubric+"\n\nText:\n"+text),
	}
}

// RequestSHA256 is the hex SHA-256 of a request's JSON encoding (jsonv), which a trace records
// and replay compares.
func RequestSHA256(req []jsonv.Value) string {
	sum := sha256.Sum256([]byte(jsonv.MustEncode(req)))
	return hex.EncodeToString(sum[:])
}

func chatMessage(role, content string) *jsonv.Object {
	return jsonv.NewObject("role", role, "content", content)
}
