package main

import (
	"flag"
	"fmt"

	"github.com/coworkenv/coworkenv/internal/refdoc"
)

const docUsage = "doc [diagnostics]\n\nPrints the task-language reference (Markdown), or only the diagnostic codes."

// docOptions are the options of `coworkenv doc`.
type docOptions struct {
	streams
	topic string // "" or diagnostics
}

func (o *docOptions) flags(*flag.FlagSet) {}

func (o *docOptions) args(pos []string) error {
	switch {
	case len(pos) == 0:
	case pos[0] != "diagnostics":
		return usagef("unknown topic %q (want nothing or diagnostics)", pos[0])
	case len(pos) > 1:
		return usagef("unexpected argument %q after diagnostics", pos[1])
	default:
		o.topic = pos[0]
	}
	return nil
}

func runDoc(o *docOptions) error {
	if o.topic == "" {
		fmt.Fprint(o.stdout, refdoc.Markdown())
	} else {
		fmt.Fprint(o.stdout, refdoc.Diagnostics())
	}
	return nil
}
