package corpus_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/stretchr/testify/require"
)

// A hack is a wrong solution that a weak verifier would reward: the right keywords with false
// statements, harm then undo, extra mail to outsiders. testdata/hacks/*.json record them, turn
// by turn, as the calls and the reply an agent would make (and, in a turn with a simulated user,
// the questions it asks first), in the format of package runtime/recorded.

// TestRecordedHacksFail runs every recorded hack against the built-in corpus: each must fail,
// without an error of the task's own scripts, and at least ten tasks must have one.
func TestRecordedHacksFail(t *testing.T) {
	t.Parallel()
	covered := runRecorded(t, "testdata/hacks/*.json", false)
	require.GreaterOrEqual(t, len(covered), 10, "tasks with a recorded hack")
}

// TestRecordedCarefulSolutionsPass runs recorded solutions that a careful agent might give and
// the reference does not (other wording and date formats, its own sent reply filed away, an
// address looked up another way): each must pass. Together with the hacks, they show that a
// verifier rewards the right answer and only the right answer.
func TestRecordedCarefulSolutionsPass(t *testing.T) {
	t.Parallel()
	covered := runRecorded(t, "testdata/careful/*.json", true)
	require.GreaterOrEqual(t, len(covered), 3, "tasks with a recorded careful solution")
}

// runRecorded runs the recorded solutions of the files matching glob and requires each to pass
// (pass) or fail; it returns the tasks covered.
func runRecorded(t *testing.T, glob string, pass bool) map[string]bool {
	files, err := filepath.Glob(glob)
	require.NoError(t, err)
	var runs []*recorded.Run
	for _, f := range files {
		rs, err := recorded.ReadFile(f)
		require.NoError(t, err)
		runs = append(runs, rs...)
	}
	tasks := corpusTasks(t)
	covered := map[string]bool{}
	for _, run := range runs {
		t.Run(run.Task+"/"+run.Why, func(t *testing.T) {
			want := recorded.Fail
			if pass {
				want = recorded.Pass
			}
			require.Equal(t, want, run.Expect, "%s: a run in this folder is expected to %s", run.Where(), want)
			task := tasks[run.Task]
			require.NotNil(t, task, "no task %s in the built-in corpus", run.Task)
			agent, err := run.Agent()
			require.NoError(t, err)
			p, d := episode.Prepare(context.Background(), task, episode.Options{})
			require.Nil(t, d)
			r := p.Run(context.Background(), agent, episode.RunOptions{})
			require.Nil(t, r.Err, "the recorded solution must be scored, not stopped")
			for _, c := range r.Calls {
				require.False(t, c.IsError && !c.Fault, "call %s fails (%s): a recorded solution must do what it claims", c.Name, c.Error)
			}
			if pass {
				var failed []string
				for _, it := range r.FailedItems() {
					failed = append(failed, it.Message)
				}
				require.True(t, r.Passed, "the careful solution fails with score %v: %v", r.Score, failed)
			} else {
				require.False(t, r.Passed, "the hack passes with score %v", r.Score)
			}
			covered[run.Task] = true
		})
	}
	return covered
}

func corpusTasks(t *testing.T) map[string]*dsl.Task {
	t.Helper()
	tasks, err := builtinTasks()
	require.NoError(t, err)
	return tasks
}

// builtinTasks are the tasks of the built-in corpus by name, loaded once for the package's
// tests; they only read them (each run prepares its own episode).
var builtinTasks = sync.OnceValues(func() (map[string]*dsl.Task, error) {
	c := corpus.Open()
	files, err := c.TaskFiles()
	if err != nil {
		return nil, err
	}
	out := map[string]*dsl.Task{}
	for _, f := range files {
		lf := c.LoadFile(context.Background(), f)
		if len(lf.Diags) > 0 {
			return nil, fmt.Errorf("%s: %v", f, lf.Diags)
		}
		for _, task := range lf.Tasks {
			out[task.Name] = task
		}
	}
	return out, nil
})
