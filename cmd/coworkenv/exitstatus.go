package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/coworkenv/coworkenv/internal/shown"
)

// Exit statuses: every command ends with one of these, by one rule (exitStatusHelp).
const (
	exitOK      = 0 // everything asked was done, and every verdict is positive
	exitNegated = 1 // the command ran; a verdict is negative or some work was left undone
	exitUsage   = 2 // the command could not run as asked; nothing was run
)

// exitStatusHelp is the rule every command follows, as `coworkenv --help`, every command's
// --help and the README's "Exit status" paragraph give it.
const exitStatusHelp = `Exit status (every command):
  0  everything asked was done, and every verdict is positive.
  1  the command ran, and a verdict is negative or some work was left undone: a task invalid (with
     --strict, a warning too); a task file that does not load (a syntax error, an empty file, a
     file that declares no task, a file found in a folder that cannot be read; rollout runs the
     other files and counts it); an episode not passed (in rollout: any sample; in run, of several
     recorded runs: any); a sample failed or interrupted; a trace that export leaves out as
     unreadable, unverified, diverged or changed (not one its kind leaves out by rule, as sft does
     failed episodes), or that does not replay; an export that keeps no episode at all; a recorded
     run given to validate that names no task it checked; fewer tasks generated than asked.
  2  the command could not run as asked, and nothing was run: bad usage, a path named on the
     command line that does not exist or cannot be read, a folder that holds no task file (or no
     trace), an output refused, an address serve cannot listen on (a port in use).`

// A command's run returns how it ended as an error, and exitStatus maps it to the exit status:
// this is the one place that does. nil is exitOK; a usageErr (the command could not run as
// asked, and nothing was run) is exitUsage; errHelp (--help, printed) is exitOK; every other
// error is exitNegated (the command ran, and a verdict is negative or some work was left undone:
// errNegative when the command has said everything, any other error with its message). A
// command's errors are said on stderr, one line, after the command's name (finish).

// usageErr is an error of the command line: the command could not run as asked, and nothing
// was run.
type usageErr struct{ err error }

func (e *usageErr) Error() string { return e.err.Error() }
func (e *usageErr) Unwrap() error { return e.err }

// usage makes err a usage error (nil for nil).
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageErr{err}
}

// usagef is a usage error with a message.
func usagef(format string, a ...any) error { return &usageErr{fmt.Errorf(format, a...)} }

// failedf is the error of a command that ran, and left some work undone.
func failedf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// errNegative ends a command that ran and has said its verdict, which is negative: nothing more
// is said.
var errNegative = errors.New("a verdict is negative")

// errUsageSaid ends a command whose usage error is said already (the usage, printed).
var errUsageSaid = &usageErr{errors.New("the usage was printed")}

// errHelp ends a command whose help was asked for and printed.
var errHelp = flag.ErrHelp

// inCommand names the command an error is said under, when it is not the one that ran
// ("export rl" for "export", "queue status" for "queue").
type inCommand struct {
	name string
	err  error
}

func (e *inCommand) Error() string { return e.err.Error() }
func (e *inCommand) Unwrap() error { return e.err }

// in says err under the command name (nil for nil).
func in(name string, err error) error {
	if err == nil {
		return nil
	}
	return &inCommand{name, err}
}

// exitStatus is the exit status of a command that ended with err.
func exitStatus(err error) int {
	var ue *usageErr
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	}
	return exitNegated
}

// finish says err on stderr, "coworkenv NAME: message" (NAME the command's, or the one err is
// said under), unless there is nothing more to say, and returns the exit status.
func finish(stderr io.Writer, name string, err error) int {
	var ic *inCommand
	if errors.As(err, &ic) {
		name = ic.name
	}
	prefix := "coworkenv"
	if name != "" {
		prefix += " " + name
	}
	if err != nil && !errors.Is(err, errHelp) && !errors.Is(err, errNegative) && !errors.Is(err, errUsageSaid) {
		fmt.Fprintf(stderr, "%s: %s\n", prefix, shown.Text(err.Error()))
	}
	return exitStatus(err)
}
