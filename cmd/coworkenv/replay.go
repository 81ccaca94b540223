package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
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
	"per trace, matched, task_changed, changed (path, task, recorded, current for each file) and notes.\n\n" +
	"The traced task file must be inside the corpus folder (--corpus, by default the current folder): a\n" +
	"path that climbs out of it, an absolute path elsewhere or a symbolic link that leads out is refused.\n" +
	"A trace of the built-in corpus (corpus/...) that is not on disk there replays the embedded file. A\n" +
	"replay whose worker runs out of memory or time, or dies, is reported with memory-limit, timeout or\n" +
	"crash, and the next trace replays.\n\n" + isolationHelp +
	"\n\nExit status: 0 everything matches, 1 a divergence or a stopped replay, 2 unreadable input."

func cmdReplay(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("replay", replayUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	corpusDir := fs.String("corpus", ".", "the folder the traced task files must be in")
	iso := addIsolationFlags(fs, "replay")
	pos, code, ok := parse(fs, replayUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "coworkenv replay: want one TRACE or DIR, got %d arguments\n", len(pos))
		return 2
	}
	if err := iso.check(); err != nil {
		fmt.Fprintf(stderr, "coworkenv replay: %v\n", err)
		return 2
	}
	paths, err := tracePaths(pos[0])
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv replay: %v\n", err)
		return 2
	}
	if err := checkCorpusDir(*corpusDir); err != nil {
		fmt.Fprintf(stderr, "coworkenv replay: %v\n", err)
		return 2
	}
	rp := &replayer{dir: *corpusDir, iso: iso}
	defer rp.close()
	ctx := context.Background()
	var results []jsonv.Value
	matched, diverged, stopped, changed, failed := 0, 0, 0, 0, 0
	for _, p := range paths {
		r, err := rp.replay(ctx, p)
		entry := jsonv.NewObject("trace", p)
		switch {
		case err != nil:
			failed++
			entry.Set("error", err.Error())
			if !*asJSON {
				fmt.Fprintf(stdout, "%s: error: %v\n", p, err)
			}
		case r.Stopped != nil:
			stopped++
			d := r.Stopped
			entry.Set("matched", false)
			entry.Set("stopped", jsonv.NewObject("code", d.Code, "message", d.Message))
			if !*asJSON {
				fmt.Fprintf(stdout, "%s: %s: %s\n", p, d.Code, d.Message)
			}
		default:
			r := r.Result
			entry.Set("task", r.Task)
			entry.Set("task_changed", r.TaskChanged)
			entry.Set("changed", changedJSON(r.Changed))
			entry.Set("notes", stringsJSON(r.Notes))
			if r.TaskChanged {
				changed++
			}
			if !*asJSON {
				for _, w := range r.Warnings() {
					fmt.Fprintf(stdout, "%s: warning: %s\n", p, w)
				}
			}
			if r.Matched() {
				matched++
				entry.Set("matched", true)
				if !*asJSON {
					fmt.Fprintf(stdout, "%s: matched (%s)\n", p, r.Task)
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
				if !*asJSON {
					fmt.Fprintf(stdout, "%s: diverged (%s) at %s", p, r.Task, d)
				}
			}
		}
		results = append(results, entry)
	}
	if *asJSON {
		fmt.Fprintln(stdout, jsonv.MustEncode(jsonv.NewObject("traces", results, "summary",
			jsonv.NewObject("matched", int64(matched), "diverged", int64(diverged), "stopped", int64(stopped), "task_changed", int64(changed), "errors", int64(failed)))))
	} else if len(paths) > 1 {
		stops := ""
		if stopped > 0 {
			stops = fmt.Sprintf(", %d stopped", stopped)
		}
		fmt.Fprintf(stdout, "%d traces: %d matched, %d diverged%s, %d with changed task files, %d unreadable\n", len(paths), matched, diverged, stops, changed, failed)
	}
	switch {
	case failed > 0 && len(paths) == 1:
		return 2
	case diverged > 0 || stopped > 0 || failed > 0:
		return 1
	}
	return 0
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

func tracePaths(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, unwrap(err))
	}
	if !info.IsDir() {
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
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, unwrap(err)
	}
	events, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return rp.replayEvents(ctx, data, events)
}

// replayEvents replays a trace read from data (events are trace.Read's): against the task file
// the start event names, found inside the corpus folder (locateTraced), with the task file and
// every file it loads compared with the trace's sources (isolate.ReplayTrace).
func (rp *replayer) replayEvents(ctx context.Context, data []byte, events []trace.Event) (*isolate.ReplayResult, error) {
	start := events[0].Body.(*trace.Start) // trace.Read checked it
	c, rel, builtin, err := locateTraced(rp.dir, start.File)
	if err != nil {
		return nil, err
	}
	if !rp.iso.isolated(builtin) {
		r, err := isolate.ReplayTrace(ctx, events, c, rel)
		if err != nil {
			return nil, err
		}
		return &isolate.ReplayResult{Result: r}, nil
	}
	support, err := isolate.Support(c)
	if err != nil {
		return nil, err
	}
	files, err := isolate.FilesFor(c, support, rel)
	if err != nil {
		return nil, err
	}
	if rp.pool == nil {
		if rp.pool, err = rp.iso.pool(1); err != nil {
			return nil, err
		}
	}
	return rp.pool.Replay(ctx, isolate.Replay{Display: c.Display, Files: files, File: rel, Trace: data})
}

// locateTraced finds a traced task file inside the corpus folder dir, without loading it. The
// recorded path, as the run saw it (relative to the current folder, or absolute), must lie
// inside dir, and is then looked up behind an os.Root of dir: a path that leaves dir, by ".." or
// through a symbolic link, is refused before anything is read or run. A trace of the built-in
// corpus ("corpus/...") that is not on disk there replays the embedded file (builtin).
func locateTraced(dir, file string) (c *dsl.Corpus, rel string, builtin bool, err error) {
	embeddedRel, embedded := strings.CutPrefix(file, "corpus/")
	embedded = embedded && fs.ValidPath(embeddedRel)
	rel, err = tracedPath(dir, file)
	if err != nil {
		if embedded {
			return corpus.Open(), embeddedRel, true, nil
		}
		return nil, "", false, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", false, fmt.Errorf("the corpus folder %s: %v", dir, unwrap(err))
	}
	defer root.Close()
	walled := dsl.NewCorpus(root.FS(), ".", filepath.ToSlash(dir))
	if err := walled.CheckPath(rel); err != nil {
		return nil, "", false, fmt.Errorf("the traced task file %s is refused: %v", file, err)
	}
	_, err = fs.Stat(walled.FS, rel)
	switch {
	case err == nil:
		src, err := openPath(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, "", false, err
		}
		return src.corpus, src.files[0], false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", false, fmt.Errorf("the traced task file %s: %v", file, unwrap(err))
	case embedded:
		return corpus.Open(), embeddedRel, true, nil
	}
	return nil, "", false, fmt.Errorf("the traced task file %s is not there", file)
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
		return "", fmt.Errorf("the traced task file %s is not inside the corpus folder %s; replay runs only task files inside it (name the folder with --corpus)", file, dir)
	}
	return filepath.ToSlash(rel), nil
}

// loadForReplay finds a traced task where its trace says it is: the recorded file on disk (read,
// like every corpus on disk, behind the wall of its corpus root), or, for a trace of the
// built-in corpus ("corpus/..."), the embedded file. export rebuilds system prompts with it;
// replay uses replayLoader, which also keeps the file inside the corpus folder it is given.
func loadForReplay(file, name string) (*dsl.Task, []byte, error) {
	if _, err := os.Stat(file); err == nil {
		src, err := openPath(file)
		if err != nil {
			return nil, nil, err
		}
		return isolate.FindTask(context.Background(), src.corpus, src.files[0], name)
	}
	if rel, ok := strings.CutPrefix(file, "corpus/"); ok {
		return isolate.FindTask(context.Background(), corpus.Open(), rel, name)
	}
	return nil, nil, fmt.Errorf("the traced task file %s is not there", file)
}
