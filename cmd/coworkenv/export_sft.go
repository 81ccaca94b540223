package main

import (
	"flag"

	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// sftExport is `coworkenv export sft`.
var sftExport = &exportKind{
	name:    "sft",
	outKind: outputFile,
	help: "sft: {\"messages\":[...],\"tools\":[...]} in the OpenAI chat format (system, user, assistant with\n" +
		"tool_calls whose arguments are JSON strings, tool with tool_call_id) that TRL, LLaMA-Factory and\n" +
		"axolotl read. Keeps the passed episodes of models (with --min-score, those scoring at least X);\n" +
		"--include-oracle also keeps the oracle's reference demonstrations, rebuilt from their calls.\n" +
		"Episodes that ended with an error, or in which the model sent tool-call arguments that are not a\n" +
		"JSON object, are left out.",
	flags: func(fs *flag.FlagSet) func(string) (exportSink, error) {
		var minScore optFloat
		fs.Var(&minScore, "min-score", "sft: keep episodes scoring at least X instead of the passed ones")
		includeOracle := fs.Bool("include-oracle", false, "sft: also keep traces of the oracle (and other agents that are not models)")
		return func(out string) (exportSink, error) {
			opts := export.SFTOptions{IncludeReference: *includeOracle}
			if minScore.set {
				v := minScore.v
				opts.MinScore = &v
			}
			return openLines(out, func(e *export.Episode, system string) *jsonv.Object { return export.SFT(e, system) },
				func(e *export.Episode) string { return export.SFTSkip(e, opts) })
		}
	},
}
