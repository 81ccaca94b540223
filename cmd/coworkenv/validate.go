package main

import (
	"context"
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
	"github.com/coworkenv/coworkenv/validate"
)

const validateUsage = "validate [PATH...] [--json] [--jobs N] [--strict] [--verbose] [--report FILE.html] [--in-process|--isolate] [--memory-limit MIB] [--time-limit DUR]\n" +
	"         [--queue URL|embedded] [--user-model NAME] [--user-base-url URL] [--judge-model NAME] [--judge-base-url URL]\n\n" +
	"Validates task files or corpus folders (default: the corpus built into the binary).\n" +
	"--report FILE.html also writes the report as the page `coworkenv report` writes of validate --json\n" +
	"output: the counts by status and by diagnostic code as charts, and every task, worst first, with its\n" +
	"diagnostics and source lines. It is written whatever the verdict, and checked before anything runs.\n" +
	isolationHelp + "\n\n" +
	validateModelsHelp + "\n\n" + validateQueueHelp

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

func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", validateUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object: the report of every task, with its diagnostics")
	jobs := fs.Int("jobs", runtime.NumCPU(), "tasks checked at once")
	strict := fs.Bool("strict", false, "warnings fail too")
	verbose := fs.Bool("verbose", false, "also list the tasks that are ok")
	iso := addIsolationFlags(fs, "file")
	tmf := addTaskModelFlags(fs, false)
	qr := addQueueRun(fs, "every task file")
	reportPath := reportFlag(fs, "the report")
	pos, code, ok := parse(fs, validateUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if *jobs < 1 {
		fmt.Fprintf(stderr, "coworkenv validate: --jobs: %d is not a positive number\n", *jobs)
		return 2
	}
	if *reportPath != "" {
		if err := checkOutput("--report", *reportPath, outputFile, pos...); err != nil {
			fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
			return 2
		}
	}
	if err := iso.check(); err != nil {
		fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
		return 2
	}
	tm, err := validateModels(tmf, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
		return 2
	}
	if err := iso.checkUsed(iso.isolated(len(pos) == 0)); err != nil {
		fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
		return 2
	}
	srcs, err := openSources(pos)
	if err != nil {
		fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
		return 2
	}
	opts := validate.Options{Jobs: *jobs}
	if opts.Models, err = tm.Models(); err != nil {
		fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
		return 2
	}
	var pool *isolate.Pool
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	rep := &validate.Report{}
	if qr.on() {
		if rep, err = validateQueued(qr, iso, *jobs, srcs, tm, stderr); err != nil {
			fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
			return 2
		}
		srcs = nil // checked on the queue
	}
	var bar *progress.Bar // of the source being checked, made at its first report
	defer func() { bar.Close() }()
	for _, s := range srcs {
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
		if iso.isolated(len(pos) == 0) {
			if pool == nil {
				if pool, err = iso.pool(*jobs); err != nil {
					fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
					return 2
				}
			}
			r, err = isolate.ValidateCorpusWith(context.Background(), pool, s.corpus, s.files, isolate.ValidateOptions{Progress: opts.Progress, Models: tm})
		} else {
			r, err = validate.Corpus(context.Background(), s.corpus, s.files, opts)
		}
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
			return 2
		}
		rep.Merge(r)
	}
	bar.Close()
	if *asJSON {
		fmt.Fprintln(stdout, jsonv.MustEncode(rep.JSON()))
	} else {
		rep.WriteText(stdout, *verbose)
	}
	status := exitOK
	if rep.Failed(*strict) {
		status = exitNegated
	}
	if *reportPath != "" {
		if err := report.WriteValidation(*reportPath, rep); err != nil {
			fmt.Fprintf(stderr, "coworkenv validate: --report: %v\n", err)
			return exitNegated // the files were checked; the report is left undone
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "report in %s\n", *reportPath)
		}
	}
	return status
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
