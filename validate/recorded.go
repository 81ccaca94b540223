package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/recorded"
)

// The recorded runs of a task (Options.Runs: its task file's sidecar, <task file>.runs.json, and
// the files of validate --runs) are played once the oracle passes, each as `coworkenv run --agent
// script` plays it: from the prepared state, with the task's faults, the scripted agent of the
// run (runtime/recorded). A hack (expect "fail") that passes is recorded-hack-passes, a careful
// run (expect "pass") that fails is recorded-careful-fails; a run that stops on an error of the
// task's scripts is reported as any other run's error is (runErr).

// runsFor are the runs of opts that play against t: those that name it, from its own file's
// sidecar or given for every task of the name.
func runsFor(t *dsl.Task, opts Options) []*recorded.Run {
	var out []*recorded.Run
	for _, r := range opts.Runs {
		if r.Task == t.Name && (r.For == "" || r.For == t.Rel) {
			out = append(out, r)
		}
	}
	return out
}

// SidecarRuns reads the runs files beside the task files of c (root-relative; nil: every task
// file): a task file's runs file, <task file>.runs.json, holds runs that play against that
// file's tasks (recorded.Run.For). A task file without one has none; a runs file that cannot be
// read, or does not parse, is an error that names it (and the run, line and column).
func SidecarRuns(c *dsl.Corpus, files []string) ([]*recorded.Run, error) {
	if files == nil {
		var err error
		if files, err = c.TaskFiles(); err != nil {
			return nil, err
		}
	}
	var out []*recorded.Run
	for _, rel := range files {
		side := rel + recorded.SidecarSuffix
		data, err := c.ReadSource(side)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %v", c.DisplayPath(side), err)
		}
		runs, err := recorded.Parse(c.DisplayPath(side), data, recorded.DefaultExpect(side))
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			r.For = rel
		}
		out = append(out, runs...)
	}
	return out, nil
}

// checkRecordedHacks raises recorded-hack-passes for each recorded hack of the task that passes.
func (v *taskCheck) checkRecordedHacks(o *oracleRun) { v.checkRecorded(o, recorded.Fail) }

// checkRecordedCareful raises recorded-careful-fails for each careful run of the task that
// fails.
func (v *taskCheck) checkRecordedCareful(o *oracleRun) { v.checkRecorded(o, recorded.Pass) }

// checkRecorded plays the task's runs that expect the verdict want, in the order given, and
// reports each whose verdict is the other.
func (v *taskCheck) checkRecorded(o *oracleRun, want recorded.Expect) {
	for _, run := range runsFor(v.t, v.opts) {
		if run.Expect != want || run.By != "" {
			continue // a red-team run is redteam.go's
		}
		agent, err := run.Agent()
		if err != nil {
			continue // Parse checked every call's arguments
		}
		r := v.runAgent(o, agent, episode.RunOptions{})
		if r.Err != nil {
			v.runErr("recorded "+run.Where(), r)
			continue
		}
		switch {
		case want == recorded.Fail && r.Passed:
			v.add(dsl.NewDiag("recorded-hack-passes", fmt.Sprintf("the hack recorded as %s passes (score %s; failed: %s)%s: %q; the verifier rewards work recorded as wrong: make it fail this run",
				run.Where(), episode.FormatScore(r.Score), itemList(r.Items, false), failedCalls(r), run.Why)))
		case want == recorded.Pass && !r.Passed:
			d := dsl.NewDiag("recorded-careful-fails", fmt.Sprintf("the careful run recorded as %s fails (score %s < pass_threshold %s; failed: %s)%s: %q; the verifier rejects work recorded as right: check facts, not wording or order",
				run.Where(), episode.FormatScore(r.Score), episode.FormatScore(v.t.PassThreshold), itemList(r.Items, false), failedCalls(r), run.Why))
			if f := r.FailedItems(); len(f) > 0 {
				d = d.At(f[0].Pos)
			}
			v.add(d)
		}
	}
}

// failedCalls names the calls of a run that failed (not by an injected fault): a recorded run
// whose calls fail no longer does what it was recorded doing. "" when none did.
func failedCalls(r *episode.Result) string {
	var parts []string
	for _, c := range r.Calls {
		if c.IsError && !c.Fault {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Name, shorten(c.Error, 80)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of its calls failed: %s)", len(parts), strings.Join(parts, "; "))
}
