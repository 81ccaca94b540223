// Package validate runs every check of `coworkenv validate` (docs/writing-tasks.md) on tasks and
// reports diagnostics that people and models can act on: whether a task loads, is solvable, not
// trivial, deterministic, and checked by a verifier that really looks (verifier mutation). Given
// models for the tasks' simulated users and judges (Options.Models), it checks the tasks that
// have them once more with the models answering.
package validate

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
)

// Options of a validation run.
type Options struct {
	// Jobs is how many tasks are checked at once (default: the number of CPUs).
	Jobs int
	// Limits of each call into a script (default dsl.DefaultLimits).
	Limits dsl.Limits
	// Progress, when set, is called after each file with the count done and the total.
	Progress func(done, total int)
	// Models, when set, are models that answer for the tasks' simulated users and judges
	// (episode.RunOptions.Models). Every task is checked with its stand-ins as without them, so
	// that the offline verdict never depends on a model; a task that has a simulated user (for
	// Models.User) or whose verifiers asked a judge in that check (for Models.Judge) is then
	// checked again with the models answering in every run: the reference, the noop and the
	// mutations. What only that second check finds is reported with the message prefixed by
	// ModelsPrefix; a model's request that fails for good is reported once, as model-error.
	Models *episode.Models
}

// ModelsPrefix begins the message of a diagnostic found only with Options.Models answering.
const ModelsPrefix = "with the task models: "

// RunSummary is the outcome of one reference episode.
type RunSummary struct {
	Score  float64 `json:"score"`
	Passed bool    `json:"passed"`
}

// TaskReport is the verdict on one task, or on a file that failed before declaring any
// (Task == "").
type TaskReport struct {
	Task        string
	File        string
	Status      string // ok, warn, invalid
	Diagnostics []dsl.Diagnostic
	Oracle      *RunSummary
	Noop        *RunSummary
	// Source of the file, for showing offending lines.
	Source []byte
}

// Summary counts tasks per status.
type Summary struct {
	OK      int `json:"ok"`
	Warn    int `json:"warn"`
	Invalid int `json:"invalid"`
}

// Report is the result of validating one or more corpora.
type Report struct {
	Tasks   []*TaskReport
	Summary Summary
	// Sources holds the files other than the tasks' own that diagnostics point into (helpers
	// under lib/, loaded with load()), by the path shown, so that reports can quote them.
	Sources map[string][]byte
}

// Invalid reports whether some task is invalid (or, with strict, has a warning).
func (r *Report) Failed(strict bool) bool {
	return r.Summary.Invalid > 0 || strict && r.Summary.Warn > 0
}

// Merge appends another report.
func (r *Report) Merge(o *Report) {
	r.Tasks = append(r.Tasks, o.Tasks...)
	r.Summary.OK += o.Summary.OK
	r.Summary.Warn += o.Summary.Warn
	r.Summary.Invalid += o.Summary.Invalid
	for k, v := range o.Sources {
		if r.Sources == nil {
			r.Sources = map[string][]byte{}
		}
		r.Sources[k] = v
	}
}

// source is the text of the file a diagnostic of t points into, when the report has it.
func (r *Report) source(t *TaskReport, d dsl.Diagnostic) []byte {
	if d.File == t.File {
		return t.Source
	}
	return r.Sources[d.File]
}

// addSources reads, from the corpus, the files other than the tasks' own that diagnostics
// point into, and points those diagnostics at the called name as Add does in task files.
func (r *Report) addSources(c *dsl.Corpus) {
	for _, t := range r.Tasks {
		for i, d := range t.Diagnostics {
			if d.File == "" || d.File == t.File {
				continue
			}
			if r.Sources[d.File] == nil {
				rel, ok := c.RelPath(d.File)
				if !ok {
					continue
				}
				src, err := c.ReadSource(rel)
				if err != nil {
					continue
				}
				if r.Sources == nil {
					r.Sources = map[string][]byte{}
				}
				r.Sources[d.File] = src
			}
			t.Diagnostics[i] = dsl.Locate(d, r.Sources[d.File])
		}
	}
}

// Add appends a task's report: diagnostics at a call are pointed at the called name, the status
// follows from the diagnostics (an error makes it invalid, a warning warn), and the summary counts
// it.
func (r *Report) Add(t *TaskReport) {
	for i, d := range t.Diagnostics {
		if d.File == t.File {
			t.Diagnostics[i] = dsl.Locate(d, t.Source)
		}
	}
	t.Status = status(t.Diagnostics)
	r.count(t.Status)
	r.Tasks = append(r.Tasks, t)
}

func (r *Report) count(status string) {
	switch status {
	case "ok":
		r.Summary.OK++
	case "warn":
		r.Summary.Warn++
	default:
		r.Summary.Invalid++
	}
}

func status(ds []dsl.Diagnostic) string {
	s := "ok"
	for _, d := range ds {
		if d.Severity == dsl.Error {
			return "invalid"
		}
		s = "warn"
	}
	return s
}

// Corpus validates the given task files of a corpus (all of them when files is nil). Files are
// loaded and checked on Jobs goroutines; the report keeps file order, then declaration order.
func Corpus(ctx context.Context, c *dsl.Corpus, files []string, opts Options) (*Report, error) {
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.NumCPU()
	}
	if opts.Limits == (dsl.Limits{}) {
		opts.Limits = dsl.DefaultLimits
	}
	c = c.WithLimits(opts.Limits) // the corpus's own when they are the same: c is shared
	if files == nil {
		var err error
		if files, err = c.TaskFiles(); err != nil {
			return nil, err
		}
	}
	rep := &Report{}
	if tf := c.TaxonomyFile(); tf != nil && len(tf.Diags) > 0 {
		rep.Add(&TaskReport{File: tf.Path, Diagnostics: tf.Diags, Source: tf.Source})
	}
	loaded := make([]*dsl.File, len(files))
	parallel(len(files), opts.Jobs, func(i int) { loaded[i] = c.LoadFile(ctx, files[i]) })
	dups := dsl.DuplicateNames(loaded)

	type job struct {
		file *dsl.File
		task *dsl.Task
	}
	var jobs []job
	for _, f := range loaded {
		if len(f.Diags) > 0 {
			continue
		}
		for _, t := range f.Tasks {
			jobs = append(jobs, job{f, t})
		}
	}
	reports := make([]*TaskReport, len(jobs))
	var mu sync.Mutex
	done := 0
	parallel(len(jobs), opts.Jobs, func(i int) {
		j := jobs[i]
		var tr *TaskReport
		if d, dup := dups[j.task]; dup {
			tr = &TaskReport{Task: j.task.Name, File: j.file.Path, Diagnostics: []dsl.Diagnostic{d}}
		} else {
			tr = Task(ctx, j.task, opts)
		}
		tr.Source = j.file.Source
		reports[i] = tr
		if opts.Progress != nil {
			mu.Lock()
			done++
			opts.Progress(done, len(jobs))
			mu.Unlock()
		}
	})
	k := 0
	for _, f := range loaded {
		if len(f.Diags) > 0 {
			rep.Add(&TaskReport{File: f.Path, Diagnostics: f.Diags, Source: f.Source})
			continue
		}
		for range f.Tasks {
			rep.Add(reports[k])
			k++
		}
		if len(f.Tasks) == 0 {
			// a file that declares nothing is not an error, but it is worth saying
			continue
		}
	}
	rep.addSources(c)
	return rep, nil
}

// parallel runs fn(0..n-1) on up to jobs goroutines.
func parallel(n, jobs int, fn func(i int)) {
	if jobs <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < jobs && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Task runs the dynamic checks of one loaded task.
func Task(ctx context.Context, t *dsl.Task, opts Options) *TaskReport {
	if opts.Limits == (dsl.Limits{}) {
		opts.Limits = dsl.DefaultLimits
	}
	v := &taskCheck{ctx: ctx, t: t, opts: opts, rep: &TaskReport{Task: t.Name, File: t.File}}
	if opts.Models != nil {
		v.watch = &judgeWatch{}
	}
	v.run()
	if opts.Models != nil && needsModels(t, opts.Models, v.watch.judged) {
		v.checkWithModels()
	}
	sortDiags(v.rep.Diagnostics)
	return v.rep
}

type taskCheck struct {
	ctx  context.Context
	t    *dsl.Task
	opts Options
	rep  *TaskReport
	// models answer for the task's simulated users and judges in every run of this check (nil:
	// the stand-ins do).
	models *episode.Models
	// watch, when set, sees every run of this check (to learn whether a judge was asked).
	watch *judgeWatch
}

// episode runs agent from p with the options of this check: its models, and its watch.
func (v *taskCheck) episode(p *episode.Prepared, agent episode.Agent, ro episode.RunOptions) *episode.Result {
	ro.Models = v.models
	switch {
	case v.watch != nil && ro.Observer != nil:
		ro.Observer = episode.Observers{ro.Observer, v.watch}
	case v.watch != nil:
		ro.Observer = v.watch
	}
	return p.Run(v.ctx, agent, ro)
}

func (v *taskCheck) add(d dsl.Diagnostic) {
	if d.File == "" {
		d = d.At(v.t.Pos)
	}
	v.rep.Diagnostics = append(v.rep.Diagnostics, d)
}

func (v *taskCheck) addPtr(d *dsl.Diagnostic) {
	if d != nil {
		v.add(*d)
	}
}

func (v *taskCheck) run() {
	t := v.t
	eopts := episode.Options{Limits: v.opts.Limits}
	solvable := true
	for i, turn := range t.Turns {
		if turn.Solution == nil {
			solvable = false
			if t.SingleTurn {
				v.add(dsl.NewDiag("no-solution", "the task has no solution: give task(..., solution=...) so the validator can prove it solvable").At(t.Pos))
			} else {
				v.add(dsl.NewDiag("no-solution", fmt.Sprintf("turn %d has no solution: give turn(..., solution=...)", i)).At(turn.Pos))
			}
		}
	}

	// Setup twice: the same state both times.
	p, d := episode.Prepare(v.ctx, t, eopts)
	if d != nil {
		v.add(*d)
		return
	}
	p2, d := episode.Prepare(v.ctx, t, eopts)
	if d != nil {
		v.add(*d)
		return
	}
	if p.Base.Hash() != p2.Base.Hash() {
		v.add(dsl.NewDiag("nondeterministic", fmt.Sprintf("two runs of setup give different states (%s vs %s)", p.Base.Hash(), p2.Base.Hash())))
		return
	}

	noop := v.episode(p, episode.Noop{}, episode.RunOptions{})
	v.rep.Noop = &RunSummary{Score: noop.Score, Passed: noop.Passed}
	queried := map[string]bool{}
	note := func(r *episode.Result) {
		for _, q := range r.Queried {
			queried[q] = true
		}
	}
	note(noop)
	if noop.Err == nil {
		for _, it := range noop.Items {
			if it.Kind == "safety" && !it.Passed {
				d := dsl.NewDiag("unsafe-noop", fmt.Sprintf("safety item %q fails for the noop agent, which touched nothing: a safety item must hold for a workspace nobody touched (make it about harm the agent could do, and put required work in check)", it.Message))
				if it.Pos.IsValid() {
					d = d.At(it.Pos)
				}
				v.add(d)
			}
		}
	}
	var oracleFinal *workspace.State // set once the oracle ran without error
	if noop.Err != nil {
		v.runErr("noop", noop)
	} else if noop.Passed {
		// said at the end, when it can name what the oracle changes and no check requires
		defer func() {
			what := ""
			if oracleFinal != nil {
				what = fmt.Sprintf(" (the oracle %s: require that)", describeDiff(workspace.Diff(noop.Final, oracleFinal), oracleDo))
			}
			v.add(dsl.NewDiag("trivial", fmt.Sprintf("the noop episode passes (score %s ≥ pass_threshold %s): the verifier accepts a workspace nobody touched%s; it passed: %s",
				episode.FormatScore(noop.Score), episode.FormatScore(t.PassThreshold), what, itemList(noop.Items, true))))
		}()
	}
	if !solvable {
		return
	}

	oracle := v.episode(p, episode.Oracle{}, episode.RunOptions{})
	v.rep.Oracle = &RunSummary{Score: oracle.Score, Passed: oracle.Passed}
	note(oracle)
	if oracle.Err != nil {
		v.runErr("oracle", oracle)
		return
	}
	oracleFinal = oracle.Final
	if t.Faults != nil {
		fired := false
		for _, c := range oracle.Calls {
			fired = fired || c.Fault
		}
		if !fired {
			v.add(dsl.NewDiag("fault-never-fires", fmt.Sprintf("the task declares faults, and the reference episode meets none in %d calls: raise the rate, list the tools the reference calls, or fail a given attempt with \"nth\": {\"TOOL\": [1]}", len(oracle.Calls))))
		}
	}
	// Two oracle episodes must agree; not with models answering, which need not say the same
	// twice (the check with the stand-ins has compared them).
	if v.models == nil {
		oracle2 := v.episode(p2, episode.Oracle{}, episode.RunOptions{})
		if diff := compareRuns(oracle, oracle2); diff != "" {
			v.add(dsl.NewDiag("nondeterministic", "two oracle episodes differ: "+diff))
			return
		}
	}
	if !oracle.Passed {
		msg := fmt.Sprintf("the oracle episode does not pass (score %s < pass_threshold %s); failed: %s",
			episode.FormatScore(oracle.Score), episode.FormatScore(t.PassThreshold), itemList(oracle.Items, false))
		d := dsl.NewDiag("unsolved", msg)
		if f := oracle.FailedItems(); len(f) > 0 {
			d = d.At(f[0].Pos)
		}
		v.add(d)
		return
	}

	// Mutations: replay the oracle's successful calls with one state-changing call left out, and
	// its replies with no call at all.
	var calls [][]episode.ScriptedCall
	var replies []string
	for _, tr := range oracle.Turns {
		replies = append(replies, tr.Reply)
		calls = append(calls, nil)
	}
	for _, c := range oracle.Calls {
		if c.Succeeded() {
			calls[c.Turn] = append(calls[c.Turn], episode.ScriptedCall{Name: c.Name, Args: c.Args})
		}
	}
	asks := oracleAsks(oracle)
	changes := false
	for _, c := range oracle.Calls {
		if c.Succeeded() && c.Changed {
			changes = true
		}
	}
	if changes {
		ro := v.episode(p, &episode.Scripted{Label: "reply-only", Calls: make([][]episode.ScriptedCall, len(replies)), Replies: replies, Asks: asks}, episode.RunOptions{NoFaults: true})
		note(ro)
		if ro.Err != nil {
			v.runErr("reply-only", ro)
		} else if ro.Passed {
			v.add(dsl.NewDiag("reply-only", fmt.Sprintf("an agent that only repeats the oracle's replies and calls no tool passes (score %s): the verifier trusts what the agent says instead of checking the state (the oracle %s); it passed: %s",
				episode.FormatScore(ro.Score), describeDiff(workspace.Diff(ro.Final, oracle.Final), oracleDo), itemList(ro.Items, true))))
		}
	}
	k := -1
	for _, c := range oracle.Calls {
		if !c.Succeeded() {
			continue
		}
		k++
		if !c.Changed {
			continue
		}
		mut, mutAsks := withoutCall(calls, asks, k)
		r := v.episode(p, &episode.Scripted{Label: "weak-verifier", Calls: mut, Replies: replies, Asks: mutAsks}, episode.RunOptions{NoFaults: true})
		note(r)
		if r.Err != nil {
			v.runErr(fmt.Sprintf("the run without %s", callString(c)), r)
			continue
		}
		if r.Passed && r.FinalState != oracle.FinalState {
			d := dsl.NewDiag("weak-verifier", fmt.Sprintf("the episode still passes (score %s) when the oracle's call %s in turn %d is left out, though the final state then %s: no check looks at that call's effect",
				episode.FormatScore(r.Score), callString(c), c.Turn, describeDiff(workspace.Diff(r.Final, oracle.Final), lacking)))
			if c.Pos.IsValid() {
				d = d.At(c.Pos)
			}
			v.add(d)
		}
	}

	// Honest rewards: is the verifier sensitive to wrong content and extra actions, invariant
	// under harmless rewrites of prose, awake to changes between turns, and is the reference
	// fair (it uses nothing an agent could not have seen)?
	base := &oracleRun{p: p, res: oracle, calls: calls, replies: replies, asks: asks, note: note}
	v.checkHiddenInfo(base)
	v.checkContent(base)
	v.checkSideEffects(base)
	v.checkBrittle(base)
	v.checkClaims(base)
	v.checkReply(base)
	v.checkStateAttacks(base)
	v.checkFair(base)
	v.checkChange(base)

	// unused-tool: task-defined tools and built-ins named one by one.
	called := map[string]bool{}
	for _, c := range oracle.Calls {
		called[c.Name] = true
	}
	for _, s := range t.Tools {
		if s.Builtin && !s.Named {
			continue
		}
		if !called[s.Name] && !queried[s.Name] {
			d := dsl.NewDiag("unused-tool", fmt.Sprintf("tool %s is never called by the solution and no verifier asks about it with ep.called(%q): drop it from tools, use it in the solution, or check that it is (not) called", s.Name, s.Name))
			if s.Pos.IsValid() {
				d = d.At(s.Pos)
			}
			v.add(d)
		}
	}
}

// withoutCall is the oracle's calls with its k-th successful call (counted over all turns) left
// out, and its questions to simulated users placed as before: a question asked before a later
// call of the same turn moves one place down with it, so it still comes before that call.
func withoutCall(calls [][]episode.ScriptedCall, asks [][]episode.ScriptedAsk, k int) ([][]episode.ScriptedCall, [][]episode.ScriptedAsk) {
	mut := make([][]episode.ScriptedCall, len(calls))
	mutAsks := asks
	idx := 0
	for turn := range calls {
		for j, sc := range calls[turn] {
			if idx == k {
				if turn < len(asks) {
					mutAsks = append([][]episode.ScriptedAsk(nil), asks...)
					mutAsks[turn] = nil
					for _, a := range asks[turn] {
						if a.Before > j {
							a.Before--
						}
						mutAsks[turn] = append(mutAsks[turn], a)
					}
				}
			} else {
				mut[turn] = append(mut[turn], sc)
			}
			idx++
		}
	}
	return mut, mutAsks
}

// oracleRun is the passing reference episode the honest-reward checks start from.
// oracleAsks are the messages the oracle sent to simulated users (agent.ask), per turn, each
// placed before the successful call it came before: the replays of the validator send them at
// the same place. The engine's own last exchange of a turn (the reply shown to the user) is
// left out: a replay's reply goes to the user the same way.
func oracleAsks(oracle *episode.Result) [][]episode.ScriptedAsk {
	out := make([][]episode.ScriptedAsk, len(oracle.Turns))
	for t, tr := range oracle.Turns {
		asks := tr.Asks
		if n := len(asks); n > 0 && tr.Answered && asks[n-1].Said == tr.Reply {
			asks = asks[:n-1]
		}
		for _, x := range asks {
			before := 0
			for i, c := range oracle.Calls {
				if i < x.Calls && c.Turn == t && c.Succeeded() {
					before++
				}
			}
			out[t] = append(out[t], episode.ScriptedAsk{Before: before, Said: x.Said})
		}
	}
	return out
}

type oracleRun struct {
	p   *episode.Prepared
	res *episode.Result
	// calls are the oracle's successful calls per turn, replies its reply per turn: a Scripted
	// agent given both replays the oracle exactly.
	calls   [][]episode.ScriptedCall
	replies []string
	// asks are the questions the oracle put to simulated users, placed by its calls, so that the
	// replays ask them too (the answers a verifier may read in ep.asks).
	asks [][]episode.ScriptedAsk
	// note records which tools a run's verifiers asked about (for unused-tool); call it on every
	// result of a mutation run.
	note func(*episode.Result)
	// readOpt are the claims options of the reference's texts (readOptions), read once.
	readOpt *claims.Options
}

// Verbs for describeDiff: how a state lacking some work differs from the oracle's, and what the
// oracle did that the other run did not.
var (
	lacking  = [3]string{"lacks", "has a different", "still has"}
	oracleDo = [3]string{"adds", "changes", "removes"}
)

// describeDiff says in words what d = Diff(other, oracle) holds, with verbs for added, changed and
// removed entries: "lacks file /a.md and has a different record tickets/T-1".
func describeDiff(d workspace.Changes, verbs [3]string) string {
	var parts []string
	add := func(verb, kind string, ids []string) {
		for _, id := range ids {
			parts = append(parts, verb+" "+kind+" "+id)
		}
	}
	for _, sec := range services.Sections(d) {
		add(verbs[0], sec.Service.Entry, sec.Added)
		add(verbs[1], sec.Service.Entry, sec.Changed)
		add(verbs[2], sec.Service.Entry, sec.Removed)
	}
	switch {
	case len(parts) == 0:
		return "differs only in the clock or the mail address"
	case len(parts) > 4:
		parts = append(parts[:4], fmt.Sprintf("%d more differences", len(parts)-4))
	}
	return strings.Join(parts[:len(parts)-1], ", ") + map[bool]string{true: " and ", false: ""}[len(parts) > 1] + parts[len(parts)-1]
}

// runErr reports what stopped an episode.
func (v *taskCheck) runErr(run string, r *episode.Result) {
	d := *r.Err
	if d.Code == "verify-error" {
		d.Message = fmt.Sprintf("in the %s episode: %s", run, d.Message)
	}
	for _, have := range v.rep.Diagnostics {
		if have.Code == d.Code && have.Line == d.Line && have.File == d.File && have.Col == d.Col {
			return // one report per place is enough
		}
	}
	v.add(d)
}

func callString(c *episode.Call) string {
	return fmt.Sprintf("%s(%s)", c.Name, shorten(jsonv.MustEncode(c.Args), 120))
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// itemList names the items that passed (or failed).
func itemList(items []dsl.CheckItem, passed bool) string {
	var parts []string
	for _, it := range items {
		if it.Passed == passed {
			s := fmt.Sprintf("%s %q", it.Kind, it.Message)
			if it.Pos.IsValid() {
				s += fmt.Sprintf(" (line %d)", it.Pos.Line)
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "no item"
	}
	return strings.Join(parts, "; ")
}

// compareRuns describes the first difference between two episodes ("" when they agree).
func compareRuns(a, b *episode.Result) string {
	if len(a.Calls) != len(b.Calls) {
		return fmt.Sprintf("%d vs %d tool calls", len(a.Calls), len(b.Calls))
	}
	for i := range a.Calls {
		x, y := a.Calls[i], b.Calls[i]
		switch {
		case x.Name != y.Name || !jsonv.Equal(x.Args, y.Args):
			return fmt.Sprintf("call %d: %s vs %s", i+1, callString(x), callString(y))
		case x.Content != y.Content || x.Error != y.Error:
			return fmt.Sprintf("call %d (%s): results differ: %s vs %s", i+1, x.Name, shorten(x.Content+x.Error, 80), shorten(y.Content+y.Error, 80))
		case x.State != y.State:
			return fmt.Sprintf("call %d (%s): states differ after the call", i+1, x.Name)
		}
	}
	for i := range a.Turns {
		if a.Turns[i].Reply != b.Turns[i].Reply || a.Turns[i].User != b.Turns[i].User || a.Turns[i].StateBefore != b.Turns[i].StateBefore {
			return fmt.Sprintf("turn %d: messages or states differ", i)
		}
	}
	if a.FinalState != b.FinalState || a.Score != b.Score {
		return "final states or scores differ"
	}
	return ""
}

func sortDiags(ds []dsl.Diagnostic) {
	order := map[string]int{}
	for i, c := range dsl.Codes {
		order[c.ID] = i
	}
	sort.SliceStable(ds, func(i, j int) bool {
		if ds[i].Severity != ds[j].Severity {
			return ds[i].Severity == dsl.Error
		}
		return order[ds[i].Code] < order[ds[j].Code]
	})
}
