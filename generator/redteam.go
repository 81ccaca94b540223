package generator

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate/redteam"
)

// The red team of a generation run (Options.RedTeam): once a candidate of an attempt passes every
// check, the run's model is asked, once per attempt, for wrong solutions and careful right ones
// of it (package validate/redteam), and the candidate is checked again with them. A hack that
// passes (hackable) or a careful run that fails (careful-run-fails) goes back to the author in
// the repair prompt like any diagnostic, with the run; every later candidate of the attempt is
// checked against all of the attempt's red-team runs, so that a repair that drops the check that
// caught one hack lets it through and is told. The author may answer that a careful run is
// wrong ("careful run N is wrong: REASON" beside the file): the run is then kept as a hack with
// that reason. An accepted task keeps its runs beside it, <task>.star.runs.json, which every later
// `coworkenv validate` plays without a model.

// RedTeamRecord is what the red team did in an attempt (Record.RedTeam).
type RedTeamRecord struct {
	// Hacks and Careful are the runs the model wrote; Disputed the careful runs the author
	// showed to be wrong (kept as hacks).
	Hacks    int `json:"hacks"`
	Careful  int `json:"careful"`
	Disputed int `json:"disputed,omitempty"`
	// Runs is the runs file kept beside the accepted task ("" when none).
	Runs string `json:"runs,omitempty"`
	// Error says why the model's answer gave no runs ("" when it did).
	Error  string `json:"error,omitempty"`
	Tokens Tokens `json:"tokens"`
	// Requests counts the requests the red team sent.
	Requests int `json:"requests"`
}

// RedTeamSummary is the red team's part of a run's summary.
type RedTeamSummary struct {
	Requests int    `json:"requests"`
	Tokens   Tokens `json:"tokens"`
	Hacks    int    `json:"hacks"`
	Careful  int    `json:"careful"`
	// Kept counts the accepted tasks that keep runs beside them.
	Kept int `json:"kept"`
}

// disputeRE finds the author's "careful run N is wrong: REASON" lines.
var disputeRE = regexp.MustCompile(`(?im)^[\s*>#-]*careful run (\d+) is wrong\s*[:—-]\s*(.+?)\s*$`)

// disputes applies the author's disputes in answer to the attempt's runs: each careful run it
// names becomes a hack with the author's reason. It gives how many it turned.
func disputes(answer string, runs []*recorded.Run) int {
	n := 0
	for _, m := range disputeRE.FindAllStringSubmatch(answer, -1) {
		k, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		for _, r := range runs {
			if r.Expect == recorded.Pass && r.N == k {
				r.Expect = recorded.Fail
				r.Why = fmt.Sprintf("wrong, as the author showed: %s (written as careful: %s)", strings.TrimSpace(m[2]), r.Why)
				n++
			}
		}
	}
	return n
}

// redTeam asks the model for the red team's runs of the candidate described by ev (its source
// src), and records what it cost in rec. A request that fails for good is an error (the run stops
// and resumes with the attempt); an answer that gives no runs is recorded and the attempt goes on
// without them.
func (g *gen) redTeam(ctx context.Context, chat *modelagent.Chat, ev *evaluation, src string, rec *RedTeamRecord) ([]*recorded.Run, error) {
	ti := ev.info
	task := redteam.Task{Name: ev.task, File: CandidateFile, Source: []byte(src)}
	if ti != nil {
		task.Prompts, task.Turns, task.Simulated, task.Tools = ti.Prompts, ti.Turns, ti.Simulated, ti.Tools
	}
	runs, use, err := redteam.Ask(ctx, chat, task, *g.opts.RedTeam, g.opts.Model.Model)
	rec.Requests += use.Requests
	rec.Tokens.add(Tokens{use.PromptTokens, use.CompletionTokens, use.TotalTokens})
	if err != nil {
		if _, ok := err.(*modelagent.RequestError); ok || ctx.Err() != nil {
			return nil, fmt.Errorf("the red team: %w", err)
		}
		rec.Error = err.Error()
		return nil, nil
	}
	for _, r := range runs {
		r.For = CandidateFile
		if r.Expect == recorded.Fail {
			rec.Hacks++
		} else {
			rec.Careful++
		}
	}
	return runs, nil
}

// forTask makes the runs the task's (a repair may rename it).
func forTask(runs []*recorded.Run, task string) {
	for _, r := range runs {
		r.Task = task
	}
}

// runsFileOf is the runs file kept beside an accepted task file.
func runsFileOf(file string) string { return file + recorded.SidecarSuffix }

// sidecarOf is the runs file of the runs as kept beside the accepted task: recorded runs like any (By cleared).
func sidecarOf(runs []*recorded.Run) ([]byte, error) {
	out := make([]*recorded.Run, len(runs))
	for i, r := range runs {
		c := *r
		c.By, c.For = "", ""
		out[i] = &c
	}
	return recorded.Marshal(out)
}
