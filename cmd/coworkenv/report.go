package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/report"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

const reportUsage = "report PATH... --out FILE.html [--corpus DIR] [--no-episodes] [--jobs N] [--time-limit DUR]\n" +
	"report --compare A B --out FILE.html [--corpus DIR] [--no-episodes]\n\n" +
	"Writes one self-contained HTML file (no network: its style, script, data and charts are inside it)\n" +
	"for what PATH holds, found from the input itself:\n" +
	"  - a trace (.jsonl; several traces make one page): the conversation, each tool call with its\n" +
	"    arguments and result (faults and tool errors marked, reasoning collapsed), the state changes\n" +
	"    after each call, each turn's checks, the scores, and a model's name and token usage;\n" +
	"  - a rollout folder (rollout.json and <task>/<sample>.jsonl): the summary (pass rate, pass@k,\n" +
	"    pass^k, single- against multi-turn, by capability) as tables and charts, and every task with\n" +
	"    its samples, each linking to its episode view, written beside FILE in FILE-episodes/ (or, with\n" +
	"    --no-episodes, to its trace); a filter shows only the failed samples;\n" +
	"  - a validation report (the output of validate --json; several are merged): the counts by status\n" +
	"    and by diagnostic code, and every task, worst first, with its diagnostics, source lines and\n" +
	"    carets (the task files are read from the current folder, as the report names them);\n" +
	"  - a generation run (its --out folder or its manifest.jsonl): the yield per round, the rejection\n" +
	"    reasons, the tokens and every attempt.\n\n" +
	"A trace holds state hashes, not the changes: the report finds the traced task file as replay does\n" +
	"(where the trace names it, under --corpus, beside the trace and above it, in the built-in corpus,\n" +
	"by its recorded SHA-256), makes the recorded calls again and shows what each one changed; where\n" +
	"the task file is not found, or the replay no longer matches the trace, the page says so. The\n" +
	"replay runs in this process, within the in-process guards and --time-limit per episode.\n" +
	"`run`, `rollout` and `validate` write the same pages with --report FILE.html. docs/report.md says\n" +
	"what each page shows.\n\n" +
	"--compare A B puts two rollout folders side by side (before and after training, or two models): over\n" +
	"the tasks both scored, the pass rate, pass@k and pass^k (k: the smaller sample count) of A and B and\n" +
	"their difference, overall, single- and multi-turn and by capability, as tables and charts, and the\n" +
	"tasks solved (more than half the samples passed) by one and not the other, each sample linking to its\n" +
	"episode view in FILE-episodes/a and /b (with --no-episodes, to its trace)."

// reportCmdOptions are the options of `coworkenv report`.
type reportCmdOptions struct {
	streams
	paths          []string
	out, corpusDir string
	noEpisodes     bool
	compare        bool
	jobs           int
	timeLimit      time.Duration
}

func (o *reportCmdOptions) flags(fs *flag.FlagSet) {
	fs.StringVar(&o.out, "out", "", "the HTML file to write (required)")
	fs.StringVar(&o.corpusDir, "corpus", ".", "a corpus to look for traced task files in, as replay does")
	fs.BoolVar(&o.compare, "compare", false, "compare two rollout folders, A and B (the two PATHs)")
	fs.BoolVar(&o.noEpisodes, "no-episodes", false, "a rollout's samples link to their traces; no episode views are written")
	fs.IntVar(&o.jobs, "jobs", runtime.NumCPU(), "how many episode views of a rollout are written at once")
	fs.DurationVar(&o.timeLimit, "time-limit", report.DefaultTimeLimit, "the longest replay of one episode for its state changes")
}

func (o *reportCmdOptions) args(pos []string) error {
	if len(pos) == 0 {
		return usagef("want one or more PATHs (a trace, a rollout folder, a validate --json report, a generation run)")
	}
	o.paths = pos
	return nil
}

func runReport(o *reportCmdOptions) error {
	stdout, stderr := o.stdout, o.stderr
	pos := o.paths
	if err := firstError(required(o.out, "--out FILE.html"), positive("--jobs", o.jobs)); err != nil {
		return err
	}
	switch {
	case o.timeLimit <= 0:
		return usagef("--time-limit: %v is not a positive duration", o.timeLimit)
	}
	if err := checkCorpusDir(o.corpusDir); err != nil {
		return usage(err)
	}
	if err := checkOutput("--out", o.out, outputFile, pos...); err != nil {
		return usage(err)
	}
	if o.compare {
		return o.writeCompare()
	}
	kind, err := report.Detect(pos[0])
	if err != nil {
		return usage(err)
	}
	if kind == report.Rollout && !o.noEpisodes {
		if err := checkOutput("--out", report.EpisodesDir(o.out), outputFolder, pos...); err != nil {
			return usagef("%v (the folder of the episode views)", err)
		}
	}
	opts := reportOptions(o.corpusDir)
	opts.NoEpisodes, opts.Jobs, opts.TimeLimit = o.noEpisodes, o.jobs, o.timeLimit
	closeBar := reportProgress(&opts, stderr)
	kind, err = report.Write(context.Background(), o.out, pos, opts)
	closeBar()
	if err != nil {
		return usage(err)
	}
	what := map[report.Kind]string{report.Episode: "an episode report", report.Rollout: "a rollout report",
		report.Validation: "a validation report", report.Generation: "a generation report"}[kind]
	fmt.Fprintf(stdout, "wrote %s (%s)\n", o.out, what)
	if kind == report.Rollout && !o.noEpisodes {
		fmt.Fprintf(stdout, "wrote the episode views in %s\n", report.EpisodesDir(o.out))
	}
	return nil
}

// reportOptions are a report's options with the task files of traces found as replay finds
// them (locateTraced), under the corpus folder dir.
func reportOptions(dir string) report.Options {
	return reportOptionsWith(dir, nil)
}

// reportOptionsWith are reportOptions where ran, when set, names the task file of a task the
// command itself ran (false for a task it did not): the `--report` flags of run and rollout find
// their tasks where they ran them, wherever the traces are, and the others as replay does
// under dir.
func reportOptionsWith(dir string, ran func(task string) (*dsl.Corpus, string, bool)) report.Options {
	return report.Options{Locate: func(ctx context.Context, tracePath string, start *trace.Start) (*dsl.Task, string, error) {
		var c *dsl.Corpus
		var rel string
		ok := false
		if ran != nil {
			c, rel, ok = ran(start.Task)
		}
		if !ok {
			t, err := locateTraced(dir, tracePath, start)
			if err != nil {
				return nil, "", err
			}
			c, rel = t.corpus, t.rel
		}
		task, _, err := isolate.FindTask(ctx, c, rel, start.Task)
		if err != nil {
			return nil, "", err
		}
		return task, c.DisplayPath(rel), nil
	}}
}

// reportProgress shows on w how many of a rollout report's episode views are written
// (opts.Progress), from the first count on; the returned function ends the display.
func reportProgress(opts *report.Options, w io.Writer) (closeBar func()) {
	var bar *progress.Bar
	var once sync.Once
	opts.Progress = func(done, total int) {
		once.Do(func() { bar = progress.New(w, "report", total) })
		bar.Set(done, "")
	}
	return func() { bar.Close() }
}

// reportFlag binds the `--report FILE.html` flag of run, rollout and validate to path.
func reportFlag(fs *flag.FlagSet, path *string, what string) {
	fs.StringVar(path, "report", "", "also write "+what+" as a self-contained HTML page to this file (see `coworkenv report`)")
}

// writeCompare is `report --compare A B`.
func (o *reportCmdOptions) writeCompare() error {
	if len(o.paths) != 2 {
		return usagef("--compare: want two rollout folders, A and B, not %d paths", len(o.paths))
	}
	for _, p := range o.paths {
		if kind, err := report.Detect(p); err != nil || kind != report.Rollout {
			if err == nil {
				err = fmt.Errorf("%s: a %s, not a rollout folder", p, kind)
			}
			return usagef("--compare: %v", err)
		}
	}
	if !o.noEpisodes {
		if err := checkOutput("--out", report.EpisodesDir(o.out), outputFolder, o.paths...); err != nil {
			return usagef("%v (the folder of the episode views)", err)
		}
	}
	opts := reportOptions(o.corpusDir)
	opts.NoEpisodes, opts.TimeLimit = o.noEpisodes, o.timeLimit
	if err := report.WriteCompare(context.Background(), o.out, o.paths[0], o.paths[1], opts); err != nil {
		return usage(err)
	}
	fmt.Fprintf(o.stdout, "wrote %s (a comparison of %s and %s)\n", o.out, o.paths[0], o.paths[1])
	return nil
}
