package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/report"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

const runUsage = "run TASK [--agent oracle|noop|openai] [--model NAME] [--seed N] [--json] [--trace FILE] [--report FILE.html] [--in-process|--isolate]\n\n" +
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
	"\n\n" + isolationHelp +
	"\n\nAn episode stopped by model-error, Ctrl-C or a stopped worker counts as not passed."

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", runUsage, stderr)
	agentFlags := addAgentFlags(fs)
	iso := addIsolationFlags(fs, "episode")
	seed := fs.Int64("seed", 0, "run seed, mixed with the task's seed (0 keeps the task's seed)")
	asJSON := fs.Bool("json", false, "print the end result as one JSON object instead of the transcript")
	tracePath := fs.String("trace", "", "write the episode as a JSON Lines trace to this file")
	reportPath := reportFlag(fs, "the episode")
	pos, code, ok := parse(fs, runUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "coworkenv run: want one TASK, got %d arguments\n", len(pos))
		return 2
	}
	if *tracePath != "" {
		if err := checkOutput("--trace", *tracePath, outputFile, taskFiles(pos)...); err != nil {
			fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
			return 2
		}
	}
	if *reportPath != "" {
		err := checkOutput("--report", *reportPath, outputFile, taskFiles(pos)...)
		if err == nil && *tracePath != "" && sameOutput(*reportPath, *tracePath) {
			err = fmt.Errorf("--report: %s is also the --trace file; write the report elsewhere", *reportPath)
		}
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
			return 2
		}
	}
	if err := iso.check(); err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		return 2
	}
	choice, err := agentFlags.choose()
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		return 2
	}
	choice.cfg.OnRetry = func(attempt int, delay time.Duration, reason error) {
		fmt.Fprintf(stderr, "coworkenv run: model request failed (%v); retry %d in %s\n", reason, attempt, delay.Round(time.Millisecond))
	}
	// Ctrl-C cancels the episode: it ends with an error, and its trace keeps an end event.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	tg, err := locateTask(ctx, pos[0])
	if err == nil {
		err = iso.checkUsed(iso.isolated(tg.builtin))
	}
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		return 2
	}
	// The episode's trace feeds the transcript (unless --json), the trace file and the end.
	out := &runOutput{stdout: stdout, printTo: stdout, transcript: !*asJSON}
	if *asJSON {
		out.printTo = stderr // print() in any script of the task shows in the transcript, on stderr with --json
	}
	var tf *rollout.TraceFile
	sinks := []io.Writer{isolate.Lines(out.line)}
	if *tracePath != "" {
		tf = &rollout.TraceFile{Path: *tracePath}
	} else if *reportPath != "" {
		// the report is made from a trace: one in a temporary folder, removed afterwards
		dir, err := os.MkdirTemp("", "coworkenv-run-")
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv run: --report: %v\n", err)
			return exitUsage
		}
		defer os.RemoveAll(dir)
		tf = &rollout.TraceFile{Path: filepath.Join(dir, "episode.jsonl")}
	}
	if tf != nil {
		sinks = append(sinks, tf)
	}
	print := dsl.BoundPrint(func(pos syntax.Position, msg string) { fmt.Fprintf(out.printTo, "  print %s: %s\n", pos, msg) })
	var res *isolate.EpisodeResult
	if iso.isolated(tg.builtin) {
		res, err = runIsolated(ctx, tg, *seed, choice, iso, out, io.MultiWriter(sinks...), print)
	} else {
		res, err = runHere(ctx, tg, *seed, choice, out, io.MultiWriter(sinks...), print)
	}
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv run: %v\n", err)
		if notLoaded(err) {
			return exitNegated // the task file was tried: it does not load
		}
		return exitUsage
	}
	if d := res.Setup; d != nil {
		// the task's setup failed (or was interrupted): the episode could not be judged
		fmt.Fprintf(stderr, "coworkenv run: %s\n", tg.locate(*d))
		return exitNegated
	}
	interrupted := res.Err != nil && res.Err.Code == episode.Interrupted
	traceOK := true
	if tf != nil {
		if err := tf.Finish(interrupted); err != nil {
			traceOK = false
			arg := "--trace"
			if *tracePath == "" {
				arg = "--report" // the temporary trace of the report
			}
			fmt.Fprintf(stderr, "coworkenv run: %s: %v\n", arg, err)
			if !interrupted {
				return exitNegated // the episode ran; its trace is left undone
			}
		}
	}
	if *asJSON {
		fmt.Fprintf(stdout, "%s\n", out.endLine)
	} else {
		out.printEnd(res)
	}
	if res.Err != nil {
		fmt.Fprintf(stderr, "%s\n", tg.locate(*res.Err))
	}
	if interrupted && *tracePath != "" {
		fmt.Fprintf(stderr, "coworkenv run: interrupted; the trace so far is in %s.partial\n", *tracePath)
	}
	status := exitNegated
	if res.End.Passed {
		status = exitOK
	}
	if *reportPath != "" && traceOK {
		stop() // a second Ctrl-C while the report is written ends the command
		from := tf.Path
		if interrupted {
			from += ".partial"
		}
		if err := report.WriteEpisodes(context.Background(), *reportPath, []string{from}, reportOptionsWith(".", tg.traced)); err != nil {
			fmt.Fprintf(stderr, "coworkenv run: --report: %v\n", err)
			return exitNegated
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "report in %s\n", *reportPath)
		}
	}
	return status
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

// runIsolated runs the episode in a worker process.
func runIsolated(ctx context.Context, tg *target, seed int64, choice *agentChoice, iso *isolation, out *runOutput, tr io.Writer, print func(syntax.Position, string)) (*isolate.EpisodeResult, error) {
	ep, err := tg.episode()
	if err != nil {
		return nil, err
	}
	pool, err := iso.pool(1)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	ep.Seed, ep.Agent = seed, choice.spec
	return pool.Episode(ctx, *ep, isolate.Host{Trace: tr, Print: print, Model: choice.cfg,
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
