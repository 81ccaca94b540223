// Package report writes self-contained HTML reports (`coworkenv report`): one file that a browser
// opens from disk with no network, for each kind of input the engine writes:
//
//   - an episode trace: the conversation (system prompt, user turns, the assistant's messages,
//     each tool call with its arguments and result, faults and tool errors marked, reasoning
//     collapsed), the state changes after each call, replayed from the trace against its task
//     file (Replay), the check items of each turn, the scores, and a model's name and token usage;
//   - a rollout folder: the summary (rollout.Summarize: pass rate, pass@k, pass^k; single-turn
//     against multi-turn; by capability) as tables and bar charts, and every task with its
//     samples, each linking to its episode view, written as a sibling file (EpisodesDir);
//   - a validation report (`validate --json`): the counts by status and by diagnostic code, and
//     every task with its diagnostics, source lines and carets;
//   - a generation run (its manifest): the yield per round, the rejection reasons and the tokens.
//
// A page embeds everything it shows: its style and script inline (allowed by the page's content
// security policy through their hashes, and nothing else), the data of its long lists as a JSON
// block whose text cannot end the block (every <, > and & is escaped), and its charts as inline
// SVG. Traces, task files and reports are untrusted: their text is only ever set as text, never
// parsed as markup, by the templates (html/template) and by the script (textContent). The output
// depends only on the input: no clock, no random numbers, no map order.
//
// The package is an application: it imports the engine's packages, and only cmd imports it.
package report

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/shown"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Kind is what an input holds.
type Kind string

const (
	Episode    Kind = "episode"    // a trace (.jsonl)
	Rollout    Kind = "rollout"    // a rollout folder (rollout.json and <task>/<sample>.jsonl)
	Validation Kind = "validation" // the output of `validate --json`
	Generation Kind = "generation" // a generation run's folder, or its manifest.jsonl
)

// Locator finds and loads the task a trace names, for the state changes of its episode view:
// the task and where its file was found, as shown to the reader. tracePath is "" when unknown.
// An error says why it is not found; the view then shows the conversation without the changes,
// and the error.
type Locator func(ctx context.Context, tracePath string, start *trace.Start) (task *dsl.Task, where string, err error)

// TaskLocator is a Locator for a task already in memory (`run --report`): it gives task to the
// trace that names it, and an error to any other.
func TaskLocator(task *dsl.Task) Locator {
	return func(_ context.Context, _ string, start *trace.Start) (*dsl.Task, string, error) {
		if task == nil || start.Task != task.Name {
			return nil, "", fmt.Errorf("the trace is of task %q, not the task at hand", start.Task)
		}
		return task, task.File, nil
	}
}

// Options tune a report.
type Options struct {
	// Locate finds the task of a trace; nil shows no state changes ("no task file was looked
	// for").
	Locate Locator
	// Limits bound every call into a task's scripts when an episode is replayed for its state
	// changes; the zero value is dsl.DefaultLimits.
	Limits dsl.Limits
	// TimeLimit bounds one episode's replay; 0 is DefaultTimeLimit.
	TimeLimit time.Duration
	// NoEpisodes leaves out the episode views of a rollout: its samples link to their traces
	// instead.
	NoEpisodes bool
	// Jobs is how many episodes of a rollout are replayed at once; 0 is 1.
	Jobs int
	// Progress, when set, is told how many of a rollout's episode views are written.
	Progress func(done, total int)
}

// DefaultTimeLimit bounds the replay of one episode for its state changes.
const DefaultTimeLimit = 60 * time.Second

func (o Options) timeLimit() time.Duration {
	if o.TimeLimit > 0 {
		return o.TimeLimit
	}
	return DefaultTimeLimit
}

// InputError is an input that cannot be reported: unreadable, or of no kind this package knows.
// Its message names the file.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(path string, format string, args ...any) error {
	return &InputError{Path: path, Err: fmt.Errorf(format, args...)}
}

// Detect says what the file or folder at path holds: a folder with rollout.json, or with
// <task>/<sample>.jsonl traces, is a rollout; a folder with manifest.jsonl, or that file, a
// generation run; a file whose first line is a trace's start event a trace; a JSON object with
// "tasks" and a "summary" of statuses a validation report.
func Detect(path string) (Kind, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", &InputError{Path: path, Err: shown.Cause(err)}
	}
	if info.IsDir() {
		switch {
		case isFile(filepath.Join(path, rollout.ManifestFile)):
			return Rollout, nil
		case isFile(filepath.Join(path, generator.ManifestFile)):
			return Generation, nil
		}
		if ok, err := hasTraces(path); err != nil {
			return "", &InputError{Path: path, Err: err}
		} else if ok {
			return Rollout, nil
		}
		return "", inputErr(path, "a folder with neither %s (a rollout), %s (a generation run) nor <task>/<sample>.jsonl traces", rollout.ManifestFile, generator.ManifestFile)
	}
	if filepath.Base(path) == rollout.ManifestFile {
		return Rollout, nil
	}
	if filepath.Base(path) == generator.ManifestFile {
		return Generation, nil
	}
	head, err := readHead(path, 4096)
	if err != nil {
		return "", &InputError{Path: path, Err: err}
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	switch {
	case bytes.HasPrefix(trimmed, []byte(`{"event":"start"`)):
		return Episode, nil
	case bytes.HasPrefix(trimmed, []byte(`{"attempt":`)):
		return Generation, nil
	case bytes.HasPrefix(trimmed, []byte("{")):
		if strings.HasSuffix(path, ".jsonl") {
			return "", inputErr(path, "a JSON Lines file that is neither a trace (its first line is not a start event) nor a generation manifest")
		}
		return Validation, nil
	}
	return "", inputErr(path, "not a trace, a validation report (validate --json), a rollout folder or a generation run")
}

// Write writes the report of paths to out: one or more traces, one or more validation reports
// (merged), one rollout folder or one generation run. Every path must be of one kind.
func Write(ctx context.Context, out string, paths []string, opts Options) (Kind, error) {
	if len(paths) == 0 {
		return "", errors.New("no input")
	}
	var kind Kind
	for _, p := range paths {
		k, err := Detect(p)
		if err != nil {
			return "", err
		}
		if kind != "" && k != kind {
			return "", inputErr(p, "is a %s, but %s is a %s: give inputs of one kind", k, paths[0], kind)
		}
		kind = k
	}
	if len(paths) > 1 && (kind == Rollout || kind == Generation) {
		return "", inputErr(paths[1], "one %s at a time: a report holds one", kind)
	}
	switch kind {
	case Episode:
		return kind, WriteEpisodes(ctx, out, paths, opts)
	case Validation:
		rep, err := readValidation(paths)
		if err != nil {
			return kind, err
		}
		return kind, WriteValidation(out, rep)
	case Rollout:
		dir := paths[0]
		if !isDir(dir) {
			dir = filepath.Dir(dir)
		}
		res, locs, err := ReadRollout(ctx, dir, opts)
		if err != nil {
			return kind, err
		}
		var notes []string
		if opts.Locate == nil {
			notes = append(notes, "No task file was looked for: the capabilities of the tasks are not known, and the episode views show no state changes.")
		} else if n := missingNote(res, locs); n != "" {
			notes = append(notes, n)
		}
		return kind, writeRollout(ctx, out, res, dir, locs, notes, opts)
	default:
		return kind, WriteGeneration(out, paths[0])
	}
}

// writeFile writes a page whole or not at all.
func writeFile(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("%s: %v", path, shown.Cause(err))
	}
	return nil
}

func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// hasTraces reports whether dir holds <task>/<n>.jsonl or <task>/<n>.jsonl.partial.
func hasTraces(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, shown.Cause(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		for _, s := range sub {
			if _, ok := sampleIndex(s.Name()); ok {
				return true, nil
			}
		}
	}
	return false, nil
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, shown.Cause(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(f), int64(n)))
	if err != nil {
		return nil, shown.Cause(err)
	}
	return b, nil
}
