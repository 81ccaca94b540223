package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/validate"
)

const validateUsage = "validate [PATH...] [--json] [--jobs N] [--strict] [--verbose] [--in-process|--isolate] [--memory-limit MIB] [--time-limit DUR]\n" +
	"         [--user-model NAME] [--user-base-url URL] [--judge-model NAME] [--judge-base-url URL]\n\n" +
	"Validates task files or corpus folders (default: the corpus built into the binary).\n" + isolationHelp + "\n\n" +
	validateModelsHelp + "\n\nExit status: 0 no task invalid, 1 some task invalid (or, with --strict, a warning), 2 the command could not run."

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
	pos, code, ok := parse(fs, validateUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if *jobs < 1 {
		fmt.Fprintf(stderr, "coworkenv validate: --jobs: %d is not a positive number\n", *jobs)
		return 2
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
	var srcs []*source
	if len(pos) == 0 {
		s, err := embedded()
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
			return 2
		}
		srcs = append(srcs, s)
	}
	for _, p := range pos {
		s, err := openPath(p)
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
			return 2
		}
		srcs = append(srcs, s)
	}
	opts := validate.Options{Jobs: *jobs}
	if opts.Models, err = tm.Models(); err != nil {
		fmt.Fprintf(stderr, "coworkenv validate: %v\n", err)
		return 2
	}
	if isTerminal(stderr) {
		opts.Progress = progressBar(stderr)
	}
	var pool *isolate.Pool
	defer func() {
		if pool != nil {
			pool.Close()
		}
	}()
	rep := &validate.Report{}
	for _, s := range srcs {
		var r *validate.Report
		var err error
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
	if opts.Progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if *asJSON {
		fmt.Fprintln(stdout, jsonv.MustEncode(rep.JSON()))
	} else {
		rep.WriteText(stdout, *verbose)
	}
	if rep.Failed(*strict) {
		return 1
	}
	return 0
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar draws "validating [#####     ] 12/40" on one line, for runs of more than a few tasks.
func progressBar(w io.Writer) func(done, total int) {
	return func(done, total int) {
		if total < 20 {
			return
		}
		const width = 30
		n := done * width / total
		bar := make([]byte, width)
		for i := range bar {
			if i < n {
				bar[i] = '#'
			} else {
				bar[i] = ' '
			}
		}
		fmt.Fprintf(w, "\rvalidating [%s] %d/%d", bar, done, total)
	}
}
