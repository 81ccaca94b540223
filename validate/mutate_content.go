package validate

import (
	"fmt"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/syntax"
)

// checkContent raises blind-to-content where a changed argument value still passes.
//
// The mutations of one state-changing call of the reference, by kind (they are tried the first of
// each kind in the order 1, 4, 3, 2, 6, 5, then the second of each, at most perCallMutations):
//
//  1. an id, a mail address or a path (a string argument that is one, as a whole, also inside
//     lists) swapped for another of the same shape that the agent had seen before the call, in a
//     user message or an earlier result: "T-104" for another "T-#", a file for another of the same
//     extension, an address for another (of the same domain first; never the user's own);
//  2. an enum value (of a parameter declared with enum) turned into the next one, a boolean
//     flipped, a number argument plus one;
//  3. every timestamp of the call an hour later, then a day later (an event moved as a whole);
//  4. in the other string arguments (the call's texts): a date a day later, a time of day an hour
//     later, a standalone number or amount plus one, a weekday the next day: each distinct token at
//     a time, every occurrence of it in every text of the call (two of each kind, taken in turn);
//  5. the last element dropped from a list argument (not the only element of a required one);
//  6. a statement negated ("approved" → "rejected", "is not" → "is", "will" → "will not"), in one
//     text, once per rule, at most two.
//
// A reply is mutated like a text (4 and 6) when the verifier reads it: a probe run with that reply
// blanked must lose score first. The mutations of all calls and replies are tried in turns, the
// first of each, then the second of each, within the budget of contentRuns runs; an item stops at
// its first finding, and so do the other calls made from the same line of the solution (a loop).
// A mutated call that fails is no finding (weak-verifier covers that).
func (v *taskCheck) checkContent(o *oracleRun) {
	seen := newSeenTokens(o)
	type item struct {
		rc     *refCall // nil for a reply
		turn   int
		muts   []contentMutation
		next   int
		done   bool
		probed bool
	}
	var items []*item
	for _, rc := range refCalls(o) {
		if !rc.c.Changed {
			continue
		}
		if muts := callMutations(o, rc, seen); len(muts) > 0 {
			rc := rc
			items = append(items, &item{rc: &rc, turn: rc.turn, muts: muts})
		}
	}
	for t, reply := range o.replies {
		if muts := replyMutations(reply); len(muts) > 0 {
			items = append(items, &item{turn: t, muts: muts})
		}
	}
	// calls made from one line of the solution (in a loop) are reported once
	reported := map[syntax.Position]bool{}
	budget := contentRuns
	for budget > 0 {
		progressed := false
		for _, it := range items {
			if budget == 0 {
				break
			}
			if it.rc != nil && it.rc.c.Pos.IsValid() && reported[it.rc.c.Pos] {
				it.done = true
			}
			if it.done || it.next >= len(it.muts) {
				continue
			}
			progressed = true
			budget--
			if it.rc == nil && !it.probed {
				// does the verifier read this reply at all?
				it.probed = true
				r := v.replay(o, "reply-probe", o.calls, withReply(o, it.turn, ""))
				if r.Err == nil && r.Passed && r.Score >= o.res.Score {
					it.done = true
				}
				continue
			}
			m := it.muts[it.next]
			it.next++
			if it.rc == nil {
				r := v.replay(o, "blind-to-content", o.calls, withReply(o, it.turn, m.reply))
				if r.Err == nil && r.Passed {
					it.done = true
					v.add(dsl.NewDiag("blind-to-content", fmt.Sprintf("turn %d: the episode still passes (%s) when the reference's reply %s has %s, though the verifier reads the reply (a blank one fails): %s",
						it.turn, passedScore(r), quoteShort(o.replies[it.turn]), m.what, m.advice)))
				}
				continue
			}
			rc := it.rc
			r := v.replay(o, "blind-to-content", withArgs(o, *rc, m.args), o.replies)
			if r.Err == nil && r.Passed && r.FinalState != o.res.FinalState && callSucceeded(r, rc.seq) {
				it.done = true
				d := dsl.NewDiag("blind-to-content", fmt.Sprintf("turn %d: the episode still passes (%s) when the reference's call %s has %s: %s",
					rc.turn, passedScore(r), callString(rc.c), m.what, m.advice))
				if rc.c.Pos.IsValid() {
					d = d.At(rc.c.Pos)
					reported[rc.c.Pos] = true
				}
				v.add(d)
			}
		}
		if !progressed {
			break
		}
	}
}

// Caps of the mutations of one call and of one reply.
const (
	perCallMutations  = 6
	perReplyMutations = 4
)

// contentMutation is one wrong value: new arguments for a call, or a new reply.
type contentMutation struct {
	what   string // `argument "body": "14" → "15"`
	advice string // what the verifier should check
	args   *jsonv.Object
	reply  string
}

// What to check, by kind of mutation.
const (
	adviceAddress = "the verifier accepts the wrong address; check the exact recipients or attendees (e.g. sent[0].to == [...]) and that nobody else got the mail"
	adviceID      = "the verifier does not check which message, event or record the call acted on; check that one, and that the others are untouched"
	advicePath    = "the verifier does not check the path; check the exact file, and that no other file changed"
	adviceField   = "the verifier does not check this field; check its exact value"
	adviceTime    = "the verifier does not check the time; check the exact start and end"
	adviceDrop    = "the verifier does not check every element of the list; check each one"
	adviceNegate  = "the verifier matches keywords, not the statement; check its polarity too (a \"not\", or the opposite word, must fail)"
)

func adviceToken(old string) string {
	return fmt.Sprintf("the verifier checks that the text is there, not what it says; check each fact next to its label (e.g. re.search for the label followed by %q), so that a wrong value fails", old)
}

// argLeaf is one scalar in a call's arguments.
type argLeaf struct {
	path []any // keys (string) and indices (int) from the arguments object
	name string
	val  jsonv.Value
	// list is the list that holds the leaf, if any
	list []jsonv.Value
}

// argList is one list in a call's arguments.
type argList struct {
	path []any
	name string
	val  []jsonv.Value
}

// walkArgs lists the scalars and the lists of a call's arguments, in order.
func walkArgs(args *jsonv.Object) (leaves []argLeaf, lists []argList) {
	var walk func(v jsonv.Value, p []any, name string, list []jsonv.Value)
	walk = func(v jsonv.Value, p []any, name string, list []jsonv.Value) {
		switch x := v.(type) {
		case *jsonv.Object:
			if x == nil {
				return
			}
			for _, m := range x.Members {
				walk(m.Value, append(append([]any(nil), p...), m.Key), fmt.Sprintf("%s[%q]", name, m.Key), nil)
			}
		case []jsonv.Value:
			lists = append(lists, argList{p, name, x})
			for i, e := range x {
				walk(e, append(append([]any(nil), p...), i), fmt.Sprintf("%s[%d]", name, i), x)
			}
		case nil:
		default:
			leaves = append(leaves, argLeaf{p, name, x, list})
		}
	}
	if args == nil {
		return nil, nil
	}
	for _, m := range args.Members {
		walk(m.Value, []any{m.Key}, fmt.Sprintf("argument %q", m.Key), nil)
	}
	return leaves, lists
}

// setArg returns a copy of args with the value at p replaced (drop: the list element at p
// removed).
func setArg(args *jsonv.Object, p []any, val jsonv.Value, drop bool) *jsonv.Object {
	out := jsonv.Clone(args).(*jsonv.Object)
	var set func(v jsonv.Value, p []any) jsonv.Value
	set = func(v jsonv.Value, p []any) jsonv.Value {
		if len(p) == 0 {
			return val
		}
		switch k := p[0].(type) {
		case string:
			o := v.(*jsonv.Object)
			cur, _ := o.Get(k)
			o.Set(k, set(cur, p[1:]))
			return o
		case int:
			l := v.([]jsonv.Value)
			if len(p) == 1 && drop {
				return append(l[:k:k], l[k+1:]...)
			}
			l[k] = set(l[k], p[1:])
			return l
		}
		return v
	}
	return set(out, p).(*jsonv.Object)
}

// paramOf returns the declared parameter of a top-level argument.
func paramOf(o *oracleRun, tool, name string) *tools.Param {
	spec, ok := o.p.Task.Tool(tool)
	if !ok {
		return nil
	}
	for i := range spec.Params {
		if spec.Params[i].Name == name {
			return &spec.Params[i]
		}
	}
	return nil
}

// callMutations lists the mutations of one state-changing call, in the order of checkContent.
func callMutations(o *oracleRun, rc refCall, seen *seenTokens) []contentMutation {
	args := rc.c.Args
	leaves, lists := walkArgs(args)
	own := o.p.Base.Mail().Address()
	var swaps, flips, stamps, tokens, drops, negs []contentMutation
	var texts []argLeaf
	for _, l := range leaves {
		if p := paramOf(o, rc.c.Name, l.path[0].(string)); p != nil && p.Enum != nil && len(l.path) == 1 {
			if next, ok := nextEnum(p.Enum, l.val); ok {
				flips = append(flips, contentMutation{what: fmt.Sprintf("%s: %s → %s", l.name, valueString(l.val), valueString(next)), advice: adviceField, args: setArg(args, l.path, next, false)})
			}
			continue
		}
		switch x := l.val.(type) {
		case string:
			if kind, shape := swapKind(x, o.p.Base); kind != "" {
				avoid := []string{own}
				for _, e := range l.list {
					if s, ok := e.(string); ok {
						avoid = append(avoid, s)
					}
				}
				if repl, ok := seen.swapFor(rc.at, kind, shape, x, avoid, sameThreadAndSender(o)); ok {
					advice := map[string]string{swapAddress: adviceAddress, swapID: adviceID, swapPath: advicePath}[kind]
					swaps = append(swaps, contentMutation{what: fmt.Sprintf("%s: %s → %s", l.name, valueString(x), valueString(repl)), advice: advice, args: setArg(args, l.path, repl, false)})
				}
				continue
			}
			texts = append(texts, l)
		case bool:
			flips = append(flips, contentMutation{what: fmt.Sprintf("%s: %v → %v", l.name, x, !x), advice: adviceField, args: setArg(args, l.path, !x, false)})
		case int64:
			flips = append(flips, contentMutation{what: fmt.Sprintf("%s: %d → %d", l.name, x, x+1), advice: adviceField, args: setArg(args, l.path, x+1, false)})
		case float64:
			flips = append(flips, contentMutation{what: fmt.Sprintf("%s: %v → %v", l.name, x, x+1), advice: adviceField, args: setArg(args, l.path, x+1, false)})
		}
	}
	// texts: every change applies to all of the call's texts
	applyAll := func(f func(string) string) (*jsonv.Object, []argLeaf) {
		out := args
		var changed []argLeaf
		for _, l := range texts {
			s := l.val.(string)
			if ns := f(s); ns != s {
				out = setArg(out, l.path, ns, false)
				changed = append(changed, l)
			}
		}
		return out, changed
	}
	for _, d := range []time.Duration{time.Hour, 24 * time.Hour} {
		what := map[time.Duration]string{time.Hour: "an hour", 24 * time.Hour: "a day"}[d]
		na, changed := applyAll(func(s string) string { return shiftTimestamps(s, d) })
		if len(changed) > 0 {
			l := changed[0]
			old := l.val.(string)
			more := ""
			if len(changed) > 1 {
				more = fmt.Sprintf(" (every time of the call %s later)", what)
			}
			stamps = append(stamps, contentMutation{what: fmt.Sprintf("%s: %s → %s%s", l.name, quoteShort(old), quoteShort(shiftTimestamps(old, d)), more), advice: adviceTime, args: na})
		}
	}
	var strs []string
	for _, l := range texts {
		strs = append(strs, l.val.(string))
	}
	for _, e := range tokenEdits(strs, 2) {
		na, changed := applyAll(e.apply)
		if len(changed) > 0 {
			tokens = append(tokens, contentMutation{what: fmt.Sprintf("%s: %q → %q", leafNames(changed), e.old, e.new), advice: adviceToken(e.old), args: na})
		}
	}
	for _, l := range lists {
		if len(l.val) == 0 {
			continue
		}
		if p := paramOf(o, rc.c.Name, l.path[0].(string)); len(l.val) == 1 && len(l.path) == 1 && p != nil && p.Required {
			continue // a required list left empty is an error, not a wrong value
		}
		i := len(l.val) - 1
		drops = append(drops, contentMutation{what: fmt.Sprintf("%s: element %s dropped", l.name, valueString(l.val[i])), advice: adviceDrop, args: setArg(args, append(append([]any(nil), l.path...), i), nil, true)})
	}
	for _, l := range texts {
		if len(negs) >= 2 {
			break
		}
		s := l.val.(string)
		for _, e := range negations(s, 2-len(negs)) {
			negs = append(negs, contentMutation{what: fmt.Sprintf("%s: %s → %s (a statement negated)", l.name, quoteShort(e.old), quoteShort(e.new)), advice: adviceNegate, args: setArg(args, l.path, e.apply(s), false)})
		}
	}
	// the first of each kind, then the second of each, ...
	var out []contentMutation
	groups := [][]contentMutation{swaps, tokens, stamps, flips, negs, drops}
	for rank, more := 0, true; more; rank++ {
		more = false
		for _, g := range groups {
			if rank < len(g) {
				out = append(out, g[rank])
				more = true
			}
		}
	}
	if len(out) > perCallMutations {
		out = out[:perCallMutations]
	}
	return out
}

// leafNames names the arguments a change touched: `argument "body"`, `arguments "subject" and
// "body"`.
func leafNames(ls []argLeaf) string {
	if len(ls) == 1 {
		return ls[0].name
	}
	var names []string
	for _, l := range ls {
		names = append(names, strings.TrimPrefix(l.name, "argument "))
	}
	return "arguments " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// nextEnum is the value after cur in an enum, cyclically.
func nextEnum(enum []jsonv.Value, cur jsonv.Value) (jsonv.Value, bool) {
	for i, e := range enum {
		if jsonv.Equal(e, cur) {
			n := enum[(i+1)%len(enum)]
			return n, !jsonv.Equal(n, cur)
		}
	}
	return nil, false
}

// replyMutations lists the mutations of a reply: its facts (timestamps, dates, times, numbers,
// weekdays) and one negated statement.
func replyMutations(reply string) []contentMutation {
	var out []contentMutation
	if hasTimestamp(reply) {
		out = append(out, contentMutation{what: "every timestamp an hour later", advice: adviceTime, reply: shiftTimestamps(reply, time.Hour)})
	}
	for _, e := range tokenEdits([]string{reply}, 2) {
		out = append(out, contentMutation{what: fmt.Sprintf("%q → %q", e.old, e.new), advice: adviceToken(e.old), reply: e.apply(reply)})
	}
	for _, e := range negations(reply, 1) {
		out = append(out, contentMutation{what: fmt.Sprintf("%s → %s (a statement negated)", quoteShort(e.old), quoteShort(e.new)), advice: adviceNegate, reply: e.apply(reply)})
	}
	if len(out) > perReplyMutations {
		out = out[:perReplyMutations]
	}
	return out
}

// sameThreadAndSender says whether two message ids are as good as each other for a reply: two
// messages of one thread from one sender (a reply to either lands in the thread, to that sender).
func sameThreadAndSender(o *oracleRun) func(a, b string) bool {
	mb := o.res.Final.Mail()
	return func(a, b string) bool {
		x, ok1 := mb.Get(a)
		y, ok2 := mb.Get(b)
		return ok1 && ok2 && x.Thread == y.Thread && strings.EqualFold(x.Sender, y.Sender)
	}
}
