package report

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/shown"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// EpisodesDir is the folder of a rollout report's episode views, beside the report: for
// out.html, out-episodes/<task>/<sample>.html. Each view is a self-contained page like the
// rollout's; they link to each other with relative links, so the report and its folder can be
// moved together.
func EpisodesDir(out string) string {
	return strings.TrimSuffix(out, filepath.Ext(out)) + "-episodes"
}

// episodeViews is the folder of a report's episode views, its name relative to the report, and
// the sentence that tells the reader where each sample links.
func episodeViews(out string, opts Options) (dir, rel, note string) {
	dir = EpisodesDir(out)
	rel = filepath.Base(dir)
	if opts.NoEpisodes {
		return dir, rel, "Each sample links to its trace (the episode views were not written)."
	}
	return dir, rel, fmt.Sprintf("Each sample links to its episode view, a page of its own in the folder %s beside this file.", rel)
}

// WriteRollout writes the report of a rollout that has just run (`rollout --report FILE`): res
// is rollout.Run's result and dir its --out folder; the samples' traces are read from their
// paths. The episode views (unless opts.NoEpisodes) go to EpisodesDir(out); a task that was
// loaded here is replayed as it is, one loaded by a worker (an isolate stub) through
// opts.Locate.
func WriteRollout(ctx context.Context, out string, res *rollout.Result, dir string, opts Options) error {
	locs := make([]*dsl.Task, len(res.Tasks))
	for i, tr := range res.Tasks {
		if runnable(tr.Task) {
			locs[i] = tr.Task
		}
	}
	return writeRollout(ctx, out, res, dir, locs, nil, opts)
}

// runnable reports whether t was loaded here, and not described by a worker (isolate's Stub,
// which has no functions and no tools).
func runnable(t *dsl.Task) bool {
	if t == nil {
		return false
	}
	if t.Setup != nil || t.Verify != nil || t.Solution != nil || len(t.Tools) > 0 {
		return true
	}
	for _, turn := range t.Turns {
		if turn.UserFn != nil || turn.Before != nil || turn.Verify != nil || turn.Solution != nil {
			return true
		}
	}
	return false
}

// ReadRollout reads a rollout folder back: its manifest (rollout.json, when there is one) and
// every <task>/<sample>.jsonl trace, with the samples left without one (a .partial) as failed or
// interrupted, as rollout.Run reports them. The tasks are described from their traces (the
// turns, a simulated user) and, when opts.Locate finds their task file, from it (the
// capabilities); the tasks found are returned too, by task, for the episode views.
func ReadRollout(ctx context.Context, dir string, opts Options) (*rollout.Result, []*dsl.Task, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, &InputError{Path: dir, Err: shown.Cause(err)}
	}
	res := &rollout.Result{}
	manifest := filepath.Join(dir, rollout.ManifestFile)
	if data, err := os.ReadFile(manifest); err == nil {
		v, err := jsonv.Decode(data)
		o, ok := v.(*jsonv.Object)
		if err != nil || !ok {
			return nil, nil, inputErr(manifest, "not a rollout manifest (a JSON object)")
		}
		if s, ok := get(o, "seed").(int64); ok {
			res.Seed = s
		}
		res.VarySetup, _ = get(o, "vary_setup").(bool)
		res.Agent, _ = get(o, "agent").(string)
	}
	var locs []*dsl.Task
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		tr, loc, err := readTask(ctx, dir, e.Name(), opts)
		if err != nil {
			return nil, nil, err
		}
		if tr == nil {
			continue
		}
		res.Samples = max(res.Samples, len(tr.Samples))
		res.Tasks = append(res.Tasks, *tr)
		locs = append(locs, loc)
	}
	if len(res.Tasks) == 0 {
		return nil, nil, inputErr(dir, "no <task>/<sample>.jsonl traces in it")
	}
	for _, tr := range res.Tasks {
		for _, s := range tr.Samples {
			switch {
			case s.Interrupted:
				res.Interrupted++
			case !s.OK():
				res.Failed++
			default:
				res.Resumed++ // read back, as a resumed rollout counts them
			}
		}
	}
	return res, locs, nil
}

func get(o *jsonv.Object, k string) jsonv.Value {
	v, _ := o.Get(k)
	return v
}

// sampleIndex reads "<n>.jsonl" and "<n>.jsonl.partial".
func sampleIndex(name string) (int, bool) {
	base := strings.TrimSuffix(strings.TrimSuffix(name, ".partial"), ".jsonl")
	if base == name || !strings.HasSuffix(strings.TrimSuffix(name, ".partial"), ".jsonl") {
		return 0, false
	}
	n, err := strconv.Atoi(base)
	if err != nil || n < 0 || strconv.Itoa(n) != base {
		return 0, false
	}
	return n, true
}

// readTask reads the samples of the task folder name of dir (nil when it holds none).
func readTask(ctx context.Context, dir, name string, opts Options) (*rollout.TaskResult, *dsl.Task, error) {
	folder := filepath.Join(dir, name)
	entries, err := os.ReadDir(folder)
	if err != nil {
		return nil, nil, &InputError{Path: folder, Err: shown.Cause(err)}
	}
	byIndex := map[int]*rollout.Sample{}
	info := isolate.TaskInfo{Name: name}
	var start *trace.Start
	for _, e := range entries {
		i, ok := sampleIndex(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		partial := strings.HasSuffix(e.Name(), ".partial")
		if partial && byIndex[i] != nil && byIndex[i].OK() {
			continue // the finished trace wins
		}
		path := filepath.Join(folder, e.Name())
		s := &rollout.Sample{Index: i, Path: path}
		data, err := trace.ReadFile(path)
		if err != nil {
			return nil, nil, &InputError{Path: path, Err: err}
		}
		events, err := trace.Read(bytes.NewReader(data))
		if err != nil && !partial {
			return nil, nil, &InputError{Path: path, Err: err}
		}
		if partial {
			s.Err, s.Code = "the episode did not finish", "interrupted"
			if err == nil {
				if end, ok := events[len(events)-1].Body.(*trace.End); ok && end.Error != nil {
					s.Err, s.Code = end.Error.Message, end.Error.Code
				}
			}
			s.Interrupted = s.Code == "interrupted"
		} else {
			fillSample(s, events, &info)
			if start == nil {
				start = events[0].Body.(*trace.Start)
			}
		}
		if prev := byIndex[i]; prev == nil || !partial {
			byIndex[i] = s
		}
	}
	if len(byIndex) == 0 {
		return nil, nil, nil
	}
	idx := make([]int, 0, len(byIndex))
	for i := range byIndex {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	tr := &rollout.TaskResult{}
	for _, i := range idx {
		tr.Samples = append(tr.Samples, *byIndex[i])
	}
	var loc *dsl.Task
	rel := ""
	if start != nil {
		rel = start.TaskPath()
		info.Name, info.File = start.Task, start.File
		if opts.Locate != nil {
			if t, _, err := opts.Locate(ctx, tr.Samples[0].Path, start); err == nil {
				loc = t
				info.Capabilities = t.Capabilities
				info.Turns = max(info.Turns, len(t.Turns))
				info.Simulated = info.Simulated || t.Simulated()
			}
		}
	}
	tr.Task = info.Stub(rel)
	return tr, loc, nil
}

// fillSample fills a sample's seed and scores from its trace (rollout.FillSample), and what the
// trace tells of its task: its turns and whether a simulated user answers in it.
func fillSample(s *rollout.Sample, events []trace.Event, info *isolate.TaskInfo) {
	s.Seed = events[0].Body.(*trace.Start).Seed
	rollout.FillSample(s, events)
	for _, e := range events[1:] {
		switch b := e.Body.(type) {
		case *trace.User:
			info.Turns = max(info.Turns, b.Turn+1)
		case *trace.SimUser:
			info.Simulated = true
		}
	}
}

// rolloutView is what a rollout page shows besides its list of tasks (in its data).
type rolloutView struct {
	Dir      string
	Summary  *rollout.Summary
	Ks       []int
	MultiK   bool
	Groups   []groupRow // overall, single-turn, multi-turn
	ByCap    []groupRow
	FailedBy []keyCount
	Charts   []*barChart
	Episodes string // where the episode views are, as a sentence
	Tokens   bool
	Notes    []string
}

type groupRow struct {
	rollout.Group
	At, Hat []string
}

type keyCount struct {
	Key   string
	Count int
}

// rolloutData is the page's data block: the tasks, with their samples.
type rolloutData struct {
	Ks    []int      `json:"ks"`
	Tasks []taskData `json:"tasks"`
}

type taskData struct {
	Name        string       `json:"n"`
	File        string       `json:"f"`
	Caps        []string     `json:"caps"`
	Turns       int          `json:"turns"`
	Multi       bool         `json:"multi"`
	Scored      int          `json:"scored"`
	Passed      int          `json:"passed"`
	Failed      int          `json:"failed"`
	Interrupted int          `json:"int"`
	Rate        jsonNum      `json:"rate"`
	Score       jsonNum      `json:"score"`
	At          []jsonNum    `json:"at"`
	Hat         []jsonNum    `json:"hat"`
	Samples     []sampleData `json:"s"`
}

type sampleData struct {
	Index  int     `json:"i"`
	Passed bool    `json:"p"`
	Score  jsonNum `json:"sc"`
	Code   string  `json:"code,omitempty"`
	Href   string  `json:"href,omitempty"`
}

// missingNote says which tasks of a rollout folder have no task file found (locs[i] nil): their
// capabilities are not known; "" when every one was found.
func missingNote(res *rollout.Result, locs []*dsl.Task) string {
	var names []string
	for i, loc := range locs {
		if loc == nil {
			names = append(names, res.Tasks[i].Task.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	shown := names
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(names)-5))
	}
	return fmt.Sprintf("The task files of %s were not found (%s): their capabilities are not known, and their episode views show no state changes. Name the folder of their corpus with --corpus.",
		plural(len(names), "task", "tasks"), strings.Join(shown, ", "))
}

func writeRollout(ctx context.Context, out string, res *rollout.Result, dir string, locs []*dsl.Task, notes []string, opts Options) error {
	sum := rollout.Summarize(res)
	v := &rolloutView{Dir: dir, Summary: sum, Ks: sum.Ks, MultiK: len(sum.Ks) > 1, Notes: notes,
		Tokens: sum.PromptTokens > 0 || sum.CompletionTokens > 0}
	for _, g := range []rollout.Group{sum.Overall, sum.SingleTurn, sum.MultiTurn} {
		v.Groups = append(v.Groups, rowOf(g))
	}
	for _, g := range sum.ByCapability {
		v.ByCap = append(v.ByCap, rowOf(g))
	}
	for code, n := range sum.FailedBy {
		v.FailedBy = append(v.FailedBy, keyCount{code, n})
	}
	slices.SortFunc(v.FailedBy, func(a, b keyCount) int { return cmp.Compare(a.Key, b.Key) })
	v.Charts = rolloutCharts(sum)

	episodes := !opts.NoEpisodes
	epDir, rel, note := episodeViews(out, opts)
	v.Episodes = note
	data := rolloutData{Ks: sum.Ks}
	type job struct{ t, s int }
	var jobs []job
	for ti, tr := range res.Tasks {
		ts := sum.Tasks[ti]
		td := taskData{Name: ts.Task, File: ts.File, Caps: ts.Capabilities, Turns: ts.Turns, Multi: ts.MultiTurn,
			Scored: ts.Scored, Passed: ts.Passed, Failed: ts.Failed, Interrupted: ts.Interrupted,
			Rate: jsonNum(ts.PassRate), Score: jsonNum(ts.MeanScore)}
		if td.Caps == nil {
			td.Caps = []string{}
		}
		for i := range sum.Ks {
			td.At = append(td.At, jsonNum(ts.PassAt[i]))
			td.Hat = append(td.Hat, jsonNum(ts.PassHat[i]))
		}
		for si, s := range tr.Samples {
			sd := sampleData{Index: s.Index, Passed: s.Passed, Score: jsonNum(s.Score)}
			switch {
			case !s.OK():
				sd.Code = cmp.Or(s.Code, "failed")
				sd.Score = jsonNum(math.NaN())
			case episodes:
				sd.Href = relLink(rel, sampleDir(tr, s), strconv.Itoa(s.Index)+".html")
				jobs = append(jobs, job{ti, si})
			case s.Path != "":
				sd.Href = traceLink(out, s.Path)
			}
			td.Samples = append(td.Samples, sd)
		}
		data.Tasks = append(data.Tasks, td)
	}

	if episodes && len(jobs) > 0 {
		back := "../../" + url.PathEscape(filepath.Base(out))
		n := max(opts.Jobs, 1)
		var mu sync.Mutex
		var first error
		done := 0
		next := make(chan job)
		var wg sync.WaitGroup
		for w := 0; w < n && w < len(jobs); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					tr := res.Tasks[j.t]
					s := tr.Samples[j.s]
					path := filepath.Join(epDir, sampleDir(tr, s), strconv.Itoa(s.Index)+".html")
					err := writeSampleView(ctx, path, s.Path, locs[j.t], back, opts)
					mu.Lock()
					if err != nil && first == nil {
						first = err
					}
					done++
					if opts.Progress != nil {
						opts.Progress(done, len(jobs))
					}
					mu.Unlock()
				}
			}()
		}
		for _, j := range jobs {
			next <- j
		}
		close(next)
		wg.Wait()
		if first != nil {
			return first
		}
	}

	title := "Rollout"
	if res.Agent != "" {
		title = "Rollout of " + res.Agent
	}
	p := page{Title: title, Kind: "rollout", Body: v, Data: data, Nav: []navLink{
		{"summary", "Summary"}, {"charts", "Charts"}, {"by-capability", "By capability"}, {"tasks", "Tasks and samples"}}}
	html, err := render(p)
	if err != nil {
		return err
	}
	return writeFile(out, html)
}

// sampleDir is the folder of a sample's episode view inside EpisodesDir: the folder of its trace
// (rollout.TracePath: the task's name), never a name read from a trace, which could hold a path.
func sampleDir(tr rollout.TaskResult, s rollout.Sample) string {
	if s.Path != "" {
		return filepath.Base(filepath.Dir(s.Path))
	}
	return url.PathEscape(tr.Task.Name)
}

// writeSampleView writes the episode view of one sample; loaded, when not nil, is its task,
// replayed for the state changes; else opts.Locate finds it.
func writeSampleView(ctx context.Context, out, tracePath string, loaded *dsl.Task, back string, opts Options) error {
	events, err := readTraceFile(tracePath)
	if err != nil {
		return err
	}
	if loaded != nil {
		opts.Locate = TaskLocator(loaded)
	}
	ev := episodeOf(events)
	ev.TracePath = tracePath
	ev.ID = "e0"
	applyChanges(ev, changesOf(ctx, tracePath, events, opts))
	data, err := renderEpisodes([]*episodeView{ev}, back, "the rollout")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("%s: %v", filepath.Dir(out), shown.Cause(err))
	}
	return writeFile(out, data)
}

// relLink is a relative link of path segments, each escaped, that no segment can turn into a
// scheme ("javascript:") or a host.
func relLink(segs ...string) string {
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "./" + strings.Join(segs, "/")
}

// traceLink links a report at out to a trace file, relative to the report's folder when it can.
func traceLink(out, path string) string {
	base, err1 := filepath.Abs(filepath.Dir(out))
	abs, err2 := filepath.Abs(path)
	if err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return ""
	}
	return relLink(strings.Split(filepath.ToSlash(rel), "/")...)
}

func rowOf(g rollout.Group) groupRow {
	r := groupRow{Group: g}
	for i := range g.PassAt {
		r.At = append(r.At, fmtNum(g.PassAt[i]))
		r.Hat = append(r.Hat, fmtNum(g.PassHat[i]))
	}
	return r
}

// rolloutCharts: the pass rate overall, single-turn and multi-turn; pass@k and pass^k; the pass
// rate by capability; how the tasks' pass rates spread.
func rolloutCharts(s *rollout.Summary) []*barChart {
	rates := &barChart{ID: "chart-groups", Title: "Pass rate: overall, single-turn and multi-turn tasks", Max: 1,
		Desc: "Mean over tasks of each task's share of passed samples.", Head: [2]string{"tasks", "pass rate"}}
	for _, g := range []rollout.Group{s.Overall, s.SingleTurn, s.MultiTurn} {
		rates.Bars = append(rates.Bars, bar{Label: g.Name, Suffix: " (" + plural(g.Tasks, "task", "tasks") + ")", Value: g.PassRate, Text: fmtPct(g.PassRate), Class: rateClass(g.PassRate)})
	}
	est := &barChart{ID: "chart-passk", Title: "pass@k and pass^k, overall", Max: 1,
		Desc: "pass@k: the chance that one of k samples passes; pass^k: that all k pass; means over tasks.", Head: [2]string{"estimate", "value"}}
	for i, k := range s.Ks {
		est.Bars = append(est.Bars, bar{Label: fmt.Sprintf("pass@%d", k), Value: s.Overall.PassAt[i], Text: fmtNum(s.Overall.PassAt[i]), Class: rateClass(s.Overall.PassAt[i])})
	}
	for i, k := range s.Ks {
		if i > 0 {
			est.Bars = append(est.Bars, bar{Label: fmt.Sprintf("pass^%d", k), Value: s.Overall.PassHat[i], Text: fmtNum(s.Overall.PassHat[i]), Class: rateClass(s.Overall.PassHat[i])})
		}
	}
	caps := &barChart{ID: "chart-capabilities", Title: "Pass rate by capability", Max: 1,
		Desc: "Mean over the tasks of each capability of their pass rates.", Head: [2]string{"capability", "pass rate"}}
	for _, g := range s.ByCapability {
		caps.Bars = append(caps.Bars, bar{Label: g.Name, Suffix: fmt.Sprintf(" (%d)", g.Tasks), Value: g.PassRate, Text: fmtPct(g.PassRate), Class: rateClass(g.PassRate)})
	}
	spread := &barChart{ID: "chart-spread", Title: "Tasks by pass rate",
		Desc: "How many tasks passed none, some or all of their scored samples.", Head: [2]string{"pass rate", "tasks"}}
	buckets := []struct {
		label  string
		lo, hi float64
		class  string
	}{{"none passed (0%)", 0, 0, "fail"}, {"under half", 0, 0.5, "fail"}, {"half or more", 0.5, 1, "warn"}, {"all passed (100%)", 1, 1, "pass"}}
	counts := make([]int, len(buckets))
	for _, t := range s.Tasks {
		if t.Scored == 0 {
			continue
		}
		switch r := t.PassRate; {
		case r == 0:
			counts[0]++
		case r < 0.5:
			counts[1]++
		case r < 1:
			counts[2]++
		default:
			counts[3]++
		}
	}
	for i, b := range buckets {
		spread.Bars = append(spread.Bars, bar{Label: b.label, Value: float64(counts[i]), Text: strconv.Itoa(counts[i]), Class: b.class})
	}
	return []*barChart{rates, est, caps, spread}
}
