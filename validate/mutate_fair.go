package validate

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"github.com/coworkenv/coworkenv/workspace"
)

// checkFair raises brittle-verifier where the reference's work, done in other words or another
// fair way, fails. The rewrites, tried in this order while fairRuns lasts (each reported once, the
// first that fails):
//
//  1. formats: a value the reference's prose asserts (those the verifiers' statements cover first)
//     written in another common format, read back by the claims module as the same value (14:30
//     as 2:30 pm, a date as 15/01/2026, EUR 1,240.00 as €1.240,00, a phone number in its
//     national form); two values, two formats each;
//  2. a clause split: a comma before "and", or the sentence split in two at it;
//  3. a true past mention: the value a changed entry had before ("(moved from …)") after the value;
//  4. a closing remark after a list that ends a text;
//  5. a heading with a negated status before a sentence that asserts a status ("Approved (no
//     longer pending):");
//  6. an update done as a delete and a re-create with the same content (calendar_update as
//     calendar_delete and calendar_create, when the task offers both);
//  7. a reply to another message of the same thread and sender (mail_reply).
//
// A rewrite counts when every call succeeds and the episode fails.
func (v *taskCheck) checkFair(o *oracleRun) {
	budget := fairRuns
	found := false
	fails := func(calls [][]episode.ScriptedCall, replies []string) *episode.Result {
		if budget == 0 || found {
			return nil
		}
		budget--
		r := v.replay(o, "brittle-verifier", calls, replies)
		if r.Err == nil && !r.Passed && allSucceeded(r) {
			return r
		}
		return nil
	}
	report := func(r *episode.Result, at *refCall, format string, args ...any) {
		found = true
		d := dsl.NewDiag("brittle-verifier", fmt.Sprintf(format, args...)+fmt.Sprintf("; failed: %s: the verifier matches exact text or ids where it should match facts: check what the text asserts with claims.states(text, value, about = [...]), and entries by their content", itemList(r.Items, false)))
		if at != nil && at.c.Pos.IsValid() {
			d = d.At(at.c.Pos)
		}
		v.add(d)
	}
	targets := claimTargets(o)
	// 1. formats
	runs := 0
	for _, t := range targets {
		if runs >= 3 || found {
			break
		}
		for _, f := range claims.Formats(t.text, t.claim, t.opt, 2) {
			if runs >= 3 {
				break
			}
			runs++
			nt := t.text[:t.claim.Start] + f + t.text[t.claim.End:]
			calls, replies := with(o, t.places, nt)
			if r := fails(calls, replies); r != nil {
				report(r, t.places[0].rc, "turn %d: the episode fails (score %s) when %s writes %s %s as %s", t.places[0].turn, episode.FormatScore(r.Score), t.where(o), t.claim.Kind, quoteShort(t.claim.Text), quoteShort(f))
				break
			}
		}
	}
	// 2. a clause split
	if len(targets) > 0 && !found {
		t := targets[0]
		d := claims.Read(t.text, t.opt)
		a, b := d.SentenceOf(t.claim)
		sent := t.text[a:b]
		if i := strings.Index(sent, " and "); i > 0 && sent[i-1] != ',' {
			split := sent[:i] + ". " + capitalize(sent[i+5:])
			for _, ns := range []string{sent[:i] + ", and " + sent[i+5:], split} {
				nt := t.text[:a] + ns + t.text[b:]
				calls, replies := with(o, t.places, nt)
				if r := fails(calls, replies); r != nil {
					report(r, t.places[0].rc, "turn %d: the episode fails (score %s) when %s splits a clause: %s → %s", t.places[0].turn, episode.FormatScore(r.Score), t.where(o), quoteShort(sent), quoteShort(ns))
					break
				}
			}
		}
	}
	// 3. a true past mention of a changed value
	if old := oldValues(o); len(old) > 0 && !found {
		for _, t := range targets {
			ov, ok := old[t.claim.Kind]
			if !ok || ov.Value == t.claim.Value || t.claim.Kind == claims.Status {
				continue
			}
			word := "previously"
			if t.claim.Kind == claims.Date || t.claim.Kind == claims.Time {
				word = "moved from"
			}
			old := ov.Text
			if s := claims.Restyle(t.claim, ov.Value); s != "" {
				old = s
			}
			// at the end of the value's sentence, before its full stop: after the whole of a range
			d := claims.Read(t.text, t.opt)
			_, e := d.SentenceOf(t.claim)
			for e > t.claim.End && strings.ContainsRune(".!?;:", rune(t.text[e-1])) {
				e--
			}
			ins := " (" + word + " " + old + ")"
			nt := t.text[:e] + ins + t.text[e:]
			calls, replies := with(o, t.places, nt)
			if r := fails(calls, replies); r != nil {
				report(r, t.places[0].rc, "turn %d: the episode fails (score %s) when %s names the old value as the old one: %s after %s", t.places[0].turn, episode.FormatScore(r.Score), t.where(o), quoteShort(ins), quoteShort(t.claim.Text))
			}
			break
		}
	}
	// 4. a closing remark after a list
	if !found {
		for _, it := range proseItems(o) {
			text := it.text(o)
			if !endsWithList(text) {
				continue
			}
			nt := strings.TrimRight(text, "\n") + "\n\nLet me know if you need anything else."
			ps := placesOf(o, text)
			calls, replies := with(o, ps, nt)
			if r := fails(calls, replies); r != nil {
				report(r, it.rc, "turn %d: the episode fails (score %s) when %s ends with a closing remark after its list (\"Let me know if you need anything else.\")", it.turn, episode.FormatScore(r.Score), it.describe(o))
			}
			break
		}
	}
	// 5. a heading with a negated status
	if !found {
		for _, t := range targets {
			if t.claim.Kind != claims.Status || t.fn == "denies" || t.claim.Stance != claims.Asserted {
				continue
			}
			others := claims.OtherPoles(t.claim)
			if len(others) == 0 {
				continue
			}
			neg := others[len(others)-1]
			d := claims.Read(t.text, t.opt)
			a, b := d.SentenceOf(t.claim)
			heading := capitalize(t.claim.Text) + " (no longer " + neg + "):\n"
			// the heading stands over its sentence only: what follows on the line starts a
			// paragraph of its own
			rest := strings.TrimLeft(t.text[b:], " ")
			if rest != "" && !strings.HasPrefix(rest, "\n") {
				rest = "\n\n" + rest
			}
			nt := t.text[:a] + heading + t.text[a:b] + rest
			calls, replies := with(o, t.places, nt)
			if r := fails(calls, replies); r != nil {
				report(r, t.places[0].rc, "turn %d: the episode fails (score %s) when %s has a heading with a negated status before its statement: %s", t.places[0].turn, episode.FormatScore(r.Score), t.where(o), quoteShort(strings.TrimSpace(heading)))
			}
			break
		}
	}
	// 6. delete and re-create
	if !found {
		v.fairRecreate(o, fails, report)
	}
	// 7. a reply to another message of the thread
	if !found {
		v.fairOtherMessage(o, fails, report)
	}
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// endsWithList reports whether a text's last non-empty line is a list item.
func endsWithList(s string) bool {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(lines) < 2 {
		return false
	}
	if strings.HasPrefix(last, "- ") || strings.HasPrefix(last, "* ") || strings.HasPrefix(last, "• ") {
		return true
	}
	i := 0
	for i < len(last) && last[i] >= '0' && last[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(last) && (last[i] == '.' || last[i] == ')') && last[i+1] == ' '
}

// oldValues are the values, by kind, that the entries the reference changed held before: what a
// careful agent names as the old one ("moved from Thursday"). The first of each kind, in the order
// of the history.
func oldValues(o *oracleRun) map[claims.Kind]claims.Claim {
	out := map[claims.Kind]claims.Claim{}
	opt := readOptions(o)
	for _, a := range o.res.Final.History(o.p.Base) {
		if a.Actor != workspace.ActorAgent || a.Before() == nil || a.After() == nil {
			continue
		}
		before, after := entryText(a.Before()), entryText(a.After())
		now := map[string]bool{}
		for _, c := range claims.Read(after, opt).Claims() {
			now[string(c.Kind)+"/"+c.Value] = true
		}
		for _, c := range claims.Read(before, opt).Claims() {
			if _, have := out[c.Kind]; have || now[string(c.Kind)+"/"+c.Value] || c.Kind == claims.Name || c.Kind == claims.ID {
				continue
			}
			out[c.Kind] = c
		}
	}
	return out
}

// entryText is an entry's fields as lines of text, for reading its values.
func entryText(e any) string {
	switch x := e.(type) {
	case string:
		return x
	case workspace.Event:
		return strings.Join([]string{x.Title, x.Start, x.End, x.Location, x.Description}, "\n")
	case workspace.Message:
		return x.Subject + "\n" + x.Body
	case *jsonv.Object:
		var lines []string
		for _, m := range x.Members {
			switch val := m.Value.(type) {
			case string:
				lines = append(lines, m.Key+": "+val)
			default:
				lines = append(lines, m.Key+": "+jsonv.MustEncode(val))
			}
		}
		return strings.Join(lines, "\n")
	}
	return fmt.Sprint(e)
}

type fairRun = func(calls [][]episode.ScriptedCall, replies []string) *episode.Result
type fairReport = func(r *episode.Result, at *refCall, format string, args ...any)

// fairRecreate replaces the reference's first calendar_update by calendar_delete and
// calendar_create of the event as the reference leaves it, when the task offers both and no later
// call names the event's id.
func (v *taskCheck) fairRecreate(o *oracleRun, fails fairRun, report fairReport) {
	if _, ok := o.p.Task.Tool("calendar_delete"); !ok {
		return
	}
	if _, ok := o.p.Task.Tool("calendar_create"); !ok {
		return
	}
	refs := refCalls(o)
	for i, rc := range refs {
		if rc.c.Name != "calendar_update" || !rc.c.Changed {
			continue
		}
		id := argString(rc.c.Args, "id")
		ev, ok := o.res.Final.Calendar().Get(id)
		if id == "" || !ok {
			continue
		}
		later := false
		for _, next := range refs[i+1:] {
			if strings.Contains(jsonv.MustEncode(next.c.Args), `"`+id+`"`) {
				later = true
			}
		}
		if later {
			continue
		}
		attendees := make([]jsonv.Value, len(ev.Attendees))
		for k, a := range ev.Attendees {
			attendees[k] = a
		}
		create := jsonv.NewObject("title", ev.Title, "start", ev.Start, "end", ev.End, "attendees", attendees)
		if ev.Location != "" {
			create.Set("location", ev.Location)
		}
		if ev.Description != "" {
			create.Set("description", ev.Description)
		}
		calls := copyCalls(o.calls)
		cs := calls[rc.turn]
		repl := []episode.ScriptedCall{{Name: "calendar_delete", Args: jsonv.NewObject("id", id)}, {Name: "calendar_create", Args: create}}
		calls[rc.turn] = append(append(append([]episode.ScriptedCall(nil), cs[:rc.idx]...), repl...), cs[rc.idx+1:]...)
		if r := fails(calls, o.replies); r != nil {
			report(r, &rc, "turn %d: the episode fails (score %s) when the reference's %s is done as a delete and a re-create of the same event (calendar_delete, then calendar_create with its title, times, attendees and location)", rc.turn, episode.FormatScore(r.Score), callString(rc.c))
		}
		return
	}
}

// fairOtherMessage points the reference's first mail_reply at another message of the same thread
// from the same sender, when the mailbox has one.
func (v *taskCheck) fairOtherMessage(o *oracleRun, fails fairRun, report fairReport) {
	for _, rc := range refCalls(o) {
		if rc.c.Name != "mail_reply" || !rc.c.Changed {
			continue
		}
		id := argString(rc.c.Args, "id")
		m, ok := o.p.Base.Mail().Get(id)
		if !ok {
			continue
		}
		var others []string
		for _, x := range o.p.Base.Mail().Messages(workspace.Filter{}) {
			if x.ID != id && x.Thread == m.Thread && strings.EqualFold(x.Sender, m.Sender) && x.Folder != "sent" {
				others = append(others, x.ID)
			}
		}
		if len(others) == 0 {
			continue
		}
		sort.Strings(others)
		calls := copyCalls(o.calls)
		calls[rc.turn][rc.idx] = episode.ScriptedCall{Name: rc.c.Name, Args: setArg(rc.c.Args, []any{"id"}, others[0], false)}
		if r := fails(calls, o.replies); r != nil {
			report(r, &rc, "turn %d: the episode fails (score %s) when the reference's %s answers %s, another message of the same thread from the same sender", rc.turn, episode.FormatScore(r.Score), callString(rc.c), others[0])
		}
		return
	}
}
