package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
)

// source is one thing the user named: a corpus and the files of it to use.
type source struct {
	corpus *dsl.Corpus
	files  []string // root-relative task files
}

// openPath opens a file or folder on disk. The corpus root is the nearest folder at or above
// it that holds capabilities.star; where there is none, the folder given (for a file, its own
// folder).
func openPath(p string) (*source, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, unwrap(err))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	dir := abs
	if !info.IsDir() {
		if !strings.HasSuffix(p, ".star") {
			return nil, fmt.Errorf("%s: not a .star file", p)
		}
		dir = filepath.Dir(abs)
	}
	root := dir
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, dsl.CapabilitiesFile)); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	display := root
	if !filepath.IsAbs(p) {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, root); err == nil {
				display = r
			}
		}
	}
	c, err := dsl.OpenDir(root, filepath.ToSlash(display))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", display, unwrap(err))
	}
	src := &source{corpus: c}
	if info.IsDir() {
		all, err := c.TaskFiles()
		if err != nil {
			return nil, err
		}
		sub, _ := filepath.Rel(root, abs)
		sub = filepath.ToSlash(sub)
		for _, f := range all {
			if sub == "." || strings.HasPrefix(f, sub+"/") {
				src.files = append(src.files, f)
			}
		}
		return src, nil
	}
	rel, _ := filepath.Rel(root, abs)
	src.files = []string{filepath.ToSlash(rel)}
	return src, nil
}

func embedded() (*source, error) {
	c := corpus.Open()
	files, err := c.TaskFiles()
	if err != nil {
		return nil, err
	}
	return &source{corpus: c, files: files}, nil
}

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// target is the task a `run` argument names: FILE, FILE.star:NAME, or a task name of the
// built-in corpus. A file from disk is found, not loaded: loading runs its code.
type target struct {
	corpus  *dsl.Corpus
	rel     string // the task file, root-relative
	name    string // the task's name; "" for the file's only task
	builtin bool   // a task of the built-in corpus
}

// locateTask finds the task a `run` argument names. A task of the built-in corpus is found by
// loading the corpus (it is trusted); a file from disk only by its path.
func locateTask(ctx context.Context, arg string) (*target, error) {
	file, name := splitTaskArg(arg)
	if strings.HasSuffix(file, ".star") {
		src, err := openPath(file)
		if err != nil {
			return nil, err
		}
		return &target{corpus: src.corpus, rel: src.files[0], name: name}, nil
	}
	src, err := embedded()
	if err != nil {
		return nil, err
	}
	for _, rel := range src.files {
		f := src.corpus.LoadFile(ctx, rel)
		for _, t := range f.Tasks {
			if t.Name == arg {
				return &target{corpus: src.corpus, rel: rel, name: t.Name, builtin: true}, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: no such file, and no task of that name in the built-in corpus (see coworkenv list)", arg)
}

// load loads the target's task in this process.
func (t *target) load(ctx context.Context) (*dsl.Task, []byte, error) {
	f := t.corpus.LoadFile(ctx, t.rel)
	task, err := isolate.PickTask(f, t.name)
	if err != nil {
		return nil, nil, err
	}
	return task, f.Source, nil
}

// episode is the target as a worker's episode (without its seed and agent).
func (t *target) episode() (*isolate.Episode, error) {
	support, err := isolate.Support(t.corpus)
	if err != nil {
		return nil, err
	}
	files, err := isolate.FilesFor(t.corpus, support, t.rel)
	if err != nil {
		return nil, err
	}
	return &isolate.Episode{Display: t.corpus.Display, Files: files, File: t.rel, Task: t.name}, nil
}

// splitTaskArg splits FILE.star:NAME into the file and the name; any other argument is the file
// (a path, or a task name of the built-in corpus) and name is "".
func splitTaskArg(arg string) (file, name string) {
	if i := strings.LastIndex(arg, ".star:"); i >= 0 {
		return arg[:i+5], arg[i+6:]
	}
	return arg, ""
}

// taskFiles are the files and folders that task arguments name, for checkOutput.
func taskFiles(args []string) []string {
	files := make([]string, len(args))
	for i, arg := range args {
		files[i], _ = splitTaskArg(arg)
	}
	return files
}
