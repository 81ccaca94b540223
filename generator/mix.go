package generator

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
)

// DefaultCombine is how many capabilities an attempt draws besides its primary one.
const DefaultCombine = 1

// AllCapabilities, given as the only capability, is the whole taxonomy of the corpus.
const AllCapabilities = "all"

// Weight is the weight of a capability as a primary one (Options.Weights, `--mix name=weight`).
type Weight struct {
	Name   string `json:"name"`
	Weight int    `json:"weight"`
}

// mixPlan says what each attempt of a run is asked to exercise. With AllOf, every attempt gets
// the whole pool (the conjunction of the capabilities given). Otherwise attempt i draws one
// primary capability from the pool, in round robin (Weights nil) or in smooth weighted round
// robin, and up to Combine others among the pool's capabilities that combine naturally with it:
// those that corpus tasks list together with it, drawn with the attempt's seed, the more often
// they go together the likelier. Everything depends on the options and the attempt alone, so a
// resumed run (or a queue worker) draws what an uninterrupted run would.
type mixPlan struct {
	Pool    []string `json:"pool"`
	Weights []int    `json:"weights,omitempty"` // per pool member; nil: all 1
	Combine int      `json:"combine"`
	AllOf   bool     `json:"all_of,omitempty"`
	// Partners[k] are the pool's capabilities corpus tasks list with Pool[k], with how many
	// tasks do, in pool order.
	Partners [][]partner `json:"partners"`

	mu        sync.Mutex
	primaries []int // memo of the weighted round robin
	current   []int // its state after len(primaries) steps
}

type partner struct {
	Name  string `json:"name"`
	Tasks int    `json:"tasks"`
}

// draw is what one attempt is asked for: the primary capability first, then the others (with
// AllOf, no primary and the whole pool).
type draw struct {
	Primary string
	Caps    []string
}

// newMixPlan makes the plan of a pool; cooc counts corpus tasks per pair of capabilities.
func newMixPlan(pool []string, weights []Weight, combine int, allOf bool, cooc map[[2]string]int) (*mixPlan, error) {
	p := &mixPlan{Pool: append([]string{}, pool...), AllOf: allOf}
	switch {
	case combine == 0:
		p.Combine = DefaultCombine
	case combine > 0:
		p.Combine = combine
	}
	if len(weights) > 0 {
		p.Weights = make([]int, len(pool))
		for k := range p.Weights {
			p.Weights[k] = 1
		}
		for _, w := range weights {
			k := indexOf(pool, w.Name)
			if k < 0 {
				return nil, usageErr("mix: %q is not one of the capabilities asked for (%s)", w.Name, strings.Join(pool, ", "))
			}
			if w.Weight < 0 {
				return nil, usageErr("mix: the weight of %q is negative", w.Name)
			}
			p.Weights[k] = w.Weight
		}
		sum := 0
		for _, w := range p.Weights {
			sum += w
		}
		if sum == 0 {
			return nil, usageErr("mix: every weight is 0")
		}
	}
	p.Partners = make([][]partner, len(pool))
	for k, a := range pool {
		p.Partners[k] = []partner{}
		for _, b := range pool {
			if n := cooc[pairKey(a, b)]; a != b && n > 0 {
				p.Partners[k] = append(p.Partners[k], partner{b, n})
			}
		}
	}
	return p, nil
}

func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func indexOf(list []string, s string) int {
	for k, x := range list {
		if x == s {
			return k
		}
	}
	return -1
}

// cooccurrence counts, per pair of capabilities, the tasks that list both.
func cooccurrence(taskCaps [][]string) map[[2]string]int {
	out := map[[2]string]int{}
	for _, caps := range taskCaps {
		for i, a := range caps {
			for _, b := range caps[i+1:] {
				if a != b {
					out[pairKey(a, b)]++
				}
			}
		}
	}
	return out
}

// primary is the pool index of attempt i's primary capability.
func (p *mixPlan) primary(i int) int {
	if p.Weights == nil {
		return i % len(p.Pool)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.current == nil {
		p.current = make([]int, len(p.Pool))
	}
	total := 0
	for _, w := range p.Weights {
		total += w
	}
	// smooth weighted round robin: each step every capability gains its weight, the one ahead
	// (the first of the pool on a tie) is drawn and pays the total back
	for len(p.primaries) <= i {
		best := -1
		for k, w := range p.Weights {
			p.current[k] += w
			if w > 0 && (best < 0 || p.current[k] > p.current[best]) {
				best = k
			}
		}
		if best < 0 { // no positive weight (newMixPlan refuses it)
			best = 0
		}
		p.current[best] -= total
		p.primaries = append(p.primaries, best)
	}
	return p.primaries[i]
}

// draw is what attempt i, of seed seed, is asked for.
func (p *mixPlan) draw(i int, seed int64) draw {
	if p.AllOf { // no primary: all of them alike
		return draw{Caps: append([]string{}, p.Pool...)}
	}
	k := p.primary(i)
	d := draw{Primary: p.Pool[k], Caps: []string{p.Pool[k]}}
	cands := append([]partner{}, p.Partners[k]...)
	r := rand.New(rand.NewPCG(uint64(seed), 0x6d69782d64726177))
	var picked []string
	for len(picked) < p.Combine && len(cands) > 0 {
		total := 0
		for _, c := range cands {
			total += c.Tasks
		}
		x := r.IntN(total)
		j := 0
		for ; x >= cands[j].Tasks; j++ {
			x -= cands[j].Tasks
		}
		picked = append(picked, cands[j].Name)
		cands = append(cands[:j], cands[j+1:]...)
	}
	for _, c := range p.Pool { // the others in pool order
		if contains(picked, c) {
			d.Caps = append(d.Caps, c)
		}
	}
	return d
}

// CoverageRow is one capability's line of the coverage table.
type CoverageRow struct {
	Capability string `json:"capability"`
	Primary    int    `json:"primary"`  // attempts that drew it as their primary capability
	Asked      int    `json:"asked"`    // attempts asked for it, as primary or other
	Accepted   int    `json:"accepted"` // of those, accepted
	Rejected   int    `json:"rejected"`
	// Single and Multi split the accepted tasks: one turn without a simulated user, or more.
	Single int `json:"single_turn"`
	Multi  int `json:"multi_turn"`
}

// Coverage is the coverage table of a manifest's records: a row per capability of order (the
// pool of the run, asked for or not) and per other capability asked for, in the order of order
// and then by name.
func Coverage(recs []Record, order []string) []CoverageRow {
	rows := map[string]*CoverageRow{}
	for _, c := range order {
		rows[c] = &CoverageRow{Capability: c}
	}
	for _, r := range recs {
		for _, c := range r.Capabilities {
			row := rows[c]
			if row == nil {
				row = &CoverageRow{Capability: c}
				rows[c] = row
			}
			row.Asked++
			if c == r.Primary || (r.Primary == "" && len(r.Capabilities) == 1) {
				row.Primary++
			}
			if r.Status != "accepted" {
				row.Rejected++
				continue
			}
			row.Accepted++
			if r.MultiTurn {
				row.Multi++
			} else {
				row.Single++
			}
		}
	}
	names := make([]string, 0, len(rows))
	for n := range rows {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := indexOf(order, names[i]), indexOf(order, names[j])
		if (a < 0) != (b < 0) {
			return a >= 0
		}
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	out := make([]CoverageRow, 0, len(names))
	for _, n := range names {
		out = append(out, *rows[n])
	}
	return out
}

// WriteCoverage prints the coverage table.
func WriteCoverage(w io.Writer, rows []CoverageRow) {
	if len(rows) == 0 {
		return
	}
	width := len("capability")
	for _, r := range rows {
		width = max(width, len(r.Capability))
	}
	fmt.Fprintf(w, "%-*s  %7s  %5s  %8s  %8s  %6s  %5s\n", width, "capability", "primary", "asked", "accepted", "rejected", "single", "multi")
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %7d  %5d  %8d  %8d  %6d  %5d\n", width, r.Capability, r.Primary, r.Asked, r.Accepted, r.Rejected, r.Single, r.Multi)
	}
}
