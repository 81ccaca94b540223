package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/internal/shown"
)

// exportKind is one kind of `coworkenv export` (its own file, export_KIND.go): its help, its
// flags, which episodes it keeps and how it writes them (an export.Sink). export.Run does the
// rest the same way for every kind: reading the traces, verifying them by replay, the system
// message, the counts.
type exportKind struct {
	name    string
	help    string // the kind's paragraph in --help
	outKind outputKind
	// flags registers the kind's own flags on fs, its own flag set, and returns the function
	// that, once the flags are parsed, checks them (a usage error) and opens the output at out.
	flags func(fs *flag.FlagSet) func(out string) (export.Sink, error)
}

// exportKinds are the kinds of export, in the order --help shows them.
var exportKinds = []*exportKind{sftExport, rlExport, atifExport, inspectExport}

func exportKindOf(name string) *exportKind {
	for _, k := range exportKinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

// exportUsage is the usage text of export, with every kind's paragraph.
func exportUsage() string {
	var names, kinds []string
	for _, k := range exportKinds {
		names = append(names, k.name)
		kinds = append(kinds, k.help)
	}
	return "export " + strings.Join(names, "|") + " TRACES... --out PATH [flags of the kind] [--corpus DIR] [--no-verify] [--in-process|--isolate]\n\n" +
		"Turns traces (files, or folders of *.jsonl, like the DIR of a rollout) into training or evaluation\n" +
		"data, written atomically to PATH. The kinds:\n\n" + strings.Join(kinds, "\n\n") + "\n\n" +
		"export tasks [TASKS...] --out FILE writes a task dataset instead (coworkenv export tasks --help).\n\n" +
		"A trace without a recorded system prompt (the oracle's) gets the model agent's default one,\n" +
		"rebuilt from its task; when the task cannot be found, the conversation has no system message.\n\n" +
		"Every kind leaves out, and counts as skipped, episodes whose end records the code model-error (the\n" +
		"model's endpoint failed for good) or interrupted (Ctrl-C): they say nothing about the agent. PATH is\n" +
		"checked before any trace is read: one of the traces or a place that cannot be written is refused.\n\n" +
		"Verification. Every episode that would be kept is first replayed, as coworkenv replay does, with the\n" +
		"same rules: the task file is looked for where the trace names it, then by its corpus path under\n" +
		"--corpus (default the current folder), beside the trace and in the folders above it, and in the\n" +
		"built-in corpus, the copy with the recorded bytes first; task files from disk replay in worker\n" +
		"processes. An episode is left out, and counted by reason, when its\n" +
		"task file or a file it loads changed since it was recorded (\"task files changed since recorded\"),\n" +
		"when the replay differs from the trace (\"diverged on replay\": an edited trace, say), and when it\n" +
		"cannot be verified (\"not verifiable\": the task file is not there or is refused; \"not verified\n" +
		"(timeout)\" and the like: the replay's worker stopped); stderr names the first ten. The cost is a\n" +
		"replay of every kept episode: setup, every tool call and verifier run again (the model is not\n" +
		"asked), about the time the episodes took without the model's, plus a worker's start for files from\n" +
		"disk. --no-verify skips it and exports whatever the traces say: only for traces you trust (what you\n" +
		"just recorded yourself). Replay cannot check the text of a model's message other than each turn's\n" +
		"last; neither can export.\n\n" +
		isolationHelp + "\n\n" +
		"Left out for the kind's own rule (sft keeps passed episodes), or for model-error and interrupted,\n" +
		"is what was asked; left out because a trace is unreadable, could not be verified, diverged on replay\n" +
		"or was recorded with other task files makes the exit status 1. So does an export that keeps no\n" +
		"episode at all, whatever the reasons (said on stderr): PATH then holds nothing to train on.\n\n" +
		"Splits. A trace of a rollout with --split... records its task's split: the summary counts the\n" +
		"episodes written by split, and rl rows hold \"split\" (sft rows keep the shape trainers load). sft\n" +
		"and rl refuse a trace of the test split (exit status 2, nothing written): its task is held out for\n" +
		"evaluation. --allow-test exports it anyway."
}

// exportMain is `coworkenv export`: `export tasks`, which reads tasks (export_tasks.go), or
// export KIND, which reads traces.
func exportMain(args []string, io streams) error {
	if len(args) > 0 && args[0] == "tasks" {
		return in("export tasks", newCommand("export tasks", "", exportTasksUsage, runExportTasks).main(args[1:], io))
	}
	return newCommand("export", "", exportUsage(), runExport).main(args, io)
}

// exportOptions are the options of `coworkenv export KIND`.
type exportOptions struct {
	streams
	fs        *flag.FlagSet
	kind      *exportKind
	inputs    []string
	out       string
	noVerify  bool
	allowTest bool
	corpusDir string
	iso       *isolation
	// each kind's own flag set, and its function that opens the output
	kindFlags map[*exportKind]*flag.FlagSet
	opens     map[*exportKind]func(string) (export.Sink, error)
}

// flags binds the flags every kind has, and each kind's own, which each kind registers on its
// own flag set: the command line may give them before the kind, so they are parsed together.
func (o *exportOptions) flags(fs *flag.FlagSet) {
	o.fs = fs
	fs.StringVar(&o.out, "out", "", "the file (or folder, for the kinds that write one) to write (required)")
	fs.BoolVar(&o.noVerify, "no-verify", false, "do not replay the traces: export whatever they say (fast, for traces you trust)")
	fs.BoolVar(&o.allowTest, "allow-test", false, "sft, rl: export episodes whose trace records the test split (refused otherwise)")
	fs.StringVar(&o.corpusDir, "corpus", ".", "a corpus folder to look for the traced task files in (they are also looked for beside the traces)")
	o.iso = addIsolationFlags(fs, "replay")
	o.kindFlags = map[*exportKind]*flag.FlagSet{}
	o.opens = map[*exportKind]func(string) (export.Sink, error){}
	for _, k := range exportKinds {
		kfs := newFlags("export " + k.name)
		o.opens[k] = k.flags(kfs)
		o.kindFlags[k] = kfs
		kfs.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	}
}

func (o *exportOptions) args(pos []string) error {
	if len(pos) > 0 {
		o.kind = exportKindOf(pos[0])
	}
	if o.kind == nil {
		var names []string
		for _, k := range exportKinds {
			names = append(names, k.name)
		}
		return usagef("want %s, then TRACES (see coworkenv export --help)", strings.Join(names, ", "))
	}
	o.inputs = pos[1:]
	var err error
	o.fs.Visit(func(f *flag.Flag) {
		if err != nil || o.kindFlags[o.kind].Lookup(f.Name) != nil {
			return
		}
		for _, k := range exportKinds {
			if o.kindFlags[k].Lookup(f.Name) != nil {
				err = usagef("--%s: only for export %s", f.Name, k.name)
				return
			}
		}
	})
	if err == nil && len(o.inputs) == 0 {
		err = usagef("want TRACES (files or folders of *.jsonl)")
	}
	return in("export "+o.kind.name, err)
}

func runExport(o *exportOptions) error {
	return in("export "+o.kind.name, o.export())
}

// export reads, verifies and writes the traces (export.Run), and says what it did.
func (o *exportOptions) export() error {
	stdout, stderr := o.stdout, o.stderr
	kind := o.kind
	prefix := "coworkenv export " + kind.name
	if err := required(o.out, "--out PATH"); err != nil {
		return err
	}
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	if !o.noVerify {
		if err := checkCorpusDir(o.corpusDir); err != nil {
			return usage(err)
		}
	}
	var paths []string
	seen := map[string]bool{}
	for _, in := range o.inputs {
		ps, err := tracePaths(in)
		if err != nil {
			return usage(err)
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	if err := checkOutput("--out", o.out, kind.outKind, append(o.inputs, paths...)...); err != nil {
		return usage(err)
	}
	sink, err := o.opens[kind](o.out)
	if err != nil {
		return usage(err)
	}
	bar := progress.New(stderr, "export "+kind.name, len(paths))
	defer bar.Close()
	errw := bar.Writer(stderr) // messages during the loop, above a terminal's bar
	leftOut := &leftOutLog{w: errw, prefix: prefix}
	opts := export.RunOptions{
		Systems:  &export.Systems{Load: func(e *export.Episode) (*dsl.Task, error) { return loadTraced(o.corpusDir, e) }},
		Progress: func(done, kept int) { bar.Set(done, fmt.Sprintf("%d kept", kept)) },
		OnUnreadable: func(path string, err error) {
			fmt.Fprintf(errw, "%s: skipping %s: %s\n", prefix, shown.Name(path), shown.Text(unwrap(err).Error()))
		},
		OnLeftOut: leftOut.add,
		OnNoSystem: func(e *export.Episode, err error) {
			fmt.Fprintf(errw, "%s: %s: no system message: %s\n", prefix, e.Task(), firstLine(err.Error()))
		},
	}
	if (kind == sftExport || kind == rlExport) && !o.allowTest {
		opts.Refuse = export.RefuseTest
	}
	if sel, ok := sink.(selector); ok && sel.selection().Active() {
		opts.Select = sel.selection()
		opts.Select.Capability = o.capabilityOf(errw, prefix)
	}
	if !o.noVerify {
		rp := &replayer{dir: o.corpusDir, iso: o.iso}
		defer rp.close()
		opts.Verify = func(ctx context.Context, data []byte, e *export.Episode) (string, string, bool) {
			return verify(ctx, rp, data, e)
		}
	}
	// Ctrl-C stops the export (the replays take time): nothing is written
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sum, err := export.Run(ctx, paths, sink, opts)
	bar.Close()
	var testErr *export.TestSplitError
	switch {
	case errors.As(err, &testErr):
		return usage(fmt.Errorf("%v; %s was not written", err, o.out))
	case errors.Is(err, export.ErrInterrupted):
		return failedf("interrupted; %s was not written", o.out)
	case err != nil:
		return failedf("writing %s: %v", o.out, err) // the work ran; its output is left undone
	}
	leftOut.done()
	reasons, nSkipped := sum.Reasons()
	fmt.Fprintf(stdout, "export %s: wrote %d episode%s to %s from %d trace%s", kind.name, sum.Kept, pluralS(sum.Kept), o.out, len(paths), pluralS(len(paths)))
	if opts.Select != nil {
		fmt.Fprintf(stdout, "; selected from %d", sum.Candidates)
	}
	if splits := splitCounts(sum.Splits); splits != "" {
		fmt.Fprintf(stdout, "; %s", splits)
	}
	if nSkipped > 0 {
		fmt.Fprintf(stdout, "; skipped %d: %s", nSkipped, strings.Join(reasons, ", "))
	}
	if sum.Unreadable > 0 {
		fmt.Fprintf(stdout, "; %d unreadable", sum.Unreadable)
	}
	if sum.NoSystem > 0 {
		fmt.Fprintf(stdout, "; %d without a system message", sum.NoSystem)
	}
	fmt.Fprintln(stdout)
	if sum.Kept == 0 {
		// nothing to train or evaluate on: said on stderr, and the exit status is 1, so that a
		// script does not go on with an empty file
		why := "every trace was left out"
		if sum.Unreadable > 0 {
			reasons = append(reasons, fmt.Sprintf("%d unreadable", sum.Unreadable))
		}
		if len(reasons) > 0 {
			why += " (" + strings.Join(reasons, ", ") + ")"
		}
		fmt.Fprintf(stderr, "%s: no episode written to %s: %s\n", prefix, o.out, why)
		return errNegative
	}
	if sum.Failed() {
		return errNegative // a trace left out as unreadable, unverified, diverged or changed
	}
	return nil
}

// notVerifiable is the reason export gives a trace whose replay could not run.
const notVerifiable = "not verifiable"

// verify replays an episode's trace (data, as read) as replay does: why is the reason it is
// left out ("" when it is kept), detail what a person needs to know about it, and undone that
// it could not be checked at all (the replay could not run, or its worker stopped).
func verify(ctx context.Context, rp *replayer, data []byte, e *export.Episode) (why, detail string, undone bool) {
	r, err := rp.replayTrace(ctx, e.Path, data, e.Events)
	switch {
	case err != nil:
		return notVerifiable, firstLine(err.Error()) + " (--corpus names the folder of the task files; --no-verify skips the check)", true
	case r.Stopped != nil:
		return "not verified (" + r.Stopped.Code + ")", r.Stopped.Message, true
	}
	if r.Result.Found != "" {
		e.SetChecked(r.Result.Found)
	} else {
		e.SetChecked(r.Result.File)
	}
	switch why = export.ReplaySkip(r.Result); why {
	case export.SkipChanged:
		var files []string
		for _, c := range r.Result.Changed {
			files = append(files, c.String())
		}
		detail = strings.Join(files, "; ")
	case export.SkipDiverged:
		lines := strings.Split(strings.TrimSpace(r.Result.Divergence.String()), "\n")
		detail = lines[0]
		if len(lines) > 1 {
			detail += " " + strings.TrimSpace(lines[1])
		}
	}
	return why, detail, false
}

// leftOutLog tells stderr which traces export left out after their replay, and why: the first
// few, then how many more.
type leftOutLog struct {
	w      io.Writer
	prefix string
	n      int
}

const leftOutShown = 10

func (l *leftOutLog) add(path, why, detail string) {
	if l.n < leftOutShown {
		fmt.Fprintf(l.w, "%s: leaving out %s: %s: %s\n", l.prefix, shown.Name(path), why, shown.Text(detail))
	}
	l.n++
}

func (l *leftOutLog) done() {
	if l.n > leftOutShown {
		fmt.Fprintf(l.w, "%s: ... and %d more left out (coworkenv replay says why)\n", l.prefix, l.n-leftOutShown)
	}
}

// pluralS is "s" unless n is 1.
func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
