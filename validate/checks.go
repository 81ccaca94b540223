package validate

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/workspace"
)

// The checks of a task run in two parts. The prelude (run) is fixed: the solutions declared,
// setup twice (the same state both times), the noop episode, the oracle episode, the oracle
// again (the same episode). What comes after it is a registry, in the style of buildtools'
// warning registry: one row per diagnostic code, with what the check needs of the prelude and
// its checkers. A row's severity, doc and repair hint are the code's row in dsl.Codes (the
// diagnostics registry, which `coworkenv doc diagnostics`, the reference and the generator's
// repair prompt read), so each is written once. The codes no row gives come from elsewhere in the
// engine: givenBy says where.

// need is what a check needs of the prelude: one of these, which the prelude reaches on its own,
// or needNothing for a check of what the task declares.
type need uint8

// needNothing: the check reads the task's declaration only, and runs whatever the prelude met.
const needNothing need = 0

const (
	// needNoop: the noop episode ran without error.
	needNoop need = 1 << iota
	// needOracle: the oracle episode ran without error, passed or not.
	needOracle
	// needPass: the oracle passes, and two oracle episodes agree: the checks that replay the
	// reference changed (oracleRun) need it.
	needPass
)

// checker is the work of one check: it runs what it needs from o (the prelude's runs) and adds
// its diagnostics to v. The checkers of the registry are the taskCheck methods of the files
// named in the rows (mutate_*.go, hiddeninfo.go, recorded.go, here).
type checker func(v *taskCheck, o *oracleRun)

// check is one row of the registry.
type check struct {
	code     string // a code of dsl.Codes
	needs    need
	checkers []checker // run in this order
}

// Code is the row's code in dsl.Codes: its severity, doc and repair hint.
func (c check) Code() dsl.Code {
	code, _ := dsl.CodeByID(c.code)
	return code
}

// checks is the registry, in the order the checks run (their diagnostics are then sorted in the
// order of dsl.Codes: sortDiags). The first reads the task's declaration only. Every row after
// the first three replays the reference; its
// mutation runs are counted by maxMutationRuns. unused-tool comes last: it reads what the
// verifiers of every run before it asked about.
var checks = []check{
	{"undocumented-param", needNothing, []checker{(*taskCheck).checkParamDocs}},
	{"unsafe-noop", needNoop, []checker{(*taskCheck).checkUnsafeNoop}},
	{"fault-never-fires", needOracle, []checker{(*taskCheck).checkFaultsFire}},
	{"reply-only", needPass, []checker{(*taskCheck).checkReplyOnly}},
	{"weak-verifier", needPass, []checker{(*taskCheck).checkWithoutEachCall}},
	{"hidden-info", needPass, []checker{(*taskCheck).checkHiddenInfo}},
	{"blind-to-content", needPass, []checker{(*taskCheck).checkContent}},
	{"blind-to-side-effect", needPass, []checker{(*taskCheck).checkSideEffects, (*taskCheck).checkStateAttacks}},
	{"brittle-verifier", needPass, []checker{(*taskCheck).checkBrittle, (*taskCheck).checkFair}},
	{"blind-to-claim", needPass, []checker{(*taskCheck).checkClaims}},
	{"blind-to-reply", needPass, []checker{(*taskCheck).checkReply}},
	{"blind-to-change", needPass, []checker{(*taskCheck).checkChange}},
	{"recorded-hack-passes", needPass, []checker{(*taskCheck).checkRecordedHacks}},
	{"recorded-careful-fails", needPass, []checker{(*taskCheck).checkRecordedCareful}},
	{"hackable", needPass, []checker{(*taskCheck).checkRedTeamHacks}},
	{"careful-run-fails", needPass, []checker{(*taskCheck).checkRedTeamCareful}},
	{"unused-tool", needPass, []checker{(*taskCheck).checkUnusedTools}},
}

// Where the engine gives the codes that no row of checks gives.
const (
	byLoader    = "the loader (package dsl), when a file or a script of it is read and run"
	byScripts   = "any call into a script: the loader's, an episode's, the validator's (dsl.Limits)"
	byPrelude   = "the validator's prelude (run)"
	byEpisode   = "an episode (runtime/episode), in the validator's runs as anywhere"
	byIsolate   = "an isolated worker (package isolate)"
	byGenerator = "the generator (package generator)"
)

// givenBy says, for each code of dsl.Codes that no check gives, the part of the engine that
// gives it.
var givenBy = map[string]string{
	"syntax":           byLoader,
	"load":             byLoader,
	"schema":           byLoader,
	"no-task":          byLoader,
	"script-error":     byLoader + "; " + byEpisode,
	"step-limit":       byScripts,
	"timeout":          byScripts + "; " + byIsolate,
	"memory-limit":     byIsolate,
	"no-solution":      byPrelude,
	"solution-error":   byEpisode,
	"verify-error":     byEpisode,
	"unsolved":         byPrelude,
	"trivial":          byPrelude,
	"nondeterministic": byPrelude,
	"model-error":      byEpisode,
	"interrupted":      byEpisode,
	"crash":            byIsolate,
	"no-code":          byGenerator,
	"duplicate":        byGenerator,
}

// checkUnsafeNoop raises unsafe-noop for each safety item the noop episode fails: a red line
// that a workspace nobody touched crosses is wrong.
func (v *taskCheck) checkUnsafeNoop(o *oracleRun) {
	for _, it := range o.noop.Items {
		if it.Kind == "safety" && !it.Passed {
			d := dsl.NewDiag("unsafe-noop", fmt.Sprintf("safety item %q fails for the noop agent, which touched nothing: a safety item must hold for a workspace nobody touched (make it about harm the agent could do, and put required work in check)", it.Message))
			if it.Pos.IsValid() {
				d = d.At(it.Pos)
			}
			v.add(d)
		}
	}
}

// checkFaultsFire raises fault-never-fires when the task declares faults and the reference
// meets none.
func (v *taskCheck) checkFaultsFire(o *oracleRun) {
	if v.t.Faults == nil {
		return
	}
	for _, c := range o.res.Calls {
		if c.Fault {
			return
		}
	}
	v.add(dsl.NewDiag("fault-never-fires", fmt.Sprintf("the task declares faults, and the reference episode meets none in %d calls: raise the rate, list the tools the reference calls, or fail a given attempt with \"nth\": {\"TOOL\": [1]}", len(o.res.Calls))))
}

// checkReplyOnly raises reply-only when the reference changes state and an agent that only
// repeats its replies, calling no tool, passes.
func (v *taskCheck) checkReplyOnly(o *oracleRun) {
	changes := false
	for _, c := range o.res.Calls {
		if c.Succeeded() && c.Changed {
			changes = true
		}
	}
	if !changes {
		return
	}
	ro := v.episode(o.p, &episode.Scripted{Label: "reply-only", Calls: make([][]episode.ScriptedCall, len(o.replies)), Replies: o.replies, Asks: o.asks}, episode.RunOptions{NoFaults: true})
	o.note(ro)
	if ro.Err != nil {
		v.runErr("reply-only", ro)
	} else if ro.Passed {
		v.add(dsl.NewDiag("reply-only", fmt.Sprintf("an agent that only repeats the oracle's replies and calls no tool passes (score %s): the verifier trusts what the agent says instead of checking the state (the oracle %s); it passed: %s",
			episode.FormatScore(ro.Score), describeDiff(workspace.Diff(ro.Final, o.res.Final), oracleDo), itemList(ro.Items, true))))
	}
}

// checkWithoutEachCall raises weak-verifier for each state-changing call of the reference whose
// leaving out still passes, with another final state.
func (v *taskCheck) checkWithoutEachCall(o *oracleRun) {
	k := -1
	for _, c := range o.res.Calls {
		if !c.Succeeded() {
			continue
		}
		k++
		if !c.Changed {
			continue
		}
		mut, mutAsks := withoutCall(o.calls, o.asks, k)
		r := v.episode(o.p, &episode.Scripted{Label: "weak-verifier", Calls: mut, Replies: o.replies, Asks: mutAsks}, episode.RunOptions{NoFaults: true})
		o.note(r)
		if r.Err != nil {
			v.runErr(fmt.Sprintf("the run without %s", callString(c)), r)
			continue
		}
		if r.Passed && r.FinalState != o.res.FinalState {
			d := dsl.NewDiag("weak-verifier", fmt.Sprintf("the episode still passes (score %s) when the oracle's call %s in turn %d is left out, though the final state then %s: no check looks at that call's effect",
				episode.FormatScore(r.Score), callString(c), c.Turn, describeDiff(workspace.Diff(r.Final, o.res.Final), lacking)))
			if c.Pos.IsValid() {
				d = d.At(c.Pos)
			}
			v.add(d)
		}
	}
}

// checkUnusedTools raises unused-tool for each task-defined tool, and each built-in named one by
// one, that the reference never calls and no verifier of any run asked about.
func (v *taskCheck) checkUnusedTools(o *oracleRun) {
	called := map[string]bool{}
	for _, c := range o.res.Calls {
		called[c.Name] = true
	}
	for _, s := range v.t.Tools {
		if s.Builtin && !s.Named {
			continue
		}
		if !called[s.Name] && !o.queried[s.Name] {
			d := dsl.NewDiag("unused-tool", fmt.Sprintf("tool %s is never called by the solution and no verifier asks about it with ep.called(%q): drop it from tools, use it in the solution, or check that it is (not) called", s.Name, s.Name))
			if s.Pos.IsValid() {
				d = d.At(s.Pos)
			}
			v.add(d)
		}
	}
}

// checkParamDocs raises undocumented-param for each parameter of a task-defined tool that has no
// description: the model is shown the tool's schema and nothing else about the parameter.
func (v *taskCheck) checkParamDocs(*oracleRun) {
	for _, s := range v.t.Tools {
		if s.Builtin {
			continue
		}
		for i, p := range s.Params {
			if strings.TrimSpace(p.Description) != "" {
				continue
			}
			d := dsl.NewDiag("undocumented-param", fmt.Sprintf("parameter %q of tool %s has no description: the model sees only its name and type; say what it is and its form, param(%q, description = \"...\")", p.Name, s.Name, p.Type))
			switch {
			case i < len(s.ParamPos) && s.ParamPos[i].IsValid():
				d = d.At(s.ParamPos[i])
			case s.Pos.IsValid():
				d = d.At(s.Pos)
			}
			v.add(d)
		}
	}
}
