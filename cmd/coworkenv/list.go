package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

const listUsage = "list [PATH] [--json]\n\nLists the tasks of PATH (a file or a corpus folder; default: the built-in corpus)."

func cmdList(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("list", listUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per task")
	pos, code, ok := parse(fs, listUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	var srcs []*source
	if len(pos) == 0 {
		s, err := embedded()
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv list: %v\n", err)
			return 2
		}
		srcs = append(srcs, s)
	}
	for _, p := range pos {
		s, err := openPath(p)
		if err != nil {
			fmt.Fprintf(stderr, "coworkenv list: %v\n", err)
			return 2
		}
		srcs = append(srcs, s)
	}
	ctx := context.Background()
	status := 0
	for _, s := range srcs {
		for _, rel := range s.files {
			f := s.corpus.LoadFile(ctx, rel)
			if len(f.Diags) > 0 {
				fmt.Fprintf(stderr, "%s\n", formatDiags(f.Diags))
				status = 1
				continue
			}
			for _, t := range f.Tasks {
				if *asJSON {
					caps := make([]jsonv.Value, len(t.Capabilities))
					for i, c := range t.Capabilities {
						caps[i] = c
					}
					tools := make([]jsonv.Value, len(t.Tools))
					for i, tl := range t.Tools {
						tools[i] = tl.Name
					}
					custom := int64(0)
					for _, tl := range t.Tools {
						if !tl.Builtin {
							custom++
						}
					}
					fmt.Fprintln(stdout, jsonv.MustEncode(jsonv.NewObject(
						"task", t.Name, "file", t.File, "turns", int64(len(t.Turns)),
						"capabilities", caps, "tools", tools, "task_tools", custom,
						"faults", t.Faults != nil, "description", t.Description, "metadata", t.Metadata,
					)))
					continue
				}
				fmt.Fprintf(stdout, "%-36s %d turn%s  %s\n", t.Name, len(t.Turns), plural(len(t.Turns)), strings.Join(t.Capabilities, ", "))
			}
		}
	}
	return status
}

func plural(n int) string {
	if n == 1 {
		return " "
	}
	return "s"
}
