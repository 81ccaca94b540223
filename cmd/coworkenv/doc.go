package main

import (
	"fmt"
	"io"

	"github.com/coworkenv/coworkenv/internal/refdoc"
)

const docUsage = "doc [diagnostics]\n\nPrints the task-language reference (Markdown), or only the diagnostic codes."

func cmdDoc(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("doc", docUsage, stderr)
	pos, code, ok := parse(fs, docUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	switch {
	case len(pos) == 0:
		fmt.Fprint(stdout, refdoc.Markdown())
	case pos[0] != "diagnostics":
		fmt.Fprintf(stderr, "coworkenv doc: unknown topic %q (want nothing or diagnostics)\n", pos[0])
		return exitUsage
	case len(pos) > 1:
		fmt.Fprintf(stderr, "coworkenv doc: unexpected argument %q after diagnostics\n", pos[1])
		return exitUsage
	default:
		fmt.Fprint(stdout, refdoc.Diagnostics())
	}
	return exitOK
}
