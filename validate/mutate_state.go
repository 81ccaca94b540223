package validate

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// checkStateAttacks raises blind-to-side-effect for the wrong actions on what the reference
// itself changes, tried in this order while stateRuns lasts (the first that passes is reported):
//
//  1. another field: after a reference call that changed an existing entry, the same call again
//     with one more optional argument the reference left out, set wrong (an enum's other value,
//     "CANCELLED" for a text, a flag flipped): a ticket also closed, an event also retitled;
//  2. another turn: in a task of several turns, a mail or post the reference sends in a later
//     turn sent already at the end of the first one;
//  3. wrong, then right: before a reference call that writes a file or changes an existing entry,
//     the same call with its content made wrong (a value replaced by another, or a line added),
//     so that the right version follows the wrong one;
//  4. wrong, hidden, then right: before a mail the reference sends, the same mail with its content
//     made wrong, then moved to the trash (by the id the reference's own mail had: ids are given
//     in order), so that the sent folder holds only the right one at the end.
//
// An attack counts when every call succeeds and the episode passes.
func (v *taskCheck) checkStateAttacks(o *oracleRun) {
	budget := stateRuns
	try := func(what string, turn int, calls [][]episode.ScriptedCall, advice string) bool {
		if budget == 0 {
			return true
		}
		budget--
		r := v.replay(o, "blind-to-side-effect", calls, o.replies)
		if r.Err == nil && r.Passed && allSucceeded(r) {
			v.add(dsl.NewDiag("blind-to-side-effect", fmt.Sprintf("turn %d: the episode still passes (%s) when the agent %s: %s", turn, passedScore(r), what, advice)))
			return true
		}
		return false
	}
	updates := updateCalls(o)
	for i, rc := range updates {
		if i >= 2 {
			break
		}
		if extra, what := anotherField(o, rc); extra != nil {
			if try(fmt.Sprintf("also %s (%s right after the reference's call)", what, callString(&episode.Call{Name: rc.c.Name, Args: extra.Args})), rc.turn,
				insertCall(o.calls, rc.turn, rc.idx+1, *extra), adviceOtherField) {
				return
			}
		}
	}
	if len(o.calls) > 1 {
		n := 0
		for _, rc := range refCalls(o) {
			if rc.turn == 0 || !rc.c.Changed || !isSend(rc.c.Name) || n >= 2 {
				continue
			}
			n++
			sc := episode.ScriptedCall{Name: rc.c.Name, Args: rc.c.Args}
			if try(fmt.Sprintf("sends in turn 0 what the reference sends in turn %d (%s)", rc.turn, callString(rc.c)), 0,
				insertCall(o.calls, 0, len(o.calls[0]), sc), adviceOtherTurn) {
				return
			}
		}
	}
	pool := newRivalPool(o, readOptions(o))
	n := 0
	for _, rc := range writeCalls(o, updates) {
		if n >= 2 {
			break
		}
		wrong, what := wrongVersion(o, rc, pool)
		if wrong == nil {
			continue
		}
		n++
		if try(fmt.Sprintf("first writes a wrong version (%s: %s) and then the right one (%s)", rc.c.Name, what, callString(rc.c)), rc.turn,
			insertCall(o.calls, rc.turn, rc.idx, *wrong), adviceWrongFirst) {
			return
		}
	}
	if _, ok := o.p.Task.Tool("mail_move"); !ok {
		return
	}
	n = 0
	for _, rc := range refCalls(o) {
		if n >= 2 || !rc.c.Changed || rc.c.Name == "chat_post" || !isSend(rc.c.Name) {
			continue
		}
		res, _ := rc.c.Result().(*jsonv.Object)
		id, _ := res.Get("id")
		sid, ok := id.(string)
		if !ok || sid == "" {
			continue
		}
		wrong, what := wrongVersion(o, rc, pool)
		if wrong == nil {
			continue
		}
		n++
		hide := episode.ScriptedCall{Name: "mail_move", Args: jsonv.NewObject("id", sid, "folder", "trash")}
		calls := insertCall(insertCall(o.calls, rc.turn, rc.idx, *wrong), rc.turn, rc.idx+1, hide)
		if try(fmt.Sprintf("first sends a wrong version (%s: %s), moves it to the trash, and then sends the right one (%s)", rc.c.Name, what, callString(rc.c)), rc.turn,
			calls, adviceHiddenSend) {
			return
		}
	}
}

const (
	adviceOtherField = "the verifier checks the field the task is about and not the rest of the entry; compare the entries the reference changes with ws.reference field by field (or require that nothing else of them changed)"
	adviceOtherTurn  = "the verifier does not check when a message was sent; give each turn its own verifier with ws.unexpected(recipients = [...]) for what that turn allows"
	adviceHiddenSend = "the verifier reads the sent folder as the episode ends; a mail once sent stays sent, wherever it is moved: read ws.history.sent(to = ...) (every mail sent in the episode), or require ws.unexpected() == []"
	adviceWrongFirst = "the verifier reads only the end state; a wrong version was there for a while (read, synced, acted on): check every version the agent wrote (ws.history.actions(), ws.unexpected) or require one write"
)

func isSend(name string) bool {
	return name == "mail_send" || name == "mail_reply" || name == "mail_forward" || name == "chat_post"
}

// insertCall is the oracle's calls with c inserted in turn at index at.
func insertCall(calls [][]episode.ScriptedCall, turn, at int, c episode.ScriptedCall) [][]episode.ScriptedCall {
	out := copyCalls(calls)
	cs := out[turn]
	if at > len(cs) {
		at = len(cs)
	}
	out[turn] = append(append(append([]episode.ScriptedCall(nil), cs[:at]...), c), cs[at:]...)
	return out
}

// updateCalls are the reference's state-changing calls that name (in an argument) an entry that
// existed after setup and that the reference changed: updates, not creations.
func updateCalls(o *oracleRun) []refCall {
	changed := map[string]bool{}
	for _, sec := range services.Sections(workspace.Diff(o.p.Base, o.res.Final)) {
		for _, k := range sec.Changed {
			changed[k] = true
			if i := strings.LastIndexByte(k, '/'); i >= 0 {
				changed[k[i+1:]] = true
			}
		}
	}
	var out []refCall
	for _, rc := range refCalls(o) {
		if !rc.c.Changed || isSend(rc.c.Name) {
			continue
		}
		for _, m := range rc.c.Args.Members {
			if s, ok := m.Value.(string); ok && changed[s] {
				out = append(out, rc)
				break
			}
		}
	}
	return out
}

// anotherField is the reference call rc again with one optional argument it left out set wrong,
// or nil when its tool has none that can be.
func anotherField(o *oracleRun, rc refCall) (*episode.ScriptedCall, string) {
	spec, ok := o.p.Task.Tool(rc.c.Name)
	if !ok {
		return nil, ""
	}
	var pick *tools.Param
	var val jsonv.Value
	for _, pass := range []string{"enum", "string", "boolean"} {
		for i := range spec.Params {
			p := &spec.Params[i]
			if _, given := rc.c.Args.Get(p.Name); p.Required || given || isIDParam(p.Name) {
				continue
			}
			switch {
			case pass == "enum" && p.Enum != nil:
				for k := len(p.Enum) - 1; k >= 0; k-- {
					if !p.HasDefault || !jsonv.Equal(p.Enum[k], p.Default) {
						pick, val = p, p.Enum[k]
						break
					}
				}
			case pass == "string" && p.Enum == nil && p.Type == tools.TypeString:
				pick, val = p, "CANCELLED"
			case pass == "boolean" && p.Type == tools.TypeBoolean:
				b := true
				if p.HasDefault {
					if d, ok := p.Default.(bool); ok {
						b = !d
					}
				}
				pick, val = p, b
			}
			if pick != nil {
				break
			}
		}
		if pick != nil {
			break
		}
	}
	if pick == nil {
		return nil, ""
	}
	args := setArg(rc.c.Args, []any{pick.Name}, val, false)
	return &episode.ScriptedCall{Name: rc.c.Name, Args: args}, fmt.Sprintf("sets %s to %s", pick.Name, valueString(val))
}

// isIDParam reports whether a parameter names an entry or a place rather than a field of it.
func isIDParam(name string) bool {
	switch name {
	case "id", "thread", "folder", "channel", "path", "to", "cc", "message_id", "in_reply_to", "attachments", "reply_all":
		return true
	}
	return strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids")
}

// writeCalls are the reference's calls that overwrite: fs_write and the updates.
func writeCalls(o *oracleRun, updates []refCall) []refCall {
	var out []refCall
	for _, rc := range refCalls(o) {
		if rc.c.Changed && rc.c.Name == "fs_write" {
			out = append(out, rc)
		}
	}
	return append(out, updates...)
}

// wrongVersion is the call rc with its content made wrong: in its first text argument, the first
// value it asserts replaced by a rival (or, when it asserts none, a line added); or its first
// enum or number argument changed. Nil when nothing can be.
func wrongVersion(o *oracleRun, rc refCall, pool *rivalPool) (*episode.ScriptedCall, string) {
	opt := readOptions(o)
	for _, m := range rc.c.Args.Members {
		s, ok := m.Value.(string)
		if !ok || isIDParam(m.Key) || strings.TrimSpace(s) == "" {
			continue
		}
		if p := paramOf(o, rc.c.Name, m.Key); p != nil && p.Enum != nil {
			if next, ok := nextEnum(p.Enum, s); ok {
				return &episode.ScriptedCall{Name: rc.c.Name, Args: setArg(rc.c.Args, []any{m.Key}, next, false)}, fmt.Sprintf("%s %s", m.Key, valueString(next))
			}
			continue
		}
		if k, _ := swapKind(s, o.p.Base); k != "" {
			continue
		}
		for _, c := range claims.Read(s, opt).Claims() {
			if c.Stance != claims.Asserted || c.Kind == claims.Name || c.Kind == claims.ID || c.Kind == claims.Email {
				continue
			}
			if r := pool.rival(c, opt, nil); r != "" {
				ns := s[:c.Start] + r + s[c.End:]
				return &episode.ScriptedCall{Name: rc.c.Name, Args: setArg(rc.c.Args, []any{m.Key}, ns, false)}, fmt.Sprintf("%s with %q for %q", m.Key, r, c.Text)
			}
		}
		ns := s + "\nDRAFT: not checked, do not use.\n"
		return &episode.ScriptedCall{Name: rc.c.Name, Args: setArg(rc.c.Args, []any{m.Key}, ns, false)}, fmt.Sprintf("%s with a line \"DRAFT: not checked, do not use.\" added", m.Key)
	}
	return nil, ""
}
