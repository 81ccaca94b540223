package validate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// checkChange raises blind-to-change where work done on the state before a turn's change passes.
//
// For each turn k after the first whose `before` is given (at most changeRuns/2 of them, in
// order): the oracle runs with that before left out (RunOptions.SkipBefore) up to the end of turn
// k; when the state the user speaks to then differs from the real one (the before changed
// something) and the turn's reference makes other calls (names or arguments), its calls and reply
// of turn k replace the reference's in a replay of the real episode. A finding is a replay that
// passes with an end state other than the reference's: the verifier accepted work done on stale
// facts. (A reference that does not adapt, with the same calls either way, shows nothing.)
func (v *taskCheck) checkChange(o *oracleRun) {
	t := o.p.Task
	budget := changeRuns
	refs := refCalls(o)
	for k := 1; k < len(t.Turns) && k < len(o.calls); k++ {
		if t.Turns[k].Before == nil || t.Turns[k].Solution == nil {
			continue
		}
		if budget == 0 {
			return
		}
		budget--
		skip := v.runAgent(o, staleOracle{last: k}, episode.RunOptions{NoFaults: true, SkipBefore: k + 1})
		if len(skip.Turns) <= k || !skip.Turns[k].Answered || skip.Turns[k].StateBefore == o.res.Turns[k].StateBefore {
			continue
		}
		var stale []*episode.Call
		var staleCalls []episode.ScriptedCall
		for _, c := range skip.Calls {
			if c.Turn == k && c.Succeeded() {
				stale = append(stale, c)
				staleCalls = append(staleCalls, episode.ScriptedCall{Name: c.Name, Args: c.Args})
			}
		}
		var ref []*episode.Call
		for _, rc := range refs {
			if rc.turn == k {
				ref = append(ref, rc.c)
			}
		}
		diff, at := callsDiffer(stale, ref)
		if diff == "" {
			continue
		}
		if budget == 0 {
			return
		}
		budget--
		calls := copyCalls(o.calls)
		calls[k] = staleCalls
		r := v.replay(o, "blind-to-change", calls, withReply(o, k, skip.Turns[k].Reply))
		if r.Err != nil || !r.Passed || r.FinalState == o.res.FinalState {
			continue
		}
		d := dsl.NewDiag("blind-to-change", fmt.Sprintf("turn %d: run on the state as it was without the turn's `before`, the reference makes %s; replayed on the real state, that stale work still passes (%s): the verifier accepts work done on facts the change made out of date; check what the change implies for this turn (the record, file or mail it changed, and the calls or reply that must follow from it)",
			k, diff, passedScore(r)))
		if at != nil && at.Pos.IsValid() {
			d = d.At(at.Pos)
		} else {
			d = d.At(t.Turns[k].Pos)
		}
		v.add(d)
	}
}

// callsDiffer describes how the stale calls differ from the reference's ("" when they agree), and
// returns the reference's call where they part (nil when the stale run makes more calls).
func callsDiffer(stale, ref []*episode.Call) (string, *episode.Call) {
	same := func(i int) bool {
		return i < len(stale) && i < len(ref) && stale[i].Name == ref[i].Name && jsonv.Equal(stale[i].Args, ref[i].Args)
	}
	first := -1
	for i := 0; i < len(stale) || i < len(ref); i++ {
		if same(i) {
			continue
		}
		if first < 0 {
			first = i
		}
		// prefer a call that changes the state
		if i < len(stale) && stale[i].Changed || i < len(ref) && ref[i].Changed {
			first = i
			break
		}
	}
	switch i := first; {
	case i < 0:
		return "", nil
	case i >= len(stale):
		return fmt.Sprintf("%d calls instead of %d (without %s)", len(stale), len(ref), callString(ref[i])), ref[i]
	case i >= len(ref):
		return fmt.Sprintf("%d calls instead of %d (%s besides)", len(stale), len(ref), callString(stale[i])), nil
	default:
		if stale[i].Name == ref[i].Name {
			return fmt.Sprintf("its call %s with %s", stale[i].Name, argDiff(stale[i].Args, ref[i].Args)), ref[i]
		}
		return fmt.Sprintf("the call %s instead of %s", callString(stale[i]), callString(ref[i])), ref[i]
	}
}

// argDiff says where two calls' arguments differ first: `argument "body": "…PO-12 and PO-13…"
// instead of "…PO-12. Please…"`.
func argDiff(a, b *jsonv.Object) string {
	keys := a.Keys()
	for _, k := range b.Keys() {
		if _, ok := a.Get(k); !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		x, okx := a.Get(k)
		y, oky := b.Get(k)
		switch {
		case !okx:
			return fmt.Sprintf("argument %q left out (the reference gives %s)", k, valueString(y))
		case !oky:
			return fmt.Sprintf("argument %q = %s (the reference gives none)", k, valueString(x))
		case jsonv.Equal(x, y):
			continue
		}
		xs, ok1 := x.(string)
		ys, ok2 := y.(string)
		if !ok1 || !ok2 {
			return fmt.Sprintf("argument %q: %s instead of %s", k, valueString(x), valueString(y))
		}
		return fmt.Sprintf("argument %q: %s instead of %s", k, snippetAt(xs, ys), snippetAt(ys, xs))
	}
	return "the same arguments"
}

// snippetAt quotes the part of s where it starts to differ from t.
func snippetAt(s, t string) string {
	p := 0
	for p < len(s) && p < len(t) && s[p] == t[p] {
		p++
	}
	from, to := max(p-30, 0), min(p+40, len(s))
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	out := strconv.Quote(s[from:to])
	if from > 0 {
		out = `"…` + out[1:]
	}
	if to < len(s) {
		out = out[:len(out)-1] + `…"`
	}
	return out
}

// errStaleDone ends a stale oracle run after the turn it is for.
var errStaleDone = errors.New("done")

// staleOracle runs the reference up to turn last (0-based) and then stops the episode.
type staleOracle struct{ last int }

func (staleOracle) Name() string { return "stale-oracle" }

func (a staleOracle) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if tc.Index > a.last {
		return "", errStaleDone
	}
	return episode.Oracle{}.Turn(ctx, tc)
}
