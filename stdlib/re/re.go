// Package re is the Starlark module "re": Python-like regular expressions on Go's regexp (RE2).
//
// The module defines (see Reference for the full text, which is generated from the same table as
// Module):
//
//	re.match(pattern, string, flags=0) -> list | None      match anchored at the start of string
//	re.fullmatch(pattern, string, flags=0) -> list | None  match spanning the whole string
//	re.search(pattern, string, flags=0) -> list | None     first match anywhere
//	re.findall(pattern, string, flags=0) -> list           every non-overlapping match
//	re.sub(pattern, repl, string, count=0, flags=0) -> str replace matches (\1, \g<name> in repl)
//	re.split(pattern, string, maxsplit=0, flags=0) -> list split around matches
//	re.escape(string) -> str                               quote regexp metacharacters
//	re.I, re.IGNORECASE, re.M, re.MULTILINE, re.S, re.DOTALL  flag values (Python's numbers)
//
// A match is returned as a list [whole, group1, group2, ...] of strings, where a group that did not
// take part in the match is None; no match is None.
//
// Differences from Python, all coming from RE2: no backreferences in patterns and no lookaround;
// \w, \d, \s and \b are ASCII-only; an empty match right after a previous match is skipped by
// findall, sub and split (Python 3.7+ keeps it), e.g. findall(r"\w*", "ab c") is ["ab", "c"].
// Patterns use Go's syntax (https://pkg.go.dev/regexp/syntax), which accepts Python's (?P<name>...)
// and (?<name>...) named groups and inline flags such as (?i), (?m) and (?s).
//
// Limits protect the host: a pattern is at most MaxPatternLen bytes and may compile to at most
// MaxProgSize instructions, a string or repl is at most MaxInputLen bytes, and sub produces at most
// MaxOutputLen bytes. Matching charges the calling thread's step budget (package budget) for
// every character it reads, as it reads (see scan.go). Compiled patterns are kept in a small LRU
// cache that is safe for concurrent use.
package re

import (
	"container/list"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/internal/starargs"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Limits on the inputs of every function.
const (
	MaxPatternLen = 10_000  // bytes in a pattern
	MaxProgSize   = 20_000  // estimated RE2 instructions of a compiled pattern
	MaxInputLen   = 1 << 20 // bytes in a subject string or a repl
	MaxOutputLen  = 4 << 20 // bytes in the result of sub
	cacheSize     = 128     // compiled patterns kept
)

// Flag values, as in Python.
const (
	IGNORECASE = 2
	MULTILINE  = 8
	DOTALL     = 16
	allFlags   = IGNORECASE | MULTILINE | DOTALL
)

// FuncDoc documents one member of the module.
type FuncDoc struct {
	Name      string // member name, e.g. "search"
	Signature string // Starlark signature, e.g. "re.search(pattern, string, flags=0) -> list | None"
	Doc       string // one paragraph
}

// builtinFunc is a function of the module: th the calling thread (whose budget matching
// charges), fn its name for errors, p its row's parameters, by which it binds its arguments.
type builtinFunc = func(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// member is one row of the table that builds Module, binds the arguments of its functions and
// gives Reference: a function (params, ret, fn) or a constant (val).
type member struct {
	name, ret, doc string
	params         starargs.Table
	fn             builtinFunc    // a function, or
	val            starlark.Value // a constant
}

var (
	req, opt = starargs.Req, starargs.Opt
	zero     = starlark.MakeInt(0)
	// (pattern, string, flags=0)
	patternString = starargs.Table{Params: []starargs.Param{req("pattern"), req("string"), opt("flags", zero)}}
)

var table = []member{
	{name: "match", params: patternString, ret: "list | None", fn: matchFn,
		doc: "Matches pattern at the start of string (the match need not reach the end). Returns [whole, group1, ...] with None for a group that did not take part, or None when there is no match."},
	{name: "fullmatch", params: patternString, ret: "list | None", fn: fullmatchFn,
		doc: "Like match, but the match must span the whole string."},
	{name: "search", params: patternString, ret: "list | None", fn: searchFn,
		doc: "Finds the first (leftmost) match of pattern anywhere in string. Returns [whole, group1, ...] with None for a group that did not take part, or None when there is no match."},
	{name: "findall", params: patternString, ret: "list", fn: findallFn,
		doc: "Returns every non-overlapping match, left to right: the whole match as a string when pattern has no group, the group's text when it has one, and a list of the groups' texts when it has several. A group that did not take part gives \"\"."},
	{name: "sub", ret: "string", fn: subFn,
		params: starargs.Table{Params: []starargs.Param{req("pattern"), req("repl"), req("string"), opt("count", zero), opt("flags", zero)}},
		doc:    "Replaces the first count matches (all when count is 0) with repl. In repl, \\1 to \\99 and \\g<1> refer to a group by number, \\g<0> to the whole match, \\g<name> to a named group; \\n, \\t, \\r, \\f, \\v, \\a, \\b and \\\\ are escapes; every other character, including $, is literal. A group that did not take part gives \"\"."},
	{name: "split", ret: "list", fn: splitFn,
		params: starargs.Table{Params: []starargs.Param{req("pattern"), req("string"), opt("maxsplit", zero), opt("flags", zero)}},
		doc:    "Splits string around the matches of pattern, at most maxsplit times when maxsplit > 0 (the rest is the last element). As in Python, the texts of the pattern's groups are put between the pieces (None for a group that did not take part)."},
	{name: "escape", params: starargs.Table{Params: []starargs.Param{req("string")}}, ret: "string", fn: escapeFn,
		doc: "Returns string with every regexp metacharacter escaped, so that it matches itself literally."},
	{name: "I", val: starlark.MakeInt(IGNORECASE), doc: "Flag: case-insensitive matching, like (?i)."},
	{name: "IGNORECASE", val: starlark.MakeInt(IGNORECASE), doc: "Same as re.I."},
	{name: "M", val: starlark.MakeInt(MULTILINE), doc: "Flag: ^ and $ also match at line breaks, like (?m)."},
	{name: "MULTILINE", val: starlark.MakeInt(MULTILINE), doc: "Same as re.M."},
	{name: "S", val: starlark.MakeInt(DOTALL), doc: "Flag: . also matches a newline, like (?s)."},
	{name: "DOTALL", val: starlark.MakeInt(DOTALL), doc: "Same as re.S."},
}

// Module is the Starlark module "re".
var Module = &starlarkstruct.Module{Name: "re", Members: buildMembers()}

// Reference documents every member of Module, in a stable order.
var Reference = buildReference()

func buildMembers() starlark.StringDict {
	d := make(starlark.StringDict, len(table))
	for i := range table {
		m := &table[i]
		if m.fn == nil {
			d[m.name] = m.val
			continue
		}
		if err := m.params.Check(); err != nil {
			panic("re." + m.name + ": " + err.Error())
		}
		d[m.name] = starlark.NewBuiltin("re."+m.name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return m.fn(th, b.Name(), &m.params, args, kwargs)
		})
	}
	return d
}

func buildReference() []FuncDoc {
	out := make([]FuncDoc, len(table))
	for i, m := range table {
		sig := "re." + m.name
		if m.fn != nil {
			sig = m.params.Signature(sig, m.ret)
		}
		out[i] = FuncDoc{Name: m.name, Signature: sig, Doc: m.doc}
	}
	return out
}

// ---- compiling and caching ----

type mode uint8

const (
	unanchored mode = iota
	anchoredStart
	anchoredBoth
	afterRune // \A(?s:.)(?s:.*?)(pattern): a search from past the start (see scanner.find)
)

type cacheKey struct {
	pattern string
	flags   int
	mode    mode
}

type cacheEntry struct {
	key cacheKey
	re  *compiled
}

// compiled is a pattern compiled in one mode, with the size of its program (the pattern's own,
// without the wrapping of its mode), which the scanner charges per character it reads.
type compiled struct {
	re    *regexp.Regexp
	insts int
}

// lru is a bounded least-recently-used cache of compiled patterns. *regexp.Regexp is safe for
// concurrent use, so entries are shared freely.
type lru struct {
	mu  sync.Mutex
	max int
	ll  *list.List // front = most recently used; values are *cacheEntry
	m   map[cacheKey]*list.Element
}

func newLRU(max int) *lru {
	return &lru{max: max, ll: list.New(), m: make(map[cacheKey]*list.Element, max)}
}

func (c *lru) get(k cacheKey) *compiled {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*cacheEntry).re
	}
	return nil
}

func (c *lru) put(k cacheKey, re *compiled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		return
	}
	c.m[k] = c.ll.PushFront(&cacheEntry{k, re})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.m, last.Value.(*cacheEntry).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

var cache = newLRU(cacheSize)

// compile returns the compiled form of pattern under flags and mode; errors name fn and pattern.
func compile(fn, pattern string, flags int, md mode) (*compiled, error) {
	if len(pattern) > MaxPatternLen {
		return nil, fmt.Errorf("%s: pattern too long (%d bytes, limit %d)", fn, len(pattern), MaxPatternLen)
	}
	if flags&^allFlags != 0 {
		return nil, fmt.Errorf("%s: unsupported flags %d (want a combination of re.I, re.M and re.S)", fn, flags)
	}
	key := cacheKey{pattern, flags, md}
	if re := cache.get(key); re != nil {
		return re, nil
	}

	// Validate the pattern as written, so that errors speak of it (and not of the wrapped form),
	// and so that an unbalanced pattern cannot be "completed" by the wrapping below.
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid pattern %q: %s", fn, pattern, describe(err, pattern))
	}
	if n := progSize(parsed); n > MaxProgSize {
		return nil, fmt.Errorf("%s: invalid pattern %q: too large (about %d instructions, limit %d)", fn, pattern, n, MaxProgSize)
	}

	insts := 0
	if prog, err := syntax.Compile(parsed.Simplify()); err == nil {
		insts = len(prog.Inst)
	}

	var b strings.Builder
	switch md {
	case anchoredStart, anchoredBoth:
		b.WriteString(`\A(?:`)
	case afterRune:
		b.WriteString(`\A(?s:.)(?s:.*?)(`)
	}
	if flags != 0 {
		b.WriteString("(?")
		if flags&IGNORECASE != 0 {
			b.WriteByte('i')
		}
		if flags&MULTILINE != 0 {
			b.WriteByte('m')
		}
		if flags&DOTALL != 0 {
			b.WriteByte('s')
		}
		b.WriteByte(')')
	}
	b.WriteString(pattern)
	if md != unanchored && openQuote(pattern) {
		b.WriteString(`\E`) // close a trailing \Q... so that the wrapper's ")" is not quoted
	}
	switch md {
	case anchoredStart, afterRune:
		b.WriteString(`)`)
	case anchoredBoth:
		b.WriteString(`)\z`)
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		// Not expected once the pattern itself parsed; report it all the same.
		return nil, fmt.Errorf("%s: invalid pattern %q: %s", fn, pattern, describe(err, pattern))
	}
	c := &compiled{re: re, insts: insts}
	cache.put(key, c)
	return c, nil
}

// describe renders a regexp parse error without Go's "error parsing regexp" prefix.
func describe(err error, pattern string) string {
	if se, ok := err.(*syntax.Error); ok {
		if se.Expr == "" || se.Expr == pattern {
			return string(se.Code)
		}
		return fmt.Sprintf("%s at %q", se.Code, se.Expr)
	}
	return err.Error()
}

// openQuote reports whether a valid pattern ends inside a \Q... quotation without \E.
// Inside \Q everything up to the first \E is literal; elsewhere a backslash escapes one character.
func openQuote(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '\\' || i+1 >= len(p) {
			continue
		}
		if p[i+1] != 'Q' {
			i++ // skip the escaped character
			continue
		}
		end := strings.Index(p[i+2:], `\E`)
		if end < 0 {
			return true
		}
		i += 2 + end + 1 // continue after \E
	}
	return false
}

// progSize estimates the number of instructions of the compiled program, saturating well above
// MaxProgSize. It is computed on the parse tree, so a huge program is refused before it is built.
func progSize(re *syntax.Regexp) int {
	const big = 1 << 30
	add := func(a, b int) int {
		if a+b > big {
			return big
		}
		return a + b
	}
	mul := func(a, b int) int {
		if a != 0 && b > big/a {
			return big
		}
		return a * b
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(len(re.Rune), 1)
	case syntax.OpCapture:
		return add(progSize(re.Sub[0]), 2)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return add(progSize(re.Sub[0]), 1)
	case syntax.OpRepeat:
		n := re.Max
		if n < 0 {
			n = re.Min + 1
		}
		return mul(add(progSize(re.Sub[0]), 1), max(n, 1))
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n = add(n, add(progSize(s), 1))
		}
		return n
	default:
		return 1
	}
}

// ---- helpers ----

func checkInput(fn, what, s string) error {
	if len(s) > MaxInputLen {
		return fmt.Errorf("%s: %s too long (%d bytes, limit %d)", fn, what, len(s), MaxInputLen)
	}
	return nil
}

// group returns the text of group i of match loc, or None when it did not take part.
func group(s string, loc []int, i int) starlark.Value {
	if loc[2*i] < 0 {
		return starlark.None
	}
	return starlark.String(s[loc[2*i]:loc[2*i+1]])
}

// groupText is like group but gives "" for a group that did not take part.
func groupText(s string, loc []int, i int) starlark.String {
	if loc[2*i] < 0 {
		return ""
	}
	return starlark.String(s[loc[2*i]:loc[2*i+1]])
}

func matchList(s string, loc []int) starlark.Value {
	if loc == nil {
		return starlark.None
	}
	elems := make([]starlark.Value, len(loc)/2)
	for i := range elems {
		elems[i] = group(s, loc, i)
	}
	return starlark.NewList(elems)
}

// unpackPS unpacks (pattern, string, flags=0).
func unpackPS(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (pattern, s string, flags int, err error) {
	err = p.UnpackArgs(fn, args, kwargs, &pattern, &s, &flags)
	if err == nil {
		err = checkInput(fn, "string", s)
	}
	return
}

// scan compiles pattern for a search from the start and for searches past it.
func scan(th *starlark.Thread, fn, pattern string, flags int) (*scanner, error) {
	first, err := compile(fn, pattern, flags, unanchored)
	if err != nil {
		return nil, err
	}
	after, err := compile(fn, pattern, flags, afterRune)
	if err != nil {
		return nil, err
	}
	return newScanner(th, first, after), nil
}

func findOne(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple, md mode) (starlark.Value, error) {
	pattern, s, flags, err := unpackPS(fn, p, args, kwargs)
	if err != nil {
		return nil, err
	}
	re, err := compile(fn, pattern, flags, md)
	if err != nil {
		return nil, err
	}
	sc := newScanner(th, re, nil)
	loc := sc.find(s, 0)
	if err := sc.done(); err != nil {
		return nil, err
	}
	return matchList(s, loc), nil
}

// ---- functions ----

func matchFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return findOne(th, fn, p, args, kwargs, anchoredStart)
}

func fullmatchFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return findOne(th, fn, p, args, kwargs, anchoredBoth)
}

func searchFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return findOne(th, fn, p, args, kwargs, unanchored)
}

func findallFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	pattern, s, flags, err := unpackPS(fn, p, args, kwargs)
	if err != nil {
		return nil, err
	}
	sc, err := scan(th, fn, pattern, flags)
	if err != nil {
		return nil, err
	}
	locs := sc.all(s, -1)
	if err := sc.done(); err != nil {
		return nil, err
	}
	ngroups := sc.first.NumSubexp()
	out := make([]starlark.Value, len(locs))
	for i, loc := range locs {
		switch ngroups {
		case 0:
			out[i] = groupText(s, loc, 0)
		case 1:
			out[i] = groupText(s, loc, 1)
		default:
			gs := make([]starlark.Value, ngroups)
			for g := range gs {
				gs[g] = groupText(s, loc, g+1)
			}
			out[i] = starlark.NewList(gs)
		}
	}
	return starlark.NewList(out), nil
}

func subFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		pattern, repl, s string
		count, flags     int
	)
	if err := p.UnpackArgs(fn, args, kwargs, &pattern, &repl, &s, &count, &flags); err != nil {
		return nil, err
	}
	if count < 0 {
		return nil, fmt.Errorf("%s: count must not be negative (got %d)", fn, count)
	}
	if err := checkInput(fn, "repl", repl); err != nil {
		return nil, err
	}
	if err := checkInput(fn, "string", s); err != nil {
		return nil, err
	}
	sc, err := scan(th, fn, pattern, flags)
	if err != nil {
		return nil, err
	}
	pieces, err := parseRepl(repl, sc.first)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	n := -1
	if count > 0 {
		n = count
	}
	locs := sc.all(s, n)
	if err := sc.done(); err != nil {
		return nil, err
	}
	var out strings.Builder
	last := 0
	for _, loc := range locs {
		out.WriteString(s[last:loc[0]])
		for _, p := range pieces {
			if p.group < 0 {
				out.WriteString(p.lit)
			} else if loc[2*p.group] >= 0 {
				out.WriteString(s[loc[2*p.group]:loc[2*p.group+1]])
			}
		}
		if out.Len() > MaxOutputLen {
			return nil, fmt.Errorf("%s: result too long (more than %d bytes)", fn, MaxOutputLen)
		}
		last = loc[1]
	}
	out.WriteString(s[last:])
	if out.Len() > MaxOutputLen {
		return nil, fmt.Errorf("%s: result too long (more than %d bytes)", fn, MaxOutputLen)
	}
	return starlark.String(out.String()), nil
}

// replPiece is a literal (group < 0) or a reference to a group.
type replPiece struct {
	lit   string
	group int
}

// parseRepl parses a Python-style replacement template. A "$" is an ordinary character.
func parseRepl(repl string, re *regexp.Regexp) ([]replPiece, error) {
	var pieces []replPiece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			pieces = append(pieces, replPiece{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	ref := func(g int, text string) error {
		if g > re.NumSubexp() {
			return fmt.Errorf("invalid group reference %s in repl (pattern has %d groups)", text, re.NumSubexp())
		}
		flush()
		pieces = append(pieces, replPiece{group: g})
		return nil
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' {
			lit.WriteByte(c)
			continue
		}
		if i+1 == len(repl) {
			return nil, fmt.Errorf("bad escape (end of repl)")
		}
		i++
		c = repl[i]
		switch {
		case c >= '1' && c <= '9':
			g := int(c - '0')
			text := repl[i-1 : i+1]
			if i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
				i++
				g = g*10 + int(repl[i]-'0')
				text = repl[i-2 : i+1]
			}
			if err := ref(g, text); err != nil {
				return nil, err
			}
		case c == '0':
			return nil, fmt.Errorf(`invalid group reference \0 in repl (use \g<0> for the whole match)`)
		case c == 'g':
			rest := repl[i+1:]
			end := strings.IndexByte(rest, '>')
			if !strings.HasPrefix(rest, "<") || end < 0 {
				return nil, fmt.Errorf(`bad group reference in repl: want \g<name> or \g<number>`)
			}
			name := rest[1:end]
			text := `\g<` + name + `>`
			i += end + 1
			if name == "" {
				return nil, fmt.Errorf(`missing group name in repl: \g<>`)
			}
			if isDigits(name) {
				g := 0
				for _, d := range name {
					g = g*10 + int(d-'0')
					if g > re.NumSubexp() {
						break
					}
				}
				if err := ref(g, text); err != nil {
					return nil, err
				}
				continue
			}
			g := re.SubexpIndex(name)
			if g < 0 {
				return nil, fmt.Errorf("unknown group name %q in repl", name)
			}
			if err := ref(g, text); err != nil {
				return nil, err
			}
		case c == '\\':
			lit.WriteByte('\\')
		case c == 'n':
			lit.WriteByte('\n')
		case c == 't':
			lit.WriteByte('\t')
		case c == 'r':
			lit.WriteByte('\r')
		case c == 'f':
			lit.WriteByte('\f')
		case c == 'v':
			lit.WriteByte('\v')
		case c == 'a':
			lit.WriteByte('\a')
		case c == 'b':
			lit.WriteByte('\b')
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return nil, fmt.Errorf(`bad escape \%c in repl`, c)
		default:
			// As in Python, an unknown escape of a non-letter is kept as written.
			lit.WriteByte('\\')
			lit.WriteByte(c)
		}
	}
	flush()
	return pieces, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func splitFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		pattern, s      string
		maxsplit, flags int
	)
	if err := p.UnpackArgs(fn, args, kwargs, &pattern, &s, &maxsplit, &flags); err != nil {
		return nil, err
	}
	if maxsplit < 0 {
		return nil, fmt.Errorf("%s: maxsplit must not be negative (got %d)", fn, maxsplit)
	}
	if err := checkInput(fn, "string", s); err != nil {
		return nil, err
	}
	sc, err := scan(th, fn, pattern, flags)
	if err != nil {
		return nil, err
	}
	n := -1
	if maxsplit > 0 {
		n = maxsplit
	}
	locs := sc.all(s, n)
	if err := sc.done(); err != nil {
		return nil, err
	}
	var out []starlark.Value
	last := 0
	for _, loc := range locs {
		out = append(out, starlark.String(s[last:loc[0]]))
		for g := 1; g <= sc.first.NumSubexp(); g++ {
			out = append(out, group(s, loc, g))
		}
		last = loc[1]
	}
	out = append(out, starlark.String(s[last:]))
	return starlark.NewList(out), nil
}

func escapeFn(th *starlark.Thread, fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := p.UnpackArgs(fn, args, kwargs, &s); err != nil {
		return nil, err
	}
	if err := checkInput(fn, "string", s); err != nil {
		return nil, err
	}
	return starlark.String(regexp.QuoteMeta(s)), nil
}
