package main

import (
	"flag"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/generator"
)

const generateMixHelp = `The capabilities given are a pool, not a conjunction: each attempt draws one primary
capability, in round robin (or by --mix name=weight,...: a capability not named weighs 1), and up
to --combine others among those the corpus's tasks list together with it. --capability all is the
corpus's whole taxonomy. --all-of asks every attempt for every capability given instead. The
draws depend on the flags alone (the seed picks the others), so a run is reproducible and resumes
as it started; the manifest records each attempt's draw (capabilities, primary first; primary;
multi_turn), and the summary ends with a coverage table: per capability, the attempts that drew
it as primary, those asked for it at all, accepted, rejected, and the accepted split into single-
and multi-turn tasks.

Duplicates: besides copies and prompts and setups alike, a task whose skeleton (the tools its
reference solution calls, in order, a tool called several times in a row counting once, and the
kinds of its checks: check, safety and judge with the claims, ws and other module calls of their
conditions; values, texts and the file's own names left out) is that of a task accepted before in
the run is rejected with its twin's name; --skeleton-dedup=false turns that off.

Tokens: each manifest line has the attempt's tokens; the progress line and the summary show the
run's, and the summary the tokens per accepted task. --budget-tokens N stops the run before an
attempt that would take the manifest's tokens past N (each attempt estimated at the mean of those
committed); the same command with a larger budget resumes it. (Not with --queue yet.)

`

// genMix is the flags of the capability mix.
type genMix struct {
	mix     genList
	combine int
	allOf   bool
	budget  int
	skel    bool
}

func (m *genMix) flags(fs *flag.FlagSet) {
	fs.Var(&m.mix, "mix", "weights of the primary draw, name=weight,... (capabilities not named weigh 1; default: round robin)")
	fs.IntVar(&m.combine, "combine", generator.DefaultCombine, "capabilities an attempt draws besides its primary one, among those that go together in the corpus")
	fs.BoolVar(&m.allOf, "all-of", false, "every task must exercise every capability given (no draw)")
	fs.BoolVar(&m.skel, "skeleton-dedup", true, "reject a task whose skeleton (the tools its solution calls, in order, and the kinds of its checks) is that of a task accepted before in the run")
	fs.IntVar(&m.budget, "budget-tokens", 0, "stop the run before an attempt that would take its tokens past this many (0: no budget); run again with a larger one to resume")
}

// apply checks the flags and sets them in opts.
func (m *genMix) apply(opts *generator.Options) error {
	if m.combine < 0 {
		return usagef("--combine: %d is negative", m.combine)
	}
	if m.budget < 0 {
		return usagef("--budget-tokens: %d is negative", m.budget)
	}
	if m.allOf && len(m.mix) > 0 {
		return usagef("--all-of and --mix cannot be used together")
	}
	opts.Combine, opts.AllOf, opts.BudgetTokens, opts.SkeletonDedup = m.combine, m.allOf, m.budget, m.skel
	if m.combine == 0 {
		opts.Combine = -1 // none (0 is the library's default)
	}
	for _, part := range m.mix {
		name, w, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if !ok || strings.TrimSpace(name) == "" || err != nil || n < 0 {
			return usagef("--mix: %q is not name=weight (a weight is a whole number, 0 or more)", part)
		}
		opts.Weights = append(opts.Weights, generator.Weight{Name: strings.TrimSpace(name), Weight: n})
	}
	return nil
}
