package rollout

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// Summary is what a rollout says about the agent.
//
// Every average is over tasks (a macro average): a task's pass rate, mean score, pass@k and
// pass^k are computed from its own scored samples, and a group's value is the mean of its
// tasks' values, so that every task weighs the same whatever number of its samples failed. Failed
// and interrupted samples (no trace) are left out; a task without a scored sample is left out of
// the averages, and a task with fewer than k scored samples is left out of the pass@k and pass^k
// averages.
type Summary struct {
	Agent   string
	Samples int
	Seed    int64
	// VarySetup: sample i ran with Seed+i; otherwise every sample of a task ran with Seed (and
	// started from the same state).
	VarySetup bool
	// Ks are the k of pass@k and pass^k: 1 and Samples.
	Ks    []int
	Tasks []TaskSummary
	// Overall is every task; SingleTurn and MultiTurn split them by whether the user speaks more than once (several turns, or a simulated user: dsl.Task.MultiTurn);
	// ByCapability has one group per capability named by some task, sorted by name (a task with
	// several capabilities is in each of their groups).
	Overall, SingleTurn, MultiTurn Group
	ByCapability                   []Group
	// Ran, Resumed, Failed and Interrupted are Result's counts.
	Ran, Resumed, Failed, Interrupted int
	// FailedBy counts the failed samples by diagnostic code (model-error, script-error...;
	// "other" for a failure without one).
	FailedBy map[string]int
	// TaskChanged counts the samples that ran again because their earlier trace was recorded
	// with other versions of the task's files (Sample.Changed).
	TaskChanged                    int
	PromptTokens, CompletionTokens int64
}

// Estimates holds pass@k and pass^k for each k of Summary.Ks; NaN where not defined.
type Estimates struct {
	PassAt, PassHat []float64
}

// TaskSummary is one task's samples.
type TaskSummary struct {
	Task, File string
	Turns      int
	// MultiTurn is dsl.Task.MultiTurn: several turns, or a simulated user; Simulated says a
	// turn's user is simulated.
	MultiTurn, Simulated bool
	Capabilities         []string
	// Scored samples, of which Passed passed; Failed and Interrupted samples have no trace.
	Scored, Passed, Failed, Interrupted int
	PassRate, MeanScore                 float64 // NaN when Scored is 0
	// MeanUserRounds is the mean number of answers its simulated users gave per scored sample
	// (NaN when Scored is 0; 0 for a task without a simulated user).
	MeanUserRounds float64
	Estimates
}

// Group aggregates tasks (see Summary).
type Group struct {
	Name     string
	Tasks    int // tasks with at least one scored sample
	Episodes int // their scored samples
	Passed   int
	// PassRate and MeanScore are means over tasks of the task's pass rate and mean score; NaN
	// when the group has no scored task.
	PassRate, MeanScore float64
	Estimates
}

// Summarize computes the summary of a rollout.
func Summarize(r *Result) *Summary {
	s := &Summary{Agent: r.Agent, Samples: r.Samples, Seed: r.Seed, VarySetup: r.VarySetup, Ran: r.Ran, Resumed: r.Resumed,
		Failed: r.Failed, Interrupted: r.Interrupted, FailedBy: map[string]int{}}
	s.Ks = []int{1}
	if r.Samples > 1 {
		s.Ks = append(s.Ks, r.Samples)
	}
	byCap := map[string][]*TaskSummary{}
	var all, single, multi []*TaskSummary
	for _, tr := range r.Tasks {
		ts := TaskSummary{Task: tr.Task.Name, File: tr.Task.File, Turns: len(tr.Task.Turns), MultiTurn: tr.Task.MultiTurn(), Simulated: tr.Task.Simulated(), Capabilities: tr.Task.Capabilities}
		sum, rounds := 0.0, 0
		for i := range tr.Samples {
			smp := &tr.Samples[i]
			if len(smp.Changed) > 0 {
				s.TaskChanged++
			}
			switch {
			case smp.Interrupted:
				ts.Interrupted++
				continue
			case !smp.OK():
				ts.Failed++
				s.FailedBy[cmp.Or(smp.Code, "other")]++
				continue
			}
			ts.Scored++
			sum += smp.Score
			rounds += smp.UserRounds
			if smp.Passed {
				ts.Passed++
			}
			s.PromptTokens += smp.PromptTokens
			s.CompletionTokens += smp.CompletionTokens
		}
		ts.PassRate, ts.MeanScore, ts.MeanUserRounds = math.NaN(), math.NaN(), math.NaN()
		if ts.Scored > 0 {
			ts.PassRate = float64(ts.Passed) / float64(ts.Scored)
			ts.MeanScore = sum / float64(ts.Scored)
			ts.MeanUserRounds = float64(rounds) / float64(ts.Scored)
		}
		for _, k := range s.Ks {
			at, hat := math.NaN(), math.NaN()
			if ts.Scored >= k {
				at, hat = PassAtK(ts.Scored, ts.Passed, k), PassHatK(ts.Scored, ts.Passed, k)
			}
			ts.PassAt = append(ts.PassAt, at)
			ts.PassHat = append(ts.PassHat, hat)
		}
		s.Tasks = append(s.Tasks, ts)
	}
	for i := range s.Tasks {
		ts := &s.Tasks[i]
		all = append(all, ts)
		if ts.MultiTurn {
			multi = append(multi, ts)
		} else {
			single = append(single, ts)
		}
		for _, c := range ts.Capabilities {
			byCap[c] = append(byCap[c], ts)
		}
	}
	s.Overall = group("overall", all, len(s.Ks))
	s.SingleTurn = group("single-turn", single, len(s.Ks))
	s.MultiTurn = group("multi-turn", multi, len(s.Ks))
	caps := make([]string, 0, len(byCap))
	for c := range byCap {
		caps = append(caps, c)
	}
	sort.Strings(caps)
	for _, c := range caps {
		s.ByCapability = append(s.ByCapability, group(c, byCap[c], len(s.Ks)))
	}
	return s
}

func group(name string, tasks []*TaskSummary, nk int) Group {
	g := Group{Name: name}
	var rate, score float64
	at, hat := make([]float64, nk), make([]float64, nk)
	atN := make([]int, nk)
	for _, ts := range tasks {
		if ts.Scored == 0 {
			continue
		}
		g.Tasks++
		g.Episodes += ts.Scored
		g.Passed += ts.Passed
		rate += ts.PassRate
		score += ts.MeanScore
		for i := range nk {
			if !math.IsNaN(ts.PassAt[i]) {
				at[i] += ts.PassAt[i]
				hat[i] += ts.PassHat[i]
				atN[i]++
			}
		}
	}
	g.PassRate, g.MeanScore = math.NaN(), math.NaN()
	if g.Tasks > 0 {
		g.PassRate, g.MeanScore = rate/float64(g.Tasks), score/float64(g.Tasks)
	}
	for i := range nk {
		if atN[i] == 0 {
			at[i], hat[i] = math.NaN(), math.NaN()
			continue
		}
		at[i] /= float64(atN[i])
		hat[i] /= float64(atN[i])
	}
	g.PassAt, g.PassHat = at, hat
	return g
}

// num is a JSON number rounded to 6 decimals, or null for NaN.
func num(f float64) jsonv.Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return math.Round(f*1e6) / 1e6
}

func (s *Summary) estimatesJSON(e Estimates) (at, hat *jsonv.Object) {
	at, hat = &jsonv.Object{}, &jsonv.Object{}
	for i, k := range s.Ks {
		at.Set(strconv.Itoa(k), num(e.PassAt[i]))
		hat.Set(strconv.Itoa(k), num(e.PassHat[i]))
	}
	return at, hat
}

func (s *Summary) groupJSON(key string, g Group) *jsonv.Object {
	at, hat := s.estimatesJSON(g.Estimates)
	o := &jsonv.Object{}
	if key != "" {
		o.Set(key, g.Name)
	}
	o.Set("tasks", int64(g.Tasks))
	o.Set("episodes", int64(g.Episodes))
	o.Set("passed", int64(g.Passed))
	o.Set("pass_rate", num(g.PassRate))
	o.Set("mean_score", num(g.MeanScore))
	o.Set("pass@k", at)
	o.Set("pass^k", hat)
	return o
}

// JSON is the summary as one JSON object (`coworkenv rollout --json`).
func (s *Summary) JSON() *jsonv.Object {
	tasks := make([]jsonv.Value, len(s.Tasks))
	for i, ts := range s.Tasks {
		caps := make([]jsonv.Value, len(ts.Capabilities))
		for j, c := range ts.Capabilities {
			caps[j] = c
		}
		at, hat := s.estimatesJSON(ts.Estimates)
		tasks[i] = jsonv.NewObject("task", ts.Task, "file", ts.File, "turns", int64(ts.Turns), "capabilities", caps,
			"episodes", int64(ts.Scored), "passed", int64(ts.Passed), "failed", int64(ts.Failed), "interrupted", int64(ts.Interrupted),
			"pass_rate", num(ts.PassRate), "mean_score", num(ts.MeanScore), "pass@k", at, "pass^k", hat)
		if ts.Simulated {
			tasks[i].(*jsonv.Object).Set("mean_user_rounds", num(ts.MeanUserRounds))
		}
	}
	caps := make([]jsonv.Value, len(s.ByCapability))
	for i, g := range s.ByCapability {
		caps[i] = s.groupJSON("capability", g)
	}
	failedBy := &jsonv.Object{}
	for _, code := range s.failedCodes() {
		failedBy.Set(code, int64(s.FailedBy[code]))
	}
	ks := make([]jsonv.Value, len(s.Ks))
	for i, k := range s.Ks {
		ks[i] = int64(k)
	}
	o := jsonv.NewObject("agent", s.Agent, "samples", int64(s.Samples), "seed", s.Seed, "vary_setup", s.VarySetup, "k", ks,
		"episodes", jsonv.NewObject("run", int64(s.Ran), "resumed", int64(s.Resumed), "failed", int64(s.Failed),
			"failed_by_code", failedBy, "interrupted", int64(s.Interrupted), "task_changed", int64(s.TaskChanged)),
		"overall", s.groupJSON("", s.Overall),
		"single_turn", s.groupJSON("", s.SingleTurn),
		"multi_turn", s.groupJSON("", s.MultiTurn),
		"by_capability", caps,
		"tasks", tasks)
	if s.PromptTokens > 0 || s.CompletionTokens > 0 {
		o.Set("usage", jsonv.NewObject("prompt_tokens", s.PromptTokens, "completion_tokens", s.CompletionTokens))
	}
	return o
}

// WriteText prints the summary as a table per task, then the groups.
func (s *Summary) WriteText(w io.Writer) {
	width := len("task")
	for _, ts := range s.Tasks {
		width = max(width, len(ts.Task))
	}
	for _, g := range s.ByCapability {
		width = max(width, len(g.Name)+2)
	}
	width = max(width, len("single-turn"))
	head := fmt.Sprintf("%-*s  %8s  %6s  %6s", width, "task", "passed", "rate", "score")
	for _, k := range s.Ks {
		head += fmt.Sprintf("  %7s", fmt.Sprintf("pass@%d", k))
	}
	for _, k := range s.Ks[1:] {
		head += fmt.Sprintf("  %7s", fmt.Sprintf("pass^%d", k))
	}
	fmt.Fprintln(w, head)
	cols := func(e Estimates) string {
		var b strings.Builder
		for i := range s.Ks {
			fmt.Fprintf(&b, "  %7s", fmtNum(e.PassAt[i]))
		}
		for i := range s.Ks[1:] {
			fmt.Fprintf(&b, "  %7s", fmtNum(e.PassHat[i+1]))
		}
		return b.String()
	}
	for _, ts := range s.Tasks {
		passed := fmt.Sprintf("%d/%d", ts.Passed, ts.Scored)
		var notes []string
		if ts.Failed > 0 {
			notes = append(notes, fmt.Sprintf("%d failed", ts.Failed))
		}
		if ts.Interrupted > 0 {
			notes = append(notes, fmt.Sprintf("%d interrupted", ts.Interrupted))
		}
		note := ""
		if len(notes) > 0 {
			note = "  (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintf(w, "%-*s  %8s  %6s  %6s%s%s\n", width, ts.Task, passed, fmtNum(ts.PassRate), fmtNum(ts.MeanScore), cols(ts.Estimates), note)
	}
	line := func(label string, g Group) {
		passed := fmt.Sprintf("%d/%d", g.Passed, g.Episodes)
		fmt.Fprintf(w, "%-*s  %8s  %6s  %6s%s  %d task%s\n", width, label, passed, fmtNum(g.PassRate), fmtNum(g.MeanScore), cols(g.Estimates), g.Tasks, plural(g.Tasks))
	}
	fmt.Fprintln(w)
	line("overall", s.Overall)
	line("single-turn", s.SingleTurn)
	line("multi-turn", s.MultiTurn)
	if len(s.ByCapability) > 0 {
		fmt.Fprintln(w, "by capability:")
		for _, g := range s.ByCapability {
			line("  "+g.Name, g)
		}
	}
	fmt.Fprintf(w, "\n%d episode%s run, %d resumed, %d failed", s.Ran, plural(s.Ran), s.Resumed, s.Failed)
	if codes := s.failedCodes(); len(codes) > 0 {
		for i, code := range codes {
			codes[i] = fmt.Sprintf("%d %s", s.FailedBy[code], code)
		}
		fmt.Fprintf(w, " (%s)", strings.Join(codes, ", "))
	}
	fmt.Fprintf(w, ", %d interrupted", s.Interrupted)
	if s.PromptTokens > 0 || s.CompletionTokens > 0 {
		fmt.Fprintf(w, " · %d prompt and %d completion tokens", s.PromptTokens, s.CompletionTokens)
	}
	fmt.Fprintln(w)
	if s.TaskChanged > 0 {
		which := "their traces were"
		if s.TaskChanged == 1 {
			which = "its trace was"
		}
		fmt.Fprintf(w, "%d sample%s ran again: the task file or a file it loads changed since %s recorded\n", s.TaskChanged, plural(s.TaskChanged), which)
	}
	if s.Samples > 1 {
		if s.VarySetup {
			fmt.Fprintf(w, "sample i of a task ran with seed %d+i (--vary-setup)\n", s.Seed)
		} else {
			fmt.Fprintf(w, "every sample of a task ran with seed %d, from the same start state\n", s.Seed)
		}
	}
	fmt.Fprintln(w, "rate and score are means over tasks; pass@k = 1 - C(n-c,k)/C(n,k), pass^k = C(c,k)/C(n,k) per task (n samples, c passed), averaged over tasks")
}

// failedCodes are the codes of FailedBy, sorted.
func (s *Summary) failedCodes() []string {
	codes := make([]string, 0, len(s.FailedBy))
	for code := range s.FailedBy {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	return codes
}

func fmtNum(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
