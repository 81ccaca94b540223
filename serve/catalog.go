package serve

import (
	"context"
	"fmt"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// task is a task the server offers.
type task struct {
	task    *dsl.Task
	source  []byte
	sources []trace.Source
}

// catalog is the tasks the server offers, loaded once by New: by name, and in load order.
type catalog struct {
	byName  map[string]*task
	order   []*task
	skipped []dsl.Diagnostic
}

// loadCatalog loads the tasks of every source. Files that do not load are skipped (skipped says
// why), and so is a task whose name an earlier one has; an error is a source that cannot be
// read.
func loadCatalog(sources []Source) (*catalog, error) {
	c := &catalog{byName: map[string]*task{}}
	for _, src := range sources {
		files := src.Files
		if files == nil {
			var err error
			if files, err = src.Corpus.TaskFiles(); err != nil {
				return nil, err
			}
		}
		for _, rel := range files {
			f := src.Corpus.LoadFile(context.Background(), rel)
			if len(f.Diags) > 0 {
				c.skipped = append(c.skipped, f.Diags...)
				continue
			}
			sources, err := trace.Sources(src.Corpus, rel)
			if err != nil {
				d := dsl.NewDiag("io", fmt.Sprintf("%s: %v", f.Path, err))
				c.skipped = append(c.skipped, d)
				continue
			}
			for _, t := range f.Tasks {
				if prev, dup := c.byName[t.Name]; dup {
					d := dsl.NewDiag("schema", fmt.Sprintf("task %q is served from %s already; this one is left out", t.Name, prev.task.File)).At(t.Pos)
					c.skipped = append(c.skipped, d)
					continue
				}
				e := &task{task: t, source: f.Source, sources: sources}
				c.byName[t.Name] = e
				c.order = append(c.order, e)
			}
		}
	}
	return c, nil
}

// taskInfo describes a task in GET /tasks.
type taskInfo struct {
	Name          string   `json:"name"`
	File          string   `json:"file"`
	Description   string   `json:"description"`
	Capabilities  []string `json:"capabilities"`
	Turns         int      `json:"turns"`
	SimulatedUser bool     `json:"simulated_user"` // a turn's user answers within the turn
	Tools         []string `json:"tools"`
}

// infos describe the tasks (GET /tasks, OpenEnv's /metadata).
func (c *catalog) infos() []taskInfo {
	out := make([]taskInfo, len(c.order))
	for i, t := range c.order {
		ti := taskInfo{Name: t.task.Name, File: t.task.File, Description: t.task.Description,
			Capabilities: append([]string{}, t.task.Capabilities...), Turns: len(t.task.Turns),
			SimulatedUser: t.task.Simulated(), Tools: []string{}}
		for _, tool := range t.task.Tools {
			ti.Tools = append(ti.Tools, tool.Name)
		}
		out[i] = ti
	}
	return out
}
