package generator

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Inlining helpers into the examples.
//
// A corpus task loads helpers from the corpus's lib/ folder; a generated file cannot load
// anything. An example that calls a helper the model cannot see teaches it to call a function
// that does not exist, so the prompt shows each example with its load statements replaced by
// the definitions they bring in: the loaded names and, transitively, everything those refer to
// (other definitions of the helper file, the helpers it loads itself, and the top-level
// statements that fill a table it uses). The result is a self-contained file that declares the
// same tasks; a name that two helper files define differently is renamed in the one that comes
// second.

// symbol is a top-level name of a corpus file, where it is defined.
type symbol struct{ rel, name string }

// parsedModule is a corpus file parsed and resolved.
type parsedModule struct {
	rel   string
	src   string
	lines []int // byte offset of the start of each line (0-based line index)
	file  *syntax.File
	// per top-level statement
	binds [][]string               // global names the statement binds at the top level
	refs  [][]*syntax.Ident        // identifiers of the statement that refer to a top-level name
	loads map[*syntax.Ident]symbol // a load's local name → the symbol it names (resolved)
	defs  map[string]bool          // names bound at the top level (not by load)
}

type inliner struct {
	read        func(rel string) ([]byte, error)
	mods        map[string]*parsedModule
	predeclared func(string) bool
}

// InlineLoads returns the corpus file rel (source src) with its load statements replaced by
// the definitions they bring in, read through read (root-relative paths). A file without
// loads comes back unchanged.
func InlineLoads(read func(rel string) ([]byte, error), rel string, src []byte) (string, error) {
	in := &inliner{read: read, mods: map[string]*parsedModule{}, predeclared: dsl.Predeclared().Has}
	return in.inline(rel, src)
}

func (in *inliner) parse(rel string, src []byte, chain []string) (*parsedModule, error) {
	if m, ok := in.mods[rel]; ok {
		return m, nil
	}
	for _, c := range chain {
		if c == rel {
			return nil, fmt.Errorf("load cycle through %s", rel)
		}
	}
	chain = append(chain, rel)
	f, err := dsl.FileOptions.Parse(rel, src, 0)
	if err != nil {
		return nil, err
	}
	if err := resolve.File(f, in.predeclared, starlark.Universe.Has); err != nil {
		return nil, err
	}
	m := &parsedModule{rel: rel, src: string(src), file: f, loads: map[*syntax.Ident]symbol{}, defs: map[string]bool{}}
	m.lines = []int{0}
	for i := 0; i < len(m.src); i++ {
		if m.src[i] == '\n' {
			m.lines = append(m.lines, i+1)
		}
	}
	// load bindings first: a reference to one resolves to where the name is defined
	for _, st := range f.Stmts {
		ld, ok := st.(*syntax.LoadStmt)
		if !ok {
			continue
		}
		target, err := dsl.ResolveLoad(rel, ld.Module.Value.(string))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", rel, err)
		}
		data, err := in.read(target)
		if err != nil {
			return nil, fmt.Errorf("%s: load %q: %v", rel, ld.Module.Value, err)
		}
		lm, err := in.parse(target, data, chain)
		if err != nil {
			return nil, err
		}
		for i, from := range ld.From {
			s, err := lm.resolveName(from.Name)
			if err != nil {
				return nil, err
			}
			m.loads[ld.To[i]] = s
		}
	}
	for _, st := range f.Stmts {
		var binds []string
		if _, ok := st.(*syntax.LoadStmt); !ok {
			binds = topBinds(st)
		}
		for _, n := range binds {
			m.defs[n] = true
		}
		m.binds = append(m.binds, binds)
		var refs []*syntax.Ident
		syntax.Walk(st, func(n syntax.Node) bool {
			id, ok := n.(*syntax.Ident)
			if !ok {
				return true
			}
			b, ok := id.Binding.(*resolve.Binding)
			if !ok || b == nil {
				return true
			}
			if _, ok := m.symbolOf(id); ok {
				refs = append(refs, id)
			}
			return true
		})
		m.refs = append(m.refs, refs)
	}
	in.mods[rel] = m
	return m, nil
}

// resolveName is where a top-level name of m is defined: in m, or where m loads it from.
func (m *parsedModule) resolveName(name string) (symbol, error) {
	if m.defs[name] {
		return symbol{m.rel, name}, nil
	}
	for _, st := range m.file.Stmts {
		if ld, ok := st.(*syntax.LoadStmt); ok {
			for _, to := range ld.To {
				if to.Name == name {
					return m.loads[to], nil
				}
			}
		}
	}
	return symbol{}, fmt.Errorf("%s does not define %s", m.rel, name)
}

// symbolOf is the symbol an identifier of m refers to (ok false for locals and builtins).
func (m *parsedModule) symbolOf(id *syntax.Ident) (symbol, bool) {
	b, ok := id.Binding.(*resolve.Binding)
	if !ok || b == nil {
		return symbol{}, false
	}
	// a load name used in a function is a free variable whose first binding is the load's
	if s, ok := m.loads[b.First]; ok && b.First != nil {
		return s, true
	}
	if b.Scope == resolve.Global {
		return symbol{m.rel, id.Name}, true
	}
	return symbol{}, false
}

// topBinds lists the names a top-level statement binds (a def, the targets of an assignment
// or of a for loop, and those of the statements nested in a top-level if, for or while).
func topBinds(st syntax.Stmt) []string {
	var out []string
	var target func(e syntax.Expr)
	target = func(e syntax.Expr) {
		switch e := e.(type) {
		case *syntax.Ident:
			out = append(out, e.Name)
		case *syntax.TupleExpr:
			for _, x := range e.List {
				target(x)
			}
		case *syntax.ListExpr:
			for _, x := range e.List {
				target(x)
			}
		case *syntax.ParenExpr:
			target(e.X)
		}
	}
	var stmt func(s syntax.Stmt)
	stmts := func(ss []syntax.Stmt) {
		for _, s := range ss {
			stmt(s)
		}
	}
	stmt = func(s syntax.Stmt) {
		switch s := s.(type) {
		case *syntax.DefStmt:
			out = append(out, s.Name.Name)
		case *syntax.AssignStmt:
			target(s.LHS)
		case *syntax.ForStmt:
			target(s.Vars)
			stmts(s.Body)
		case *syntax.WhileStmt:
			stmts(s.Body)
		case *syntax.IfStmt:
			stmts(s.True)
			stmts(s.False)
		}
	}
	stmt(st)
	return out
}

// isSideStmt: a top-level statement that runs for its effect on values (an expression, a
// loop, an if, an augmented assignment), which belongs to the definitions it touches.
func isSideStmt(st syntax.Stmt) bool {
	switch st := st.(type) {
	case *syntax.ExprStmt, *syntax.ForStmt, *syntax.WhileStmt, *syntax.IfStmt:
		return true
	case *syntax.AssignStmt:
		return st.Op != syntax.EQ
	}
	return false
}

var identRE = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func (in *inliner) inline(rel string, src []byte) (string, error) {
	ex, err := in.parse(rel, src, nil)
	if err != nil {
		return "", err
	}
	var loads []*syntax.LoadStmt
	for _, st := range ex.file.Stmts {
		if ld, ok := st.(*syntax.LoadStmt); ok {
			loads = append(loads, ld)
		}
	}
	if len(loads) == 0 {
		return string(src), nil
	}

	// The statements needed, per module: those that bind a needed symbol, and the side
	// statements that touch one; what they refer to is needed in turn.
	needed := map[symbol]bool{}
	type stmtKey struct {
		rel string
		i   int
	}
	keep := map[stmtKey]bool{}
	var queue []symbol
	need := func(s symbol) {
		if !needed[s] {
			needed[s] = true
			queue = append(queue, s)
		}
	}
	for _, ld := range loads {
		for _, to := range ld.To {
			if s, ok := ex.symbolOf(to); ok {
				need(s)
			}
		}
	}
	for len(queue) > 0 {
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			m := in.mods[s.rel]
			for i := range m.file.Stmts {
				if keep[stmtKey{m.rel, i}] || !contains(m.binds[i], s.name) {
					continue
				}
				keep[stmtKey{m.rel, i}] = true
				for _, id := range m.refs[i] {
					if t, ok := m.symbolOf(id); ok {
						need(t)
					}
				}
			}
		}
		// side statements of the modules involved that touch a needed symbol
		for _, m := range in.mods {
			if m.rel == rel {
				continue
			}
			for i, st := range m.file.Stmts {
				if keep[stmtKey{m.rel, i}] || !isSideStmt(st) {
					continue
				}
				touches := false
				for _, id := range m.refs[i] {
					if t, ok := m.symbolOf(id); ok && needed[t] && !contains(m.binds[i], id.Name) {
						touches = true
						break
					}
				}
				if !touches {
					continue
				}
				keep[stmtKey{m.rel, i}] = true
				for _, id := range m.refs[i] {
					if t, ok := m.symbolOf(id); ok {
						need(t)
					}
				}
				for _, n := range m.binds[i] {
					need(symbol{m.rel, n})
				}
			}
		}
	}

	// Modules in dependency order (what a module's kept statements use comes first).
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(r string)
	visit = func(r string) {
		if state[r] != 0 {
			return
		}
		state[r] = 1
		m := in.mods[r]
		for i := range m.file.Stmts {
			if !keep[stmtKey{r, i}] {
				continue
			}
			for _, id := range m.refs[i] {
				if t, ok := m.symbolOf(id); ok && t.rel != r {
					visit(t.rel)
				}
			}
		}
		state[r] = 2
		order = append(order, r)
	}
	for _, ld := range loads {
		for _, to := range ld.To {
			if s, ok := ex.symbolOf(to); ok {
				visit(s.rel)
			}
		}
	}

	// Names: the example's own top-level names and its load names first, then every other
	// symbol under its own name unless that is taken, else under name_<helper file>.
	names := map[symbol]string{}
	taken := map[string]symbol{}
	for n := range ex.defs {
		taken[n] = symbol{rel, n}
	}
	for _, ld := range loads {
		for _, to := range ld.To {
			s, ok := ex.symbolOf(to)
			if !ok {
				continue
			}
			if _, named := names[s]; named {
				continue
			}
			if _, t := taken[to.Name]; !t {
				names[s] = to.Name
				taken[to.Name] = s
			}
		}
	}
	name := func(s symbol) string {
		if n, ok := names[s]; ok {
			return n
		}
		n := s.name
		// a helper's global may shadow a builtin in its own file, not in the example's
		if _, t := taken[n]; t || in.predeclared(n) || starlark.Universe.Has(n) {
			base := strings.Trim(identRE.ReplaceAllString(strings.TrimSuffix(path.Base(s.rel), ".star"), "_"), "_")
			n = s.name + "_" + base
			for k := 2; ; k++ {
				if _, t := taken[n]; !t && !in.predeclared(n) && !starlark.Universe.Has(n) {
					break
				}
				n = fmt.Sprintf("%s_%s%d", s.name, base, k)
			}
		}
		names[s] = n
		taken[n] = s
		return n
	}
	for _, r := range order {
		m := in.mods[r]
		for i := range m.file.Stmts {
			if keep[stmtKey{r, i}] {
				for _, b := range m.binds[i] {
					name(symbol{r, b})
				}
			}
		}
	}

	// The block that replaces the first load statement: per helper file, a header and the
	// statements kept, in their order, apart by a blank line where they were apart.
	var mods []string
	for _, r := range order {
		m := in.mods[r]
		var b strings.Builder
		last := -2
		for i, st := range m.file.Stmts {
			if !keep[stmtKey{r, i}] {
				continue
			}
			text, first, end := m.stmtText(st, m.refs[i], name)
			if b.Len() > 0 && first != last+1 {
				b.WriteString("\n")
			}
			b.WriteString(text)
			last = end
		}
		if b.Len() == 0 {
			continue
		}
		mods = append(mods, fmt.Sprintf("# from //%s (inlined: a task file cannot load)\n\n%s", r, b.String()))
	}
	var aliases strings.Builder
	for _, ld := range loads {
		for _, to := range ld.To {
			if s, ok := ex.symbolOf(to); ok && name(s) != to.Name {
				fmt.Fprintf(&aliases, "%s = %s\n", to.Name, name(s))
			}
		}
	}
	if aliases.Len() > 0 {
		mods = append(mods, aliases.String())
	}
	block := strings.Join(mods, "\n")

	// The example with its load statements cut and the block in place of the first one (the
	// example's own names never change: a load name whose symbol has another name is aliased).
	// Where something was cut, the blank lines around it shrink to one.
	var segs []string
	last := 0
	for k, ld := range loads {
		start, end := ld.Span()
		a := ex.lines[start.Line-1]
		b := len(ex.src)
		if int(end.Line) < len(ex.lines) {
			b = ex.lines[end.Line]
		}
		segs = append(segs, ex.src[last:a])
		if k == 0 {
			segs = append(segs, block)
		}
		last = b
	}
	segs = append(segs, ex.src[last:])
	var out strings.Builder
	for _, seg := range segs {
		if seg = trimBlankLines(seg); seg == "" {
			continue
		}
		if out.Len() > 0 {
			text := strings.TrimRight(out.String(), " \t\n")
			out.Reset()
			out.WriteString(text)
			out.WriteString("\n\n")
		}
		out.WriteString(seg)
	}
	return out.String(), nil
}

// trimBlankLines drops the blank lines at the start of s.
func trimBlankLines(s string) string {
	for {
		line, rest, found := strings.Cut(s, "\n")
		if strings.TrimSpace(line) != "" {
			return s
		}
		if !found {
			return ""
		}
		s = rest
	}
}

// offset is the byte offset of a position (columns count runes).
func (m *parsedModule) offset(p syntax.Position) int {
	i := m.lines[p.Line-1]
	for c := int32(1); c < p.Col && i < len(m.src); c++ {
		_, n := utf8.DecodeRuneInString(m.src[i:])
		i += n
	}
	return i
}

// stmtText is the source of a top-level statement (its whole lines, with the comment lines
// right above it), its references to renamed symbols rewritten, and the 0-based indexes of its
// first and last lines.
func (m *parsedModule) stmtText(st syntax.Stmt, refs []*syntax.Ident, name func(symbol) string) (string, int, int) {
	start, end := st.Span()
	first := int(start.Line) - 1
	for first > 0 {
		prev := m.src[m.lines[first-1]:m.lines[first]]
		if !strings.HasPrefix(strings.TrimSpace(prev), "#") {
			break
		}
		first--
	}
	a := m.lines[first]
	b := len(m.src)
	if int(end.Line) < len(m.lines) {
		b = m.lines[end.Line]
	}
	type rep struct {
		at   int
		old  string
		with string
	}
	var reps []rep
	for _, id := range refs {
		s, ok := m.symbolOf(id)
		if !ok {
			continue
		}
		if n := name(s); n != id.Name {
			reps = append(reps, rep{m.offset(id.NamePos), id.Name, n})
		}
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].at < reps[j].at })
	var out strings.Builder
	last := a
	for _, r := range reps {
		if r.at < last || r.at+len(r.old) > b || m.src[r.at:r.at+len(r.old)] != r.old {
			continue
		}
		out.WriteString(m.src[last:r.at])
		out.WriteString(r.with)
		last = r.at + len(r.old)
	}
	out.WriteString(m.src[last:b])
	s := out.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s, first, int(end.Line) - 1
}
