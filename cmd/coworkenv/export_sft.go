package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/export"
)

// sftExport is `coworkenv export sft`.
var sftExport = &exportKind{
	name:    "sft",
	outKind: outputFile,
	help: "sft: one conversation per line for supervised fine-tuning. Keeps the passed episodes of models (with\n" +
		"--min-score, those scoring at least X); --include-oracle also keeps the oracle's reference\n" +
		"demonstrations, rebuilt from their calls. Episodes that ended with an error, or in which the model\n" +
		"sent tool-call arguments that are not a JSON object, are left out. The shape of a line:\n" +
		"  --format openai (default): {\"messages\":[...],\"tools\":...} in the OpenAI chat format (system,\n" +
		"    user, assistant with tool_calls, tool with tool_call_id and name), for TRL and axolotl;\n" +
		"  --format sharegpt: {\"conversations\":[...],\"tools\":...}, the same messages as from/value with\n" +
		"    the roles system, human, gpt and tool;\n" +
		"  --format llamafactory: LLaMA-Factory's sharegpt rows {\"conversations\",\"system\",\"tools\"}\n" +
		"    (human, gpt, function_call, observation; text beside tool calls is kept before\n" +
		"    <tool_call>CALLS</tool_call>), and the dataset's entry, named after the file, merged into the\n" +
		"    dataset_info.json beside it. Episodes whose roles cannot alternate as LLaMA-Factory needs (a\n" +
		"    turn that ends on tool results) are left out.\n" +
		"--arguments object (default) writes tool-call arguments as JSON objects, string as JSON strings\n" +
		"(for DeepSeek-V3's template); --tools json (default) writes the tools as a JSON string of the list,\n" +
		"list as the list; --reasoning keep (default) adds the model's recorded reasoning as\n" +
		"reasoning_content (a <think> block for llamafactory), drop leaves it out; --ids strict gives tool\n" +
		"calls ids of exactly 9 letters and digits (Mistral's templates refuse others). docs/training.md\n" +
		"says which flags each model family needs and how TRL, LLaMA-Factory and axolotl load the file.\n" +
		"Selection (docs/training.md): --per-task K keeps the K best episodes of each task and start state (a\n" +
		"higher score, then fewer tool calls, then fewer completion tokens); --distinct drops an episode whose\n" +
		"tool calls repeat a better one's; --per-capability N keeps at most N per capability (the task's\n" +
		"first); --mix CAP=W,... keeps the largest set that follows those shares and drops other\n" +
		"capabilities. They are chosen before verification; the summary counts each rule's drops.",
	flags: func(fs *flag.FlagSet) func(string) (export.Sink, error) {
		var minScore optFloat
		fs.Var(&minScore, "min-score", "sft: keep episodes scoring at least X instead of the passed ones")
		includeOracle := fs.Bool("include-oracle", false, "sft: also keep traces of the oracle (and other agents that are not models)")
		format := choiceVar(fs, "format", "sft: the shape of a line", export.FormatOpenAI, export.FormatShareGPT, export.FormatLlamaFactory)
		arguments := choiceVar(fs, "arguments", "sft: tool-call arguments as JSON objects or JSON strings", "object", "string")
		tools := choiceVar(fs, "tools", "sft: the tools as a JSON string of the list, or the list", "json", "list")
		reasoning := choiceVar(fs, "reasoning", "sft: the model's recorded reasoning on its messages, or not", "keep", "drop")
		ids := choiceVar(fs, "ids", "sft: tool-call ids as recorded, or 9 letters and digits", "keep", "strict")
		perTask := fs.Int("per-task", 0, "sft: keep at most `K` episodes per task and start state, the best first (0: all)")
		distinct := fs.Bool("distinct", false, "sft: drop an episode whose tool calls repeat those of a better one of its task")
		perCap := fs.Int("per-capability", 0, "sft: keep at most `N` episodes per capability (0: all)")
		mix := fs.String("mix", "", "sft: keep episodes in these shares of capabilities, `CAP=W,...`")
		return func(out string) (export.Sink, error) {
			shape := export.SFTShape{
				Format:          format.v,
				ObjectArguments: arguments.v == "object",
				ToolsJSON:       tools.v == "json",
				Reasoning:       reasoning.v == "keep",
				StrictIDs:       ids.v == "strict",
			}
			if shape.Format == export.FormatLlamaFactory {
				switch {
				case !shape.ObjectArguments:
					return nil, fmt.Errorf("--arguments string: not with --format llamafactory (LLaMA-Factory reads a call's arguments as an object)")
				case !shape.ToolsJSON:
					return nil, fmt.Errorf("--tools list: not with --format llamafactory (LLaMA-Factory reads the tools as a JSON string)")
				case shape.StrictIDs:
					return nil, fmt.Errorf("--ids strict: not with --format llamafactory (its rows have no ids)")
				}
			}
			opts := export.SFTOptions{IncludeReference: *includeOracle, Shape: shape}
			if minScore.set {
				v := minScore.v
				opts.MinScore = &v
			}
			sel := &export.Selection{PerTask: *perTask, Distinct: *distinct, PerCapability: *perCap}
			switch {
			case *perTask < 0:
				return nil, fmt.Errorf("--per-task %d: want 0 or more", *perTask)
			case *perCap < 0:
				return nil, fmt.Errorf("--per-capability %d: want 0 or more", *perCap)
			case *mix != "":
				m, err := export.ParseMix(*mix)
				if err != nil {
					return nil, fmt.Errorf("--mix: %v", err)
				}
				sel.Mix = m
			}
			f, err := export.CreateSFT(out, shape)
			if err != nil {
				return nil, err
			}
			return &sftSink{SFTFile: f, opts: opts, sel: sel}, nil
		}
	},
}

// sftSink writes the lines of `export sft`.
type sftSink struct {
	*export.SFTFile
	opts export.SFTOptions
	sel  *export.Selection
}

// selection is the sink's choice among its episodes (selector: export.go reads it).
func (s *sftSink) selection() *export.Selection { return s.sel }

func (s *sftSink) Skip(e *export.Episode) string { return export.SFTSkip(e, s.opts) }

// choiceFlag is a flag that takes one of a few words; the first is its default.
type choiceFlag struct {
	v     string
	words []string
}

// choiceVar registers a choiceFlag; usage is followed by the words (--help shows them after the
// flag's name too, and the default).
func choiceVar(fs *flag.FlagSet, name, usage string, words ...string) *choiceFlag {
	c := &choiceFlag{v: words[0], words: words}
	fs.Var(c, name, usage+": `"+strings.Join(words, "|")+"`")
	return c
}

func (c *choiceFlag) String() string {
	if c == nil {
		return ""
	}
	return c.v
}

func (c *choiceFlag) Set(s string) error {
	for _, w := range c.words {
		if s == w {
			c.v = s
			return nil
		}
	}
	return fmt.Errorf("want %s", strings.Join(c.words, " or "))
}
