package main

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/workspace/tools"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

const listUsage = "list [PATH] [--json] [--capabilities]\n\nLists the tasks of PATH (a file or a corpus folder; default: the built-in corpus).\n--json prints one object per task, with facts from a noop episode (its rubric items);\n--capabilities prints the Markdown table of capabilities by task counts.\n\n" + splitHelp + " list shows each\ntask's split and family (--json: \"split\" and \"family\")."

// listOptions are the options of `coworkenv list`.
type listOptions struct {
	streams
	paths      []string
	json, caps bool
	split      *splitFlags
}

func (o *listOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "print one JSON object per task")
	fs.BoolVar(&o.caps, "capabilities", false, "print a Markdown table: capabilities × task counts, single- and multi-turn")
	o.split = addSplitFlags(fs)
}

func (o *listOptions) args(pos []string) error {
	o.paths = pos
	return nil
}

func runList(o *listOptions) error {
	stdout, stderr := o.stdout, o.stderr
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
	ctx := context.Background()
	splits := map[*dsl.Task]*trace.Split{}
	var status error
	var all []*dsl.Task
	var taxonomy *dsl.Taxonomy
	perFile := map[*dsl.Task]int{}
	for _, s := range srcs {
		if taxonomy == nil {
			taxonomy = s.corpus.Taxonomy()
		}
		for _, rel := range s.files {
			f := s.corpus.LoadFile(ctx, rel)
			if len(f.Diags) > 0 {
				fmt.Fprintf(stderr, "%s\n", isolate.FormatDiags(f.Diags))
				status = errNegative
				continue
			}
			sp, err := o.split.record(s.corpus, rel)
			if err != nil {
				return usage(err)
			}
			for _, t := range f.Tasks {
				perFile[t] = len(f.Tasks)
				splits[t] = sp
				all = append(all, t)
			}
		}
	}
	switch {
	case o.caps:
		fmt.Fprint(stdout, capabilityTable(all, taxonomy))
	case o.json:
		for _, t := range all {
			facts := taskFacts(ctx, t, perFile[t])
			if sp := splits[t]; sp != nil {
				facts.Set("split", sp.Name)
				facts.Set("family", sp.Family)
			}
			fmt.Fprintln(stdout, jsonv.MustEncode(facts))
		}
	default:
		for _, t := range all {
			fmt.Fprintf(stdout, "%-36s %d turn%s  %s", t.Name, len(t.Turns), plural(len(t.Turns)), strings.Join(t.Capabilities, ", "))
			if sp := splits[t]; sp != nil {
				fmt.Fprintf(stdout, "  [%s: %s]", sp.Name, sp.Family)
			}
			fmt.Fprintln(stdout)
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

// taskFacts describes a task for `list --json`: its declaration, and the rubric items a noop
// episode records (every check and safety item a verifier reaches).
func taskFacts(ctx context.Context, t *dsl.Task, siblings int) *jsonv.Object {
	var names []string
	custom := 0
	for _, tl := range t.Tools {
		names = append(names, tl.Name)
		if !tl.Builtin {
			custom++
		}
	}
	befores, userFns := 0, 0
	for _, tr := range t.Turns {
		if tr.Before != nil {
			befores++
		}
		if tr.UserFn != nil {
			userFns++
		}
	}
	o := jsonv.NewObject(
		"task", t.Name, "file", t.File, "description", t.Description,
		"capabilities", tools.Strings(t.Capabilities), "turns", int64(len(t.Turns)),
		"before_hooks", int64(befores), "user_functions", int64(userFns),
		"tools", tools.Strings(names), "task_tools", int64(custom), "faults", t.Faults != nil,
		"family_size", int64(siblings), "metadata", t.Metadata,
	)
	p, d := episode.Prepare(ctx, t, episode.Options{})
	if d != nil {
		o.Set("error", d.String())
		return o
	}
	collections := p.Base.DB().Collections()
	o.Set("db_collections", tools.Strings(collections))
	r := p.Run(ctx, episode.Noop{}, episode.RunOptions{})
	checks, safety := 0, 0
	for _, it := range r.Items {
		if it.Kind == "safety" {
			safety++
		} else {
			checks++
		}
	}
	o.Set("checks", int64(checks))
	o.Set("safety_items", int64(safety))
	if r.Err != nil {
		o.Set("error", r.Err.String())
	}
	return o
}

// capabilityTable is the Markdown table of corpus/README.md.
func capabilityTable(tasks []*dsl.Task, tax *dsl.Taxonomy) string {
	type row struct{ single, multi int }
	counts := map[string]*row{}
	var names []string
	if tax != nil {
		for _, c := range tax.Capabilities {
			counts[c.Name] = &row{}
			names = append(names, c.Name)
		}
	}
	single, multi := 0, 0
	for _, t := range tasks {
		if t.MultiTurn() {
			multi++
		} else {
			single++
		}
		for _, c := range t.Capabilities {
			r, ok := counts[c]
			if !ok {
				r = &row{}
				counts[c] = r
				names = append(names, c)
			}
			if t.MultiTurn() {
				r.multi++
			} else {
				r.single++
			}
		}
	}
	if tax == nil {
		sort.Strings(names)
	}
	var b strings.Builder
	b.WriteString("| capability | tasks | single-turn | multi-turn |\n| --- | ---: | ---: | ---: |\n")
	for _, n := range names {
		r := counts[n]
		fmt.Fprintf(&b, "| `%s` | %d | %d | %d |\n", n, r.single+r.multi, r.single, r.multi)
	}
	fmt.Fprintf(&b, "| **all tasks** | **%d** | **%d** | **%d** |\n", single+multi, single, multi)
	return b.String()
}
