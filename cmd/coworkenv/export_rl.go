package main

import (
	"flag"

	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// rlExport is `coworkenv export rl`.
var rlExport = &exportKind{
	name:    "rl",
	outKind: outputFile,
	help: "rl: one line per episode: task, group (task@sha, for GRPO/GDPO normalisation; the sha is of the\n" +
		"task file and every file it loads, as the trace's sources record them, so two versions of a helper\n" +
		"are two groups), file, trace, sample, seed, agent, reward (the score), components {completion,\n" +
		"safety, robustness}, turn_rewards (per turn, null for a turn without a verifier), passed, error,\n" +
		"messages, tools.",
	flags: func(fs *flag.FlagSet) func(string) (exportSink, error) {
		return func(out string) (exportSink, error) {
			return openLines(out, func(e *export.Episode, system string) *jsonv.Object { return export.RL(e, system) }, nil)
		}
	},
}
