package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/export"
)

// rlExport is `coworkenv export rl`.
var rlExport = &exportKind{
	name:    "rl",
	outKind: outputFile,
	help: "rl: one line per episode: task, group (task@sha/s:state: the sha is of the task file and every file\n" +
		"it loads, as the trace's sources record them, and the state is the hash of the workspace after setup,\n" +
		"so episodes of two versions of a task, or from two start states, are never one group), start_state,\n" +
		"file, trace, sample, seed, agent, reward, components {completion, safety, robustness}, turn_rewards\n" +
		"(the turn_end scores, null for a turn without a verifier), passed, error, messages (with the model's\n" +
		"reasoning_content and the tool messages it was shown for calls not run), tools, and model_outputs\n" +
		"when the model's server returned token ids or logprobs (per model message: message index,\n" +
		"finish_reason, prompt_token_ids, completion_token_ids, logprobs), turn_rounds (per turn, how many\n" +
		"answers a simulated user gave) and judges (every judge verdict: turn, rubric, passed, score, reason).\n" +
		"--reward score|completion|passed (default score) chooses the reward (passed: 1.0 or 0.0).\n" +
		"--advantage none|grpo|gdpo (default none): grpo adds \"advantage\", the reward normalised within its\n" +
		"group, (r - mean) / (std + 1e-6) with the population std, 0 for a group of one or of equal rewards;\n" +
		"gdpo normalises completion, safety and robustness within the group each on its own, sums them and\n" +
		"normalises the sums over the whole export. A group is the episodes of this export that share it,\n" +
		"so the lines are kept in memory until every trace is read.\n" +
		"--credit episode|turn (default episode): turn gives every turn its own reward: turn_credit (per\n" +
		"turn: its turn_end score or completion, the episode's reward for a turn without a verifier),\n" +
		"message_turns (the turn of each message, null for the system message) and, with --advantage,\n" +
		"turn_advantages (normalised within the group per turn index). docs/rewards.md gives the formulas.",
	flags: func(fs *flag.FlagSet) func(string) (export.Sink, error) {
		reward := fs.String("reward", export.RewardScore, "rl: the reward: "+strings.Join(export.RLRewards, ", "))
		advantage := fs.String("advantage", export.AdvantageNone, "rl: group-normalised advantages: "+strings.Join(export.RLAdvantages, ", "))
		credit := fs.String("credit", export.CreditEpisode, "rl: a reward per "+strings.Join(export.RLCredits, " or per "))
		return func(out string) (export.Sink, error) {
			opts := export.RLOptions{Reward: *reward, Advantage: *advantage, Credit: *credit}
			if err := opts.Check(); err != nil {
				return nil, err
			}
			f, err := export.CreateAtomic(out)
			if err != nil {
				return nil, fmt.Errorf("--out: %v", err)
			}
			w, err := export.NewRLWriter(f, opts)
			if err != nil {
				f.Abort()
				return nil, err
			}
			return rlSink{w}, nil
		}
	},
}

// rlSink writes the lines of export rl (export.RLWriter): it keeps every episode.
type rlSink struct{ w *export.RLWriter }

func (rlSink) Skip(*export.Episode) string { return "" }
func (s rlSink) Add(e *export.Episode, system string) error {
	return s.w.Add(e, system)
}
func (s rlSink) Commit() error { return s.w.Commit() }
func (s rlSink) Abort()        { s.w.Abort() }
