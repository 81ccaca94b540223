package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
)

// source is one thing the user named: a corpus and the files of it to use.
type source struct {
	corpus *dsl.Corpus
	files  []string // root-relative task files
	dir    string   // the corpus root on disk ("" for the built-in corpus)
}

// openPath opens a file or folder on disk. The corpus root is the nearest folder at or above
// it that holds capabilities.star; where there is none, the folder given (for a file, its own
// folder), whose capabilities are then checked against the built-in taxonomy. A path that does not exist or cannot be read, and a folder without a task file, are
// errors (the command's usage error, exit 2).
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
		// a file that cannot be read is the command line's error, as a missing one is
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, unwrap(err))
		}
		f.Close()
		dir = filepath.Dir(abs)
	}
	root, standalone := dir, true
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, dsl.CapabilitiesFile)); err == nil {
			root, standalone = d, false
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
	var c *dsl.Corpus
	if standalone {
		// files of no corpus: their capabilities are checked against the built-in taxonomy
		c, err = dsl.OpenStandalone(root, filepath.ToSlash(display), corpus.Taxonomy())
	} else {
		c, err = dsl.OpenDir(root, filepath.ToSlash(display))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", display, unwrap(err))
	}
	src := &source{corpus: c, dir: root}
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
		if len(src.files) == 0 {
			return nil, fmt.Errorf("%s: no task files in it (*.star, outside lib/)", p)
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

// pathError is err of reading path, naming it once: "x.json: no such file or directory".
func pathError(path string, err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %v", path, pe.Err)
	}
	return err
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
	info, statErr := os.Stat(file)
	if statErr == nil && info.IsDir() {
		return nil, fmt.Errorf("%s is a folder; name one task: a file, file.star:NAME or a task name of the built-in corpus (rollout runs the tasks of a folder)", arg)
	}
	if statErr == nil || strings.HasSuffix(file, ".star") {
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

// load loads the target's task in this process. A file that does not load gives a
// *notLoadedError.
func (t *target) load(ctx context.Context) (*dsl.Task, []byte, error) {
	f := t.corpus.LoadFile(ctx, t.rel)
	if len(f.Diags) > 0 {
		return nil, nil, &notLoadedError{isolate.FormatDiags(f.Diags)}
	}
	task, err := isolate.PickTask(f, t.name)
	if err != nil {
		return nil, nil, err
	}
	return task, f.Source, nil
}

// locate points a diagnostic of the episode where validate shows it
// (dsl.Locate), when it is in a file of the target's corpus.
func (t *target) locate(d dsl.Diagnostic) dsl.Diagnostic {
	if rel, ok := t.corpus.RelPath(d.File); ok && d.File != "" {
		if src, err := t.corpus.ReadSource(rel); err == nil {
			return dsl.Locate(d, src)
		}
	}
	return d
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

// notLoadedError is a task file that does not load: its diagnostics, a line each.
type notLoadedError struct{ diags string }

func (e *notLoadedError) Error() string { return e.diags }

// diagLine is a line of formatted diagnostics ("file:1:2: error[syntax]: ...").
var diagLine = regexp.MustCompile(`^\S.*?: (error|warning)\[[a-z-]+\]: `)

// notLoaded reports whether err says that a task file does not load (exit 1), as opposed to
// naming a task the file does not declare or an agent that cannot be made (exit 2). A worker
// tells it in a *isolate.StartError, whose message is then the file's diagnostics.
func notLoaded(err error) bool {
	var nl *notLoadedError
	if errors.As(err, &nl) {
		return true
	}
	var se *isolate.StartError
	return errors.As(err, &se) && diagLine.MatchString(se.Msg)
}
