package generator

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/workspace/services"
)

// The prompt carries the language reference in parts (see reference): the same core in every
// request, the entries of the services an attempt's capabilities use in its first request, the
// entries its diagnostics name in a repair request, and a compact index of the rest. The parts
// are cut from the reference itself (refdoc.Markdown(), or the file of Options.Reference) by
// its headings, and an entry is a service's when its name is the service's `ws` object or a
// tool of its group (services.All): no copy of the reference is kept here.

// refEntry is one "### " entry of the reference.
type refEntry struct {
	name    string // the identifier it documents: "ws.mail.deliver", "mail_send", "claims.states"
	text    string // its heading and body
	service string // the service whose `ws` object or tool group it belongs to ("": none)
	section int    // index of its section
}

// refSection is one "## " section: its heading and intro, then its entries.
type refSection struct {
	title string // the heading's text
	head  string // heading and intro
	core  bool   // shown whole in every request (its service entries excepted)
}

// reference is a language reference cut into parts.
type reference struct {
	preamble string
	sections []refSection
	entries  []refEntry
}

// indexedSections are the sections of the reference that the prompt shows as an index only
// (unless a diagnostic names an entry of theirs); every other section is part of the core,
// apart from the entries of a service.
var indexedSections = []string{"Module `re`", "Module `time`", "Modules `json`, `math`, `struct`",
	"What the models inside a task are sent", "Built-in tools", "Diagnostics"}

// indexedEntries are entries of core sections that the prompt shows as an index only: a name,
// or a prefix ending in ".", of what task files seldom need.
var indexedEntries = []string{"capability", "claims.read", "claims.parse", "claims.state", "claims.state_only", "claims.deny",
	"s.holds", "ws.rand", "ws.rand.", "ws.clock.set", "ws.clock.advance", "ws.history.versions", "ws.history.touched"}

// capabilityEntries are entries of core sections that only tasks of some capabilities need:
// they come with the first request of an attempt that draws a capability of the prefix.
var capabilityEntries = []struct {
	prefix  string
	entries []string
}{
	{"multi_turn.", []string{"simulated_user", "judge", "agent.ask", "ep.asks"}},
}

// capabilityEntry says whether name is an entry of capabilityEntries.
func capabilityEntry(name string) bool {
	for _, ce := range capabilityEntries {
		if contains(ce.entries, name) {
			return true
		}
	}
	return false
}

func indexedEntry(name string) bool {
	if capabilityEntry(name) {
		return true
	}
	for _, x := range indexedEntries {
		if name == x || (strings.HasSuffix(x, ".") && strings.HasPrefix(name, x)) {
			return true
		}
	}
	return false
}

var entryNameRE = regexp.MustCompile("^### `([A-Za-z_][A-Za-z0-9_.]*)")

// parseReference cuts a Markdown reference at its "## " and "### " headings.
func parseReference(md string) *reference {
	r := &reference{}
	toolGroup := map[string]string{} // tool → service
	wsPrefix := map[string]string{}  // "ws.mail" → service
	for _, s := range services.All {
		wsPrefix["ws."+s.ScriptName()] = s.Name
		for _, t := range s.Tools {
			toolGroup[t.Name] = s.Name
		}
	}
	lines := strings.SplitAfter(md, "\n")
	var cur *strings.Builder
	flush := func() {}
	for _, ln := range lines {
		switch {
		case strings.HasPrefix(ln, "## "):
			flush()
			title := strings.TrimSpace(strings.TrimPrefix(ln, "## "))
			r.sections = append(r.sections, refSection{title: title, core: !contains(indexedSections, title)})
			k := len(r.sections) - 1
			cur = &strings.Builder{}
			cur.WriteString(ln)
			b := cur
			flush = func() { r.sections[k].head = b.String() }
		case strings.HasPrefix(ln, "### ") && len(r.sections) > 0:
			flush()
			e := refEntry{section: len(r.sections) - 1}
			if m := entryNameRE.FindStringSubmatch(ln); m != nil {
				e.name = m[1]
			}
			if s, ok := toolGroup[e.name]; ok {
				e.service = s
			} else {
				for p, s := range wsPrefix {
					if e.name == p || strings.HasPrefix(e.name, p+".") {
						e.service = s
					}
				}
			}
			r.entries = append(r.entries, e)
			k := len(r.entries) - 1
			cur = &strings.Builder{}
			cur.WriteString(ln)
			b := cur
			flush = func() { r.entries[k].text = b.String() }
		case cur == nil:
			r.preamble += ln
		default:
			cur.WriteString(ln)
		}
	}
	flush()
	return r
}

// inCore says whether entry k is shown in every request.
func (r *reference) inCore(k int) bool {
	e := r.entries[k]
	return e.service == "" && r.sections[e.section].core && !indexedEntry(e.name)
}

// core is the part of the reference every request carries: the preamble, the core sections
// without their service entries, and an index of everything else.
func (r *reference) core() string {
	var b strings.Builder
	b.WriteString(r.preamble)
	for si, s := range r.sections {
		if !s.core {
			continue
		}
		head, _ := r.serviceRows(s.head, nil)
		b.WriteString(head)
		for k, e := range r.entries {
			if e.section == si && r.inCore(k) {
				b.WriteString(e.text)
			}
		}
	}
	b.WriteString(r.index())
	return b.String()
}

// index lists the entries not in the core, by section and service, names only.
func (r *reference) index() string {
	var b strings.Builder
	b.WriteString("## Index of the rest of the reference\n\n")
	b.WriteString("Shown in full where a task needs them: the entries of the services your task's capabilities use come with the request, and those a diagnostic names with the repair request.\n\n")
	for si, s := range r.sections {
		groups := map[string][]string{}
		var order []string
		for k, e := range r.entries {
			if e.section != si || r.inCore(k) {
				continue
			}
			key := e.service
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], e.name)
		}
		if s.core && len(order) == 0 {
			continue
		}
		if len(order) == 0 {
			fmt.Fprintf(&b, "- %s\n", s.title)
			continue
		}
		for _, key := range order {
			label := s.title
			if key != "" {
				label += " (" + key + ")"
			}
			fmt.Fprintf(&b, "- %s: %s\n", label, compactNames(groups[key]))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// servicesOf are the services the capabilities name by their first word ("mail.reply" →
// mail, "files.extract" → files); when they name none, the services most tasks seed (files and
// mail).
func servicesOf(caps []string) []string {
	var out []string
	for _, s := range services.All {
		for _, c := range caps {
			word, _, _ := strings.Cut(c, ".")
			if word == s.Name || word == s.ScriptName() || word == s.GroupName() {
				out = append(out, s.Name)
				break
			}
		}
	}
	if len(out) == 0 {
		out = []string{"files", "mail"}
	}
	return out
}

// serviceRows splits a section's head with a Markdown table whose rows name a service in their
// first cell: rest is the head without the table, table its header and the rows of the services
// svcs ("" when there are none). A head without such a table is all rest.
func (r *reference) serviceRows(head string, svcs []string) (rest, table string) {
	var a, h, b strings.Builder
	found := false
	for _, ln := range strings.SplitAfter(head, "\n") {
		if !strings.HasPrefix(ln, "|") {
			a.WriteString(ln)
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(ln, "| "), " |")
		switch {
		case !isService(cell):
			h.WriteString(ln)
		case contains(svcs, cell):
			found = true
			b.WriteString(ln)
		default:
			found = true
		}
	}
	if !found {
		return head, ""
	}
	if b.Len() == 0 {
		return a.String(), ""
	}
	return a.String(), h.String() + b.String() + "\n"
}

// forCapabilities is the part of the reference an attempt's first request carries for its
// capabilities: the rows of the services table and the entries of the services they use (see
// forServices), and the entries of capabilityEntries.
func (r *reference) forCapabilities(caps []string, sent map[int]bool) string {
	svcs := servicesOf(caps)
	var b strings.Builder
	for _, s := range r.sections {
		if _, table := r.serviceRows(s.head, svcs); table != "" {
			b.WriteString(table)
		}
	}
	for _, ce := range capabilityEntries {
		want := false
		for _, c := range caps {
			want = want || strings.HasPrefix(c, ce.prefix)
		}
		if !want {
			continue
		}
		for k, e := range r.entries {
			if contains(ce.entries, e.name) && !sent[k] {
				sent[k] = true
				b.WriteString(e.text)
			}
		}
	}
	b.WriteString(r.forServices(svcs, sent))
	return b.String()
}

// forServices are the entries of the services' `ws` objects, in reference order, that sent
// does not hold yet (it adds them to sent), and their tools in short: each tool's signature and
// first sentence (a repair request that names a tool carries its whole entry).
func (r *reference) forServices(svcs []string, sent map[int]bool) string {
	var b, tools strings.Builder
	for k, e := range r.entries {
		if e.service == "" || !contains(svcs, e.service) || sent[k] || r.inCore(k) {
			continue
		}
		if strings.HasPrefix(e.name, "ws.") {
			sent[k] = true
			b.WriteString(e.text)
			continue
		}
		head, body, _ := strings.Cut(e.text, "\n")
		fmt.Fprintf(&tools, "- %s: %s\n", strings.TrimPrefix(head, "### "), firstSentence(body))
	}
	if tools.Len() > 0 {
		b.WriteString("### Their tools\n\n" + tools.String() + "\n")
	}
	return b.String()
}

// firstSentence is the first sentence of an entry's body.
func firstSentence(body string) string {
	body = strings.TrimSpace(body)
	if i := strings.Index(body, "\n"); i >= 0 {
		body = body[:i]
	}
	if i := strings.Index(body, ". "); i >= 0 {
		body = body[:i+1]
	}
	return body
}

var nameInTextRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*`)

// named are the entries, not in the core nor in sent, that texts name: an entry's name as a
// word, or a service's `ws` object for all of that object's entries. It adds them to sent.
func (r *reference) named(texts []string, sent map[int]bool) string {
	words := map[string]bool{}
	for _, t := range texts {
		for _, w := range nameInTextRE.FindAllString(t, -1) {
			words[w] = true
			for i := strings.LastIndexByte(w, '.'); i > 0; i = strings.LastIndexByte(w[:i], '.') {
				words[w[:i]] = true // ws.mail.send names ws.mail
			}
		}
	}
	objects := map[string]bool{} // services whose `ws` object is named
	for _, e := range r.entries {
		if e.service != "" && words[e.name] && strings.HasPrefix(e.name, "ws.") && !strings.Contains(e.name[len("ws."):], ".") {
			objects[e.service] = true
		}
	}
	var picked []int
	for k, e := range r.entries {
		if sent[k] || r.inCore(k) || e.name == "" {
			continue
		}
		if words[e.name] || (objects[e.service] && strings.HasPrefix(e.name, "ws.")) {
			picked = append(picked, k)
		}
	}
	sort.Ints(picked)
	var b strings.Builder
	for _, k := range picked {
		sent[k] = true
		b.WriteString(r.entries[k].text)
	}
	return b.String()
}

// namedReference is what a repair request adds: the reference entries its diagnostics (their
// messages and their codes' hints) name that the attempt's requests have not carried yet.
func (g *gen) namedReference(diags []dsl.Diagnostic, sent map[int]bool) string {
	var texts []string
	for _, d := range diags {
		texts = append(texts, d.Message)
		if c, ok := dsl.CodeByID(d.Code); ok {
			texts = append(texts, c.Hint)
		}
	}
	part := g.ref.named(texts, sent)
	if part == "" {
		return ""
	}
	return "\nThe reference entries these problems name:\n\n" + part
}

// compactNames joins names, writing a name whose parent (up to its last dot) is that of the
// last name written whole from its last dot: "ws.mail.get, .messages".
func compactNames(names []string) string {
	parent := func(n string) string {
		if j := strings.LastIndexByte(n, '.'); j > 0 {
			return n[:j+1]
		}
		return ""
	}
	var b strings.Builder
	prev := ""
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		if p := parent(n); p != "" && p == parent(prev) {
			b.WriteString(n[len(p)-1:])
		} else {
			b.WriteString(n)
			prev = n
		}
	}
	return b.String()
}

func isService(name string) bool {
	for _, s := range services.All {
		if s.Name == name {
			return true
		}
	}
	return false
}
