package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/report"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

const runUsage = "run TASK [--agent oracle|noop|openai|script] [--model NAME] [--script FILE [--run N|TEXT]] [--seed N] [--json] [--trace FILE] [--report FILE.html] [--in-process|--isolate]\n\n" +
	"TASK is a file, file.star:name, or a task name of the built-in corpus. The trace is written to FILE.partial\n" +
	"and renamed to FILE when the episode ends; an interrupted episode (Ctrl-C) leaves FILE.partial, its end\n" +
	"recording the code interrupted. FILE is checked before the episode runs: a folder, the task file or a\n" +
	"folder that cannot be written is refused. An episode stopped by the model's endpoint (unreachable, or an\n" +
	"HTTP error after the retries) ends with the code model-error; one whose worker ran out of memory or time,\n" +
	"or died, with memory-limit, timeout or crash (its trace has the events so far and that end).\n" +
	"--report FILE.html writes the episode's page when it ends, passed or not (an interrupted one's too), as\n" +
	"`coworkenv report` writes it from the trace: the conversation, the state changes, the checks. It is checked\n" +
	"before the episode runs as FILE is; the page's state changes come from a replay of the task file in this\n" +
	"process.\n" + agentFlagsHelp +
	"\n\n" + runScriptHelp +
	"\n\n" + isolationHelp +
	"\n\nAn episode stopped by model-error, Ctrl-C or a stopped worker counts as not passed."

// runScriptHelp is the part of the usage text of run about the agent script.
const runScriptHelp = `The script agent (--agent script, or --script FILE alone) plays recorded runs: those of the runs
file FILE for TASK (docs/writing-tasks.md, "Recorded runs"), one episode each, one after the other,
each with its own transcript (headed by the run's number in FILE and its why) and verdict; --run N
plays run N of FILE only, --run TEXT the runs whose why holds TEXT. Each run asks the turn's
simulated user its questions, makes its calls and gives its reply, whatever the tools answer. The
status is 1 when any run played does not pass (whatever it expects: validate --runs FILE checks
that); --json prints one line per run; --trace and --report take one run only.`

// runOptions are the options of `coworkenv run`.
type runOptions struct {
	streams
	task          string
	seed          int64
	json          bool
	trace, report string
	script, run   string // --script FILE, --run N|TEXT
	agent         *agentFlags
	iso           *isolation
}

func (o *runOptions) flags(fs *flag.FlagSet) {
	o.agent = addAgentFlags(fs, &o.script)
	o.iso = addIsolationFlags(fs, "episode")
	fs.Int64Var(&o.seed, "seed", 0, "run seed, mixed with the task's seed (0 keeps the task's seed)")
	fs.BoolVar(&o.json, "json", false, "print the end result as one JSON object instead of the transcript")
	fs.StringVar(&o.trace, "trace", "", "write the episode as a JSON Lines trace to this file")
	reportFlag(fs, &o.report, "the episode")
	fs.StringVar(&o.script, "script", "", "script: the recorded runs to play (a runs file; implies --agent script)")
	fs.StringVar(&o.run, "run", "", "script: play run N of the runs file only, or the runs whose why holds TEXT")
}

func (o *runOptions) args(pos []string) error {
	if len(pos) != 1 {
		return usagef("want one TASK, got %d arguments", len(pos))
	}
	o.task = pos[0]
	return nil
}

func runRun(o *runOptions) error {
	stderr := o.stderr
	inputs := append(taskFiles([]string{o.task}), o.script)
	if o.trace != "" {
		if err := checkOutput("--trace", o.trace, outputFile, inputs...); err != nil {
			return usage(err)
		}
	}
	if o.report != "" {
		err := checkOutput("--report", o.report, outputFile, inputs...)
		if err == nil && o.trace != "" && sameOutput(o.report, o.trace) {
			err = fmt.Errorf("--report: %s is also the --trace file; write the report elsewhere", o.report)
		}
		if err != nil {
			return usage(err)
		}
	}
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	choice, err := o.agent.choose()
	if err != nil {
		return usage(err)
	}
	var scripts []*recorded.Run
	if choice.name == recorded.Label {
		if scripts, err = recorded.ReadFile(o.script); err != nil {
			return usagef("--script: %v", pathError(o.script, err))
		}
	}
	choice.cfg.OnRetry = func(attempt int, delay time.Duration, reason error) {
		fmt.Fprintf(stderr, "coworkenv run: model request failed (%v); retry %d in %s\n", reason, attempt, delay.Round(time.Millisecond))
	}
	// Ctrl-C cancels the episode: it ends with an error, and its trace keeps an end event.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tg, err := locateTask(ctx, o.task)
	if err == nil {
		err = o.iso.checkUsed(o.iso.isolated(tg.builtin))
	}
	if err != nil {
		return usage(err)
	}
	var pool *isolate.Pool // of an isolated episode, started when the first one runs
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	ep := &runEpisode{o: o, tg: tg, choice: choice, stop: stop, pool: func() (*isolate.Pool, error) {
		var err error
		if pool == nil {
			pool, err = o.iso.pool(1)
		}
		return pool, err
	}}
	if choice.name != recorded.Label {
		return ep.run(ctx)
	}
	return o.playRuns(ctx, ep, scripts)
}

// playRuns plays the recorded runs of the task, one episode each.
func (o *runOptions) playRuns(ctx context.Context, ep *runEpisode, scripts []*recorded.Run) error {
	name, err := ep.taskName(ctx)
	if err != nil {
		return err
	}
	runs, err := pickRuns(scripts, name, o.run, o.script)
	if err != nil {
		return usage(err)
	}
	if len(runs) > 1 {
		for _, f := range []struct{ flag, path string }{{"--trace", o.trace}, {"--report", o.report}} {
			if f.path != "" {
				return usagef("%s: %d runs are played, each an episode; pick one with --run N", f.flag, len(runs))
			}
		}
	}
	var notPassed, unexpected []string
	for i, r := range runs {
		if !o.json {
			if i > 0 {
				fmt.Fprintln(o.stdout)
			}
			fmt.Fprintf(o.stdout, "recorded %s, expected to %s: %s\n", r.Where(), r.Expect, r.Why)
		}
		ep.choice.spec.Script = r
		passed, err := ep.play(ctx)
		if err != nil {
			return err
		}
		if !passed {
			notPassed = append(notPassed, fmt.Sprint(r.N))
		}
		if passed != (r.Expect == recorded.Pass) {
			unexpected = append(unexpected, fmt.Sprintf("run %d (expected to %s)", r.N, r.Expect))
		}
		if ctx.Err() != nil {
			return errNegative // interrupted: the runs after it are not played
		}
	}
	if len(runs) > 1 && !o.json {
		as := "each as expected"
		if len(unexpected) > 0 {
			as = "not as expected: " + strings.Join(unexpected, ", ")
		}
		fmt.Fprintf(o.stdout, "\n%d recorded runs of %s played: %d passed, %d not passed; %s\n", len(runs), o.script, len(runs)-len(notPassed), len(notPassed), as)
	}
	if len(notPassed) > 0 {
		return errNegative
	}
	return nil
}

// pickRuns are the runs of the task name among those of the runs file (--script file), all of
// them or those --run picks: a number (of the run in the file) or a text of their why.
func pickRuns(all []*recorded.Run, name, pick, file string) ([]*recorded.Run, error) {
	var of []*recorded.Run
	var others []string
	for _, r := range all {
		if r.Task == name {
			of = append(of, r)
		} else if !slices.Contains(others, r.Task) {
			others = append(others, r.Task)
		}
	}
	if len(of) == 0 {
		has := "no run at all"
		if len(others) > 0 {
			has = "runs of " + strings.Join(others, ", ")
		}
		return nil, fmt.Errorf("--script: %s holds no run of task %s (it holds %s)", file, name, has)
	}
	if pick == "" {
		return of, nil
	}
	if n, err := strconv.Atoi(pick); err == nil {
		for _, r := range all {
			if r.N == n && r.Task == name {
				return []*recorded.Run{r}, nil
			}
			if r.N == n {
				return nil, fmt.Errorf("--run %d: run %d of %s is of task %s, not %s", n, n, file, r.Task, name)
			}
		}
		return nil, fmt.Errorf("--run %d: %s holds %d runs", n, file, len(all))
	}
	var picked []*recorded.Run
	for _, r := range of {
		if strings.Contains(strings.ToLower(r.Why), strings.ToLower(pick)) {
			picked = append(picked, r)
		}
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("--run %q: no run of task %s in %s has it in its why", pick, name, file)
	}
	return picked, nil
}

// runEpisode runs the episodes of `coworkenv run`: of its task, with its agent.
type runEpisode struct {
	o      *runOptions
	tg     *target
	choice *agentChoice
	stop   func() // stops catching Ctrl-C
	pool   func() (*isolate.Pool, error)
}

// taskName is the name of the task the target names, loading its file (in a worker, for a file
// run in one) when the target does not name it.
func (e *runEpisode) taskName(ctx context.Context) (string, error) {
	if e.tg.name != "" {
		return e.tg.name, nil
	}
	if !e.o.iso.isolated(e.tg.builtin) {
		task, _, err := e.tg.load(ctx)
		if err != nil {
			return "", loadError(err)
		}
		return task.Name, nil
	}
	ep, err := e.tg.episode()
	if err != nil {
		return "", usage(err)
	}
	pool, err := e.pool()
	if err != nil {
		return "", usage(err)
	}
	res, err := pool.Run(ctx, isolate.Job{Display: ep.Display, Files: ep.Files, Check: []string{e.tg.rel}, InfoOnly: true})
	if err != nil {
		return "", usage(err)
	}
	diags := res.Diags
	if res.Stopped != "" {
		diags = res.Report.Tasks[0].Diagnostics
	}
	names := make([]string, len(res.Tasks))
	for i, ti := range res.Tasks {
		names[i] = ti.Name
	}
	i, err := isolate.Pick(e.tg.corpus.DisplayPath(e.tg.rel), diags, names, "")
	if err != nil {
		if len(diags) > 0 {
			return "", failedf("%v", err) // the task file was tried: it does not load
		}
		return "", usage(err)
	}
	return names[i], nil
}

// loadError is the error of a task that could not be found or made: a file that does not load
// is a negative verdict (it was tried), anything else the command line's error.
func loadError(err error) error {
	if notLoaded(err) {
		return err // the task file was tried: it does not load
	}
	return usage(err)
}

// run runs one episode, and ends the command with its verdict.
func (e *runEpisode) run(ctx context.Context) error {
	passed, err := e.play(ctx)
	if err == nil && !passed {
		err = errNegative
	}
	return err
}

// play runs one episode with its transcript (unless --json), its trace and its report, and
// reports whether it passed; an error ends the command.
func (e *runEpisode) play(ctx context.Context) (bool, error) {
	o, tg, choice := e.o, e.tg, e.choice
	stdout, stderr := o.stdout, o.stderr
	// The episode's trace feeds the transcript (unless --json), the trace file and the end.
	out := &runOutput{stdout: stdout, printTo: stdout, transcript: !o.json}
	if o.json {
		out.printTo = stderr // print() in any script of the task shows in the transcript, on stderr with --json
	}
	var tf *rollout.TraceFile
	sinks := []io.Writer{isolate.Lines(out.line)}
	if o.trace != "" {
		tf = &rollout.TraceFile{Path: o.trace}
	} else if o.report != "" {
		// the report is made from a trace: one in a temporary folder, removed afterwards
		dir, err := os.MkdirTemp("", "coworkenv-run-")
		if err != nil {
			return false, usagef("--report: %v", err)
		}
		defer os.RemoveAll(dir)
		tf = &rollout.TraceFile{Path: filepath.Join(dir, "episode.jsonl")}
	}
	if tf != nil {
		sinks = append(sinks, tf)
	}
	print := dsl.BoundPrint(func(pos syntax.Position, msg string) { fmt.Fprintf(out.printTo, "  print %s: %s\n", pos, msg) })
	var res *isolate.EpisodeResult
	var err error
	if o.iso.isolated(tg.builtin) {
		res, err = runIsolated(ctx, tg, o.seed, choice, e.pool, out, io.MultiWriter(sinks...), print)
	} else {
		res, err = runHere(ctx, tg, o.seed, choice, out, io.MultiWriter(sinks...), print)
	}
	if err != nil {
		return false, loadError(err)
	}
	if d := res.Setup; d != nil {
		// the task's setup failed (or was interrupted): the episode could not be judged
		return false, failedf("%s", tg.locate(*d))
	}
	interrupted := res.Err != nil && res.Err.Code == episode.Interrupted
	traceOK := true
	if tf != nil {
		if err := tf.Finish(interrupted); err != nil {
			traceOK = false
			arg := "--trace"
			if o.trace == "" {
				arg = "--report" // the temporary trace of the report
			}
			if !interrupted {
				return false, failedf("%s: %v", arg, err) // the episode ran; its trace is left undone
			}
			fmt.Fprintf(stderr, "coworkenv run: %s: %v\n", arg, err)
		}
	}
	if o.json {
		fmt.Fprintf(stdout, "%s\n", out.endLine)
	} else {
		out.printEnd(res)
	}
	if res.Err != nil {
		fmt.Fprintf(stderr, "%s\n", tg.locate(*res.Err))
	}
	if interrupted && o.trace != "" {
		fmt.Fprintf(stderr, "coworkenv run: interrupted; the trace so far is in %s.partial\n", o.trace)
	}
	if o.report != "" && traceOK {
		e.stop() // a second Ctrl-C while the report is written ends the command
		from := tf.Path
		if interrupted {
			from += ".partial"
		}
		if err := report.WriteEpisodes(context.Background(), o.report, []string{from}, reportOptionsWith(".", tg.traced)); err != nil {
			return false, failedf("--report: %v", err)
		}
		if !o.json {
			fmt.Fprintf(stdout, "report in %s\n", o.report)
		}
	}
	return res.End.Passed, nil
}

// runHere runs the episode in this process; an error is a task or agent that cannot be made.
func runHere(ctx context.Context, tg *target, seed int64, choice *agentChoice, out *runOutput, tr io.Writer, print func(syntax.Position, string)) (*isolate.EpisodeResult, error) {
	task, src, err := tg.load(ctx)
	if err != nil {
		return nil, err
	}
	// the start event records the task file and every file it loads
	sources, err := trace.Sources(tg.corpus, tg.rel)
	if err != nil {
		return nil, err
	}
	out.begin(task.Name, task.File, len(task.Turns), choice.name, episode.EffectiveSeed(task.Seed, seed))
	r, setup, err := isolate.RunEpisode(ctx, isolate.Run{Task: task, Source: src, Sources: sources, Seed: seed, Agent: choice.spec,
		Model: choice.cfg, Print: print, Trace: tr})
	switch {
	case setup != nil:
		return &isolate.EpisodeResult{Setup: setup}, nil
	case r == nil:
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("--trace: %v", err)
	}
	return &isolate.EpisodeResult{End: trace.EndOf(r), Err: r.Err}, nil
}

// runIsolated runs the episode in a worker process of pool.
func runIsolated(ctx context.Context, tg *target, seed int64, choice *agentChoice, pool func() (*isolate.Pool, error), out *runOutput, tr io.Writer, print func(syntax.Position, string)) (*isolate.EpisodeResult, error) {
	ep, err := tg.episode()
	if err != nil {
		return nil, err
	}
	p, err := pool()
	if err != nil {
		return nil, err
	}
	ep.Seed, ep.Agent = seed, choice.spec
	return p.Episode(ctx, *ep, isolate.Host{Trace: tr, Print: print, Model: choice.cfg,
		Begin: func(ti isolate.TaskInfo) {
			out.begin(ti.Name, ti.File, ti.Turns, choice.name, episode.EffectiveSeed(ti.Seed, seed))
		}})
}

// runOutput prints an episode as it happens, from its trace's events: the transcript.
type runOutput struct {
	stdout, printTo io.Writer
	transcript      bool
	turns           int
	endLine         []byte // the trace's end event
	// replied: the turn's reply is printed (a simulated user's answer to it does not repeat it);
	// final: the final verifier's heading is printed (its judges come before the end)
	replied, final bool
	// doneWith is the agent's message a simulated user was satisfied with, printed before the
	// reply that repeats it
	doneWith *string
}

// begin prints the header of the transcript.
func (o *runOutput) begin(task, file string, turns int, agent string, seed int64) {
	o.turns = turns
	if o.transcript {
		fmt.Fprintf(o.stdout, "task %s (%s) · %d turn%s · agent %s · seed %d\n", task, file, turns, pluralS(turns), agent, seed)
	}
}

// line prints one event of the trace.
func (o *runOutput) line(raw []byte) {
	var ev struct {
		Event     string          `json:"event"`
		Turn      int             `json:"turn"`
		Content   string          `json:"content"`
		ToolCalls []any           `json:"tool_calls"`
		Name      string          `json:"name"`
		Args      json.RawMessage `json:"args"`
		Error     json.RawMessage `json:"error"`
		Fault     bool            `json:"fault"`
		Score     *float64        `json:"score"`
		Truncated bool            `json:"truncated"`
		Checks    []trace.Check   `json:"checks"`
		CallsFrom string          `json:"calls_from"`
		Note      string          `json:"note"`
		// sim_user and judge events
		Round  int    `json:"round"`
		Said   string `json:"said"`
		Done   bool   `json:"done"`
		Source string `json:"source"`
		Passed bool   `json:"passed"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	if ev.Event == "end" {
		o.endLine = append([]byte(nil), raw...)
	}
	if !o.transcript {
		return
	}
	w := o.stdout
	switch ev.Event {
	case "user":
		o.replied, o.doneWith = false, nil
		// turns and rounds are numbered from 0, as in the trace and ep.turn
		fmt.Fprintf(w, "\n── turn %d ──\nuser: %s\n", ev.Turn, ev.Content)
	case "sim_user":
		if !o.replied {
			fmt.Fprintf(w, "assistant: %s\n", ev.Said) // the agent's message went to the user
			if ev.Done {
				o.doneWith = &ev.Said
			}
		}
		switch {
		case !ev.Done:
			fmt.Fprintf(w, "user (round %d): %s\n", ev.Round, ev.Content)
		case ev.Source == "rounds":
			fmt.Fprintf(w, "  (user has no more answers in this turn)\n")
		default:
			fmt.Fprintf(w, "  (user is satisfied)\n")
		}
	case "judge":
		var judge struct {
			Turn *int `json:"turn"` // null for the final verifier
		}
		json.Unmarshal(raw, &judge)
		if judge.Turn == nil && !o.final {
			o.final = true
			fmt.Fprintln(w, "\n── final verifier ──")
		}
		verdict := "failed"
		if ev.Passed {
			verdict = "passed"
		}
		score := 0.0
		if ev.Score != nil {
			score = *ev.Score
		}
		fmt.Fprintf(w, "  judge: %s (%s) %s\n", verdict, episode.FormatScore(score), shorten(ev.Reason, 240))
	case "assistant":
		if ev.Content != "" && len(ev.ToolCalls) > 0 {
			fmt.Fprintf(w, "  (assistant: %s)\n", shorten(ev.Content, 160))
		}
		if ev.CallsFrom != "" && len(ev.ToolCalls) > 0 {
			fmt.Fprintf(w, "  (tool calls read from the text: %s)\n", ev.CallsFrom)
		}
		if ev.Note != "" {
			fmt.Fprintf(w, "  (note: %s)\n", shorten(ev.Note, 240))
		}
	case "not_run":
		var told struct {
			Error string `json:"error"`
		}
		json.Unmarshal([]byte(ev.Content), &told)
		fmt.Fprintf(w, "    ✗ not run: %s\n", shorten(told.Error, 160))
	case "call":
		fmt.Fprintf(w, "  → %s %s\n", ev.Name, shorten(string(ev.Args), 160))
	case "result":
		var msg string
		json.Unmarshal(ev.Error, &msg)
		switch {
		case ev.Fault:
			fmt.Fprintf(w, "    ✗ fault: %s\n", msg)
		case string(ev.Error) != "null":
			fmt.Fprintf(w, "    ✗ error: %s\n", msg)
		default:
			fmt.Fprintf(w, "    ← %s\n", shorten(ev.Content, 160))
		}
	case "reply":
		o.replied = true
		if o.doneWith == nil || *o.doneWith != ev.Content {
			fmt.Fprintf(w, "assistant: %s\n", ev.Content)
		}
	case "turn_end":
		printItems(w, ev.Checks)
		if ev.Truncated {
			fmt.Fprintf(w, "  (turn truncated at max_calls_per_turn)\n")
		}
		if ev.Score != nil {
			fmt.Fprintf(w, "turn score %s\n", episode.FormatScore(*ev.Score))
		}
	}
}

// printEnd prints the final verifier's items and the verdict.
func (o *runOutput) printEnd(r *isolate.EpisodeResult) {
	w := o.stdout
	end := r.End
	var final []trace.Check
	for _, c := range end.Checks {
		if c.Turn == nil {
			final = append(final, c)
		}
	}
	if len(final) > 0 {
		if !o.final {
			fmt.Fprintln(w, "\n── final verifier ──")
		}
		printItems(w, final)
	}
	verdict := "not passed"
	switch {
	case end.Passed:
		verdict = "passed"
	case r.Stopped != "" || (end.Error != nil && episode.Inconclusive(end.Error.Code)):
		verdict = end.Error.Code // interrupted, model-error, a stopped worker: nothing was judged
	}
	fmt.Fprintf(w, "\nscore %s (completion %s, safety %s, robustness %s) · %s\n",
		episode.FormatScore(end.Score), episode.FormatScore(end.Completion), episode.FormatScore(end.Safety), episode.FormatScore(end.Robustness), verdict)
}

func printItems(w io.Writer, items []trace.Check) {
	for _, it := range items {
		mark := "✓"
		if !it.Passed {
			mark = "✗"
		}
		extra := ""
		if it.Kind == "check" && it.Weight != nil && *it.Weight != 1 {
			extra = fmt.Sprintf(" (weight %s)", episode.FormatScore(*it.Weight))
		}
		fmt.Fprintf(w, "  %s %-6s %s%s\n", mark, it.Kind, it.Message, extra)
	}
}

func shorten(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "\\n")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// traced is the task file of the target, for the report of its episode (reportOptionsWith):
// every trace `run` writes is of its task.
func (t *target) traced(string) (*dsl.Corpus, string, bool) { return t.corpus, t.rel, true }

// sameOutput reports whether two outputs name the same file, however spelt; neither need exist.
func sameOutput(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	infoA, errA := os.Stat(a)
	infoB, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(infoA, infoB)
}
