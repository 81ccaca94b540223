package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

// task is a task the server offers.
type task struct {
	// task is the loaded task; for a task that runs in a worker (pool set), a stub of it
	// (isolate.TaskInfo.Stub): its name, file, capabilities and turns.
	task    *dsl.Task
	source  []byte
	sources []trace.Source
	// pool runs the task's sessions in its workers, with the files of spec; nil runs them here.
	pool *isolate.Pool
	spec isolate.SessionSpec
	// tools are the schemas of the task's tools, as an agent is given them.
	tools []json.RawMessage
}

// catalog is the tasks the server offers, loaded once by New: by name, and in load order.
type catalog struct {
	byName  map[string]*task
	order   []*task
	skipped []dsl.Diagnostic
}

// loadCatalog loads the tasks of every source (those of a source with a pool in its workers).
// Files that do not load are skipped (skipped says why), and so is a task whose name an earlier
// one has; an error is a source that cannot be read.
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
		load := loadHere
		if src.Pool != nil {
			support, err := isolate.Support(src.Corpus)
			if err != nil {
				return nil, err
			}
			load = func(corp *dsl.Corpus, rel string) ([]*task, []dsl.Diagnostic, error) {
				return loadInWorker(src.Pool, corp, support, rel)
			}
		}
		// the files load in parallel (in a worker each, with a pool); their tasks are taken in order
		type loadedFile struct {
			tasks []*task
			diags []dsl.Diagnostic
			err   error
		}
		out := make([]loadedFile, len(files))
		jobs := 1
		if src.Pool != nil {
			jobs = src.Pool.Workers()
		}
		sem := make(chan struct{}, jobs)
		var wg sync.WaitGroup
		for i, rel := range files {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				out[i].tasks, out[i].diags, out[i].err = load(src.Corpus, rel)
			}()
		}
		wg.Wait()
		for _, f := range out {
			if f.err != nil {
				return nil, f.err
			}
			c.skipped = append(c.skipped, f.diags...)
			for _, t := range f.tasks {
				if prev, dup := c.byName[t.task.Name]; dup {
					d := dsl.NewDiag("schema", fmt.Sprintf("task %q is served from %s already; this one is left out", t.task.Name, prev.task.File)).At(t.task.Pos)
					c.skipped = append(c.skipped, d)
					continue
				}
				c.byName[t.task.Name] = t
				c.order = append(c.order, t)
			}
		}
	}
	return c, nil
}

// loadHere loads the task file rel of corp in this process: its tasks, or the diagnostics that
// say why it is not served.
func loadHere(corp *dsl.Corpus, rel string) ([]*task, []dsl.Diagnostic, error) {
	f := corp.LoadFile(context.Background(), rel)
	if len(f.Diags) > 0 {
		return nil, f.Diags, nil
	}
	sources, err := trace.Sources(corp, rel)
	if err != nil {
		return nil, []dsl.Diagnostic{dsl.NewDiag("io", fmt.Sprintf("%s: %v", f.Path, err))}, nil
	}
	var out []*task
	for _, t := range f.Tasks {
		e := &task{task: t, source: f.Source, sources: sources}
		for _, tool := range t.Tools {
			e.tools = append(e.tools, json.RawMessage(jsonv.MustEncode(tool.Schema())))
		}
		out = append(out, e)
	}
	return out, nil, nil
}

// loadInWorker loads the task file rel of corp in a worker of p: its tasks, which run there too,
// or the diagnostics that say why it is not served (a file that stops its worker among them).
func loadInWorker(p *isolate.Pool, corp *dsl.Corpus, support map[string][]byte, rel string) ([]*task, []dsl.Diagnostic, error) {
	l, err := isolate.LoadFile(context.Background(), p, corp, support, rel)
	if err != nil {
		return nil, nil, err
	}
	if len(l.Diags) > 0 {
		return nil, l.Diags, nil
	}
	var out []*task
	for _, ti := range l.Tasks {
		stub := ti.Stub(rel)
		stub.Pos = syntax.MakePosition(&ti.File, int32(ti.Line), int32(ti.Col))
		out = append(out, &task{task: stub, pool: p, tools: ti.Tools,
			spec: isolate.SessionSpec{Display: corp.Display, Files: l.Files, File: rel, Task: ti.Name}})
	}
	return out, nil, nil
}

// toolNames are the names of the task's tools, in order.
func (t *task) toolNames() []string {
	out := []string{}
	for _, raw := range t.tools {
		var s struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		json.Unmarshal(raw, &s)
		out = append(out, s.Function.Name)
	}
	return out
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
		out[i] = taskInfo{Name: t.task.Name, File: t.task.File, Description: t.task.Description,
			Capabilities: append([]string{}, t.task.Capabilities...), Turns: len(t.task.Turns),
			SimulatedUser: t.task.Simulated(), Tools: t.toolNames()}
	}
	return out
}
