package export

import "math"

// The advantages of `export rl --advantage` (docs/rewards.md gives the formulas with examples).
//
// A unit is what gets one advantage: an episode (--credit episode) or one turn of an episode
// (--credit turn). Units are normalised together when they share a key: the episode's RL group
// (its task, the version of the task's files and its start state), and for a turn its index as
// well. Only the units of one export are compared: an episode left out of the export is in no
// group.

// AdvantageEps is added to every standard deviation before it divides, so that a tiny spread
// does not blow an advantage up.
const AdvantageEps = 1e-6

// GDPOComponent is one reward component GDPO normalises on its own, and its weight in the sum.
type GDPOComponent struct {
	Name   string
	Weight float64
}

// GDPOComponents are the components of --advantage gdpo, in the order of a unit's components:
// the end event's completion, safety and robustness (for a turn, the turn's own; see
// Episode.turnValues), all weighing 1. passed is not one: it follows from completion and safety
// (and the task's threshold), so it would count them twice.
var GDPOComponents = []GDPOComponent{{"completion", 1}, {"safety", 1}, {"robustness", 1}}

// Normalize is (x_i - mean(x)) / (std(x) + AdvantageEps) for every x_i, std the population
// standard deviation sqrt(sum((x_i - mean)^2) / n). Values that are all equal (a single value
// too) give zeros: they say nothing about which is better, and computing it would leave
// rounding noise divided by AdvantageEps.
func Normalize(xs []float64) []float64 {
	out := make([]float64, len(xs))
	if allEqual(xs) {
		return out
	}
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	std := math.Sqrt(ss / n)
	for i, x := range xs {
		out[i] = (x - mean) / (std + AdvantageEps)
	}
	return out
}

func allEqual(xs []float64) bool {
	for _, x := range xs[min(1, len(xs)):] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// advUnit is one unit: its key, its reward (the scalar of --reward) and its components (in the
// order of GDPOComponents).
type advUnit struct {
	key        string
	reward     float64
	components []float64
}

// groups lists the indices of the units of each key, keys in the order they first appear.
func groups(units []advUnit) [][]int {
	at := map[string]int{}
	var out [][]int
	for i, u := range units {
		g, ok := at[u.key]
		if !ok {
			g = len(out)
			at[u.key] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], i)
	}
	return out
}

// normalizeWithin normalises value(u) within every group of units.
func normalizeWithin(units []advUnit, value func(u *advUnit) float64) []float64 {
	out := make([]float64, len(units))
	for _, g := range groups(units) {
		xs := make([]float64, len(g))
		for j, i := range g {
			xs[j] = value(&units[i])
		}
		for j, a := range Normalize(xs) {
			out[g[j]] = a
		}
	}
	return out
}

// grpoAdvantages are A_i = (r_i - mean(r)) / (std(r) + AdvantageEps) over the rewards of the
// units of i's group (Normalize).
func grpoAdvantages(units []advUnit) []float64 {
	return normalizeWithin(units, func(u *advUnit) float64 { return u.reward })
}

// gdpoAdvantages normalise every component within the groups on its own, sum the normalised
// components with their weights, and normalise the sums over every unit of the export (the
// batch): A_i = Normalize_batch(sum_k w_k * Normalize_group(c_k)_i).
func gdpoAdvantages(units []advUnit) []float64 {
	sum := make([]float64, len(units))
	for k, c := range GDPOComponents {
		for i, a := range normalizeWithin(units, func(u *advUnit) float64 { return u.components[k] }) {
			sum[i] += c.Weight * a
		}
	}
	return Normalize(sum)
}

// advantages are the advantages of the units by method (AdvantageGRPO or AdvantageGDPO).
func advantages(method string, units []advUnit) []float64 {
	if method == AdvantageGDPO {
		return gdpoAdvantages(units)
	}
	return grpoAdvantages(units)
}
