package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// streams are where a command writes: its output (stdout) and its messages (stderr).
type streams struct {
	stdout, stderr io.Writer
}

// command is one subcommand: its name, its line in `coworkenv --help`, and main, which parses
// its arguments into its options and runs it (run(opts) error), the error saying how it ended
// (exitStatus).
type command struct {
	name    string
	summary string
	main    func(args []string, io streams) error
}

// options are a command's options: its flags, bound to its fields, and its positional
// arguments, taken (a usage error when they are not what the command wants).
type options interface {
	flags(fs *flag.FlagSet)
	args(pos []string) error
}

// optionsOf is a pointer to a command's options struct, which holds the streams.
type optionsOf[O any] interface {
	*O
	options
	setStreams(streams)
}

func (s *streams) setStreams(io streams) { *s = io }

// newCommand is the command name: its options O, made for each run with its flags and arguments
// (usage is its --help), run by run.
func newCommand[O any, P optionsOf[O]](name, summary, usage string, run func(P) error) command {
	return command{name: name, summary: summary, main: func(args []string, io streams) error {
		opts := P(new(O))
		opts.setStreams(io)
		if err := parseOptions(name, usage, args, io, opts); err != nil {
			return err
		}
		return run(opts)
	}}
}

// parseOptions binds the flags of the command name to opts, parses args (usage is the command's
// --help) and gives opts the positional arguments.
func parseOptions(name, usage string, args []string, io streams, opts options) error {
	fs := newFlags(name)
	opts.flags(fs)
	pos, err := parse(fs, usage, args, io)
	if err != nil {
		return err
	}
	return opts.args(pos)
}

// newFlags makes the flag set of a command: parse reports its errors and help.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses flags, which may come after positional arguments, and returns the positional
// ones. --help prints the usage and the flags (errHelp); a bad flag is a usage error said under
// the flag set's name.
func parse(fs *flag.FlagSet, usageLine string, args []string, io streams) ([]string, error) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(io.stdout, "Usage: coworkenv %s\n\nFlags:\n", usageLine)
			fs.SetOutput(io.stdout)
			fs.VisitAll(plainQuotes)
			fs.PrintDefaults()
			fmt.Fprintf(io.stdout, "\n%s\n", exitStatusHelp)
			return nil, errHelp
		}
		if err != nil {
			return nil, in(fs.Name(), usage(suggestFlag(fs, err)))
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, nil
}

// plainQuotes drops the backquotes of a flag's usage that quote words ("instead of `coworkenv
// doc`") rather than name its value ("`FILE`", one word): the flag package would show the words
// as the value's name ("-reference coworkenv doc").
func plainQuotes(f *flag.Flag) {
	if name, _ := flag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
		f.Usage = strings.ReplaceAll(f.Usage, "`", "")
	}
}

// given reports whether the flag name was set on the command line of fs.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// noArgs is the args of a command that takes none.
func noArgs(pos []string) error {
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

// required refuses an empty flag: what names the flag as the error says it ("--out DIR").
func required(value, what string) error {
	if value == "" {
		return usagef("%s is required", what)
	}
	return nil
}

// positive refuses a number flag below 1.
func positive(flag string, n int) error {
	if n < 1 {
		return usagef("%s: %d is not a positive number", flag, n)
	}
	return nil
}

// firstError is the first error that is not nil (nil when none is): checks of the flags in the
// order the command says them.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
