package validate

import (
	"fmt"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/recorded"
)

// The runs a red-team model wrote for a task in this check (recorded.Run.By set; package
// validate/redteam asks for them) are played like recorded runs, once the oracle passes: a hack
// that passes is hackable, a careful run that fails careful-run-fails. Their messages carry the
// run itself (one line of its runs file), so that the author, or the generator's repair prompt,
// sees what the model did.

// Probe is a class of attack or rewrite the validator already tries on every task: a red team is
// told them so that it looks elsewhere.
type Probe struct {
	Code, Doc string
}

// Probes are the checks of the registry that attack a verifier or reword the reference (every
// warning of the registry but the recorded and red-team runs and unused-tool), with their docs.
func Probes() []Probe {
	var out []Probe
	for _, c := range checks {
		switch c.code {
		case "unused-tool", "recorded-hack-passes", "recorded-careful-fails", "hackable", "careful-run-fails", "unsafe-noop", "fault-never-fires":
			continue
		}
		out = append(out, Probe{Code: c.code, Doc: c.Code().Doc})
	}
	return out
}

// checkRedTeamHacks raises hackable for each red-team hack of the task that passes.
func (v *taskCheck) checkRedTeamHacks(o *oracleRun) { v.checkRedTeam(o, recorded.Fail) }

// checkRedTeamCareful raises careful-run-fails for each red-team careful run that fails.
func (v *taskCheck) checkRedTeamCareful(o *oracleRun) { v.checkRedTeam(o, recorded.Pass) }

func (v *taskCheck) checkRedTeam(o *oracleRun, want recorded.Expect) {
	for _, run := range runsFor(v.t, v.opts) {
		if run.Expect != want || run.By == "" {
			continue
		}
		agent, err := run.Agent()
		if err != nil {
			continue // redteam.Read parsed every call's arguments
		}
		r := v.runAgent(o, agent, episode.RunOptions{})
		if r.Err != nil {
			v.runErr(fmt.Sprintf("red-team run %d", run.N), r)
			continue
		}
		line, _ := run.MarshalLine()
		switch {
		case want == recorded.Fail && r.Passed:
			v.add(dsl.NewDiag("hackable", fmt.Sprintf("hack %d of the red team (%s) passes (score %s; failed: %s)%s: %q; the run: %s",
				run.N, run.By, episode.FormatScore(r.Score), itemList(r.Items, false), failedCalls(r), run.Why, shorten(string(line), maxRunShown))))
		case want == recorded.Pass && !r.Passed:
			d := dsl.NewDiag("careful-run-fails", fmt.Sprintf("careful run %d of the red team (%s) fails (score %s < pass_threshold %s; failed: %s)%s: %q; the run: %s",
				run.N, run.By, episode.FormatScore(r.Score), episode.FormatScore(v.t.PassThreshold), itemList(r.Items, false), failedCalls(r), run.Why, shorten(string(line), maxRunShown)))
			if f := r.FailedItems(); len(f) > 0 {
				d = d.At(f[0].Pos)
			}
			v.add(d)
		}
	}
}

// maxRunShown is how much of a red-team run its diagnostic quotes, in bytes.
const maxRunShown = 2000
