package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/export"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/internal/shown"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

const replayUsage = "replay TRACE|DIR [--corpus DIR] [--json] [--in-process|--isolate]\n\n" +
	"Replays a trace (or every *.jsonl trace in a folder) against its task: setup runs with the recorded\n" +
	"seed, the agent's side is made again (an oracle or noop trace by that agent, a model trace from the\n" +
	"model's messages), and every call, result, reply, state hash, turn verdict and the end is compared;\n" +
	"the first difference is reported. The task file and every file it loads are compared with the hashes\n" +
	"the trace records (its sources): a warning names each file that changed since (\"helper file\n" +
	"lib/x.star changed since the trace was recorded ...\"), and notes say what could not be checked (a\n" +
	"trace of an older engine without sources or rand, an agent that cannot be run again). --json gives,\n" +
	"per trace, matched, task_changed, changed (path, task, recorded, current for each file), notes and\n" +
	"found (where the task file was, when not where the trace names it; null otherwise).\n" +
	"A trace of an interrupted episode (its end's code is interrupted) is replayed as far as it goes\n" +
	"and stops there: \"matched up to its interruption\" (--json: interrupted, true), not a divergence.\n\n" +
	"Where the task file is. A trace names it as given when it was recorded (relative to the folder of\n" +
	"the run, or absolute) and by its path inside its corpus (the first of its sources). Replay looks,\n" +
	"in order: at the file as named, when that lies inside the corpus folder (--corpus, by default the\n" +
	"current folder); for its path inside its corpus under the corpus folder, then under the trace's\n" +
	"own folder and each folder above it (a rollout folder inside or beside its corpus), and under\n" +
	"each of those, for a task file of no corpus, in the folders the file as named has above it\n" +
	"(tasks/ of tasks/t.star, beside runs/); then in the\n" +
	"built-in corpus (a trace of it, corpus/..., or of a file with the same bytes). The first file with\n" +
	"the bytes the trace records (the task file and every file it loads) is replayed; when none has\n" +
	"them, the first file found, with a warning for each changed file; when none is found, the error\n" +
	"says where replay looked (name the corpus folder with --corpus). A trace moved with its corpus, or\n" +
	"replayed from another folder, thus still replays. Each place is a wall: a path that climbs out of\n" +
	"it, an absolute path elsewhere or a symbolic link that leads out is refused before anything is\n" +
	"read. A replay whose worker runs out of memory or time, or dies, is reported with memory-limit,\n" +
	"timeout or crash, and the next trace replays.\n\n" + isolationHelp

// replayOptions are the options of `coworkenv replay`.
type replayOptions struct {
	streams
	path      string
	json      bool
	corpusDir string
	iso       *isolation
}

func (o *replayOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	fs.StringVar(&o.corpusDir, "corpus", ".", "the folder the traced task files must be in")
	o.iso = addIsolationFlags(fs, "replay")
}

func (o *replayOptions) args(pos []string) error {
	if len(pos) != 1 {
		return usagef("want one TRACE or DIR, got %d arguments", len(pos))
	}
	o.path = pos[0]
	return nil
}

func runReplay(o *replayOptions) error {
	stdout, stderr := o.stdout, o.stderr
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	paths, err := tracePaths(o.path)
	if err != nil {
		return usage(err)
	}
	if err := checkCorpusDir(o.corpusDir); err != nil {
		return usage(err)
	}
	rp := &replayer{dir: o.corpusDir, iso: o.iso}
	defer rp.close()
	ctx := context.Background()
	var results []jsonv.Value
	matched, diverged, stopped, changed, failed := 0, 0, 0, 0, 0
	interrupted := 0 // of the matched: traces of interrupted episodes, replayed as far as they go
	bar := progress.New(stderr, "replay", len(paths))
	defer bar.Close()
	stdout = bar.Writer(stdout) // a line per trace, above a terminal's bar
	for i, p := range paths {
		bar.Set(i, fmt.Sprintf("%d matched", matched))
		r, err := rp.replay(ctx, p)
		sp := shown.Name(p) // the path as printed
		entry := jsonv.NewObject("trace", p)
		switch {
		case err != nil:
			failed++
			entry.Set("error", err.Error())
			if !o.json {
				fmt.Fprintf(stdout, "%s: error: %s\n", sp, shown.Text(err.Error()))
			}
		case r.Stopped != nil:
			stopped++
			d := r.Stopped
			entry.Set("matched", false)
			entry.Set("stopped", jsonv.NewObject("code", d.Code, "message", d.Message))
			if !o.json {
				fmt.Fprintf(stdout, "%s: %s: %s\n", sp, d.Code, shown.Text(d.Message))
			}
		default:
			r := r.Result
			entry.Set("task", r.Task)
			entry.Set("task_changed", r.TaskChanged)
			entry.Set("changed", changedJSON(r.Changed))
			entry.Set("notes", stringsJSON(r.Notes))
			var found jsonv.Value
			if r.Found != "" {
				found = r.Found
			}
			entry.Set("found", found)
			if r.TaskChanged {
				changed++
			}
			if !o.json {
				if r.Found != "" {
					fmt.Fprintf(stdout, "%s: the task file is %s (the trace names %s)\n", sp, shown.Name(r.Found), shownPath(r.File))
				}
				for _, w := range r.Warnings() {
					fmt.Fprintf(stdout, "%s: warning: %s\n", sp, shown.Text(w))
				}
			}
			entry.Set("interrupted", r.Interrupted)
			if r.Matched() {
				matched++
				entry.Set("matched", true)
				if r.Interrupted {
					interrupted++
				}
				switch {
				case o.json:
				case r.Interrupted:
					fmt.Fprintf(stdout, "%s: matched up to its interruption (%s): the episode was interrupted; what it had not done then was not run\n", sp, shown.Name(r.Task))
				default:
					fmt.Fprintf(stdout, "%s: matched (%s)\n", sp, shown.Name(r.Task))
				}
			} else {
				diverged++
				d := r.Divergence
				var turn, tool, targs jsonv.Value
				if d.Turn >= 0 {
					turn = int64(d.Turn)
				}
				if d.Tool != "" {
					tool, targs = d.Tool, d.Args
				}
				entry.Set("matched", false)
				entry.Set("divergence", jsonv.NewObject("event", int64(d.Line), "kind", d.Event, "turn", turn, "tool", tool, "args", targs, "diffs", stringsJSON(d.Diffs)))
				if !o.json {
					fmt.Fprintf(stdout, "%s: diverged (%s) at %s", sp, shown.Name(r.Task), shown.Text(d.String()))
				}
			}
		}
		results = append(results, entry)
	}
	bar.Set(len(paths), fmt.Sprintf("%d matched", matched))
	bar.Close()
	if o.json {
		fmt.Fprintln(stdout, jsonv.MustEncode(jsonv.NewObject("traces", results, "summary",
			jsonv.NewObject("matched", int64(matched), "diverged", int64(diverged), "stopped", int64(stopped), "task_changed", int64(changed), "errors", int64(failed),
				"interrupted", int64(interrupted)))))
	} else if len(paths) > 1 {
		stops := ""
		if stopped > 0 {
			stops = fmt.Sprintf(", %d stopped", stopped)
		}
		cut := ""
		if interrupted > 0 {
			cut = fmt.Sprintf(" (%d up to an interruption)", interrupted)
		}
		fmt.Fprintf(stdout, "%d traces: %d matched%s, %d diverged%s, %d with changed task files, %d unreadable\n", len(paths), matched, cut, diverged, stops, changed, failed)
	}
	if diverged > 0 || stopped > 0 || failed > 0 {
		return errNegative
	}
	return nil
}

// changedJSON is a replay's changed files: path, task (the task file, not a file it loads), and
// the SHA-256 recorded and current (null for a file not loaded then, or not now).
func changedJSON(cs []trace.FileChange) []jsonv.Value {
	out := make([]jsonv.Value, len(cs))
	for i, c := range cs {
		var rec, cur jsonv.Value
		if c.Recorded != "" {
			rec = c.Recorded
		}
		if c.Current != "" {
			cur = c.Current
		}
		out[i] = jsonv.NewObject("path", c.Path, "task", c.Task, "recorded", rec, "current", cur)
	}
	return out
}

// stringsJSON is a list of strings as a JSON array.
func stringsJSON(ss []string) []jsonv.Value {
	out := make([]jsonv.Value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// checkCorpusDir checks --corpus of replay and export: a folder.
func checkCorpusDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("--corpus: %s: %v", dir, unwrap(err))
	case !info.IsDir():
		return fmt.Errorf("--corpus: %s: not a folder", dir)
	}
	return nil
}

// tracePaths are the traces a command-line argument names: the file, or the *.jsonl files in
// the folder and below, in path order. A path that does not exist or cannot be read, and a
// folder without a trace, are errors (exit 2).
func tracePaths(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, unwrap(err))
	}
	if !info.IsDir() {
		// a trace named that cannot be read is the command line's error, as a missing one is
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, unwrap(err))
		}
		f.Close()
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			out = append(out, path)
		}
		return err
	})
	sort.Strings(out)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no *.jsonl traces in it", p)
	}
	return out, err
}

// replayer replays traces: those of task files from disk in a worker (unless --in-process),
// those of the built-in corpus here (unless --isolate).
type replayer struct {
	dir  string // the corpus folder
	iso  *isolation
	pool *isolate.Pool // started with the first isolated replay
}

func (rp *replayer) close() {
	if rp.pool != nil {
		rp.pool.Close()
	}
}

// replay replays the trace at path.
func (rp *replayer) replay(ctx context.Context, path string) (*isolate.ReplayResult, error) {
	data, err := trace.ReadFile(path)
	if err != nil {
		return nil, err
	}
	events, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return rp.replayTrace(ctx, path, data, events)
}

// replayTrace replays the trace at path ("" when unknown), read from data (events are
// trace.Read's): against the task file its start event names, wherever locateTraced finds it,
// with the task file and every file it loads compared with the trace's sources
// (isolate.ReplayTrace). The result's Found says where the task file was when it was not where
// the trace names it.
func (rp *replayer) replayTrace(ctx context.Context, path string, data []byte, events []trace.Event) (*isolate.ReplayResult, error) {
	start := events[0].Body.(*trace.Start) // trace.Read checked it
	t, err := locateTraced(rp.dir, path, start)
	if err != nil {
		return nil, err
	}
	var res *isolate.ReplayResult
	if !rp.iso.isolated(t.builtin) {
		r, err := isolate.ReplayTrace(ctx, events, t.corpus, t.rel)
		if err != nil {
			return nil, err
		}
		res = &isolate.ReplayResult{Result: r}
	} else {
		support, err := isolate.Support(t.corpus)
		if err != nil {
			return nil, err
		}
		files, err := isolate.FilesFor(t.corpus, support, t.rel)
		if err != nil {
			return nil, err
		}
		if rp.pool == nil {
			if rp.pool, err = rp.iso.pool(1); err != nil {
				return nil, err
			}
		}
		if res, err = rp.pool.Replay(ctx, isolate.Replay{Display: t.corpus.Display, Files: files, File: t.rel, Trace: data}); err != nil {
			return nil, err
		}
	}
	if res.Result != nil {
		res.Result.Found = t.moved
	}
	return res, nil
}

// tracedTask is the task file a replay found for a trace.
type tracedTask struct {
	corpus  *dsl.Corpus
	rel     string // root-relative
	builtin bool   // of the built-in corpus
	moved   string // the file as shown, when it is not the path the trace names ("" when it is)
}

// locateTraced finds the task file the start event of the trace at tracePath ("" when unknown)
// names, without loading it (the parent process runs and parses nothing of a file from disk).
// The places, in order:
//
//   - the file as the trace names it (relative to the folder of the run, or absolute), when it
//     lies inside the corpus folder dir (--corpus); its corpus root is found as `run` finds it;
//   - the task file's path inside its corpus as the trace records it (trace.Start.TaskPath:
//     the first source's, or the file as named in a trace without sources), under dir;
//   - the same under the trace's own folder and each folder above it (a rollout folder lies inside
//     or beside its corpus);
//     and under each of them, for a task file of no corpus (its path inside it is its name), in
//     the folders the file as named has above it (tasks/ of tasks/t.star: a project whose tasks
//     and traces sit side by side), see recordedDirs;
//   - the built-in corpus, for a trace of it ("corpus/...") or one of a file with its bytes.
//
// The first file with the bytes the trace records (trace.SameFiles: the task file and every file
// it loaded) is the one; when none has them, the first whose task file has them (a file it loads
// changed), else the first file found (its replay then says which files changed since). Below
// the first place, the corpus root is the folder under which the recorded path is the file (in
// a trace without sources: the nearest folder on the way to it that holds capabilities.star).
// Every place is a wall as the corpus is: a recorded path that is not a plain relative path to a
// .star task file is not looked up, and one that leaves the root (by "..", or through a symbolic
// link) is refused before anything is read.
func locateTraced(dir, tracePath string, start *trace.Start) (*tracedTask, error) {
	s := &taskSearch{start: start, tried: map[string]bool{}}
	if t := s.asGiven(dir); t != nil {
		return t, nil
	}
	rel := start.TaskPath()
	if validTaskPath(rel) {
		if t := s.onDisk(dir, rel, fmt.Sprintf("the corpus folder %s (--corpus)", dir)); t != nil {
			return t, nil
		}
		if tracePath != "" {
			if abs, err := filepath.Abs(tracePath); err == nil {
				s.places = append(s.places, fmt.Sprintf("the trace's folder %s and those above it", filepath.Dir(tracePath)))
				dirs := recordedDirs(start.File, rel)
				for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
					if t := s.onDisk(d, rel, ""); t != nil {
						return t, nil
					}
					for _, sub := range dirs {
						if t := s.underRecordedDir(d, sub, rel); t != nil {
							return t, nil
						}
					}
					if filepath.Dir(d) == d {
						break
					}
				}
			}
		}
	} else if len(start.Sources) > 0 {
		s.refuse(fmt.Sprintf("the trace names its task file %s inside its corpus, which is not a relative path to a task file", shownPath(rel)))
	}
	if t := s.builtin(); t != nil {
		return t, nil
	}
	if s.best != nil {
		return s.best, nil
	}
	return nil, s.notFound()
}

// validTaskPath reports whether a path a trace records may name a task file inside a corpus: a
// plain slash-separated relative path (no "..", not absolute) to a .star task file.
func validTaskPath(rel string) bool {
	return fs.ValidPath(rel) && rel != "." && dsl.IsTaskFile(rel)
}

// taskSearch is one search of locateTraced.
type taskSearch struct {
	start *trace.Start
	tried map[string]bool // the files looked at (absolute), each once
	// best is the file to replay when none has all the recorded bytes: the first found, or the
	// first whose task file has them (bestSame)
	best     *tracedTask
	bestSame bool
	// lead says why the file as named is not the one (refused, or not inside the corpus
	// folder); places are where the search looked besides; refused are the files it refused.
	lead    string
	places  []string
	refused []string
}

// maxRefused bounds the refusals an error lists.
const maxRefused = 5

func (s *taskSearch) refuse(why string) {
	s.refused = append(s.refused, why)
}

// found weighs t: it is the task when its files are the recorded ones (returned); otherwise it
// is kept for when no place has them, unless a file found before is as good.
func (s *taskSearch) found(t *tracedTask) *tracedTask {
	if trace.SameFiles(t.corpus, t.rel, s.start) {
		return t
	}
	data, err := t.corpus.ReadSource(t.rel)
	sameTask := err == nil && trace.FileSHA256(data) == s.start.FileSHA256
	if s.best == nil || sameTask && !s.bestSame {
		s.best, s.bestSame = t, sameTask
	}
	return nil
}

// asGiven looks for the task file where the trace names it: relative to the current folder (or
// absolute), inside the corpus folder dir.
func (s *taskSearch) asGiven(dir string) *tracedTask {
	file := s.start.File
	rel, err := tracedPath(dir, file)
	if err != nil {
		s.lead = err.Error()
		return nil
	}
	if abs, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
		s.tried[abs] = true
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		s.lead = fmt.Sprintf("the corpus folder %s: %v", dir, unwrap(err))
		return nil
	}
	defer root.Close()
	walled := dsl.NewCorpus(root.FS(), ".", filepath.ToSlash(dir))
	if err := walled.CheckPath(rel); err != nil {
		s.lead = fmt.Sprintf("the traced task file %s is refused: %v", shownPath(file), err)
		return nil
	}
	info, err := fs.Stat(walled.FS, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		s.lead = fmt.Sprintf("the traced task file %s: %v", shownPath(file), unwrap(err))
		return nil
	case info.IsDir():
		s.lead = fmt.Sprintf("the traced task file %s is a folder", shownPath(file))
		return nil
	}
	src, err := openPath(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		s.lead = fmt.Sprintf("the traced task file %s: %v", shownPath(file), err)
		return nil
	}
	return s.found(&tracedTask{corpus: src.corpus, rel: src.files[0]})
}

// onDisk looks for the task file at rel under the folder root; place, when not "", is how an
// error names where it looked.
func (s *taskSearch) onDisk(root, rel, place string) *tracedTask {
	if place != "" {
		s.places = append(s.places, place)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	file := filepath.Join(abs, filepath.FromSlash(rel))
	if s.tried[file] {
		return nil
	}
	s.tried[file] = true
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil // a folder that cannot be opened holds nothing to read
	}
	defer r.Close()
	c := dsl.NewCorpus(r.FS(), ".", displayDir(abs))
	if err := c.CheckPath(rel); err != nil {
		s.refuse(fmt.Sprintf("%s: %v", c.DisplayPath(rel), err))
		return nil
	}
	if info, err := fs.Stat(c.FS, rel); err != nil || info.IsDir() {
		return nil
	}
	if len(s.start.Sources) == 0 {
		// the corpus root of a trace without sources is not recorded: the nearest folder on
		// the way to the file that holds capabilities.star, as `run` would take
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if info, err := fs.Stat(c.FS, path.Join(d, dsl.CapabilitiesFile)); err == nil && !info.IsDir() {
				abs, rel = filepath.Join(abs, filepath.FromSlash(d)), strings.TrimPrefix(rel, d+"/")
				break
			}
		}
	}
	oc, err := dsl.OpenDir(abs, displayDir(abs))
	if err != nil {
		return nil
	}
	t := &tracedTask{corpus: oc, rel: rel}
	if shown := oc.DisplayPath(rel); shown != s.start.File {
		t.moved = shown
	}
	return s.found(t)
}

// builtin looks for the task file in the built-in corpus: a trace of it ("corpus/...") finds its
// file even when it changed; any other trace only a file with the recorded bytes.
func (s *taskSearch) builtin() *tracedTask {
	recorded := strings.HasPrefix(s.start.File, "corpus/")
	rel := s.start.TaskPath()
	if len(s.start.Sources) == 0 {
		rel = strings.TrimPrefix(rel, "corpus/")
	}
	if !validTaskPath(rel) {
		return nil
	}
	if recorded {
		s.places = append(s.places, "the built-in corpus")
	}
	c := corpus.Open()
	if info, err := fs.Stat(c.FS, rel); err != nil || info.IsDir() {
		return nil
	}
	t := &tracedTask{corpus: c, rel: rel, builtin: true}
	if shown := c.DisplayPath(rel); shown != s.start.File {
		t.moved = shown
	}
	if !recorded {
		if trace.SameFiles(c, rel, s.start) {
			return t
		}
		return nil
	}
	return s.found(t)
}

// notFound is the error of a search that found nothing: why the file as named is not the one,
// where else it looked, what it refused, and how to name the corpus.
func (s *taskSearch) notFound() error {
	var b strings.Builder
	b.WriteString(s.lead)
	if s.lead == "" {
		fmt.Fprintf(&b, "the traced task file %s is not there", shownPath(s.start.File))
	}
	if len(s.places) > 0 {
		fmt.Fprintf(&b, "; nor is %s in %s", shownPath(s.start.TaskPath()), joinOr(s.places))
	}
	refused := s.refused
	if len(refused) > maxRefused {
		refused = append(refused[:maxRefused:maxRefused], fmt.Sprintf("and %d more", len(s.refused)-maxRefused))
	}
	if len(refused) > 0 {
		fmt.Fprintf(&b, "; refused: %s", strings.Join(refused, "; "))
	}
	b.WriteString("; name the folder of its corpus with --corpus")
	return errors.New(b.String())
}

// joinOr lists places as "a or b", or "a, b, or c".
func joinOr(items []string) string {
	switch len(items) {
	case 1:
		return items[0]
	case 2:
		return items[0] + " or " + items[1]
	}
	return strings.Join(items[:len(items)-1], ", ") + ", or " + items[len(items)-1]
}

// shownPath is a path read from a trace as an error shows it: as it is, unless it is long or
// holds a character that needs quoting (a line break, say); then quoted and cut.
func shownPath(s string) string {
	q := strconv.Quote(s)
	switch {
	case len(q) > 200:
		return q[:200] + "…"
	case q[1:len(q)-1] != s:
		return q
	}
	return s
}

// displayDir is how a folder found by the search is shown: relative to the current folder when
// it lies inside it, else absolute.
func displayDir(abs string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}

// tracedPath maps the task file a trace names (relative to the current folder, or absolute) to
// a slash-separated path inside the corpus folder dir, and refuses one outside it.
func tracedPath(dir, file string) (string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absFile, err := filepath.Abs(filepath.FromSlash(file))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, absFile)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("the traced task file %s is not inside the corpus folder %s", shownPath(file), dir)
	}
	return filepath.ToSlash(rel), nil
}

// loadTraced loads the task of an exported trace from wherever locateTraced finds its task file
// (dir is --corpus), to rebuild the system prompt of a trace that records none.
func loadTraced(dir string, e *export.Episode) (*dsl.Task, error) {
	t, err := locateTraced(dir, e.Path, e.Start())
	if err != nil {
		return nil, err
	}
	task, _, err := isolate.FindTask(context.Background(), t.corpus, t.rel, e.Task())
	return task, err
}
