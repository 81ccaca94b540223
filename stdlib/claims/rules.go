package claims

import (
	"container/list"
	"fmt"
	"hash/maphash"
	"sort"
	"strings"
	"sync"
	"time"
)

// rules are the lexicon compiled into indexes by first word.
type rules struct {
	triggerIndex map[string][]*triggerEntry
	statusIndex  map[string][]*statusEntry
}

type triggerEntry struct {
	words []string
	t     *trigger
}

type statusEntry struct {
	words []string
	word  *statusWord
}

var theRules = compileRules()

func compileRules() *rules {
	r := &rules{triggerIndex: map[string][]*triggerEntry{}, statusIndex: map[string][]*statusEntry{}}
	for i := range triggers {
		t := &triggers[i]
		ws := phraseWords(t.words)
		r.triggerIndex[ws[0]] = append(r.triggerIndex[ws[0]], &triggerEntry{words: ws, t: t})
	}
	for i := range statuses {
		s := &statuses[i]
		ws := phraseWords(s.word)
		r.statusIndex[ws[0]] = append(r.statusIndex[ws[0]], &statusEntry{words: ws, word: s})
	}
	return r
}

// Rule is one row of the rule set, for the docs.
type Rule struct {
	Group string // "negation", "hedge", ..., "status", "clause break", "terminator", ...
	Words string // the trigger or word, as matched
	Note  string // its scope, its axis and pole, or what it does
}

// Rules lists the rule set the reader applies, in a stable order: what docs/claims.md shows.
func Rules() []Rule {
	var out []Rule
	group := map[Stance]string{"": "pseudo-trigger (sets nothing)", Negated: "negation", Past: "superseded (past)",
		Hedged: "hedge", Conditional: "conditional", Reported: "reported speech", Question: "request (a question)"}
	for _, st := range []Stance{Negated, Past, Hedged, Conditional, Question, Reported, ""} {
		for _, t := range triggers {
			if t.stance != st {
				continue
			}
			note := t.dir.String()
			if st == Reported {
				note = "to the end of the sentence (up to a terminator), when its subject is somebody else; a short reporting clause after a comma reports the clause before it"
			}
			out = append(out, Rule{Group: group[st], Words: t.words, Note: note})
		}
	}
	for _, s := range statuses {
		out = append(out, Rule{Group: "status", Words: s.word, Note: s.axis + ": " + s.pole})
	}
	list := func(g string, m map[string]bool, note string) {
		ws := make([]string, 0, len(m))
		for w := range m {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		out = append(out, Rule{Group: g, Words: strings.Join(ws, ", "), Note: note})
	}
	list("clause break", clauseBreaks, "starts a new clause (so do , : ; ( ) and a spaced dash)")
	list("terminator", terminators, "ends the scope of every trigger")
	list("verb of change", changeVerbs, "makes \"from X to Y\" a change: X is superseded")
	list("now word", nowWords, "makes \"was\"/\"were\" mark a superseded value in the same sentence")
	list("anaphor", anaphors, "a clause or sentence that starts with it is about what the one before was about")
	out = append(out, Rule{Group: "correction", Words: strings.Join(corrections, ", "), Note: "a sentence that starts with it corrects the one before: its values are about the same thing"})
	return out
}

func (d dir) String() string {
	var parts []string
	if d&fwd != 0 {
		parts = append(parts, "forward to the end of its clause")
	}
	if d&back != 0 {
		parts = append(parts, "back to the start of its clause")
	}
	if d&adj != 0 {
		parts = append(parts, "the value right after it")
	}
	if d&sent != 0 {
		parts = append(parts, "the whole sentence")
	}
	if len(parts) == 0 {
		return "between two values of one kind (see alternatives)"
	}
	return strings.Join(parts, "; ")
}

// ---- the cache ----

// cacheSize is how many readings Read keeps: a verifier reads the same few texts many times.
const cacheSize = 256

var theCache = struct {
	sync.Mutex
	ll  *list.List
	idx map[uint64]*list.Element
}{ll: list.New(), idx: map[uint64]*list.Element{}}

type cacheEntry struct {
	h    uint64
	text string
	opt  string
	doc  *Doc
}

var seed = maphash.MakeSeed()

// optKey is a stable description of the options, for the cache: the clock, the zone, the region
// and the hash of the names and ids.
func optKey(o *Options) string {
	var b strings.Builder
	if !o.Written.IsZero() {
		b.WriteString(o.Written.UTC().Format(time.RFC3339Nano))
	}
	b.WriteByte('|')
	if o.Location != nil {
		_, off := time.Date(2000, 1, 1, 0, 0, 0, 0, o.Location).Zone()
		fmt.Fprintf(&b, "%d", off)
	}
	b.WriteByte('|')
	b.WriteString(o.Region)
	fmt.Fprintf(&b, "|%x", indexOf(o).key)
	return b.String()
}

// cached returns the reading of text under opt, from the cache when it was read before.
func cached(text string, opt Options) *Doc {
	ok := optKey(&opt)
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(text)
	h.WriteByte(0)
	h.WriteString(ok)
	key := h.Sum64()
	c := &theCache
	c.Lock()
	if e, hit := c.idx[key]; hit {
		ce := e.Value.(*cacheEntry)
		if ce.text == text && ce.opt == ok {
			c.ll.MoveToFront(e)
			c.Unlock()
			return ce.doc
		}
	}
	c.Unlock()
	d := read(text, opt)
	c.Lock()
	defer c.Unlock()
	if e, hit := c.idx[key]; hit {
		c.ll.Remove(e)
	}
	c.idx[key] = c.ll.PushFront(&cacheEntry{h: key, text: text, opt: ok, doc: d})
	for c.ll.Len() > cacheSize {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.idx, last.Value.(*cacheEntry).h)
	}
	return d
}

// StatusMarkdown is the table of status words of docs/claims.md.
func StatusMarkdown() string {
	var b strings.Builder
	b.WriteString("| axis | pole | words |\n| --- | --- | --- |\n")
	type key struct{ axis, pole string }
	var order []key
	ws := map[key][]string{}
	for _, s := range statuses {
		k := key{s.axis, s.pole}
		if _, ok := ws[k]; !ok {
			order = append(order, k)
		}
		ws[k] = append(ws[k], s.word)
	}
	for _, k := range order {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", k.axis, k.pole, strings.Join(ws[k], ", "))
	}
	return b.String()
}

// RulesMarkdown is the table of triggers and word lists of docs/claims.md (statuses apart).
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("| group | words | scope or effect |\n| --- | --- | --- |\n")
	type key struct{ group, note string }
	var order []key
	ws := map[key][]string{}
	for _, r := range Rules() {
		if r.Group == "status" {
			continue
		}
		k := key{r.Group, r.Note}
		if _, ok := ws[k]; !ok {
			order = append(order, k)
		}
		ws[k] = append(ws[k], r.Words)
	}
	for _, k := range order {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", k.group, strings.ReplaceAll(strings.Join(ws[k], ", "), "|", "\\|"), k.note)
	}
	return b.String()
}
