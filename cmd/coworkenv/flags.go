package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlags makes a flag set that reports errors as one line and exit 2.
func newFlags(name, usageLine string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.Init(name, flag.ContinueOnError)
	_ = usageLine
	return fs
}

// parse parses flags; it prints help (exit 0) or a one-line error (exit 2). Flags may come
// after positional arguments.
func parse(fs *flag.FlagSet, usageLine string, args []string, stdout, stderr io.Writer) (rest []string, code int, ok bool) {
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: coworkenv %s\n\nFlags:\n", usageLine)
			fs.SetOutput(stdout)
			fs.VisitAll(plainQuotes)
			fs.PrintDefaults()
			fmt.Fprintf(stdout, "\n%s\n", exitStatusHelp)
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv %s: %v\n", fs.Name(), err)
			return nil, 2, false
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, 0, true
}

// plainQuotes drops the backquotes of a flag's usage that quote words ("instead of `coworkenv
// doc`") rather than name its value ("`FILE`", one word): the flag package would show the words
// as the value's name ("-reference coworkenv doc").
func plainQuotes(f *flag.Flag) {
	if name, _ := flag.UnquoteUsage(f); strings.ContainsAny(name, " \t") {
		f.Usage = strings.ReplaceAll(f.Usage, "`", "")
	}
}
