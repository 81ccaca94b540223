package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/coworkenv/coworkenv/isolate"
)

// isolationHelp is the part of the usage text of validate, run, rollout, replay, export, serve
// and mcp about where task files run.
const isolationHelp = `Task files from disk run in worker processes (this binary, re-executed; each worker runs many files
or episodes, one at a time) with a memory limit (--memory-limit) and a wall-clock limit
(--time-limit, per file, episode or served session; the time a model or a client takes does not
count): a script that runs away costs a memory-limit, timeout or crash diagnostic for its file or
episode, and the rest goes on. The built-in corpus runs in this process. --in-process runs
everything here (only the in-process guards hold: docs/limits.md); --isolate runs the built-in
corpus in workers too. --memory-limit and --time-limit bound the workers only, so they are refused
with --in-process, and by validate, run, rollout, serve and mcp when only the built-in corpus runs
(without --isolate); replay and export, which learn where each trace's task file is as they go,
apply them to the files from disk.`

// isolation are the flags that choose where task files run.
type isolation struct {
	fs        *flag.FlagSet
	inProcess *bool
	isolate   *bool
	memLimit  *int64
	timeLimit *time.Duration
}

// addIsolationFlags adds --in-process, --isolate, --memory-limit and --time-limit; per says what
// the time limit bounds ("file", "episode", "replay").
func addIsolationFlags(fs *flag.FlagSet, per string) *isolation {
	return &isolation{
		fs:        fs,
		inProcess: fs.Bool("in-process", false, "run task files from disk in this process too, without a worker's limits"),
		isolate:   fs.Bool("isolate", false, "run the built-in corpus in worker processes too"),
		memLimit:  fs.Int64("memory-limit", isolate.DefaultMemoryLimit>>20, "memory limit of each worker process, in MiB"),
		timeLimit: fs.Duration("time-limit", isolate.DefaultTimeLimit, "wall-clock limit of each "+per+" in a worker"),
	}
}

// check checks the flags after parsing.
func (f *isolation) check() error {
	switch {
	case *f.inProcess && *f.isolate:
		return errors.New("--in-process and --isolate cannot be used together")
	case *f.memLimit < 1:
		return fmt.Errorf("--memory-limit: %d is not a positive number of MiB", *f.memLimit)
	case *f.timeLimit <= 0:
		return fmt.Errorf("--time-limit: %s is not a positive duration", *f.timeLimit)
	case *f.inProcess:
		if name := f.limitGiven(); name != "" {
			return fmt.Errorf("%s bounds worker processes, and --in-process runs none; drop one of them", name)
		}
	}
	return nil
}

// checkUsed refuses --memory-limit and --time-limit when no worker runs (workers: whether any
// task file runs in one), rather than ignore them.
func (f *isolation) checkUsed(workers bool) error {
	if name := f.limitGiven(); name != "" && !workers {
		return fmt.Errorf("%s bounds worker processes, and none runs: the built-in corpus runs in this process unless --isolate", name)
	}
	return nil
}

// limitGiven is the first of --memory-limit and --time-limit given on the command line ("" for
// neither).
func (f *isolation) limitGiven() string {
	given := ""
	f.fs.Visit(func(fl *flag.Flag) {
		if given == "" && (fl.Name == "memory-limit" || fl.Name == "time-limit") {
			given = "--" + fl.Name
		}
	})
	return given
}

// isolated reports whether a task file runs in a worker: one from disk unless --in-process, one
// of the built-in corpus with --isolate.
func (f *isolation) isolated(builtin bool) bool {
	if builtin {
		return *f.isolate
	}
	return !*f.inProcess
}

// pool makes the pool of workers.
func (f *isolation) pool(workers int) (*isolate.Pool, error) {
	return isolate.NewPool(isolate.Options{Workers: workers, MemoryLimit: *f.memLimit << 20, TimeLimit: *f.timeLimit})
}
