package isolate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/validate"
)

// loadRE finds the modules of load statements without parsing the file (the parent never runs
// or parses what it has not checked; a load this misses is reported by the worker).
var loadRE = regexp.MustCompile(`(?m)^[ \t]*load\(\s*["']([^"'\n]+)["']`)

// Support returns the files every task file of c may need beside itself: the root's
// capabilities.star and the .star files under lib/. Like every read of the corpus, it fails on
// a file or folder that a symbolic link leads out of the root.
func Support(c *dsl.Corpus) (map[string][]byte, error) {
	out := map[string][]byte{}
	if c.HasTaxonomy() {
		data, err := c.ReadSource(dsl.CapabilitiesFile)
		if err != nil {
			return nil, err
		}
		out[dsl.CapabilitiesFile] = data
	}
	lib := path.Join(c.Root, "lib")
	if err := c.CheckPath("lib"); err != nil {
		return nil, err
	}
	if _, err := fs.Stat(c.FS, lib); err != nil {
		return out, nil
	}
	err := fs.WalkDir(c.FS, lib, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".star") {
			return err
		}
		rel := strings.TrimPrefix(p, c.Root+"/")
		if c.Root == "." {
			rel = p
		}
		data, err := c.ReadSource(rel)
		if err != nil {
			return err
		}
		out[rel] = data
		return nil
	})
	return out, err
}

// FilesFor returns the files a job on the task file rel needs: support (from Support), the file
// and, transitively, the files it loads from elsewhere in the corpus.
func FilesFor(c *dsl.Corpus, support map[string][]byte, rel string) (map[string][]byte, error) {
	files := make(map[string][]byte, len(support)+1)
	for k, v := range support {
		files[k] = v
	}
	data, err := c.ReadSource(rel)
	if err != nil {
		return nil, err
	}
	files[rel] = data
	todo := []string{rel}
	for len(todo) > 0 {
		from := todo[0]
		todo = todo[1:]
		for _, m := range loadRE.FindAllSubmatch(files[from], -1) {
			p, err := dsl.ResolveLoad(from, string(m[1]))
			if err != nil {
				continue // the worker's loader reports it
			}
			if _, have := files[p]; have {
				continue
			}
			data, err := c.ReadSource(p)
			var esc *dsl.EscapeError
			switch {
			case errors.As(err, &esc):
				return nil, err
			case err == nil:
				files[p] = data
				todo = append(todo, p)
			}
		}
	}
	return files, nil
}

// ValidateCorpus is validate.Corpus with every task file checked in a worker of the pool: the
// same report, in the same order (the taxonomy's own diagnostics first, then files in path
// order, then tasks in declaration order), with a task name that an earlier file already
// declared reported as a schema error on the later one.
func ValidateCorpus(ctx context.Context, p *Pool, c *dsl.Corpus, files []string, progress func(done, total int)) (*validate.Report, error) {
	if files == nil {
		var err error
		if files, err = c.TaskFiles(); err != nil {
			return nil, err
		}
	}
	support, err := Support(c)
	if err != nil {
		return nil, err
	}
	results := make([]*Result, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, p.Workers())
	for i, rel := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			job := Job{Display: c.Display, Check: []string{rel}}
			if _, err := c.ReadSource(rel); err != nil {
				// the file cannot be read (a link out of the root): its report is that load
				// diagnostic, and nothing runs to make it
				var rep *validate.Report
				rep, errs[i] = validate.Corpus(ctx, c, []string{rel}, validate.Options{Jobs: 1})
				results[i] = &Result{Report: rep, Tasks: []TaskInfo{}}
			} else if job.Files, errs[i] = FilesFor(c, support, rel); errs[i] == nil {
				results[i], errs[i] = p.Run(ctx, job)
			}
			if progress != nil {
				mu.Lock()
				done++
				progress(done, len(files))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep := &validate.Report{}
	taxPath := c.DisplayPath(dsl.CapabilitiesFile)
	var taxEntry *validate.TaskReport
	type declared struct {
		file      string
		line, col int
	}
	first := map[string]declared{}
	var body []*validate.TaskReport
	for _, res := range results {
		info := map[string]TaskInfo{}
		for _, ti := range res.Tasks {
			info[ti.Name] = ti
		}
		for _, tr := range res.Report.Tasks {
			if tr.Task == "" && tr.File == taxPath {
				if taxEntry == nil {
					taxEntry = tr
				}
				continue
			}
			if tr.Task != "" {
				ti := info[tr.Task]
				if prev, dup := first[tr.Task]; dup {
					d := dsl.NewDiag("schema", fmt.Sprintf("task: name: %q is already declared at %s:%d:%d", tr.Task, prev.file, prev.line, prev.col))
					d.File, d.Line, d.Col = ti.File, ti.Line, ti.Col
					tr = &validate.TaskReport{Task: tr.Task, File: tr.File, Diagnostics: []dsl.Diagnostic{d}, Source: tr.Source}
				} else {
					first[tr.Task] = declared{ti.File, ti.Line, ti.Col}
				}
			}
			body = append(body, tr)
		}
	}
	if taxEntry != nil {
		rep.Add(taxEntry)
	}
	for _, tr := range body {
		rep.Add(tr)
	}
	return rep, nil
}
