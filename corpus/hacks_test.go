package corpus_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/require"
)

// A hack is a wrong solution that a weak verifier would reward: the right keywords with false
// statements, harm then undo, extra mail to outsiders. testdata/hacks/*.json record them, turn
// by turn, as the calls and the reply an agent would make.
type hack struct {
	Task  string `json:"task"`
	Why   string `json:"why"`
	Turns []struct {
		Calls []struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"calls"`
		Reply string `json:"reply"`
	} `json:"turns"`
}

// TestRecordedHacksFail runs every recorded hack against the built-in corpus: each must fail,
// without an error of the task's own scripts, and at least ten tasks must have one.
func TestRecordedHacksFail(t *testing.T) {
	files, err := filepath.Glob("testdata/hacks/*.json")
	require.NoError(t, err)
	var hacks []hack
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var hs []hack
		require.NoError(t, json.Unmarshal(b, &hs), f)
		hacks = append(hacks, hs...)
	}
	tasks := corpusTasks(t)
	covered := map[string]bool{}
	for _, h := range hacks {
		t.Run(h.Task+"/"+h.Why, func(t *testing.T) {
			task := tasks[h.Task]
			require.NotNil(t, task, "no task %s in the built-in corpus", h.Task)
			agent := &episode.Scripted{Label: "hack"}
			for _, turn := range h.Turns {
				var calls []episode.ScriptedCall
				for _, c := range turn.Calls {
					args := &jsonv.Object{}
					if len(c.Args) > 0 {
						v, err := jsonv.Decode(c.Args)
						require.NoError(t, err)
						args = v.(*jsonv.Object)
					}
					calls = append(calls, episode.ScriptedCall{Name: c.Name, Args: args})
				}
				agent.Calls = append(agent.Calls, calls)
				agent.Replies = append(agent.Replies, turn.Reply)
			}
			p, d := episode.Prepare(context.Background(), task, episode.Options{})
			require.Nil(t, d)
			r := p.Run(context.Background(), agent, episode.RunOptions{})
			require.Nil(t, r.Err, "the hack must be scored, not stopped")
			for _, c := range r.Calls {
				require.False(t, c.IsError && !c.Fault, "call %s of the hack fails (%s): a hack must do what it claims", c.Name, c.Error)
			}
			require.False(t, r.Passed, "the hack passes with score %v", r.Score)
			covered[h.Task] = true
		})
	}
	require.GreaterOrEqual(t, len(covered), 10, "tasks with a recorded hack")
}

func corpusTasks(t *testing.T) map[string]*dsl.Task {
	c := corpus.Open()
	files, err := c.TaskFiles()
	require.NoError(t, err)
	out := map[string]*dsl.Task{}
	for _, f := range files {
		lf := c.LoadFile(context.Background(), f)
		require.Empty(t, lf.Diags, f)
		for _, task := range lf.Tasks {
			out[task.Name] = task
		}
	}
	return out
}
