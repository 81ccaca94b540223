package main

import (
	"cmp"
	"flag"
	"fmt"
	"strconv"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/coworkenv/coworkenv/split"
	"go.starlark.net/syntax"
)

// splitFlags are --split, --split-ratio and --split-seed of list, rollout, validate and export
// tasks: the split of each corpus into train, dev and test by family (package split), and the
// one to keep.
type splitFlags struct {
	name  string
	ratio string
	seed  int64
	fs    *flag.FlagSet
	// the assignments of each corpus's files, computed once per corpus
	done map[*dsl.Corpus]map[string]split.Assignment
}

// splitHelp is the paragraph of --help of the commands that take the split flags.
const splitHelp = "Splits (docs/recipe.md): --split train|dev|test keeps the tasks of one split of their corpus, divided\n" +
	"by family (files that declare one, `# family: NAME` or task(metadata = {\"family\": NAME}), load one helper that at most a tenth of the corpus\n" +
	"loads, or were generated from one scenario stay together) in the shares of --split-ratio (default 0.8,0.1,0.1)\n" +
	"ordered by --split-seed; any of the three records each task's split and family."

func addSplitFlags(fs *flag.FlagSet) *splitFlags {
	s := &splitFlags{fs: fs, ratio: split.FormatRatio(split.DefaultRatio)}
	fs.StringVar(&s.name, "split", "", "keep only the tasks of the `train|dev|test` split of their corpus")
	fs.StringVar(&s.ratio, "split-ratio", s.ratio, "the shares of `TRAIN,DEV,TEST` (of the task files)")
	fs.Int64Var(&s.seed, "split-seed", 0, "the seed that orders families of one size in the split")
	return s
}

// on reports whether a split flag was given: the tasks' splits are then computed and recorded.
func (s *splitFlags) on() bool {
	on := false
	s.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "split", "split-ratio", "split-seed":
			on = true
		}
	})
	return on
}

// check checks the flags (a usage error).
func (s *splitFlags) check() error {
	if s.name != "" && !split.Valid(s.name) {
		return usagef("--split %s: want train, dev or test", s.name)
	}
	if _, err := split.ParseRatio(s.ratio); err != nil {
		return usagef("--split-ratio %v", err)
	}
	return nil
}

// of is the split of the file rel of corpus c (computed over every task file of c).
func (s *splitFlags) of(c *dsl.Corpus, rel string) (split.Assignment, error) {
	if s.done == nil {
		s.done = map[*dsl.Corpus]map[string]split.Assignment{}
	}
	as, ok := s.done[c]
	if !ok {
		ratio, _ := split.ParseRatio(s.ratio)
		files, err := splitFiles(c)
		if err != nil {
			return split.Assignment{}, err
		}
		as = split.Assign(files, split.Config{Ratio: ratio, Seed: s.seed})
		s.done[c] = as
	}
	a, ok := as[rel]
	if !ok {
		return split.Assignment{}, fmt.Errorf("%s: not a task file of its corpus", c.DisplayPath(rel))
	}
	return a, nil
}

// keep reports whether the file rel of c is in the split asked for (every file without --split).
func (s *splitFlags) keep(c *dsl.Corpus, rel string) (bool, error) {
	if !s.on() {
		return true, nil
	}
	a, err := s.of(c, rel)
	if err != nil {
		return false, err
	}
	return s.name == "" || a.Split == s.name, nil
}

// filter keeps the files of each source in the split asked for.
func (s *splitFlags) filter(srcs []*source) error {
	if s.name == "" {
		return nil
	}
	for _, src := range srcs {
		var kept []string
		for _, rel := range src.files {
			ok, err := s.keep(src.corpus, rel)
			if err != nil {
				return err
			}
			if ok {
				kept = append(kept, rel)
			}
		}
		src.files = kept
	}
	return nil
}

// record is what a trace or an export records of the file rel's split (nil without the flags).
func (s *splitFlags) record(c *dsl.Corpus, rel string) (*trace.Split, error) {
	if !s.on() {
		return nil, nil
	}
	a, err := s.of(c, rel)
	if err != nil {
		return nil, err
	}
	return &trace.Split{Name: a.Split, Family: a.Family, Ratio: s.ratio, Seed: s.seed}, nil
}

// String says the split flags as a command line gives them.
func (s *splitFlags) String() string {
	return "--split-ratio " + s.ratio + " --split-seed " + strconv.FormatInt(s.seed, 10)
}

// splitFiles are the task files of c with what binds them into families: the declared family,
// the helpers they load (read from the files' load statements, nothing run) and the generation
// scenario of their header.
func splitFiles(c *dsl.Corpus) ([]split.File, error) {
	rels, err := c.TaskFiles()
	if err != nil {
		return nil, err
	}
	out := make([]split.File, 0, len(rels))
	for _, rel := range rels {
		srcs, err := c.SourceFiles(rel)
		if err != nil {
			// a file that does not read or parse is its own family: the command says why it
			// does not load
			out = append(out, split.File{Rel: rel})
			continue
		}
		f := split.File{Rel: rel, Family: cmp.Or(split.DeclaredFamily(srcs[0].Data), metadataFamily(c.DisplayPath(rel), srcs[0].Data)),
			Scenario: generator.ScenarioOf(srcs[0].Data)}
		for _, h := range srcs[1:] {
			f.Helpers = append(f.Helpers, h.Rel)
		}
		out = append(out, f)
	}
	return out, nil
}

// metadataFamily is the family a task of the file declares in its metadata, read from the
// syntax tree (nothing runs): the first task(..., metadata = {"family": "NAME", ...}) whose
// family is a string literal; "" when none does.
func metadataFamily(display string, src []byte) string {
	f, err := dsl.FileOptions.Parse(display, src, 0)
	if err != nil {
		return ""
	}
	family := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || family != "" {
			return family == ""
		}
		if fn, ok := call.Fn.(*syntax.Ident); !ok || fn.Name != "task" {
			return true
		}
		for _, arg := range call.Args {
			kw, ok := arg.(*syntax.BinaryExpr)
			if !ok || kw.Op != syntax.EQ {
				continue
			}
			if name, ok := kw.X.(*syntax.Ident); !ok || name.Name != "metadata" {
				continue
			}
			dict, ok := kw.Y.(*syntax.DictExpr)
			if !ok {
				continue
			}
			for _, e := range dict.List {
				entry := e.(*syntax.DictEntry)
				k, kok := entry.Key.(*syntax.Literal)
				v, vok := entry.Value.(*syntax.Literal)
				if kok && vok && k.Value == "family" {
					if s, ok := v.Value.(string); ok && s != "" {
						family = s
					}
				}
			}
		}
		return true
	})
	return family
}
