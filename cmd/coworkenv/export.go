package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/export"
)

const exportUsage = "export sft|rl TRACES... --out FILE [--min-score X] [--include-oracle]\n\n" +
	"Turns traces (files, or folders of *.jsonl, like the DIR of a rollout) into training data, one JSON\n" +
	"object per line, written atomically to FILE.\n\n" +
	"sft: {\"messages\":[...],\"tools\":[...]} in the OpenAI chat format (system, user, assistant with\n" +
	"tool_calls whose arguments are JSON strings, tool with tool_call_id) that TRL, LLaMA-Factory and\n" +
	"axolotl read. Keeps the passed episodes of models (with --min-score, those scoring at least X);\n" +
	"--include-oracle also keeps the oracle's reference demonstrations, rebuilt from their calls.\n" +
	"Episodes that ended with an error, or in which the model sent tool-call arguments that are not a\n" +
	"JSON object, are left out.\n\n" +
	"rl: one line per episode (but see below): task, group (task@file-sha, for GRPO/GDPO\n" +
	"normalisation), file, trace, sample, seed, agent, reward (the score), components {completion,\n" +
	"safety, robustness}, turn_rewards (per turn, null for a turn without a verifier), passed, error,\n" +
	"messages, tools.\n\n" +
	"A trace without a recorded system prompt (the oracle's) gets the model agent's default one,\n" +
	"rebuilt from its task; when the task cannot be found, the conversation has no system message.\n\n" +
	"Both leave out, and count as skipped, episodes whose end records the code model-error (the model's\n" +
	"endpoint failed for good) or interrupted (Ctrl-C): they say nothing about the agent. FILE is checked\n" +
	"before any trace is read: a folder, one of the traces or a folder that cannot be written is refused.\n\n" +
	"Exit status: 0 every trace was read, 1 some trace was unreadable (and skipped), 2 bad usage (--out\n" +
	"included)."

func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("export", exportUsage, stderr)
	out := fs.String("out", "", "the JSON Lines file to write (required)")
	var minScore optFloat
	fs.Var(&minScore, "min-score", "sft: keep episodes scoring at least X instead of the passed ones")
	includeOracle := fs.Bool("include-oracle", false, "sft: also keep traces of the oracle (and other agents that are not models)")
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
	kept, unreadable, noSystem := 0, 0, 0
	skipped := map[string]int{}
	for _, p := range paths {
		e, err := export.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv export %s: skipping %s: %v\n", kind, p, err)
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
	if unreadable > 0 {
		return 1
	}
	return 0
}

// pluralS is "s" unless n is 1.
func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
