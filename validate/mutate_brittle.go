package validate

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// proseParams are the argument names that hold prose: mail bodies, chat messages, comments,
// notes, descriptions. "content" counts only for task-defined tools (a chat message's content),
// never for fs_write, whose content is a file with a format of its own. Subjects, titles and ids
// are not prose: a greeting in a subject is no harmless rewrite.
var proseParams = map[string]bool{
	"body": true, "text": true, "message": true, "msg": true, "comment": true, "note": true, "notes": true,
	"description": true, "reason": true, "reply": true, "answer": true, "summary": true, "content": true,
}

// checkBrittle raises brittle-verifier where a harmless rewrite of the reference's prose fails.
//
// The prose is the string arguments named in proseParams of the reference's state-changing calls
// (not ids, addresses, paths, enum values, nor text that looks like CSV or JSON), and its replies.
// The rewrite adds a greeting line ("Hello,") and a sign-off ("Best regards"), breaks the text
// after each sentence and doubles its line breaks, and writes amounts of 1000 or more (a number
// with a currency next to it, or two decimals) with a thousands separator. One run rewrites all the
// prose at once; when it passes, that is all. When it fails (and every call still succeeds: a tool
// that rejects the text is not the verifier's fault), runs with one piece of prose rewritten at a
// time find the piece, and with one part of the rewrite at a time the part, while the budget
// (brittleRuns) lasts; the diagnostic names what it found.
func (v *taskCheck) checkBrittle(o *oracleRun) {
	items := proseItems(o)
	if len(items) == 0 {
		return
	}
	run := func(which []proseItem, parts []string) *episode.Result {
		calls, replies := copyCalls(o.calls), append([]string(nil), o.replies...)
		for _, it := range which {
			if it.rc == nil {
				replies[it.turn] = rewriteProse(replies[it.turn], parts...)
				continue
			}
			cur := calls[it.rc.turn][it.rc.idx]
			s := argString(cur.Args, it.arg)
			calls[it.rc.turn][it.rc.idx] = episode.ScriptedCall{Name: cur.Name, Args: setArg(cur.Args, []any{it.arg}, rewriteProse(s, parts...), false)}
		}
		return v.replay(o, "brittle-verifier", calls, replies)
	}
	fails := func(r *episode.Result) bool { return r.Err == nil && !r.Passed && allSucceeded(r) }
	budget := brittleRuns - 1
	r := run(items, nil)
	if !fails(r) {
		return
	}
	// which piece?
	culprit := -1
	if len(items) == 1 {
		culprit = 0
	} else {
		for i := range items {
			if budget == 0 {
				break
			}
			budget--
			if ri := run(items[i:i+1], nil); fails(ri) {
				culprit, r = i, ri
				break
			}
		}
	}
	what := "the reference's prose (all of it)"
	parts := rewriteParts
	if culprit >= 0 {
		it := items[culprit]
		what = it.describe(o)
		// which part of the rewrite?
		var applicable []string
		for _, p := range []string{rewriteGreeting, rewriteBreaks, rewriteThousands} {
			if rewriteProse(it.text(o), p) != it.text(o) {
				applicable = append(applicable, p)
			}
		}
		parts = applicable
		if len(applicable) > 1 {
			for _, p := range applicable {
				if budget == 0 {
					break
				}
				budget--
				if rp := run(items[culprit:culprit+1], []string{p}); fails(rp) {
					parts, r = []string{p}, rp
					break
				}
			}
		}
	}
	d := dsl.NewDiag("brittle-verifier", fmt.Sprintf("%s: the episode fails (score %s < pass_threshold %s) when %s is rewritten harmlessly (%s); failed: %s: the verifier matches exact text where it should match facts; look for each fact with re.search, ignoring case, line breaks, greetings and thousands separators",
		turnLabel(items, culprit), episode.FormatScore(r.Score), episode.FormatScore(o.p.Task.PassThreshold), what, strings.Join(parts, ", "), itemList(r.Items, false)))
	if culprit >= 0 && items[culprit].rc != nil && items[culprit].rc.c.Pos.IsValid() {
		d = d.At(items[culprit].rc.c.Pos)
	}
	v.add(d)
}

// proseItem is one piece of the reference's prose: a string argument of a call, or a reply.
type proseItem struct {
	rc   *refCall // nil for a reply
	arg  string
	turn int
}

func (it proseItem) text(o *oracleRun) string {
	if it.rc == nil {
		return o.replies[it.turn]
	}
	return argString(it.rc.c.Args, it.arg)
}

func (it proseItem) describe(o *oracleRun) string {
	if it.rc == nil {
		return "the reference's reply"
	}
	return fmt.Sprintf("argument %q of the reference's call %s", it.arg, callString(it.rc.c))
}

func turnLabel(items []proseItem, culprit int) string {
	if culprit < 0 {
		return "the whole episode"
	}
	return fmt.Sprintf("turn %d", items[culprit].turn)
}

// proseItems lists the reference's prose, calls first (in order), then replies.
func proseItems(o *oracleRun) []proseItem {
	var out []proseItem
	for _, rc := range refCalls(o) {
		if !rc.c.Changed {
			continue
		}
		spec, ok := o.p.Task.Tool(rc.c.Name)
		for _, m := range rc.c.Args.Members {
			s, isStr := m.Value.(string)
			if !isStr || !proseParams[m.Key] || strings.TrimSpace(s) == "" || m.Key == "content" && (!ok || spec.Builtin) {
				continue
			}
			if p := paramOf(o, rc.c.Name, m.Key); p != nil && p.Enum != nil {
				continue
			}
			if k, _ := swapKind(s, o.p.Base); k != "" || looksStructured(s) {
				continue
			}
			rc := rc
			out = append(out, proseItem{rc: &rc, arg: m.Key, turn: rc.turn})
		}
	}
	for t, reply := range o.replies {
		if strings.TrimSpace(reply) != "" && !looksStructured(reply) {
			out = append(out, proseItem{turn: t})
		}
	}
	return out
}

// looksStructured reports whether a text is data rather than prose: JSON, or lines that all hold
// the same number (one or more) of commas, semicolons or tabs (CSV, TSV).
func looksStructured(s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if _, err := jsonv.DecodeString(t); err == nil {
			return true
		}
	}
	lines := strings.Split(t, "\n")
	if len(lines) < 2 {
		return false
	}
	for _, sep := range []string{",", ";", "\t"} {
		n := strings.Count(lines[0], sep)
		if n == 0 {
			continue
		}
		same := true
		for _, l := range lines[1:] {
			if strings.Count(l, sep) != n {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}
