package report

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/rollout"
)

// A comparison (`coworkenv report --compare A B`) puts two rollouts side by side: before and
// after training, or two models. Only the tasks both rollouts scored are compared, so that every
// figure is of the same tasks; the others are named. For each group of tasks (overall, single-
// and multi-turn, each capability) it gives, for A and B and their difference, the pass rate (the
// mean over tasks of each task's share of passed samples: pass@1) and, when both rollouts have k
// > 1 samples per task (k the smaller of their sample counts), pass@k and pass^k. A task is
// solved by a rollout when more than half of its scored samples passed; the tasks solved by one
// rollout and not the other are listed both ways, each linking to its samples' episode views.

// CompareKind is the kind of a comparison page.
const CompareKind Kind = "compare"

// compareView is what a comparison page shows.
type compareView struct {
	A, B        compareSide
	K           int // the k of pass@k and pass^k; 1 when they are not shown
	Tasks       int // compared
	Groups      []compareRow
	ByCap       []compareRow
	Charts      []*barChart
	Up, Down    []flipRow
	OnlyA       []string // tasks only A scored
	OnlyB       []string
	Episodes    string
	Notes       []string
	Unchanged   int
	SolvedA     int
	SolvedB     int
	DeltaSolved string
}

type compareSide struct {
	Label, Dir, Agent string
	Samples           int
}

// compareRow is one group's figures: A, B and B − A.
type compareRow struct {
	Name                       string
	Tasks                      int
	RateA, RateB, RateD        string
	RateClass                  string
	AtA, AtB, AtD, AtClass     string
	HatA, HatB, HatD, HatClass string
	ShowK                      bool         // pass@k and pass^k are shown (k > 1)
	a, b                       groupFigures // the figures as numbers, for the charts
}

// flipRow is a task solved by one rollout and not the other.
type flipRow struct {
	Task, File   string
	Caps         string
	RateA, RateB string
	SamplesA     []sampleLink
	SamplesB     []sampleLink
}

type sampleLink struct {
	Index  int
	Passed bool
	Href   string
	Code   string
}

// compareTask is a task both rollouts scored.
type compareTask struct {
	name, file string
	caps       []string
	multi      bool
	a, b       *rollout.TaskSummary
	ra, rb     rollout.TaskResult
	la, lb     *dsl.Task
}

// WriteCompare writes the comparison of the rollout folders a and b to out; the episode views
// of the flipped tasks' samples go to EpisodesDir(out)/a and /b (unless opts.NoEpisodes, when
// the samples link to their traces).
func WriteCompare(ctx context.Context, out, a, b string, opts Options) error {
	resA, locsA, err := ReadRollout(ctx, a, opts)
	if err != nil {
		return err
	}
	resB, locsB, err := ReadRollout(ctx, b, opts)
	if err != nil {
		return err
	}
	sumA, sumB := rollout.Summarize(resA), rollout.Summarize(resB)
	v := &compareView{
		A: compareSide{Label: "A", Dir: a, Agent: resA.Agent, Samples: resA.Samples},
		B: compareSide{Label: "B", Dir: b, Agent: resB.Agent, Samples: resB.Samples},
	}
	v.K = min(resA.Samples, resB.Samples)
	if opts.Locate == nil {
		v.Notes = append(v.Notes, "No task file was looked for: the capabilities of the tasks are not known.")
	}
	if resA.Samples != resB.Samples {
		v.Notes = append(v.Notes, fmt.Sprintf("A has %d samples per task and B %d: pass@k and pass^k are estimated for k = %d on both.", resA.Samples, resB.Samples, v.K))
	}
	byName := map[string]int{}
	for i, ts := range sumB.Tasks {
		if ts.Scored > 0 {
			byName[ts.Task] = i
		}
	}
	inA := map[string]bool{}
	var tasks []*compareTask
	for i := range sumA.Tasks {
		ta := &sumA.Tasks[i]
		if ta.Scored == 0 {
			continue
		}
		inA[ta.Task] = true
		j, ok := byName[ta.Task]
		if !ok {
			v.OnlyA = append(v.OnlyA, ta.Task)
			continue
		}
		tb := &sumB.Tasks[j]
		caps := ta.Capabilities
		if len(caps) == 0 {
			caps = tb.Capabilities
		}
		tasks = append(tasks, &compareTask{name: ta.Task, file: ta.File, caps: caps, multi: ta.MultiTurn || tb.MultiTurn,
			a: ta, b: tb, ra: resA.Tasks[i], rb: resB.Tasks[j], la: locsA[i], lb: locsB[j]})
	}
	for _, ts := range sumB.Tasks {
		if ts.Scored > 0 && !inA[ts.Task] {
			v.OnlyB = append(v.OnlyB, ts.Task)
		}
	}
	slices.SortFunc(tasks, func(x, y *compareTask) int { return cmp.Compare(x.name, y.name) })
	v.Tasks = len(tasks)
	if len(tasks) == 0 {
		return inputErr(b, "no task that both %s and %s scored: nothing to compare", a, b)
	}
	var single, multi []*compareTask
	byCap := map[string][]*compareTask{}
	var capNames []string
	for _, t := range tasks {
		if t.multi {
			multi = append(multi, t)
		} else {
			single = append(single, t)
		}
		for _, c := range t.caps {
			if _, ok := byCap[c]; !ok {
				capNames = append(capNames, c)
			}
			byCap[c] = append(byCap[c], t)
		}
	}
	slices.Sort(capNames)
	v.Groups = []compareRow{v.row("overall", tasks), v.row("single-turn", single), v.row("multi-turn", multi)}
	for _, c := range capNames {
		v.ByCap = append(v.ByCap, v.row(c, byCap[c]))
	}

	episodes := !opts.NoEpisodes
	epDir, rel, note := episodeViews(out, opts)
	v.Episodes = note
	back := "../../../" + url.PathEscape(filepath.Base(out))
	links := func(side string, tr rollout.TaskResult, loc *dsl.Task) ([]sampleLink, error) {
		var out2 []sampleLink
		for _, s := range tr.Samples {
			l := sampleLink{Index: s.Index, Passed: s.Passed}
			switch {
			case !s.OK():
				l.Code = s.Code
				if l.Code == "" {
					l.Code = "failed"
				}
			case episodes:
				dir := sampleDir(tr, s)
				l.Href = relLink(rel, side, dir, strconv.Itoa(s.Index)+".html")
				if err := writeSampleView(ctx, filepath.Join(epDir, side, dir, strconv.Itoa(s.Index)+".html"), s.Path, loc, back, opts); err != nil {
					return nil, err
				}
			case s.Path != "":
				l.Href = traceLink(out, s.Path)
			}
			out2 = append(out2, l)
		}
		return out2, nil
	}
	for _, t := range tasks {
		sa, sb := solved(t.a), solved(t.b)
		if sa {
			v.SolvedA++
		}
		if sb {
			v.SolvedB++
		}
		if sa == sb {
			v.Unchanged++
			continue
		}
		f := flipRow{Task: t.name, File: t.file, RateA: fmtPct(t.a.PassRate), RateB: fmtPct(t.b.PassRate)}
		for i, c := range t.caps {
			if i > 0 {
				f.Caps += ", "
			}
			f.Caps += c
		}
		var err error
		if f.SamplesA, err = links("a", t.ra, t.la); err != nil {
			return err
		}
		if f.SamplesB, err = links("b", t.rb, t.lb); err != nil {
			return err
		}
		if sb {
			v.Up = append(v.Up, f)
		} else {
			v.Down = append(v.Down, f)
		}
	}
	v.DeltaSolved = fmt.Sprintf("%+d", v.SolvedB-v.SolvedA)
	v.Charts = v.charts()
	p := page{Title: "Comparison of two rollouts", Kind: string(CompareKind), Body: v, Nav: []navLink{
		{"summary", "Summary"}, {"charts", "Charts"}, {"by-capability", "By capability"}, {"flips", "Tasks that flipped"}}}
	html, err := render(p)
	if err != nil {
		return err
	}
	return writeFile(out, html)
}

// solved reports whether more than half of a task's scored samples passed.
func solved(t *rollout.TaskSummary) bool { return 2*t.Passed > t.Scored }

// groupFigures are a group's means over its tasks for one rollout: the pass rate, pass@k and
// pass^k (NaN when no task of the group has k scored samples in both rollouts).
type groupFigures struct{ rate, at, hat float64 }

func (v *compareView) figures(tasks []*compareTask, side func(*compareTask) *rollout.TaskSummary) groupFigures {
	var g groupFigures
	rate, at, hat := 0.0, 0.0, 0.0
	nk := 0
	for _, t := range tasks {
		s := side(t)
		rate += s.PassRate
		if v.K > 1 && t.a.Scored >= v.K && t.b.Scored >= v.K {
			at += rollout.PassAtK(s.Scored, s.Passed, v.K)
			hat += rollout.PassHatK(s.Scored, s.Passed, v.K)
			nk++
		}
	}
	g.rate, g.at, g.hat = math.NaN(), math.NaN(), math.NaN()
	if len(tasks) > 0 {
		g.rate = rate / float64(len(tasks))
	}
	if nk > 0 {
		g.at, g.hat = at/float64(nk), hat/float64(nk)
	}
	return g
}

func (v *compareView) row(name string, tasks []*compareTask) compareRow {
	a := v.figures(tasks, func(t *compareTask) *rollout.TaskSummary { return t.a })
	b := v.figures(tasks, func(t *compareTask) *rollout.TaskSummary { return t.b })
	return compareRow{Name: name, Tasks: len(tasks), a: a, b: b, ShowK: v.K > 1,
		RateA: fmtPct(a.rate), RateB: fmtPct(b.rate), RateD: fmtDelta(b.rate - a.rate), RateClass: deltaClass(b.rate - a.rate),
		AtA: fmtNum(a.at), AtB: fmtNum(b.at), AtD: fmtDelta(b.at - a.at), AtClass: deltaClass(b.at - a.at),
		HatA: fmtNum(a.hat), HatB: fmtNum(b.hat), HatD: fmtDelta(b.hat - a.hat), HatClass: deltaClass(b.hat - a.hat)}
}

// fmtDelta is a difference of rates in points ("+12.5", "−3.0"); "–" for NaN.
func fmtDelta(d float64) string {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return "–"
	}
	d = math.Round(d*1000) / 10
	switch {
	case d > 0:
		return "+" + strconv.FormatFloat(d, 'f', 1, 64)
	case d < 0:
		return "−" + strconv.FormatFloat(-d, 'f', 1, 64)
	}
	return "0.0"
}

// deltaClass colours a difference: better, worse or the same.
func deltaClass(d float64) string {
	switch {
	case math.IsNaN(d):
		return "plain"
	case d > 0.0005:
		return "pass"
	case d < -0.0005:
		return "fail"
	}
	return "plain"
}

// charts: the pass rate of A and B overall, single- and multi-turn; pass@k and pass^k; by
// capability; the tasks that flipped.
func (v *compareView) charts() []*barChart {
	pair := func(c *barChart, label, a, b string, va, vb float64) {
		c.Bars = append(c.Bars,
			bar{Label: label + " · A", Value: va, Text: a, Class: "plain"},
			bar{Label: label + " · B", Value: vb, Text: b, Class: rateClass(vb)})
	}
	groups := &barChart{ID: "chart-compare-groups", Title: "Pass rate, A and B: overall, single- and multi-turn", Max: 1,
		Desc: "Mean over the compared tasks of each task's share of passed samples, for A and for B.", Head: [2]string{"tasks · rollout", "pass rate"}}
	for _, r := range v.Groups {
		pair(groups, fmt.Sprintf("%s (%d)", r.Name, r.Tasks), r.RateA, r.RateB, r.a.rate, r.b.rate)
	}
	charts := []*barChart{groups}
	if v.K > 1 {
		est := &barChart{ID: "chart-compare-passk", Title: fmt.Sprintf("pass@%d and pass^%d, A and B, overall", v.K, v.K), Max: 1,
			Desc: fmt.Sprintf("pass@%d: the chance that one of %d samples passes; pass^%d: that all pass; means over tasks.", v.K, v.K, v.K), Head: [2]string{"estimate · rollout", "value"}}
		o := v.Groups[0]
		pair(est, fmt.Sprintf("pass@%d", v.K), o.AtA, o.AtB, o.a.at, o.b.at)
		pair(est, fmt.Sprintf("pass^%d", v.K), o.HatA, o.HatB, o.a.hat, o.b.hat)
		charts = append(charts, est)
	}
	if len(v.ByCap) > 0 {
		caps := &barChart{ID: "chart-compare-capabilities", Title: "Pass rate by capability, A and B", Max: 1,
			Desc: "Mean over the compared tasks of each capability of their pass rates, for A and for B.", Head: [2]string{"capability · rollout", "pass rate"}}
		for _, r := range v.ByCap {
			pair(caps, fmt.Sprintf("%s (%d)", r.Name, r.Tasks), r.RateA, r.RateB, r.a.rate, r.b.rate)
		}
		charts = append(charts, caps)
	}
	flips := &barChart{ID: "chart-compare-flips", Title: "Tasks solved by one rollout and not the other",
		Desc: "A task is solved when more than half of its scored samples passed.", Head: [2]string{"tasks", "count"}}
	flips.Bars = []bar{
		{Label: "solved by B only", Value: float64(len(v.Up)), Text: strconv.Itoa(len(v.Up)), Class: "pass"},
		{Label: "solved by A only", Value: float64(len(v.Down)), Text: strconv.Itoa(len(v.Down)), Class: "fail"},
		{Label: "the same in both", Value: float64(v.Unchanged), Text: strconv.Itoa(v.Unchanged), Class: "plain"},
	}
	return append(charts, flips)
}

// flipTableArgs are what the template flip-table shows.
type flipTableArgs struct {
	Title, ID string
	Rows      []flipRow
}
