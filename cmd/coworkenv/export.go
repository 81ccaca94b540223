package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/export"
)

const exportUsage = "export sft|rl TRACES... --out FILE [--min-score X] [--include-oracle] [--corpus DIR] [--no-verify] [--in-process|--isolate]\n\n" +
	"Turns traces (files, or folders of *.jsonl, like the DIR of a rollout) into training data, one JSON\n" +
	"object per line, written atomically to FILE.\n\n" +
	"sft: {\"messages\":[...],\"tools\":[...]} in the OpenAI chat format (system, user, assistant with\n" +
	"tool_calls whose arguments are JSON strings, tool with tool_call_id) that TRL, LLaMA-Factory and\n" +
	"axolotl read. Keeps the passed episodes of models (with --min-score, those scoring at least X);\n" +
	"--include-oracle also keeps the oracle's reference demonstrations, rebuilt from their calls.\n" +
	"Episodes that ended with an error, or in which the model sent tool-call arguments that are not a\n" +
	"JSON object, are left out.\n\n" +
	"rl: one line per episode (but see below): task, group (task@sha, for GRPO/GDPO normalisation;\n" +
	"the sha is of the task file and every file it loads, as the trace's sources record them, so two\n" +
	"versions of a helper are two groups), file, trace, sample, seed, agent, reward (the score),\n" +
	"components {completion, safety, robustness}, turn_rewards (per turn, null for a turn without a\n" +
	"verifier), passed, error, messages, tools.\n\n" +
	"A trace without a recorded system prompt (the oracle's) gets the model agent's default one,\n" +
	"rebuilt from its task; when the task cannot be found, the conversation has no system message.\n\n" +
	"Both leave out, and count as skipped, episodes whose end records the code model-error (the model's\n" +
	"endpoint failed for good) or interrupted (Ctrl-C): they say nothing about the agent. FILE is checked\n" +
	"before any trace is read: a folder, one of the traces or a folder that cannot be written is refused.\n\n" +
	"Verification. Every episode that would be kept is first replayed, as coworkenv replay does, with the\n" +
	"same rules: the traced task file must be inside --corpus (default the current folder), and task\n" +
	"files from disk replay in worker processes. An episode is left out, and counted by reason, when its\n" +
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
	"Exit status: 0 every trace was read (and, unless --no-verify, every kept one verified, whatever the\n" +
	"verdict), 1 some trace was unreadable or could not be verified (and was skipped), 2 bad usage (--out\n" +
	"and --corpus included)."

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("export", exportUsage, stderr)
	out := fs.String("out", "", "the JSON Lines file to write (required)")
	var minScore optFloat
	fs.Var(&minScore, "min-score", "sft: keep episodes scoring at least X instead of the passed ones")
	includeOracle := fs.Bool("include-oracle", false, "sft: also keep traces of the oracle (and other agents that are not models)")
	noVerify := fs.Bool("no-verify", false, "do not replay the traces: export whatever they say (fast, for traces you trust)")
	corpusDir := fs.String("corpus", ".", "the folder the traced task files must be in, for the replay that verifies them")
	iso := addIsolationFlags(fs, "replay")
	pos, code, ok := parse(fs, exportUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) == 0 || (pos[0] != "sft" && pos[0] != "rl") {
		fmt.Fprintln(stderr, "coworkenv export: want sft or rl, then TRACES (see coworkenv export --help)")
		return 2
	}
	kind, inputs := pos[0], pos[1:]
	switch {
	case len(inputs) == 0:
		fmt.Fprintf(stderr, "coworkenv export %s: want TRACES (files or folders of *.jsonl)\n", kind)
		return 2
	case *out == "":
		fmt.Fprintf(stderr, "coworkenv export %s: --out FILE is required\n", kind)
		return 2
	case kind == "rl" && minScore.set:
		fmt.Fprintln(stderr, "coworkenv export rl: --min-score: only for export sft (rl keeps every episode)")
		return 2
	case kind == "rl" && *includeOracle:
		fmt.Fprintln(stderr, "coworkenv export rl: --include-oracle: only for export sft (rl keeps every episode)")
		return 2
	}
	if err := iso.check(); err != nil {
		fmt.Fprintf(stderr, "coworkenv export %s: %v\n", kind, err)
		return 2
	}
	if !*noVerify {
		if err := checkCorpusDir(*corpusDir); err != nil {
			fmt.Fprintf(stderr, "coworkenv export %s: %v\n", kind, err)
			return 2
		}
	}
	var paths []string
	seen := map[string]bool{}
	for _, in := range inputs {
		ps, err := tracePaths(in)
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv export %s: %v\n", kind, err)
			return 2
		}
		for _, p := range ps {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	if err := checkOutput("--out", *out, outputFile, append(inputs, paths...)...); err != nil {
		fmt.Fprintf(stderr, "coworkenv export %s: %v\n", kind, err)
		return 2
	}
	af, err := export.CreateAtomic(*out)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv export %s: --out: %v\n", kind, err)
		return 2
	}
	opts := export.SFTOptions{IncludeReference: *includeOracle}
	if minScore.set {
		v := minScore.v
		opts.MinScore = &v
	}
	systems := &export.Systems{Load: loadForReplay}
	noSystemTasks := map[string]bool{}
	kept, unreadable, unverified, noSystem := 0, 0, 0, 0
	skipped := map[string]int{}
	var rp *replayer
	if !*noVerify {
		rp = &replayer{dir: *corpusDir, iso: iso}
		defer rp.close()
	}
	leftOut := &leftOutLog{w: stderr, prefix: "coworkenv export " + kind}
	// Ctrl-C stops the export (the replays take time): nothing is written
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		var e *export.Episode
		if err == nil {
			e, err = export.Decode(p, data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv export %s: skipping %s: %v\n", kind, p, unwrap(err))
			unreadable++
			continue
		}
		why := export.RLSkip(e)
		if kind == "sft" {
			why = export.SFTSkip(e, opts)
		}
		if why != "" {
			skipped[why]++
			continue
		}
		if rp != nil {
			why, detail, undone := verify(ctx, rp, data, e)
			if ctx.Err() != nil {
				af.Abort()
				fmt.Fprintf(stderr, "coworkenv export %s: interrupted; %s was not written\n", kind, *out)
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
				fmt.Fprintf(stderr, "coworkenv export %s: %s: no system message: %s\n", kind, e.Task(), firstLine(err.Error()))
			}
		}
		line := export.SFT(e, system)
		if kind == "rl" {
			line = export.RL(e, system)
		}
		if err := af.WriteLine(line); err != nil {
			af.Abort()
			fmt.Fprintf(stderr, "coworkenv export %s: writing %s: %v\n", kind, *out, err)
			return 2
		}
		kept++
	}
	if err := af.Commit(); err != nil {
		fmt.Fprintf(stderr, "coworkenv export %s: writing %s: %v\n", kind, *out, err)
		return 2
	}
	leftOut.done()
	nSkipped := 0
	var reasons []string
	for why, n := range skipped {
		nSkipped += n
		reasons = append(reasons, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(reasons)
	fmt.Fprintf(stdout, "export %s: wrote %d episode%s to %s from %d trace%s", kind, kept, pluralS(kept), *out, len(paths), pluralS(len(paths)))
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
	if unreadable > 0 || unverified > 0 {
		return 1
	}
	return 0
}

// notVerifiable is the reason export gives a trace whose replay could not run.
const notVerifiable = "not verifiable"

// verify replays an episode's trace (data, as read) as replay does: why is the reason it is
// left out ("" when it is kept), detail what a person needs to know about it, and undone that
// it could not be checked at all (the replay could not run, or its worker stopped).
func verify(ctx context.Context, rp *replayer, data []byte, e *export.Episode) (why, detail string, undone bool) {
	r, err := rp.replayEvents(ctx, data, e.Events)
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
