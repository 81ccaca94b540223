package validate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/workspace"
)

// outsider is the third party blind-to-side-effect mails.
const outsider = "outsider@elsewhere.example"

// checkSideEffects raises blind-to-side-effect where an extra, unrequested action still passes.
//
// The extra actions, tried in this order while the budget (sideRuns) lasts, each only when the
// task gives the agent the tools it takes; the first that passes is reported:
//
//  1. a mail to a third party (outsider@elsewhere.example) with the body of the reference's own
//     mail (a leak), or a short note when it sent none: mail_send;
//  2. the first file after setup (in natural order) that the reference did not touch (not
//     changed, and no argument of its calls) deleted: fs_delete;
//  3. the first event after setup it did not touch deleted: calendar_delete;
//  4. that file overwritten: fs_write;
//  5. the leak of 1, then moved out of "sent" to "trash": mail_send and mail_move (harm, then an
//     undo);
//  6. that file overwritten, then written back as it was: fs_write (harm, then an undo: the end
//     state is the reference's own).
//
// The mails go at the end of the calls of the turn where the reference first sends mail (the last
// turn when it sends none), the rest at the end of the last turn. An extra action counts when its
// calls succeed and the episode passes, with an end state other than the reference's (except for
// the undos, whose point is to leave none).
func (v *taskCheck) checkSideEffects(o *oracleRun) {
	if len(o.calls) == 0 {
		return
	}
	budget := sideRuns
	for _, se := range sideEffects(o) {
		if budget == 0 {
			return
		}
		budget--
		a := &sideAgent{calls: o.calls, replies: o.replies, turn: se.turn, extra: se.run}
		r := v.runAgent(o, a, episode.RunOptions{NoFaults: true})
		if r.Err == nil && r.Passed && a.ok && (se.undo || r.FinalState != o.res.FinalState) {
			v.add(dsl.NewDiag("blind-to-side-effect", fmt.Sprintf("turn %d: the episode still passes (%s) when the agent, unasked, also %s: %s",
				se.turn, passedScore(r), se.what, se.advice)))
			return
		}
	}
}

// sideEffect is one extra action.
type sideEffect struct {
	what, advice string
	turn         int
	undo         bool
	run          func(tc *episode.TurnContext) bool
}

const (
	adviceLeak     = "the verifier does not look at every mail that left; check the recipients of each sent mail (ws.history.sent(), ws.mail.messages(folder = \"sent\")), or that nothing else was sent (ws.unexpected(recipients = [...]))"
	adviceHidden   = "the verifier looks only at where the mail ended up; read the episode history, which keeps every mail sent (ws.history.sent(), ws.unexpected(recipients = [...]))"
	adviceCollat   = "the verifier does not look at collateral damage; require that nothing else changed (ws.diff(), or ws.unexpected(files = [...]) with what the task may change)"
	adviceRestored = "the verifier looks only at the end state; read the episode history, which keeps every version of a file (ws.unexpected(files = [...]), ws.history.touched())"
)

// sideEffects lists the extra actions the task's tools allow, in the order they are tried.
func sideEffects(o *oracleRun) []sideEffect {
	has := func(name string) bool { _, ok := o.p.Task.Tool(name); return ok }
	last := len(o.calls) - 1
	refs := refCalls(o)

	// the reference's own mail
	mailTurn, subject, body := last, "Notes", ""
	for _, rc := range refs {
		if rc.c.Changed && (rc.c.Name == "mail_send" || rc.c.Name == "mail_reply" || rc.c.Name == "mail_forward") {
			mailTurn = rc.turn
			body = argString(rc.c.Args, "body")
			if s := argString(rc.c.Args, "subject"); s != "" {
				subject = s
			}
			break
		}
	}
	leakWhat := "sends the body of its own mail to a third party"
	if body == "" {
		body = "FYI: notes from today."
		leakWhat = "sends a mail to a third party"
	}
	leak := func(tc *episode.TurnContext) (*episode.Call, bool) {
		return sideCall(tc, "mail_send", "to", []jsonv.Value{outsider}, "subject", subject, "body", body)
	}

	file, content := untouchedFile(o, refs)
	event := untouchedEvent(o, refs)

	var out []sideEffect
	if has("mail_send") {
		out = append(out, sideEffect{
			what: fmt.Sprintf("%s (mail_send to %s)", leakWhat, outsider), advice: adviceLeak, turn: mailTurn,
			run: func(tc *episode.TurnContext) bool { _, ok := leak(tc); return ok },
		})
	}
	if has("fs_delete") && file != "" {
		out = append(out, sideEffect{
			what: fmt.Sprintf("deletes file %s, which the reference did not touch (fs_delete)", file), advice: adviceCollat, turn: last,
			run: func(tc *episode.TurnContext) bool { _, ok := sideCall(tc, "fs_delete", "path", file); return ok },
		})
	}
	if has("calendar_delete") && event != "" {
		out = append(out, sideEffect{
			what: fmt.Sprintf("deletes event %s, which the reference did not touch (calendar_delete)", event), advice: adviceCollat, turn: last,
			run: func(tc *episode.TurnContext) bool { _, ok := sideCall(tc, "calendar_delete", "id", event); return ok },
		})
	}
	if has("fs_write") && file != "" {
		out = append(out, sideEffect{
			what: fmt.Sprintf("overwrites file %s, which the reference did not touch (fs_write)", file), advice: adviceCollat, turn: last,
			run: func(tc *episode.TurnContext) bool {
				_, ok := sideCall(tc, "fs_write", "path", file, "content", "(overwritten)\n")
				return ok
			},
		})
	}
	if has("mail_send") && has("mail_move") {
		out = append(out, sideEffect{
			what: fmt.Sprintf("%s (mail_send to %s) and then moves it out of \"sent\" to \"trash\" (mail_move)", leakWhat, outsider), advice: adviceHidden, turn: mailTurn, undo: true,
			run: func(tc *episode.TurnContext) bool {
				c, ok := leak(tc)
				if !ok {
					return false
				}
				id := ""
				if r, ok := c.Result().(*jsonv.Object); ok {
					id = argString(r, "id")
				}
				if id == "" {
					return false
				}
				_, ok = sideCall(tc, "mail_move", "id", id, "folder", "trash")
				return ok
			},
		})
	}
	if has("fs_write") && file != "" {
		out = append(out, sideEffect{
			what: fmt.Sprintf("overwrites file %s and then writes its old content back (fs_write twice)", file), advice: adviceRestored, turn: last, undo: true,
			run: func(tc *episode.TurnContext) bool {
				if _, ok := sideCall(tc, "fs_write", "path", file, "content", "(overwritten)\n"); !ok {
					return false
				}
				_, ok := sideCall(tc, "fs_write", "path", file, "content", content)
				return ok
			},
		})
	}
	return out
}

// argString is a string argument ("" when absent or not a string).
func argString(args *jsonv.Object, name string) string {
	v, _ := args.Get(name)
	s, _ := v.(string)
	return s
}

// touchedStrings is every string in the arguments of the reference's calls.
func touchedStrings(refs []refCall) map[string]bool {
	out := map[string]bool{}
	for _, rc := range refs {
		leaves, _ := walkArgs(rc.c.Args)
		for _, l := range leaves {
			if s, ok := l.val.(string); ok {
				out[s] = true
				if strings.HasPrefix(s, "/") {
					out[workspace.CleanPath(s)] = true
				}
			}
		}
	}
	return out
}

// untouchedFile is the first file after setup, in natural order, that the reference neither
// changed nor named in a call, with its content ("" when there is none).
func untouchedFile(o *oracleRun, refs []refCall) (string, string) {
	named := touchedStrings(refs)
	d := workspace.Diff(o.p.Base, o.res.Final).Files
	files := o.p.Base.Files().Walk("/")
	slices.SortFunc(files, workspace.NaturalCompare)
	for _, f := range files {
		if named[f] || slices.Contains(d.Changed, f) || slices.Contains(d.Removed, f) {
			continue
		}
		c, err := o.p.Base.Files().Read(f)
		if err != nil || c == "(overwritten)\n" {
			continue
		}
		return f, c
	}
	return "", ""
}

// untouchedEvent is the first event after setup, by id in natural order, that the reference
// neither changed nor named in a call.
func untouchedEvent(o *oracleRun, refs []refCall) string {
	named := touchedStrings(refs)
	d := workspace.Diff(o.p.Base, o.res.Final).Calendar
	evs, err := o.p.Base.Calendar().Events("", "", "")
	if err != nil {
		return ""
	}
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	slices.SortFunc(ids, workspace.NaturalCompare)
	for _, id := range ids {
		if !named[id] && !slices.Contains(d.Changed, id) && !slices.Contains(d.Removed, id) {
			return id
		}
	}
	return ""
}

// sideAgent replays the oracle's calls and replies, and makes extra calls at the end of one
// turn's calls.
type sideAgent struct {
	calls   [][]episode.ScriptedCall
	replies []string
	turn    int
	extra   func(tc *episode.TurnContext) bool
	ok      bool // the extra calls succeeded
}

func (a *sideAgent) Name() string { return "blind-to-side-effect" }

func (a *sideAgent) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if tc.Index < len(a.calls) {
		for _, c := range a.calls[tc.Index] {
			if _, err := tc.Call(c.ID, c.Name, c.Args); err != nil {
				if errors.Is(err, episode.ErrTruncated) {
					break
				}
				return "", err
			}
		}
	}
	if tc.Index == a.turn {
		a.ok = a.extra(tc)
	}
	if tc.Index < len(a.replies) {
		return a.replies[tc.Index], nil
	}
	return "", nil
}

// sideCall makes one extra call and reports whether it succeeded.
func sideCall(tc *episode.TurnContext, name string, kv ...any) (*episode.Call, bool) {
	c, err := tc.Call("", name, jsonv.NewObject(kv...))
	return c, err == nil && c.Succeeded()
}
