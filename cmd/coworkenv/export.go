package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/progress"
)

// exportKind is one kind of `coworkenv export` (its own file, export_KIND.go): its help, its
// flags, which episodes it keeps and how it writes them. The command does the rest the same way
// for every kind: reading the traces, verifying them by replay, the system message, the summary.
type exportKind struct {
	name    string
	summary string // the kind's line in the usage line
	help    string // the kind's paragraph in --help
	outKind outputKind
	// flags registers the kind's own flags on fs and returns the function that, once the flags are
	// parsed, checks them (a usage error) and opens the output at out.
	flags func(fs *flag.FlagSet) func(out string) (exportSink, error)
}

// exportSink writes the episodes of one export.
type exportSink interface {
	// Skip says why an episode is left out before its replay ("" keeps it).
	Skip(e *export.Episode) string
	// Add writes one episode; system is its system message ("" when none).
	Add(e *export.Episode, system string) error
	// Commit finishes the output (atomically: the path holds the old file or the whole new one).
	Commit() error
	// Abort drops what was written.
	Abort()
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
		"or was recorded with other task files makes the exit status 1."
}

func cmdExport(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "tasks" {
		return cmdExportTasks(args[1:], stdout, stderr) // reads tasks, not traces (export_tasks.go)
	}
	usage := exportUsage()
	fs := newFlags("export", usage, stderr)
	out := fs.String("out", "", "the file (or folder, for the kinds that write one) to write (required)")
	noVerify := fs.Bool("no-verify", false, "do not replay the traces: export whatever they say (fast, for traces you trust)")
	corpusDir := fs.String("corpus", ".", "a corpus folder to look for the traced task files in (they are also looked for beside the traces)")
	iso := addIsolationFlags(fs, "replay")
	// every kind's flags, and which kind registered which
	owner := map[string]*exportKind{}
	opens := map[*exportKind]func(string) (exportSink, error){}
	for _, k := range exportKinds {
		before := map[string]bool{}
		fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
		opens[k] = k.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !before[f.Name] {
				owner[f.Name] = k
			}
		})
	}
	pos, code, ok := parse(fs, usage, args, stdout, stderr)
	if !ok {
		return code
	}
	var names []string
	for _, k := range exportKinds {
		names = append(names, k.name)
	}
	var kind *exportKind
	if len(pos) > 0 {
		kind = exportKindOf(pos[0])
	}
	if kind == nil {
		fmt.Fprintf(stderr, "coworkenv export: want %s, then TRACES (see coworkenv export --help)\n", strings.Join(names, ", "))
		return 2
	}
	inputs := pos[1:]
	prefix := "coworkenv export " + kind.name
	usageErr := ""
	fs.Visit(func(f *flag.Flag) {
		if k := owner[f.Name]; k != nil && k != kind && usageErr == "" {
			usageErr = fmt.Sprintf("--%s: only for export %s", f.Name, k.name)
		}
	})
	switch {
	case usageErr != "":
		fmt.Fprintf(stderr, "%s: %s\n", prefix, usageErr)
		return 2
	case len(inputs) == 0:
		fmt.Fprintf(stderr, "%s: want TRACES (files or folders of *.jsonl)\n", prefix)
		return 2
	case *out == "":
		fmt.Fprintf(stderr, "%s: --out PATH is required\n", prefix)
		return 2
	}
	if err := iso.check(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	if !*noVerify {
		if err := checkCorpusDir(*corpusDir); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
			return 2
		}
	}
	var paths []string
	seen := map[string]bool{}
	for _, in := range inputs {
		ps, err := tracePaths(in)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
			return 2
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	if err := checkOutput("--out", *out, kind.outKind, append(inputs, paths...)...); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	sink, err := opens[kind](*out)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
		return 2
	}
	systems := &export.Systems{Load: func(e *export.Episode) (*dsl.Task, error) { return loadTraced(*corpusDir, e) }}
	noSystemTasks := map[string]bool{}
	kept, unreadable, unverified, noSystem := 0, 0, 0, 0
	skipped := map[string]int{}
	var rp *replayer
	if !*noVerify {
		rp = &replayer{dir: *corpusDir, iso: iso}
		defer rp.close()
	}
	bar := progress.New(stderr, "export "+kind.name, len(paths))
	defer bar.Close()
	errw := bar.Writer(stderr) // messages during the loop, above a terminal's bar
	leftOut := &leftOutLog{w: errw, prefix: prefix}
	// Ctrl-C stops the export (the replays take time): nothing is written
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for i, p := range paths {
		bar.Set(i, fmt.Sprintf("%d kept", kept))
		data, err := os.ReadFile(p)
		var e *export.Episode
		if err == nil {
			e, err = export.Decode(p, data)
		}
		if err != nil {
			fmt.Fprintf(errw, "%s: skipping %s: %v\n", prefix, p, unwrap(err))
			unreadable++
			continue
		}
		why := export.RLSkip(e)
		if why == "" {
			why = sink.Skip(e)
		}
		if why != "" {
			skipped[why]++
			continue
		}
		if rp != nil {
			why, detail, undone := verify(ctx, rp, data, e)
			if ctx.Err() != nil {
				bar.Close()
				sink.Abort()
				fmt.Fprintf(errw, "%s: interrupted; %s was not written\n", prefix, *out)
				return 1
			}
			if why != "" {
				skipped[why]++
				leftOut.add(p, why, detail)
				if undone {
					unverified++
				}
				continue
			}
		}
		system, err := systems.For(e)
		if err != nil {
			noSystem++
			if key := e.File() + ":" + e.Task(); !noSystemTasks[key] {
				noSystemTasks[key] = true
				fmt.Fprintf(errw, "%s: %s: no system message: %s\n", prefix, e.Task(), firstLine(err.Error()))
			}
		}
		if err := sink.Add(e, system); err != nil {
			bar.Close()
			sink.Abort()
			fmt.Fprintf(errw, "%s: writing %s: %v\n", prefix, *out, err)
			return exitNegated // the work ran; its output is left undone
		}
		kept++
	}
	bar.Set(len(paths), fmt.Sprintf("%d kept", kept))
	bar.Close()
	if err := sink.Commit(); err != nil {
		fmt.Fprintf(stderr, "%s: writing %s: %v\n", prefix, *out, err)
		return exitNegated
	}
	leftOut.done()
	nSkipped := 0
	var reasons []string
	for why, n := range skipped {
		nSkipped += n
		reasons = append(reasons, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(reasons)
	fmt.Fprintf(stdout, "export %s: wrote %d episode%s to %s from %d trace%s", kind.name, kept, pluralS(kept), *out, len(paths), pluralS(len(paths)))
	if nSkipped > 0 {
		fmt.Fprintf(stdout, "; skipped %d: %s", nSkipped, strings.Join(reasons, ", "))
	}
	if unreadable > 0 {
		fmt.Fprintf(stdout, "; %d unreadable", unreadable)
	}
	if noSystem > 0 {
		fmt.Fprintf(stdout, "; %d without a system message", noSystem)
	}
	fmt.Fprintln(stdout)
	if unreadable > 0 || unverified > 0 || leftOut.n > 0 {
		return exitNegated // a trace left out as unreadable, unverified, diverged or changed
	}
	return exitOK
}

// lineSink writes one JSON object per episode to a JSON Lines file, atomically; skip, when set,
// leaves episodes out.
type lineSink struct {
	f    *export.AtomicFile
	line func(e *export.Episode, system string) *jsonv.Object
	skip func(e *export.Episode) string
}

func openLines(out string, line func(e *export.Episode, system string) *jsonv.Object, skip func(e *export.Episode) string) (exportSink, error) {
	f, err := export.CreateAtomic(out)
	if err != nil {
		return nil, fmt.Errorf("--out: %v", err)
	}
	return &lineSink{f: f, line: line, skip: skip}, nil
}

func (s *lineSink) Skip(e *export.Episode) string {
	if s.skip == nil {
		return ""
	}
	return s.skip(e)
}

func (s *lineSink) Add(e *export.Episode, system string) error {
	return s.f.WriteLine(s.line(e, system))
}
func (s *lineSink) Commit() error { return s.f.Commit() }
func (s *lineSink) Abort()        { s.f.Abort() }

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
		fmt.Fprintf(l.w, "%s: leaving out %s: %s: %s\n", l.prefix, path, why, detail)
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
