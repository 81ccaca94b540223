package isolate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/workspace/services"
)

// TaskInfo is what a worker tells about each task a file declares, beside the validation
// report: where the task is, and the text a near-duplicate check compares (its user messages
// and the workspace its setup builds).
type TaskInfo struct {
	Name         string   `json:"name"`
	File         string   `json:"file"` // as shown in diagnostics
	Line         int      `json:"line"`
	Col          int      `json:"col"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	Turns        int      `json:"turns,omitempty"`
	// Simulated says a turn's user is simulated (dsl.Task.MultiTurn counts the task as
	// multi-turn).
	Simulated bool  `json:"simulated,omitempty"`
	Seed      int64 `json:"seed,omitempty"` // the task's own seed
	// Prompts holds the user messages given as strings, in turn order.
	Prompts []string `json:"prompts"`
	// Setup is a canonical text of the state right after setup: file paths and contents, mail,
	// events and records. Empty when it was not asked for or setup failed.
	Setup string `json:"setup,omitempty"`
	// Tools are the JSON schemas of the task's tools, as an agent is given them (what a red
	// team is shown: package validate/redteam).
	Tools []json.RawMessage `json:"tools,omitempty"`
}

// Describe returns the facts of a loaded task; withSetup also runs its setup (within lim) for
// the Setup text.
func Describe(ctx context.Context, t *dsl.Task, lim dsl.Limits, withSetup bool) TaskInfo {
	ti := TaskInfo{Name: t.Name, File: t.File, Line: int(t.Pos.Line), Col: int(t.Pos.Col),
		Description: t.Description, Capabilities: append([]string{}, t.Capabilities...), Turns: len(t.Turns), Seed: t.Seed, Simulated: t.Simulated()}
	for _, s := range t.Tools {
		ti.Tools = append(ti.Tools, json.RawMessage(jsonv.MustEncode(s.Schema())))
	}
	for _, turn := range t.Turns {
		if turn.UserFn == nil {
			ti.Prompts = append(ti.Prompts, turn.User)
		}
	}
	if withSetup {
		if p, d := episode.Prepare(ctx, t, episode.Options{Limits: lim}); d == nil {
			ti.Setup = services.SetupText(p.Base)
		}
	}
	return ti
}

// Stub is a description of the task for a process that does not load it (its episodes run in
// workers): the name, the file, the capabilities and one turn per turn, with the user messages
// that are strings (the first with an empty simulated user when one is simulated, so that
// MultiTurn says what it says of the task). It has no functions: it cannot run.
func (ti TaskInfo) Stub(rel string) *dsl.Task {
	t := &dsl.Task{Name: ti.Name, Description: ti.Description, File: ti.File, Rel: rel,
		Capabilities: ti.Capabilities, Seed: ti.Seed, SingleTurn: ti.Turns == 1}
	for i := 0; i < ti.Turns; i++ {
		turn := &dsl.Turn{}
		if i < len(ti.Prompts) {
			turn.User = ti.Prompts[i]
		}
		if i == 0 && ti.Simulated {
			turn.Sim = &dsl.SimUser{}
		}
		t.Turns = append(t.Turns, turn)
	}
	return t
}

// PickTask is the task name of a loaded file; "" picks the file's only task. The errors say what
// the file declares.
func PickTask(f *dsl.File, name string) (*dsl.Task, error) {
	names := make([]string, len(f.Tasks))
	for i, t := range f.Tasks {
		names[i] = t.Name
	}
	i, err := Pick(f.Path, f.Diags, names, name)
	if err != nil {
		return nil, err
	}
	return f.Tasks[i], nil
}

// Pick is PickTask for a file known by its path, its diagnostics (a file that does not load)
// and the names of its tasks: the index of the task.
func Pick(path string, diags []dsl.Diagnostic, names []string, name string) (int, error) {
	if len(diags) > 0 {
		return 0, fmt.Errorf("%s", FormatDiags(diags))
	}
	declared := "none"
	if len(names) > 0 {
		declared = strings.Join(names, ", ")
	}
	if name == "" {
		if len(names) != 1 {
			return 0, fmt.Errorf("%s declares %d tasks (%s); name one as %s:NAME", path, len(names), declared, path)
		}
		return 0, nil
	}
	for i, n := range names {
		if n == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s has no task %q (it declares %s)", path, name, declared)
}

// FindTask loads the file rel of c and finds the task a trace names in it.
func FindTask(ctx context.Context, c *dsl.Corpus, rel, name string) (*dsl.Task, []byte, error) {
	f := c.LoadFile(ctx, rel)
	if len(f.Diags) > 0 {
		return nil, nil, fmt.Errorf("the task file no longer loads:\n%s", FormatDiags(f.Diags))
	}
	for _, t := range f.Tasks {
		if t.Name == name {
			return t, f.Source, nil
		}
	}
	return nil, nil, fmt.Errorf("%s no longer declares task %s", f.Path, name)
}

// FormatDiags is diagnostics, a line each.
func FormatDiags(ds []dsl.Diagnostic) string {
	var lines []string
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}
