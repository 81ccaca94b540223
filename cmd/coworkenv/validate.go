package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/progress"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/report"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
)

const validateUsage = "validate [PATH...] [--json] [--jobs N] [--strict] [--verbose] [--report FILE.html] [--in-process|--isolate] [--memory-limit MIB] [--time-limit DUR]\n" +
	"         [--queue URL|embedded] [--user-model NAME] [--user-base-url URL] [--judge-model NAME] [--judge-base-url URL] [--runs FILE]\n\n" +
	"Validates task files or corpus folders (default: the corpus built into the binary).\n" +
	"--report FILE.html also writes the report as the page `coworkenv report` writes of validate --json\n" +
	"output: the counts by status and by diagnostic code as charts, and every task, worst first, with its\n" +
	"diagnostics and source lines. It is written whatever the verdict, and checked before anything runs.\n" +
	isolationHelp + "\n\n" + validateRunsHelp + "\n\n" +
	validateModelsHelp + "\n\n" + validateQueueHelp + "\n\n" + splitHelp

// validateRunsHelp is the part of the usage text of validate about recorded runs.
const validateRunsHelp = `Recorded runs (docs/writing-tasks.md, "Recorded runs") are played beside the checks of a task
that passes its prelude: those of the task file's runs file, FILE.star.runs.json beside it (read
whenever the file is checked), and those of --runs FILE (repeatable) for every task of the name
they give. A hack (expect "fail"; the default in a folder named hacks) that passes is the warning
recorded-hack-passes, a careful run (expect "pass"; the default in a folder named careful) that
fails is recorded-careful-fails. A runs file that does not parse is a usage error (status 2); a
run that names no task checked (for a FILE.star.runs.json: no task of FILE.star) is said on stderr,
and the status is 1.`

// validateModelsHelp is the part of the usage text of validate about the models inside a task.
const validateModelsHelp = `The checks run offline, with the stand-ins of the tasks' simulated users and judges. With
--user-model NAME (for the simulated users) or --judge-model NAME (for the judges), at
--user-base-url and --judge-base-url (default $OPENAI_BASE_URL, else the OpenAI API) with the key
from $OPENAI_API_KEY, a task that has a simulated user, or whose verifiers ask a judge, is then
checked again with the models answering in every run (the reference, the noop and the
mutations); what only that check finds is reported with "with the task models: " before its
message, and a model request that fails for good once per task as model-error. The verdict with
the stand-ins is the same with or without models. Workers never see the key: the models'
requests go out from this process.`

// validateOptions are the options of `coworkenv validate`.
type validateOptions struct {
	streams
	paths                 []string
	json, strict, verbose bool
	jobs                  int
	report                string
	runs                  stringList // --runs FILE, repeatable
	iso                   *isolation
	taskModels            *taskModelFlags
	queue                 *queueRun
	split                 *splitFlags
}

func (o *validateOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print one JSON object: the report of every task, with its diagnostics")
	fs.IntVar(&o.jobs, "jobs", runtime.NumCPU(), "tasks checked at once")
	fs.BoolVar(&o.strict, "strict", false, "warnings fail too")
	fs.BoolVar(&o.verbose, "verbose", false, "also list the tasks that are ok")
	o.iso = addIsolationFlags(fs, "file")
	o.taskModels = addTaskModelFlags(fs, false)
	o.queue = addQueueRun(fs, "every task file")
	reportFlag(fs, &o.report, "the report")
	o.split = addSplitFlags(fs)
	fs.Var(&o.runs, "runs", "also play the recorded runs of this file against the tasks they name (repeat for several; a task file's own, FILE.star.runs.json, are played anyway)")
}

func (o *validateOptions) args(pos []string) error {
	o.paths = pos
	return nil
}

func runValidate(o *validateOptions) error {
	stdout, stderr := o.stdout, o.stderr
	if err := positive("--jobs", o.jobs); err != nil {
		return err
	}
	if o.report != "" {
		if err := checkOutput("--report", o.report, outputFile, append(o.paths, o.runs...)...); err != nil {
			return usage(err)
		}
	}
	if err := o.iso.check(); err != nil {
		return usage(err)
	}
	tm, err := validateModels(o.taskModels, stderr)
	if err != nil {
		return usage(err)
	}
	if err := o.iso.checkUsed(o.iso.isolated(len(o.paths) == 0)); err != nil {
		return usage(err)
	}
	if err := o.split.check(); err != nil {
		return err
	}
	srcs, err := openSources(o.paths)
	if err == nil {
		err = o.split.filter(srcs)
	}
	if err != nil {
		return usage(err)
	}
	given, err := readRuns(o.runs)
	if err != nil {
		return usage(err)
	}
	runs := make([][]*recorded.Run, len(srcs)) // per source: its sidecars' runs, then the given ones
	for i, s := range srcs {
		side, err := validate.SidecarRuns(s.corpus, s.files)
		if err != nil {
			return usage(err)
		}
		runs[i] = append(side, given...)
	}
	opts := validate.Options{Jobs: o.jobs}
	if opts.Models, err = tm.Models(); err != nil {
		return usage(err)
	}
	var pool *isolate.Pool
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	rep := &validate.Report{}
	queued := o.queue.on()
	if queued {
		if rep, err = validateQueued(o.queue, o.iso, o.jobs, srcs, runs, tm, stderr); err != nil {
			return usage(err)
		}
	}
	var bar *progress.Bar // of the source being checked, made at its first report
	defer func() { bar.Close() }()
	for i, s := range srcs {
		if queued {
			break // checked on the queue
		}
		var r *validate.Report
		var err error
		bar.Close()
		bar = nil
		opts.Progress = func(done, total int) { // calls never overlap
			if bar == nil {
				bar = progress.New(stderr, "validate", total)
			}
			bar.Set(done, "")
		}
		opts.Runs = runs[i]
		if o.iso.isolated(len(o.paths) == 0) {
			if pool == nil {
				if pool, err = o.iso.pool(o.jobs); err != nil {
					return usage(err)
				}
			}
			r, err = isolate.ValidateCorpusWith(context.Background(), pool, s.corpus, s.files, isolate.ValidateOptions{Progress: opts.Progress, Models: tm, Runs: runs[i]})
		} else {
			r, err = validate.Corpus(context.Background(), s.corpus, s.files, opts)
		}
		if err != nil {
			return usage(err)
		}
		rep.Merge(r)
	}
	bar.Close()
	if o.json {
		fmt.Fprintln(stdout, jsonv.MustEncode(rep.JSON()))
	} else {
		rep.WriteText(stdout, o.verbose)
	}
	var status error
	if rep.Failed(o.strict) {
		status = errNegative
	}
	if !playedEveryRun(stderr, rep, srcs, runs) {
		status = errNegative
	}
	if o.report != "" {
		if err := report.WriteValidation(o.report, rep); err != nil {
			return failedf("--report: %v", err) // the files were checked; the report is left undone
		}
		if !o.json {
			fmt.Fprintf(stdout, "report in %s\n", o.report)
		}
	}
	return status
}

// readRuns reads the runs files of --runs.
func readRuns(files []string) ([]*recorded.Run, error) {
	var out []*recorded.Run
	for _, f := range files {
		runs, err := recorded.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--runs: %v", pathError(f, err))
		}
		out = append(out, runs...)
	}
	return out, nil
}

// playedEveryRun says on stderr which recorded runs name no task that the validation checked
// (for a run of a task file's sidecar: no task of that file), and reports whether there was none.
// A sidecar of a file that did not load says nothing more: the file's diagnostics say why.
func playedEveryRun(stderr io.Writer, rep *validate.Report, srcs []*source, runs [][]*recorded.Run) bool {
	tasks := map[string]bool{}  // task names
	inFile := map[string]bool{} // display path + "\x00" + task name
	loaded := map[string]bool{} // display paths of files with tasks
	for _, tr := range rep.Tasks {
		if tr.Task != "" {
			tasks[tr.Task] = true
			inFile[tr.File+"\x00"+tr.Task] = true
			loaded[tr.File] = true
		}
	}
	all := true
	seen := map[*recorded.Run]bool{}
	for i, s := range srcs {
		for _, r := range runs[i] {
			if seen[r] {
				continue
			}
			seen[r] = true
			switch file := s.corpus.DisplayPath(r.For); {
			case r.For == "" && !tasks[r.Task]:
				fmt.Fprintf(stderr, "coworkenv validate: %s:%d:%d: run %d names task %q, which no file checked declares; it was not played\n", r.File, r.Line, r.Col, r.N, r.Task)
				all = false
			case r.For != "" && loaded[file] && !inFile[file+"\x00"+r.Task]:
				fmt.Fprintf(stderr, "coworkenv validate: %s:%d:%d: run %d names task %q, which %s does not declare; it was not played\n", r.File, r.Line, r.Col, r.N, r.Task, file)
				all = false
			}
		}
	}
	return all
}

// openSources opens the files and folders of paths, in order: the built-in corpus when there
// are none.
func openSources(paths []string) ([]*source, error) {
	if len(paths) == 0 {
		s, err := embedded()
		if err != nil {
			return nil, err
		}
		return []*source{s}, nil
	}
	var srcs []*source
	for _, p := range paths {
		s, err := openPath(p)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}

// validateModels are the models of --user-model and --judge-model (nil for neither), whose
// retries are told on stderr.
func validateModels(tmf *taskModelFlags, stderr io.Writer) (*isolate.TaskModels, error) {
	user, judge, key, err := tmf.check("", nil)
	if err != nil || user == nil && judge == nil {
		return nil, err
	}
	var mu sync.Mutex // tasks are checked side by side
	base := modelagent.Config{APIKey: key, OnRetry: func(attempt int, delay time.Duration, reason error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "coworkenv validate: model request failed (%v); retry %d in %s\n", reason, attempt, delay.Round(time.Millisecond))
	}}
	return &isolate.TaskModels{User: user, Judge: judge, Base: base}, nil
}
