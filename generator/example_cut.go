package generator

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"go.starlark.net/syntax"
)

// exampleLiteral is the longest string literal an example shows whole: longer ones (the text
// of a seeded file or mail, mostly) keep their beginning and say how much was cut, so that an
// example shows how a task is built, not all its data, and a first request stays small.
const exampleLiteral = 240

// abbreviate cuts an example's source (with its helpers inlined) down to how a task is built:
// the bodies of the functions inlined from lib/ (those own, the example file's own functions,
// does not hold) become a `pass` (their docstrings stay), and long string literals that are no
// format keep their beginning (src unchanged when it does not parse).
func abbreviate(src string, own map[string]bool) string {
	f, err := dsl.FileOptions.Parse("example.star", src, 0)
	if err != nil {
		return src
	}
	lines := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			lines = append(lines, i+1)
		}
	}
	offset := func(p syntax.Position) int {
		if int(p.Line) < 1 || int(p.Line) > len(lines) {
			return -1
		}
		i := lines[p.Line-1]
		for c := int32(1); c < p.Col && i < len(src); c++ {
			_, n := utf8.DecodeRuneInString(src[i:])
			i += n
		}
		return i
	}
	type cut struct {
		from, to int
		with     string
	}
	var cuts []cut
	for _, st := range f.Stmts {
		def, ok := st.(*syntax.DefStmt)
		if !ok || own[def.Name.Name] || len(def.Body) == 0 {
			continue
		}
		body := def.Body
		if e, ok := body[0].(*syntax.ExprStmt); ok {
			if lit, ok := e.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				body = body[1:] // the docstring stays
			}
		}
		if len(body) == 0 {
			continue
		}
		start, _ := body[0].Span()
		_, end := def.Span()
		from, to := offset(start), offset(end)
		if from < 0 || to < from {
			continue
		}
		from = strings.LastIndexByte(src[:from], '\n') + 1
		indent := strings.Repeat(" ", int(start.Col)-1)
		cuts = append(cuts, cut{from, to, indent + "pass  # the helper's body is left out of the example"})
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		lit, ok := n.(*syntax.Literal)
		if !ok || lit.Token != syntax.STRING || len(lit.Raw) <= exampleLiteral {
			return true
		}
		s, _ := lit.Value.(string)
		if strings.Contains(s, "%") || strings.Contains(s, "{") { // a format: cut, it would mislead
			return true
		}
		from := offset(lit.TokenPos)
		if from < 0 || from+len(lit.Raw) > len(src) || src[from:from+len(lit.Raw)] != lit.Raw {
			return true
		}
		keep := s
		if len(keep) > exampleLiteral*2/3 {
			keep = keep[:exampleLiteral*2/3]
			for !utf8.ValidString(keep) {
				keep = keep[:len(keep)-1]
			}
		}
		with := strconv.Quote(keep + fmt.Sprintf(" […%d more characters]", utf8.RuneCountInString(s)-utf8.RuneCountInString(keep)))
		cuts = append(cuts, cut{from, from + len(lit.Raw), with})
		return true
	})
	if len(cuts) == 0 {
		return src
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].from < cuts[j].from })
	var b strings.Builder
	at := 0
	for _, c := range cuts {
		if c.from < at { // a literal inside a body already cut
			continue
		}
		b.WriteString(src[at:c.from])
		b.WriteString(c.with)
		at = c.to
	}
	b.WriteString(src[at:])
	return b.String()
}

// fitExample cuts an example to at most budget bytes as JSON (what it adds to a request): it
// keeps the file's opening comment and as much of its end (the task's own code, after the
// helpers inlined from lib/) as fits, from a top-level statement on, and says how many lines it
// left out. ok is false when not even that fits.
func fitExample(src string, budget int) (string, bool) {
	if jsonLen(src) <= budget {
		return src, true
	}
	lines := strings.SplitAfter(src, "\n")
	head := 0
	for head < len(lines) && strings.HasPrefix(lines[head], "#") {
		head++
	}
	size := jsonLen(strings.Join(lines[:head], "")) + 80
	from := len(lines)
	for k := len(lines) - 1; k > head; k-- {
		size += jsonLen(lines[k]) - 2
		if size > budget {
			break
		}
		if ln := lines[k]; ln != "" && ln[0] != ' ' && ln[0] != '\t' && ln[0] != ')' && ln[0] != ']' && ln[0] != '}' && ln[0] != '\n' && !strings.HasPrefix(ln, "#") {
			from = k
		}
	}
	// a comment block right above the statement stays with it
	for from > head && from < len(lines) && strings.HasPrefix(lines[from-1], "#") && size+jsonLen(lines[from-1]) <= budget {
		from--
	}
	for ; from < len(lines) && from > head; from++ {
		ln := lines[from]
		if ln == "" || ln[0] == ' ' || ln[0] == '\t' || ln[0] == ')' || ln[0] == ']' || ln[0] == '}' || ln[0] == '\n' {
			continue // not where a statement starts
		}
		cut := fmt.Sprintf("\n# … %d lines (helpers inlined from lib/, data) are left out of this example here …\n\n", from-head)
		if out := strings.Join(lines[:head], "") + cut + strings.Join(lines[from:], ""); jsonLen(out) <= budget {
			return out, true
		}
	}
	return "", false
}

// jsonLen is the length of s as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// topDefs are the names of the functions a file defines at its top level (none when it does not
// parse).
func topDefs(src []byte) map[string]bool {
	out := map[string]bool{}
	f, err := dsl.FileOptions.Parse("example.star", src, 0)
	if err != nil {
		return out
	}
	for _, st := range f.Stmts {
		if def, ok := st.(*syntax.DefStmt); ok {
			out[def.Name.Name] = true
		}
	}
	return out
}
