package export

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Selection. Eight samples of a task that all pass make eight near-identical lines, and a task the
// teacher finds easy floods the data while hard capabilities stay thin. A Selection picks, among
// the episodes a kind keeps (its Sink.Skip and RLSkip passed them), the ones worth training on:
//
//  1. Episodes are grouped by task and start state (the task file, the task's name and the state
//     hash after setup the start event records): the samples of one task from one set-up.
//  2. Within a group they are ranked: a higher score first, then fewer tool calls, then fewer
//     completion tokens (as the model reported them; 0 when not recorded), then the trace's path.
//  3. With Distinct, an episode whose tool calls (names and arguments, in order) are those of a
//     better-ranked episode of its group is dropped (ReasonDuplicate).
//  4. With PerTask K, only the K best of each group are kept (ReasonPerTask).
//  5. With PerCapability N or Mix, episodes are counted by their task's first capability (""
//     when it declares none, or cannot be found): PerCapability keeps at most N of each; Mix
//     keeps the largest data set that follows the given shares exactly (up to rounding down),
//     and drops the episodes of capabilities it does not name (ReasonNotInMix). Within a
//     capability the best-ranked episode of every group is taken before the second of any
//     (ReasonCapability), the groups in an order drawn from their keys, so that no task's name
//     decides.
//
// Everything is decided before any episode is verified by replay (the expensive part) from what
// the traces record, and the result depends only on the traces, never on their order on the
// command line beyond the tie-break by path.
type Selection struct {
	// PerTask keeps at most that many episodes per task and start state; 0 keeps all.
	PerTask int
	// Distinct drops an episode whose tool calls repeat those of a better one of its group.
	Distinct bool
	// PerCapability keeps at most that many episodes per capability; 0 keeps all.
	PerCapability int
	// Mix, when set, makes the kept episodes follow these shares of capabilities.
	Mix []Share
	// Capability is the capability an episode counts for (its task's first); needed only with
	// PerCapability or Mix. Nil counts every episode as "".
	Capability func(e *Episode) string
}

// Share is one capability's weight in a Selection's Mix.
type Share struct {
	Capability string
	Weight     float64
}

// The reasons a Selection gives for the episodes it drops (counted in Summary.Skipped).
const (
	ReasonDuplicate  = "selected out: same tool calls as a better episode of the task"
	ReasonPerTask    = "selected out: beyond --per-task"
	ReasonCapability = "selected out: over its capability's share"
	ReasonNotInMix   = "selected out: capability not in --mix"
)

// ParseMix reads a mix written cap=weight,cap=weight (weights are positive numbers; they need
// not add up to 1).
func ParseMix(s string) ([]Share, error) {
	var out []Share
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		var weight float64
		if ok {
			var err error
			weight, err = strconv.ParseFloat(strings.TrimSpace(w), 64)
			ok = err == nil && !math.IsInf(weight, 0)
		}
		name = strings.TrimSpace(name)
		if !ok || name == "" || !(weight > 0) {
			return nil, fmt.Errorf("%q: want CAPABILITY=WEIGHT with a positive weight", part)
		}
		if seen[name] {
			return nil, fmt.Errorf("%q: the capability %s is given twice", part, name)
		}
		seen[name] = true
		out = append(out, Share{Capability: name, Weight: weight})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("want CAPABILITY=WEIGHT,...")
	}
	return out, nil
}

// Active reports whether the selection drops anything at all.
func (s *Selection) Active() bool {
	return s != nil && (s.PerTask > 0 || s.Distinct || s.PerCapability > 0 || len(s.Mix) > 0)
}

// candidate is what a Selection knows of an episode: what the trace records, not the trace.
type candidate struct {
	index      int // in the order of the paths
	group      string
	score      float64
	calls      int
	tokens     int64
	path       string
	seq        [32]byte // the tool calls
	capability string
	rank       int // within its group, after dropping duplicates
}

// candidateOf reads what a Selection ranks an episode by.
func (s *Selection) candidateOf(index int, e *Episode) candidate {
	c := candidate{index: index, path: e.Path, score: e.Score(),
		group: e.File() + "\x00" + e.Task() + "\x00" + e.Start().State}
	h := sha256.New()
	for _, call := range e.toolCalls() {
		c.calls++
		args := call.Arguments
		if obj, problem := conversation.ParseArguments(args); problem == "" {
			args = jsonv.MustEncode(obj)
		}
		fmt.Fprintf(h, "%d:%s\x00%d:%s\x00", len(call.Name), call.Name, len(args), args)
	}
	h.Sum(c.seq[:0])
	for _, ev := range e.Events {
		if a, ok := ev.Body.(*trace.Assistant); ok && a.Usage != nil {
			v, _ := a.Usage.Get("completion_tokens")
			n, _ := jsonv.Number(v)
			c.tokens += int64(n)
		}
	}
	if s.Capability != nil && (s.PerCapability > 0 || len(s.Mix) > 0) {
		c.capability = s.Capability(e)
	}
	return c
}

// better orders the candidates of a group: a higher score, fewer calls, fewer tokens, the path.
func better(a, b *candidate) bool {
	switch {
	case a.score != b.score:
		return a.score > b.score
	case a.calls != b.calls:
		return a.calls < b.calls
	case a.tokens != b.tokens:
		return a.tokens < b.tokens
	}
	return a.path < b.path
}

// choose decides which candidates are kept: kept[i] for the candidate of index i, and the
// reason of each one dropped.
func (s *Selection) choose(cands []candidate) (kept map[int]bool, dropped map[int]string) {
	kept, dropped = map[int]bool{}, map[int]string{}
	groups := map[string][]*candidate{}
	var keys []string
	for i := range cands {
		c := &cands[i]
		if _, ok := groups[c.group]; !ok {
			keys = append(keys, c.group)
		}
		groups[c.group] = append(groups[c.group], c)
	}
	sort.Strings(keys)
	var survivors []*candidate
	for _, k := range keys {
		g := groups[k]
		sort.SliceStable(g, func(i, j int) bool { return better(g[i], g[j]) })
		seen := map[[32]byte]bool{}
		rank := 0
		for _, c := range g {
			switch {
			case s.Distinct && seen[c.seq]:
				dropped[c.index] = ReasonDuplicate
			case s.PerTask > 0 && rank >= s.PerTask:
				dropped[c.index] = ReasonPerTask
			default:
				seen[c.seq] = true
				c.rank = rank
				rank++
				survivors = append(survivors, c)
			}
		}
	}
	if s.PerCapability <= 0 && len(s.Mix) == 0 {
		for _, c := range survivors {
			kept[c.index] = true
		}
		return kept, dropped
	}
	// within a capability: rank first, then the groups in an order drawn from their keys
	sort.SliceStable(survivors, func(i, j int) bool {
		a, b := survivors[i], survivors[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		ha, hb := sha256.Sum256([]byte(a.group)), sha256.Sum256([]byte(b.group))
		if ha != hb {
			return string(ha[:]) < string(hb[:])
		}
		return a.index < b.index
	})
	quota := s.quotas(survivors)
	taken := map[string]int{}
	for _, c := range survivors {
		q, named := quota[c.capability]
		switch {
		case !named:
			dropped[c.index] = ReasonNotInMix
		case q >= 0 && taken[c.capability] >= q:
			dropped[c.index] = ReasonCapability
		default:
			taken[c.capability]++
			kept[c.index] = true
		}
	}
	return kept, dropped
}

// quotas are how many episodes of each capability are kept (-1: no limit); a capability absent
// from the map is not in the mix. With a mix, the total T is the largest for which every
// capability of the mix has its share of T available: T = min over c of available(c)/share(c).
func (s *Selection) quotas(survivors []*candidate) map[string]int {
	avail := map[string]int{}
	for _, c := range survivors {
		avail[c.capability]++
	}
	q := map[string]int{}
	if len(s.Mix) == 0 {
		for c := range avail {
			q[c] = s.PerCapability
		}
		return q
	}
	sum := 0.0
	for _, sh := range s.Mix {
		sum += sh.Weight
	}
	total := -1.0
	for _, sh := range s.Mix {
		t := float64(avail[sh.Capability]) / (sh.Weight / sum)
		if total < 0 || t < total {
			total = t
		}
	}
	for _, sh := range s.Mix {
		n := int(total*sh.Weight/sum + 1e-9)
		if s.PerCapability > 0 && n > s.PerCapability {
			n = s.PerCapability
		}
		q[sh.Capability] = n
	}
	return q
}
