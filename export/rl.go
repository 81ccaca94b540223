package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Group is a stable id of the task for group-relative methods (GRPO, GDPO): the task's name and
// the first 12 hex digits of a SHA-256 of its source, so that episodes of two versions of the
// task, or of two tasks of the same name in different corpora, are never normalised together.
// The source is every file the start event's sources name (the task file and the files it
// loads): the SHA-256 of their paths and hashes, a line each; for a task file that loads
// nothing, or a trace without sources (an older engine), the task file's own SHA-256
// (file_sha256).
func (e *Episode) Group() string {
	start := e.start()
	sha := start.FileSHA256
	if len(start.Sources) > 1 {
		h := sha256.New()
		for _, s := range start.Sources {
			fmt.Fprintf(h, "%s\x00%s\n", s.Path, s.SHA256)
		}
		sha = hex.EncodeToString(h.Sum(nil))
	}
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return e.Task() + "@" + sha
}

// Components are the end's completion, safety and robustness.
func (e *Episode) Components() *jsonv.Object {
	end := e.end()
	return jsonv.NewObject("completion", end.Completion, "safety", end.Safety, "robustness", end.Robustness)
}

// TurnRewards are the turn_end scores by turn: one entry per turn the episode reached, null
// for a turn without a verifier (or without a turn_end, when the episode stopped in it).
func (e *Episode) TurnRewards() []jsonv.Value {
	var out []jsonv.Value
	grow := func(turn int) {
		for len(out) <= turn {
			out = append(out, nil)
		}
	}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.User:
			grow(b.Turn)
		case *trace.TurnEnd:
			grow(b.Turn)
			if b.Score != nil {
				out[b.Turn] = *b.Score
			}
		}
	}
	if out == nil {
		out = []jsonv.Value{}
	}
	return out
}

// RLSkip says why `export rl` (and `export sft`) leaves an episode out, "" when it keeps it:
// an episode that says nothing about its agent (episode.Inconclusive), because the model's
// endpoint failed for good (model-error) or it was interrupted.
func RLSkip(e *Episode) string {
	if code := e.ErrorCode(); episode.Inconclusive(code) {
		return "inconclusive (" + code + ")"
	}
	return ""
}

// RL is one line of `export rl`: the task, its group, where the episode comes from, the reward
// (the end score), its components, the per-turn rewards, the verdict, the conversation and
// the tools.
func RL(e *Episode, system string) *jsonv.Object {
	var sample, errv jsonv.Value
	if n := e.Sample(); n >= 0 {
		sample = int64(n)
	}
	if msg := e.Error(); msg != "" {
		errv = msg
	}
	return jsonv.NewObject(
		"task", e.Task(),
		"group", e.Group(),
		"file", e.File(),
		"trace", e.Path,
		"sample", sample,
		"seed", e.Seed(),
		"agent", e.Agent(),
		"reward", e.Score(),
		"components", e.Components(),
		"turn_rewards", e.TurnRewards(),
		"passed", e.Passed(),
		"error", errv,
		"messages", e.Messages(system),
		"tools", e.Tools(),
	)
}
