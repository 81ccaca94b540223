package generator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"go.starlark.net/syntax"
)

// minSkeletonTools is the fewest distinct steps of a reference solution whose skeleton counts:
// shorter ones are too common to tell a twin by.
const minSkeletonTools = 3

// skeletonRoots are the names whose dotted calls make the kinds of a check: the modules and the
// objects of the task language (a task's own helpers and variables are left out, so that
// renaming them changes nothing).
var skeletonRoots = []string{"ws", "ep", "claims", "re", "time", "json", "math"}

// skeletonOf is the skeleton of a task file: the tools its reference solution calls, in the
// order the source names them (a tool called several times in a row counts once), and the kinds
// of its checks: each check, safety and judge with the module functions and ws methods its
// condition calls. Values, texts, ids and the names of the file's own helpers are not in it, so
// two tasks of the same skeleton do the same work on other data. "" when the file does not parse
// or its solution calls fewer than minSkeletonTools steps.
func skeletonOf(src string) string {
	f, err := dsl.FileOptions.Parse(CandidateFile, src, 0)
	if err != nil {
		return ""
	}
	var tools, checks []string
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		switch name := dottedName(c.Fn); name {
		case "agent.call":
			if len(c.Args) > 0 {
				if lit, ok := c.Args[0].(*syntax.Literal); ok && lit.Token == syntax.STRING {
					if s, _ := lit.Value.(string); len(tools) == 0 || tools[len(tools)-1] != s {
						tools = append(tools, s)
					}
				}
			}
		case "check", "safety", "judge":
			kinds := map[string]bool{}
			if len(c.Args) > 0 {
				syntax.Walk(c.Args[0], func(n syntax.Node) bool {
					if c, ok := n.(*syntax.CallExpr); ok {
						if d := dottedName(c.Fn); strings.Contains(d, ".") && contains(skeletonRoots, strings.SplitN(d, ".", 2)[0]) {
							kinds[d] = true
						}
					}
					return true
				})
			}
			var ks []string
			for k := range kinds {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			checks = append(checks, name+"("+strings.Join(ks, ",")+")")
		}
		return true
	})
	if len(tools) < minSkeletonTools {
		return ""
	}
	return fmt.Sprintf("solution %s; checks %s", strings.Join(tools, " "), strings.Join(checks, " "))
}

// dottedName is "a.b.c" for an expression a.b.c, "a" for a name, "" for anything else.
func dottedName(e syntax.Expr) string {
	switch x := e.(type) {
	case *syntax.Ident:
		return x.Name
	case *syntax.DotExpr:
		if d := dottedName(x.X); d != "" {
			return d + "." + x.Name.Name
		}
	}
	return ""
}

// skeletonTwin is the first task of this run (not of the corpus, whose examples a model may
// follow) among entries with the skeleton sk ("" has none), when the run checks skeletons.
func (g *gen) skeletonTwin(entries []*entry, sk string) *entry {
	if sk == "" || !g.opts.SkeletonDedup {
		return nil
	}
	for _, e := range entries {
		if e.attempt >= 0 && e.skel == sk {
			return e
		}
	}
	return nil
}

// skeletonDiag is the diagnostic that rejects a task of the skeleton of e.
func skeletonDiag(e *entry, sk string) dsl.Diagnostic {
	d := dsl.NewDiag(DuplicateCode, fmt.Sprintf("the task repeats the skeleton of %q (%s): the same tool calls in its solution and the same kinds of checks (%s)", e.name, e.where, sk))
	d.File = CandidateFile
	return d
}
