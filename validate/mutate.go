package validate

import (
	"strconv"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// The honest-reward checks (blind-to-content, blind-to-side-effect, brittle-verifier,
// blind-to-change) replay the passing oracle episode with one change each and look at the
// verdict:
//
//   - blind-to-content (mutate_content.go): one value in the arguments of a state-changing call of
//     the reference, or in a reply the verifier reads, made wrong. A finding is a wrong value that
//     passes.
//   - blind-to-side-effect (mutate_side.go): one extra, unrequested action added to the reference.
//     A finding is an extra action that passes.
//   - brittle-verifier (mutate_brittle.go): the reference's prose rewritten harmlessly. A finding is
//     a rewrite that fails.
//   - blind-to-change (mutate_change.go): a turn's reference computed on the state without the
//     turn's `before`, replayed on the real state. A finding is stale work that passes.
//   - blind-to-claim, blind-to-reply, and the attacks on what the reference changes
//     (blind-to-side-effect) and the fair rewrites (brittle-verifier) read with the claims module
//     (mutate_claims.go, mutate_state.go, mutate_fair.go).
//
// Every mutation run is a whole episode without fault injection (about 100 µs for a typical task),
// so each check has a fixed budget of runs, spent in a deterministic order; together they make at
// most maxMutationRuns runs per task. A run that stops on an error, or fails, is no finding (for
// brittle-verifier: a run that passes, or errs). Each check reports at most one diagnostic per call
// of the reference (per reply, per turn; blind-to-side-effect one per task): the first mutation
// that shows the weakness.
const (
	contentRuns = 11 // blind-to-content, reply probes included
	sideRuns    = 6  // blind-to-side-effect
	brittleRuns = 3  // brittle-verifier: one when the rewrite passes
	changeRuns  = 4  // blind-to-change: two per turn with a before

	maxMutationRuns = contentRuns + sideRuns + brittleRuns + changeRuns + claimRuns + replyRuns + stateRuns + fairRuns
)

// refCall is one successful call of the oracle episode: the call, its turn, its index among the
// turn's successful calls (o.calls[turn][idx]) and among all of them (the order of a replay).
type refCall struct {
	c    *episode.Call
	turn int
	idx  int
	seq  int
	at   int // index in o.res.Calls
}

// refCalls lists the oracle's successful calls in order.
func refCalls(o *oracleRun) []refCall {
	var out []refCall
	per := make([]int, len(o.calls))
	for i, c := range o.res.Calls {
		if !c.Succeeded() {
			continue
		}
		out = append(out, refCall{c: c, turn: c.Turn, idx: per[c.Turn], seq: len(out), at: i})
		per[c.Turn]++
	}
	return out
}

// copyCalls copies the per-turn lists of calls (not the arguments).
func copyCalls(calls [][]episode.ScriptedCall) [][]episode.ScriptedCall {
	out := make([][]episode.ScriptedCall, len(calls))
	for i, cs := range calls {
		out[i] = append([]episode.ScriptedCall(nil), cs...)
	}
	return out
}

// withArgs is the oracle's calls with the arguments of one call replaced.
func withArgs(o *oracleRun, rc refCall, args *jsonv.Object) [][]episode.ScriptedCall {
	calls := copyCalls(o.calls)
	calls[rc.turn][rc.idx] = episode.ScriptedCall{Name: rc.c.Name, Args: args}
	return calls
}

// withReply is the oracle's replies with the reply of one turn replaced.
func withReply(o *oracleRun, turn int, reply string) []string {
	out := append([]string(nil), o.replies...)
	out[turn] = reply
	return out
}

// replay runs a scripted episode without faults and notes what its verifiers asked about.
func (v *taskCheck) replay(o *oracleRun, label string, calls [][]episode.ScriptedCall, replies []string) *episode.Result {
	return v.runAgent(o, &episode.Scripted{Label: label, Calls: calls, Replies: replies, Asks: o.asks}, episode.RunOptions{NoFaults: true})
}

func (v *taskCheck) runAgent(o *oracleRun, a episode.Agent, ro episode.RunOptions) *episode.Result {
	r := v.episode(o.p, a, ro)
	o.note(r)
	return r
}

// callSucceeded reports whether the replay's call at seq (the order of the oracle's successful
// calls) ran without error.
func callSucceeded(r *episode.Result, seq int) bool {
	return seq < len(r.Calls) && r.Calls[seq].Succeeded()
}

// allSucceeded reports whether every call of a replay ran without error.
func allSucceeded(r *episode.Result) bool {
	for _, c := range r.Calls {
		if !c.Succeeded() {
			return false
		}
	}
	return true
}

// quoteShort quotes a string for a message, shortened to 80 bytes at most (on a rune boundary).
func quoteShort(s string) string {
	if len(s) > 80 {
		n := 80
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

// valueString shows a JSON value for a message.
func valueString(x jsonv.Value) string {
	if s, ok := x.(string); ok {
		return quoteShort(s)
	}
	return shorten(jsonv.MustEncode(x), 80)
}

// passedScore says how a mutation run passed: "score 1.0".
func passedScore(r *episode.Result) string { return "score " + episode.FormatScore(r.Score) }
