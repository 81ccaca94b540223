package isolate

import (
	"context"

	"github.com/coworkenv/coworkenv/dsl"
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
	// Prompts holds the user messages given as strings, in turn order.
	Prompts []string `json:"prompts"`
	// Setup is a canonical text of the state right after setup: file paths and contents, mail,
	// events and records. Empty when it was not asked for or setup failed.
	Setup string `json:"setup,omitempty"`
}

// Describe returns the facts of a loaded task; withSetup also runs its setup (within lim) for
// the Setup text.
func Describe(ctx context.Context, t *dsl.Task, lim dsl.Limits, withSetup bool) TaskInfo {
	ti := TaskInfo{Name: t.Name, File: t.File, Line: int(t.Pos.Line), Col: int(t.Pos.Col),
		Description: t.Description, Capabilities: append([]string{}, t.Capabilities...)}
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
