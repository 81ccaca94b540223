package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/rollout"
)

const rolloutUsage = "rollout [TASKS...] --out DIR [--samples K] [--jobs N] [--seed S] [--json] [--agent openai|oracle|noop] [--model NAME]\n\n" +
	"Runs K episodes of every task, N at a time, one fresh agent per episode, and writes each as a trace\n" +
	"DIR/<task>/<sample>.jsonl. TASKS are files, folders, file.star:name or task names of the built-in\n" +
	"corpus (default: the whole built-in corpus). Sample i runs with the run seed S+i. Samples whose\n" +
	"trace is already in DIR are read back instead of run, so an interrupted rollout resumes; DIR/rollout.json\n" +
	"records the agent, model and sampling settings, and a rollout with other settings into the same DIR\n" +
	"is refused. A sample whose model requests fail for good (after the retries: failed, with the code\n" +
	"model-error) or that Ctrl-C interrupts (interrupted, counted apart from failed) leaves only\n" +
	"DIR/<task>/<sample>.jsonl.partial, whose end records the code, and is run again next time. DIR is\n" +
	"checked before anything runs: a file, an input or a folder that cannot be written is refused.\n\n" +
	"The summary gives per task the pass rate, the mean score, pass@1, pass@K and pass^K (the unbiased\n" +
	"estimators 1-C(n-c,k)/C(n,k) and C(c,k)/C(n,k) over the task's n scored samples, c of them passed),\n" +
	"and the means over tasks overall, for single- and multi-turn tasks, and by capability.\n\n" +
	agentFlagsHelp + "\n\n" +
	"Exit status: 0 every sample has a trace, 1 some sample failed or was interrupted or some task did not\n" +
	"load, 2 bad usage (--out included)."

func cmdRollout(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("rollout", rolloutUsage, stderr)
	agentFlags := addAgentFlags(fs)
	samples := fs.Int("samples", 1, "episodes per task (K)")
	jobs := fs.Int("jobs", 4, "episodes run at once (for a model: concurrent requests)")
	out := fs.String("out", "", "folder of the traces (required)")
	seed := fs.Int64("seed", 0, "run seed of sample 0; sample i runs with seed+i")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object")
	pos, code, ok := parse(fs, rolloutUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case *out == "":
		fmt.Fprintln(stderr, "coworkenv rollout: --out DIR is required")
		return 2
	case *samples < 1:
		fmt.Fprintf(stderr, "coworkenv rollout: --samples: %d is not a positive number\n", *samples)
		return 2
	case *jobs < 1:
		fmt.Fprintf(stderr, "coworkenv rollout: --jobs: %d is not a positive number\n", *jobs)
		return 2
	}
	if err := checkOutput("--out", *out, outputFolder, taskFiles(pos)...); err != nil {
		fmt.Fprintf(stderr, "coworkenv rollout: %v\n", err)
		return 2
	}
	choice, err := agentFlags.choose()
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv rollout: %v\n", err)
		return 2
	}
	// The first Ctrl-C stops the rollout cleanly (running episodes end, their traces stay as
	// .partial); a second one kills the process as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	tasks, notLoaded, err := rolloutTasks(ctx, pos, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv rollout: %v\n", err)
		return 2
	}
	if len(tasks) == 0 {
		fmt.Fprintln(stderr, "coworkenv rollout: no task to run")
		return 2
	}
	opts := rollout.Options{
		Out: *out, Samples: *samples, Jobs: *jobs, Seed: *seed,
		Agent: choice.name, NewAgent: choice.newAgent, Config: choice.manifest(),
		Warn: func(msg string) { fmt.Fprintf(stderr, "coworkenv rollout: warning: %s\n", msg) },
	}
	var bar *rolloutBar
	if isTerminal(stderr) {
		bar = &rolloutBar{w: stderr}
		opts.Progress = bar.show
	}
	res, err := rollout.Run(ctx, tasks, opts)
	bar.clear()
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv rollout: %v\n", err)
		return 2
	}
	sum := rollout.Summarize(res)
	if *asJSON {
		o := sum.JSON()
		o.Set("out", *out)
		o.Set("not_loaded", int64(notLoaded))
		fmt.Fprintln(stdout, jsonv.MustEncode(o))
	} else {
		sum.WriteText(stdout)
		fmt.Fprintf(stdout, "traces in %s\n", *out)
	}
	reportFailures(stderr, res)
	if res.Failed > 0 || res.Interrupted > 0 || notLoaded > 0 {
		return 1
	}
	return 0
}

// reportFailures lists the failed samples (without a trace) on stderr, and says how to resume.
func reportFailures(w io.Writer, res *rollout.Result) {
	const most = 10
	n := 0
	for _, tr := range res.Tasks {
		for _, s := range tr.Samples {
			if s.OK() || s.Interrupted {
				continue
			}
			if n < most {
				fmt.Fprintf(w, "coworkenv rollout: %s sample %d failed: %s\n", tr.Task.Name, s.Index, firstLine(s.Err))
			}
			n++
		}
	}
	if n > most {
		fmt.Fprintf(w, "coworkenv rollout: ... and %d more failed samples\n", n-most)
	}
	if res.Interrupted > 0 {
		fmt.Fprintf(w, "coworkenv rollout: interrupted: %d sample%s did not finish; run the same command again to resume\n", res.Interrupted, pluralS(res.Interrupted))
	} else if res.Failed > 0 {
		fmt.Fprintln(w, "coworkenv rollout: failed samples have no trace; run the same command again to retry them")
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// rolloutTasks resolves TASKS in order, each task once. A file named directly that does not
// load is an error; a file found in a folder that does not load is reported on stderr and
// skipped (notLoaded counts them).
func rolloutTasks(ctx context.Context, args []string, stderr io.Writer) (tasks []rollout.Task, notLoaded int, err error) {
	seen := map[string]bool{}
	add := func(t *dsl.Task, src []byte) {
		key := t.File + "\x00" + t.Name
		if !seen[key] {
			seen[key] = true
			tasks = append(tasks, rollout.Task{Task: t, Source: src})
		}
	}
	loadAll := func(s *source) {
		for _, rel := range s.files {
			f := s.corpus.LoadFile(ctx, rel)
			if len(f.Diags) > 0 {
				fmt.Fprintf(stderr, "coworkenv rollout: skipping %s: it does not load: %s\n", f.Path, firstLine(f.Diags[0].String()))
				notLoaded++
				continue
			}
			for _, t := range f.Tasks {
				add(t, f.Source)
			}
		}
	}
	var builtin *builtinTasks
	if len(args) == 0 {
		s, err := embedded()
		if err != nil {
			return nil, 0, err
		}
		loadAll(s)
		return tasks, notLoaded, nil
	}
	for _, arg := range args {
		file, _ := splitTaskArg(arg)
		info, statErr := os.Stat(file)
		switch {
		case statErr == nil && info.IsDir():
			s, err := openPath(arg)
			if err != nil {
				return nil, 0, err
			}
			if len(s.files) == 0 {
				return nil, 0, fmt.Errorf("%s: no task files in it", arg)
			}
			loadAll(s)
		case file != arg || strings.HasSuffix(arg, ".star"):
			if file != arg {
				corp, t, err := resolveTask(ctx, arg)
				if err != nil {
					return nil, 0, err
				}
				src, err := corp.ReadSource(t.Rel)
				if err != nil {
					return nil, 0, err
				}
				add(t, src)
				continue
			}
			s, err := openPath(arg)
			if err != nil {
				return nil, 0, err
			}
			f := s.corpus.LoadFile(ctx, s.files[0])
			if len(f.Diags) > 0 {
				return nil, 0, fmt.Errorf("%s", formatDiags(f.Diags))
			}
			if len(f.Tasks) == 0 {
				return nil, 0, fmt.Errorf("%s declares no task", arg)
			}
			for _, t := range f.Tasks {
				add(t, f.Source)
			}
		default:
			if builtin == nil {
				builtin = &builtinTasks{}
				if err := builtin.load(ctx); err != nil {
					return nil, 0, err
				}
			}
			bt, ok := builtin.byName[arg]
			if !ok {
				return nil, 0, fmt.Errorf("%s: no such file or folder, and no task of that name in the built-in corpus (see coworkenv list)", arg)
			}
			add(bt.task, bt.src)
		}
	}
	return tasks, notLoaded, nil
}

// builtinTasks is the built-in corpus by task name, loaded once.
type builtinTasks struct {
	byName map[string]builtinTask
}

type builtinTask struct {
	task *dsl.Task
	src  []byte
}

func (b *builtinTasks) load(ctx context.Context) error {
	s, err := embedded()
	if err != nil {
		return err
	}
	b.byName = map[string]builtinTask{}
	for _, rel := range s.files {
		f := s.corpus.LoadFile(ctx, rel)
		for _, t := range f.Tasks {
			if _, dup := b.byName[t.Name]; !dup {
				b.byName[t.Name] = builtinTask{t, f.Source}
			}
		}
	}
	return nil
}

// rolloutBar draws "rollout [#####     ] 12/40 · 10 passed · 1 failed" on one line of a
// terminal.
type rolloutBar struct {
	w     io.Writer
	mu    sync.Mutex
	drawn bool
}

func (b *rolloutBar) show(p rollout.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	const width = 30
	n := 0
	if p.Total > 0 {
		n = p.Done * width / p.Total
	}
	bar := strings.Repeat("#", n) + strings.Repeat(" ", width-n)
	line := fmt.Sprintf("\rrollout [%s] %d/%d · %d passed", bar, p.Done, p.Total, p.Passed)
	if p.Failed > 0 {
		line += fmt.Sprintf(" · %d failed", p.Failed)
	}
	if p.Interrupted > 0 {
		line += fmt.Sprintf(" · %d interrupted", p.Interrupted)
	}
	fmt.Fprint(b.w, line+"\033[K")
	b.drawn = true
}

func (b *rolloutBar) clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
		b.drawn = false
	}
}
