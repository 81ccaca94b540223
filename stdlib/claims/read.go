package claims

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// Doc is a text as the reader understood it: its sentences, clauses and claims.
type Doc struct {
	src      string
	opt      Options
	hasClock bool
	today    time.Time // the written day (in Location) at midnight UTC
	lines    []line
	toks     []tok
	spans    []rawSpan
	sents    []*sentence
	ments    []*mention
	names    map[string][]alias
	ids      map[string][]knownID
	x        *index
	r        *rules
}

// rawSpan is a piece of the text read before tokens: a mail address or a web address.
type rawSpan struct {
	s, e int
	kind Kind // Email, or "" for a web address (not a value)
}

type alias struct {
	words []string
	key   string
	class NameClass
}

type knownID struct {
	id   string
	toks []string
}

type span struct{ t0, t1 int }

// sentence is one statement: a sentence of prose, a list item, a heading or a table row.
type sentence struct {
	idx      int
	t0, t1   int
	question bool
	block    int   // paragraphs and lists separated by blank lines
	ctx      []int // sentences that give context: the heading of its list or section
	header   []span
	table    bool
	cont     bool  // continues the previous sentence: it starts with an anaphor, a correction, "or", "and" or a value
	condCont bool  // a condition on the previous sentence ("If that's not right, try 17:00"): every clause goes on with it
	corr     bool  // starts with a correction: every clause of it is about what the previous sentence was about
	prev     int   // the previous sentence of its block, -1
	children []int // for a heading: the sentences under it
	items    []item
	clauses  []clause
}

// item is a token, or a value that spans several.
type item struct {
	t0, t1  int
	m       *mention
	word    bool // a word, a number or a value: counts for scopes
	key     string
	clause  int
	stance  Stance
	trigger string
	trigS   int // the byte span of the trigger word(s), -1 when none
	trigE   int
}

// clause is a run of items between clause breaks.
type clause struct {
	i0, i1   int
	paren    bool
	greeting bool   // "Hi Mehmet," "Thanks, Dana": says who is addressed, not what a value is about
	anchor   int    // for a bracket, the clause it stands after (its names are the bracket\'s)
	start    string // the word or punctuation that began it ("" for the first)
	own      bool   // has a subject of its own
	cont     int    // the clause it continues, -1
}

var stancePriority = map[Stance]int{Asserted: 0, Hedged: 1, Past: 2, Negated: 3, Conditional: 4, Question: 5, Reported: 6}

// Read reads text. The result is shared: do not change it.
func Read(text string, opt Options) *Doc {
	return cached(text, opt)
}

func read(text string, opt Options) *Doc {
	d := &Doc{src: text, opt: opt, r: theRules}
	if !opt.Written.IsZero() {
		loc := opt.Location
		if loc == nil {
			loc = time.UTC
		}
		w := opt.Written.In(loc)
		d.today = time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
		d.hasClock = true
	}
	d.x = indexOf(&d.opt)
	d.names, d.ids = d.x.names, d.x.ids
	d.lines, d.toks = lex(text)
	d.spans = rawSpans(text)
	d.segment()
	for _, s := range d.sents {
		sc := &scanner{d: d, t0: s.t0, t1: s.t1}
		sc.scan()
		for _, m := range sc.out {
			m.Sentence = s.idx
		}
		ms := dedupe(sc.out)
		d.rates(ms)
		d.ments = append(d.ments, ms...)
	}
	for _, s := range d.sents {
		d.items(s)
		d.clauses(s)
		d.stances(s)
	}
	d.corrections()
	d.footnotes()
	d.bind()
	d.supersededByNow()
	return d
}

// supersedingWords in a clause say its value is the one that holds now.
var supersedingWords = words(`now again currently new revised updated corrected changed moved rescheduled extended postponed latest`)

// pastMarkers before a value in its clause say it was so once ("was suspended", "asked for 40
// pallets").
var pastMarkers = words(`was were had asked requested ordered wanted planned quoted`)

// supersededByNow makes a value said in the past tense superseded when a later clause (of the
// same sentence or of the next two, in one paragraph) says a value of the same kind about the same
// thing with "now" or "again": "Your account was suspended … it is active again", "Zeevrucht
// asked for 40 pallets; … they now want 36 pallets".
func (d *Doc) supersededByNow() {
	for j, m2 := range d.ments {
		if m2.Stance != Asserted {
			continue
		}
		now := d.nowWordIn(m2)
		if now < 0 {
			continue
		}
		s2 := d.sents[m2.Sentence]
		for i := j - 1; i >= 0 && j-i <= reach; i-- {
			m1 := d.ments[i]
			s1 := d.sents[m1.Sentence]
			if m2.Sentence-m1.Sentence > 2 || s1.block != s2.block {
				break
			}
			if m1.Stance != Asserted || m1.Value == m2.Value || !sameQuantity(m1, m2) || !d.pastMarked(m1) || d.nowWordIn(m1) >= 0 ||
				m1.Entity != "" && m2.Entity != "" && m1.Entity != m2.Entity {
				continue
			}
			t := d.toks[now]
			m1.Stance, m1.Trigger, m1.TriggerStart, m1.TriggerEnd = Past, t.low, t.s, t.e
			s1.items[m1.item].stance = Past
		}
	}
}

// nowWordIn is the token of a supersedingWords word ("now", "again", "revised", …) in m's
// clause, or -1.
func (d *Doc) nowWordIn(m *mention) int {
	s := d.sents[m.Sentence]
	c := s.clauses[s.items[m.item].clause]
	for k := max(c.i0, m.item-reach); k < min(c.i1, m.item+reach); k++ {
		if it := s.items[k]; it.m == nil {
			if l := d.toks[it.t0].low; supersedingWords[l] {
				return it.t0
			}
		}
	}
	return -1
}

// pastMarked reports whether a pastMarkers word stands before m in its clause.
func (d *Doc) pastMarked(m *mention) bool {
	s := d.sents[m.Sentence]
	ci := s.items[m.item].clause
	for k := m.item - 1; k >= 0 && k >= m.item-reach && s.items[k].clause == ci; k-- {
		if it := s.items[k]; it.m == nil && pastMarkers[d.toks[it.t0].low] {
			return true
		}
	}
	return false
}

// sameQuantity reports whether two values measure the same thing: statuses of one axis, counts
// of one unit, or values of one other kind (not names or ids).
func sameQuantity(a, b *mention) bool {
	switch {
	case a.Kind != b.Kind || a.Kind == Name || a.Kind == ID:
		return false
	case a.Kind == Status:
		return a.axis == b.axis
	case a.Kind == Count:
		return sameCountUnit(a.unit, b.unit)
	}
	return true
}

// labelNouns before a plain number make it the name of a place or a part, not a quantity ("dock
// 4", "bay 3", "line 2").
var labelNouns = words(`bay dock door gate room row aisle line level floor platform track lane zone area shelf rack bin
	slot phase option version page section item step stage building hall terminal berth pier unit suite box column
	chapter week day round table seat desk counter window booth ramp station`)

// measureQualifiers after an amount that opens a bracket make it another measure of the thing
// ("(EUR 1,240.00 without surcharge)", "(12% excl. VAT)").
var measureQualifiers = words(`without excluding excl ex net before after incl inc including inclusive exclusive`)

// rates marks the amounts and counts that are rates ("8.33 SDR per kg", "EUR 2.50/kg", "EUR
// 10.80 each"), the parts of a whole ("3 of the 48 racks"), another measure in brackets
// ("(EUR 1,240.00 without surcharge)") and the numbers that name ("dock 4").
func (d *Doc) rates(ms []*mention) {
	// "3 of the 48 racks", "81 of 88": a part and its whole
	for k := 0; k+1 < len(ms); k++ {
		x, y := ms[k], ms[k+1]
		if (x.Kind != Count && x.Kind != Number) || (y.Kind != Count && y.Kind != Number) || x.Role != "" || y.Role != "" {
			continue
		}
		t := x.t1
		if t < len(d.toks) && d.toks[t].low == "of" && (y.t0 == t+1 || y.t0 == t+2 && d.toks[t+1].low == "the") {
			x.Role, y.Role = "part", "whole"
		}
	}
	for _, m := range ms {
		switch m.Kind {
		case Money, Count, Number, Percent:
		default:
			continue
		}
		if m.Kind == Money && m.t0 >= 2 && (d.toks[m.t0-1].low == "at" || d.toks[m.t0-1].low == "@" || d.toks[m.t0-1].low == "x" || d.toks[m.t0-1].low == "×") {
			for _, q := range ms {
				if q.t1 == m.t0-1 && (q.Kind == Count || q.Kind == Number) {
					m.Per = "each" // "600 pallets at EUR 10.80", "600 x EUR 10.80": a unit price
				}
			}
		}
		t := m.t1
		if t >= len(d.toks) {
			continue
		}
		if m.Kind == Number && m.t0 >= 1 && labelNouns[d.toks[m.t0-1].low] && m.Role == "" {
			m.Role = "label" // "24 pallets at dock 4": the number names the dock
		}
		if m.t0 >= 1 && d.toks[m.t0-1].low == "(" && measureQualifiers[d.toks[t].low] && m.Role == "" {
			m.Role = "variant" // "EUR 1,413.60 (EUR 1,240.00 without surcharge)": another measure
		}
		if m.Kind == Money && m.t0 >= 1 && d.toks[m.t0-1].low == "(" && m.Role == "" {
			for _, q := range ms {
				if q.t1 == m.t0-1 && (q.Kind == Number || q.Kind == Count) {
					m.Role = "variant" // "Invoices paid: 31 (EUR 48,210.35)": what the count is worth
				}
			}
		}
		switch l := d.toks[t].low; {
		case l == "each" || l == "apiece":
			m.Per = "each"
		case (l == "a" || l == "an") && t+1 < len(d.toks) && durationUnits[d.toks[t+1].low] != 0:
			m.Per = singular(d.toks[t+1].low) // "EUR 120 a year"
		case (l == "per" || l == "/" && !d.toks[t].sp) && t+1 < len(d.toks) && d.toks[t+1].kind == tWord:
			u := d.toks[t+1].low
			if u == "cent" {
				continue
			}
			if (u == "a" || u == "an") && t+2 < len(d.toks) && d.toks[t+2].kind == tWord {
				u = d.toks[t+2].low
			}
			m.Per = singular(u)
		}
	}
}

// dedupe drops the values that a later, wider value covers (a date read again with its weekday).
func dedupe(ms []*mention) []*mention {
	// n covers m when it spans m's tokens, is of its kind and is longer (or as long and read
	// later); only the mentions that start at most the longest span before m can
	idx := make([]int, len(ms))
	longest := 0
	for i, m := range ms {
		idx[i] = i
		longest = max(longest, m.t1-m.t0)
	}
	sort.SliceStable(idx, func(a, b int) bool { return ms[idx[a]].t0 < ms[idx[b]].t0 })
	covers := func(j, i int) bool {
		n, m := ms[j], ms[i]
		return n.t0 <= m.t0 && n.t1 >= m.t1 && (n.t1-n.t0 > m.t1-m.t0 || j > i) && n.Kind == m.Kind
	}
	keep := make([]bool, len(ms))
	for p, i := range idx {
		covered := false
		for q := p - 1; q >= 0 && ms[idx[q]].t0 >= ms[i].t0-longest && !covered; q-- {
			covered = covers(idx[q], i)
		}
		for q := p + 1; q < len(idx) && ms[idx[q]].t0 == ms[i].t0 && !covered; q++ {
			covered = covers(idx[q], i)
		}
		keep[i] = !covered
	}
	out := make([]*mention, 0, len(ms))
	for i, m := range ms {
		if keep[i] {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t0 < out[j].t0 })
	return out
}

// rawSpans finds mail and web addresses.
func rawSpans(src string) []rawSpan {
	var out []rawSpan
	isLocal := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '+' || c == '%'
	}
	isDomain := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
	}
	for i := 0; i < len(src); i++ {
		switch {
		case src[i] == '@':
			s := i
			for s > 0 && isLocal(src[s-1]) {
				s--
			}
			e := i + 1
			for e < len(src) && isDomain(src[e]) {
				e++
			}
			for e > i+1 && (src[e-1] == '.' || src[e-1] == '-') {
				e--
			}
			if s < i && e > i+1 && strings.Contains(src[i+1:e], ".") {
				out = append(out, rawSpan{s, e, Email})
				i = e - 1
			}
		case src[i] == '/' && (i == 0 || strings.ContainsRune(" \t\n(\"'`[", rune(src[i-1]))) && isPath(src[i:]):
			// a file path: "/events/2026-01-15-offsite/agenda.md" names a file, not a day
			e := i
			for e < len(src) && src[e] > ' ' && src[e] != '"' && src[e] != '`' && src[e] != ')' && src[e] != ']' {
				e++
			}
			for e > i && strings.ContainsRune(".,;:!?'", rune(src[e-1])) {
				e--
			}
			out = append(out, rawSpan{i, e, ""})
			i = e - 1
		case (src[i] == 'h' || src[i] == 'w') && (strings.HasPrefix(src[i:], "http://") || strings.HasPrefix(src[i:], "https://") || strings.HasPrefix(src[i:], "www.")):
			e := i
			for e < len(src) && src[e] > ' ' && src[e] != '<' && src[e] != '>' && src[e] != '"' {
				e++
			}
			for e > i && strings.ContainsRune(".,;:!?)", rune(src[e-1])) {
				e--
			}
			out = append(out, rawSpan{i, e, ""})
			i = e - 1
		}
	}
	// drop an address inside a web address
	return out
}

// isPath reports whether s starts with a file path: "/" then a name, and another "/" or an
// extension before the next white space.
func isPath(s string) bool {
	e := 1
	for e < len(s) && s[e] > ' ' {
		e++
	}
	p := strings.TrimRight(s[:e], ".,;:!?)'\"")
	if len(p) < 3 || !(p[1] >= 'a' && p[1] <= 'z' || p[1] >= 'A' && p[1] <= 'Z' || p[1] >= '0' && p[1] <= '9' || p[1] == '_' || p[1] == '.') {
		return false
	}
	if strings.Count(p, "/") >= 2 {
		return true
	}
	dot := strings.LastIndexByte(p, '.')
	return dot > 1 && dot < len(p)-1 && len(p)-dot <= 5
}

// spanAt returns the raw span that starts at byte offset s.
func (d *Doc) spanAt(s int) (rawSpan, bool) {
	i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].e > s })
	if i < len(d.spans) && d.spans[i].s <= s {
		return d.spans[i], true
	}
	return rawSpan{}, false
}

// ---- names and ids ----

// index is what the reader knows of the names and ids of a workspace, compiled once and shared by
// every reading with the same names and ids.
type index struct {
	key     uint64 // a hash of the names and ids
	names   map[string][]alias
	ids     map[string][]knownID
	classes map[string]NameClass
	known   []KnownName
}

var legalSuffixes = words(`b.v bv n.v nv gmbh ltd ltd. inc inc. llc plc sa s.a ag co corp bvba sarl srl oy ab as a/s kg`)

// indexOf is the compiled index of opt's names and ids (from a small cache).
func indexOf(opt *Options) *index {
	if opt.idx != nil {
		return opt.idx
	}
	var h maphash.Hash
	h.SetSeed(seed)
	for _, n := range opt.Names {
		h.WriteString(n.Key)
		h.WriteByte(1)
		h.WriteString(string(n.Class))
		for _, a := range n.Aliases {
			h.WriteByte(2)
			h.WriteString(a)
		}
		h.WriteByte(0)
	}
	h.WriteByte(3)
	for _, id := range opt.IDs {
		h.WriteString(id)
		h.WriteByte(0)
	}
	key := h.Sum64()
	indexCache.Lock()
	x, ok := indexCache.m[key]
	indexCache.Unlock()
	if !ok {
		x = buildIndex(opt.Names, opt.IDs)
		x.key = key
		indexCache.Lock()
		if len(indexCache.m) >= 64 {
			indexCache.m = map[uint64]*index{}
		}
		indexCache.m[key] = x
		indexCache.Unlock()
	}
	opt.idx = x
	return x
}

var indexCache = struct {
	sync.Mutex
	m map[uint64]*index
}{m: map[uint64]*index{}}

// buildIndex builds the aliases of the known names: the key and the aliases given; for a person
// with several words, the first and the last word alone; for a company, the name without a
// leading article or a legal suffix, and its first word. An alias that two names share is
// dropped, unless it is the whole key of one of them.
func buildIndex(names []KnownName, ids []string) *index {
	x := &index{names: map[string][]alias{}, ids: map[string][]knownID{}, classes: map[string]NameClass{}, known: names}
	for _, n := range names {
		if _, ok := x.classes[n.Key]; !ok {
			x.classes[n.Key] = n.Class
		}
	}
	type cand struct {
		text  string
		key   string
		whole bool
	}
	var cands []cand
	for _, n := range names {
		if n.Key == "" {
			continue
		}
		cands = append(cands, cand{n.Key, n.Key, true})
		for _, a := range n.Aliases {
			cands = append(cands, cand{a, n.Key, true})
		}
		ws := strings.Fields(n.Key)
		switch n.Class {
		case Person:
			if len(ws) >= 2 {
				cands = append(cands, cand{ws[0], n.Key, false}, cand{ws[len(ws)-1], n.Key, false})
			}
		case Company:
			core := ws
			for len(core) > 1 && legalSuffixes[strings.ToLower(strings.TrimRight(core[len(core)-1], ",."))] {
				core = core[:len(core)-1]
			}
			if len(core) > 1 {
				if l := strings.ToLower(core[0]); l == "de" || l == "the" || l == "het" || l == "la" || l == "le" || l == "die" {
					core = core[1:]
				}
			}
			if len(core) < len(ws) {
				cands = append(cands, cand{strings.Join(core, " "), n.Key, false})
			}
			if len(core) > 1 && len(core[0]) >= 4 {
				cands = append(cands, cand{core[0], n.Key, false}) // "Tulpen" for "Tulpen Retail"
			}
		}
	}
	keysOf := map[string]map[string]bool{}
	whole := map[string]string{}
	for _, c := range cands {
		k := strings.ToLower(c.text)
		if keysOf[k] == nil {
			keysOf[k] = map[string]bool{}
		}
		keysOf[k][c.key] = true
		if c.whole {
			if _, ok := whole[k]; !ok {
				whole[k] = c.key
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range cands {
		k := strings.ToLower(c.text)
		key := c.key
		if len(keysOf[k]) > 1 {
			w, ok := whole[k]
			if !ok {
				continue
			}
			key = w
		}
		if seen[k] || len(k) < 2 {
			continue
		}
		seen[k] = true
		ws := phraseWords(c.text)
		if len(ws) == 0 {
			continue
		}
		x.names[ws[0]] = append(x.names[ws[0]], alias{words: ws, key: key, class: x.classes[key]})
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		_, toks := lex(id)
		if len(toks) == 0 {
			continue
		}
		ws := make([]string, len(toks))
		for i, t := range toks {
			ws[i] = t.low
		}
		x.ids[ws[0]] = append(x.ids[ws[0]], knownID{id: id, toks: ws})
	}
	return x
}

// phraseWords are the token keys of a phrase, without hyphens: what matchWords compares.
func phraseWords(p string) []string {
	_, toks := lex(p)
	var out []string
	for _, t := range toks {
		if t.low == "-" {
			continue
		}
		out = append(out, t.key)
	}
	return out
}

func (d *Doc) nameClass(key string) NameClass {
	if c, ok := d.x.classes[key]; ok {
		return c
	}
	return Other
}

// ---- sentences ----

// segment splits the tokens into sentences.
func (d *Doc) segment() {
	toks := d.toks
	if len(toks) == 0 {
		return
	}
	block := 0
	start := 0
	heading := -1 // the sentence whose context the following list items share
	var tableHeader []span
	tableRow := 0
	flush := func(end int) {
		if end <= start {
			return
		}
		s := &sentence{idx: len(d.sents), t0: start, t1: end, block: block, prev: -1}
		ln := d.lines[toks[start].line]
		if n := len(d.sents); n > 0 && d.sents[n-1].block == block {
			s.prev = n - 1
		}
		// a question ends with "?" (before closing quotes or brackets)
		for k := end - 1; k >= start; k-- {
			l := toks[k].low
			if l == "\"" || l == "”" || l == ")" || l == "'" || l == "’" {
				continue
			}
			s.question = l == "?"
			break
		}
		if ln.kind == lTable {
			s.table = true
			cells := d.cells(start, end)
			if isSeparatorRow(d, start, end) {
				start = end
				return
			}
			if tableRow == 0 {
				tableHeader = cells
			} else {
				s.header = tableHeader
			}
			tableRow++
		} else {
			tableRow = 0
		}
		if heading >= 0 && (ln.kind == lBullet || ln.kind == lTable || ln.kind == lProse || ln.kind == lQuote) {
			s.ctx = append(s.ctx, heading)
		}
		d.sents = append(d.sents, s)
		if n := toks[end-1].line; ln.kind == lHeading || toks[end-1].low == ":" || !d.scheduleLine(n) && d.scheduleLine(n+1) {
			heading = s.idx // and the line over a schedule ("Clinic schedule, Thursday 15 October")
		}
		start = end
	}
	for k := 1; k <= len(toks); k++ {
		if k == len(toks) {
			flush(k)
			break
		}
		a, b := &toks[k-1], &toks[k]
		if a.line != b.line {
			la, lb := d.lines[a.line], d.lines[b.line]
			blank := false
			for x := a.line + 1; x < b.line; x++ {
				if d.lines[x].kind == lBlank {
					blank = true
				}
			}
			structured := func(k lineKind) bool { return k == lBullet || k == lTable || k == lHeading || k == lQuote }
			if blank || structured(lb.kind) || structured(la.kind) || la.endPunct || la.colon || la.reported != lb.reported || d.scheduleLine(b.line) {
				flush(k)
				if blank {
					block++
					if lb.kind != lBullet && lb.kind != lTable {
						heading = -1
					}
				}
				if lb.kind == lHeading {
					heading = -1
				}
				continue
			}
			if isSentenceEnd(d, k) {
				flush(k)
			}
			continue
		}
		if d.lines[a.line].kind != lTable && isSentenceEnd(d, k) {
			flush(k) // a table row is one sentence ("| De Kaasmakers B.V. | 10:30 |")
		}
	}
	for _, s := range d.sents {
		d.markCont(s)
	}
}

// isSentenceEnd reports whether a sentence ends before token k (on the same line or across a
// wrapped line).
func isSentenceEnd(d *Doc, k int) bool {
	toks := d.toks
	a, b := &toks[k-1], &toks[k]
	if a.low == ";" {
		return true
	}
	p := k - 1
	// closing quotes and brackets after the period
	for p > 0 && (toks[p].low == "\"" || toks[p].low == "”" || toks[p].low == ")" || toks[p].low == "’") && !toks[p].sp {
		p--
	}
	end := toks[p].low
	if end != "." && end != "!" && end != "?" && end != "…" {
		return false
	}
	if !b.sp {
		return false
	}
	if end == "." && p > 0 && toks[p-1].low == "m" && b.kind == tWord {
		if _, zone := zoneWords[b.low]; zone {
			return false // "11:00 a.m. EDT"
		}
	}
	if end == "." && p > 0 {
		w := toks[p-1]
		if !w.sp || p-1 == 0 || true {
			if w.kind == tWord && (abbreviations[w.low] || (len(w.low) == 1 && w.low != "i" && d.src[w.s] >= 'A' && d.src[w.s] <= 'Z')) {
				return false
			}
		}
	}
	// the next token starts a sentence: a capital, a digit, a quote or a bracket; after "?" or "!"
	// any word (chat writes "can you approve PO-441? it's EUR 3.2k")
	r := d.src[b.s]
	return (end == "?" || end == "!") && b.kind == tWord || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || b.low == "\"" || b.low == "“" || b.low == "(" || b.low == "*" || r >= 0x80
}

// cells are the token spans of the cells of a table row.
func (d *Doc) cells(t0, t1 int) []span {
	var out []span
	s := -1
	for k := t0; k < t1; k++ {
		if d.toks[k].low == "|" {
			if s >= 0 {
				out = append(out, span{s, k})
			}
			s = k + 1
		}
	}
	if s >= 0 && s < t1 {
		out = append(out, span{s, t1})
	}
	return out
}

func isSeparatorRow(d *Doc, t0, t1 int) bool {
	for k := t0; k < t1; k++ {
		if l := d.toks[k].low; l != "|" && l != "-" && l != ":" && l != "–" {
			return false
		}
	}
	return true
}

// contStarters start a sentence that continues the previous one.
var contStarters = words(`or and also plus but otherwise alternatively else failing instead rather though backup fallback`)

// markCont marks a sentence that continues the previous one.
func (d *Doc) markCont(s *sentence) {
	if s.prev < 0 {
		return
	}
	t := d.toks[s.t0]
	for _, c := range corrections {
		if d.startsWith(s.t0, s.t1, c) {
			s.cont, s.corr = true, true
			return
		}
	}
	if d.anaphor(s.t0) || contStarters[t.low] {
		s.cont = true
		return
	}
	// "Old: 010 555 0140. New: 010 555 0199.": a label of a change goes on with the sentence before
	if t.low == "old" || t.low == "new" || t.low == "now" || t.low == "was" || t.low == "previously" {
		// "Old number: …", up to two words before the colon
		for k := s.t0 + 1; k < s.t1 && k <= s.t0+3; k++ {
			if d.toks[k].low == ":" {
				s.cont = true
				return
			}
			if d.toks[k].kind != tWord {
				break
			}
		}
	}
	for k, n := s.t0+1, 0; k < s.t1 && n < 4; k++ {
		if d.toks[k].kind != tWord {
			break
		}
		n++
		w := d.toks[k].low
		if (w == "her" || w == "him" || w == "his" || w == "they" || w == "their" || w == "it" && writerSubjects[t.low]) && d.anaphor(k) {
			// "You can reach her at …", "I've reactivated it" (the writer acting on what the
			// sentence before names; not "HavenCo gets it from us", a party of its own)
			s.cont = true
			return
		}
	}
	if d.replaces(s) {
		// "If Polderveld calls before noon, 12:00 instead.": a value that stands in for one of
		// the sentence before is about what that sentence was about
		s.cont, s.condCont = true, openers[t.low]
		return
	}
	if openers[t.low] {
		// "If that's not right, try 17:00", "If Dirk is back in time, it stays on Thursday": an
		// anaphor in the condition or at the start of the main clause
		for k := s.t0 + 1; k+1 < s.t1; k++ {
			if d.toks[k].low == "," {
				if d.anaphor(k + 1) {
					s.cont, s.condCont = true, true
					return
				}
				break
			}
			if d.anaphor(k) && d.toks[k].low != "there" {
				s.cont, s.condCont = true, true
				return
			}
		}
	}
}

// footnotes makes conditional what a sentence marked with "*" puts forward, when a footnote (a
// sentence that starts with "*") sets a condition: "The offsite is confirmed for Friday.*" over
// "* Subject to the venue receiving our deposit."
func (d *Doc) footnotes() {
	cond := false
	footnote := func(s *sentence) int { // the first word of a footnote, or -1
		switch {
		case d.toks[s.t0].low == "*" && s.t0+1 < s.t1:
			return s.t0 + 1
		case d.toks[s.t0].s == d.lines[d.toks[s.t0].line].marker && strings.HasPrefix(strings.TrimLeft(d.src[d.lines[d.toks[s.t0].line].s:d.toks[s.t0].s], " \t"), "*"):
			return s.t0 // "* Subject to …", read as a list item: its "*" is the line's marker
		}
		return -1
	}
	for _, s := range d.sents {
		if k := footnote(s); k >= 0 && d.conditionAt(k, s.t1) {
			cond = true
		}
	}
	if !cond {
		return
	}
	for _, s := range d.sents {
		marked := -1
		for k := s.t0 + 1; k < s.t1; k++ {
			if d.toks[k].low == "*" && !d.toks[k].sp {
				marked = k
			}
		}
		if s.t1 < len(d.toks) && d.toks[s.t1].low == "*" && !d.toks[s.t1].sp {
			marked = s.t1 // "… on Friday 27 March.*": the mark after the full stop
		}
		if marked < 0 || footnote(s) >= 0 {
			continue
		}
		for i := range s.items {
			if m := s.items[i].m; m != nil && m.Stance.puts() && s.items[i].t0 < marked {
				s.items[i].stance = Conditional
				m.Stance, m.Trigger = Conditional, "*"
				m.TriggerStart, m.TriggerEnd = d.toks[marked].s, d.toks[marked].e
			}
		}
	}
}

// scheduleLine reports whether line n is an entry of a schedule written without bullets: it
// starts with a time of day ("09:00 Grace Okafor, check-up"), and so does the line before or the
// line after it. Such a line starts a sentence of its own.
func (d *Doc) scheduleLine(n int) bool {
	starts := func(n int) bool {
		if n < 0 || n >= len(d.lines) {
			return false
		}
		l := d.lines[n]
		t := strings.TrimLeft(d.src[l.s:l.e], " \t")
		return len(t) >= 5 && isDigit(t[0]) && (t[1] == ':' && isDigit(t[2]) && isDigit(t[3]) || isDigit(t[1]) && (t[2] == ':' || t[2] == '.') && isDigit(t[3]) && isDigit(t[4]))
	}
	return starts(n) && (starts(n-1) || starts(n+1))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// topicWords open a leading clause that names the sentence's topic.
var topicWords = words(`for regarding re concerning about`)

// topicClause reports whether the sentence opens with a topic clause of its own and no value:
// "For billing,", "Regarding the Tulpen order,", "As for viewings,".
func (d *Doc) topicClause(s *sentence) bool {
	if len(s.clauses) < 2 {
		return false
	}
	c := s.clauses[0]
	if s.clauses[1].start != "," || d.valueIn(s, c.i0, c.i1) || c.i1-c.i0 > 6 {
		return false
	}
	opens := func(c clause) bool {
		k := c.i0
		for k < c.i1 && (!s.items[k].word || d.toks[s.items[k].t0].low == "and" || d.toks[s.items[k].t0].low == "but") {
			k++
		}
		if k >= c.i1 || s.items[k].m != nil {
			return false
		}
		t := d.toks[s.items[k].t0].low
		return topicWords[t] || t == "as" && k+1 < c.i1 && d.toks[s.items[k+1].t0].low == "for"
	}
	if !opens(c) {
		return false
	}
	for _, o := range s.clauses[1:] {
		if opens(o) {
			return false // "For billing, ring X, and for support, ring Y": a topic each
		}
	}
	return true
}

// writerSubjects are the writer as a sentence's subject.
var writerSubjects = words(`i i've i'm i'll i'd we we've we're we'll we'd`)

// replaces reports whether sentence s says "instead" (not "instead of"): what it puts forward
// stands in for something the sentence before named.
func (d *Doc) replaces(s *sentence) bool {
	for k := s.t0; k < s.t1; k++ {
		if d.toks[k].low == "instead" && (k+1 >= s.t1 || d.toks[k+1].low != "of") {
			return true
		}
	}
	return false
}

// startsWith reports whether tokens t0.. start with the words of phrase.
func (d *Doc) startsWith(t0, t1 int, phrase string) bool {
	j := t0
	for phrase != "" {
		w, rest, _ := strings.Cut(phrase, " ")
		if j >= t1 || d.toks[j].low != w {
			return false
		}
		phrase = rest
		j++
	}
	return true
}

// ---- items and clauses ----

func (d *Doc) items(s *sentence) {
	mi := sort.Search(len(d.ments), func(i int) bool { return d.ments[i].t0 >= s.t0 })
	s.items = make([]item, 0, s.t1-s.t0)
	for k := s.t0; k < s.t1; {
		if mi < len(d.ments) && d.ments[mi].t0 == k {
			m := d.ments[mi]
			m.item = len(s.items)
			s.items = append(s.items, item{t0: m.t0, t1: m.t1, m: m, word: true})
			k = m.t1
			mi++
			continue
		}
		t := d.toks[k]
		s.items = append(s.items, item{t0: k, t1: k + 1, word: t.kind != tPunct, key: t.key})
		k++
	}
	if s.table {
		// a value's column
		for i := range s.items {
			if m := s.items[i].m; m != nil {
				col := -1
				for k := s.t0; k < m.t0; k++ {
					if d.toks[k].low == "|" {
						col++
					}
				}
				if d.toks[s.t0].low != "|" {
					col++
				}
				m.col = col
			}
		}
	}
}

// clauses splits a sentence's items into clauses at commas, colons, brackets, dashes and the
// words that start a clause.
func (d *Doc) clauses(s *sentence) {
	cur := clause{i0: 0, cont: -1, own: true}
	parenOf := -1
	var out []clause
	closeAt := func(i int, start string, paren bool) {
		cur.i1 = i
		if cur.i1 > cur.i0 {
			out = append(out, cur)
		}
		cur = clause{i0: i, start: start, paren: paren, cont: -1}
	}
	for i := range s.items {
		it := &s.items[i]
		if it.m != nil {
			continue
		}
		t := d.toks[it.t0]
		if (t.low == ":" || t.low == ",") && !t.sp && it.t0 > 0 && it.t0+1 < len(d.toks) && d.toks[it.t0-1].kind == tNum &&
			d.toks[it.t0+1].kind == tNum && !d.toks[it.t0+1].sp {
			continue // "1:1", "3,5": inside a token, not between clauses
		}
		switch {
		case t.low == "," || t.low == ":" || t.low == ";" || t.low == "—" || t.low == "|" ||
			((t.low == "-" || t.low == "–") && t.sp && i+1 < len(s.items) && d.toks[s.items[i+1].t0].sp):
			closeAt(i+1, t.low, cur.paren)
		case t.low == "(" || t.low == "[":
			parenOf = len(out)
			closeAt(i+1, "(", true)
		case t.low == ")" || t.low == "]":
			closeAt(i+1, ")", false)
			if parenOf >= 0 {
				cur.cont = parenOf
			}
			parenOf = -1
		case t.kind == tWord && clauseBreaks[t.low] && i > 0 && !(t.low == "yet" && s.items[i-1].m == nil && negators[d.toks[s.items[i-1].t0].low]):
			// ("not yet booked": no new clause)
			closeAt(i, t.low, cur.paren)
		}
	}
	closeAt(len(s.items), "", false)
	s.clauses = out
	for ci := range s.clauses {
		c := &s.clauses[ci]
		for i := c.i0; i < c.i1; i++ {
			s.items[i].clause = ci
		}
		c.greeting = d.isGreeting(s, c)
		if ci == 0 || s.clauses[ci-1].greeting {
			c.own = true
			c.cont = -1
			continue
		}
		if c.start == ":" && s.clauses[ci-1].start != ":" && d.shortValue(s, *c) {
			c.own, c.cont = false, ci-1 // "Strongest region: north": the value of its label
			continue
		}
		c.own = d.ownSubject(s, c)
		if p := s.clauses[ci-1]; !c.own && c.cont < 0 && !c.paren && p.paren && p.start == "(" && p.anchor >= 0 {
			// after a bracket: the next item of a list is its anchor's sibling ("A (09:00), B
			// (11:00) and C (14:00)"), other words go on with the anchor ("EUR 10.80 each (total
			// EUR 6,480) to Noorderlaan 147")
			a := s.clauses[p.anchor]
			switch {
			case !d.conjunctStart(s, c):
				c.cont = p.anchor
			case a.own || a.cont < 0:
				c.own = true
				c.cont = -1
				continue
			default:
				c.cont = a.cont
			}
		}
		if p := s.clauses[ci-1]; !c.own && c.cont < 0 && !c.paren && !p.paren && c.start == "," {
			// "140 cartons of gloves, 36 cartons of masks": items of one list, each about itself
			if a, b := d.leadValue(s, p), d.leadValue(s, *c); a != nil && b != nil && a.Kind == b.Kind && d.hasWordAfterValue(s, *c) {
				if p.cont < 0 {
					c.own = true
					continue
				}
				c.cont = p.cont
			}
		}
		if p := s.clauses[ci-1]; !c.own && c.cont < 0 && ci >= 2 && c.start == "," && d.opensCondition(s, p) {
			c.cont = ci - 2 // "The cut-off, if Bram agrees, is 14:30": past the aside
		}
		if !c.own && c.cont < 0 {
			c.cont = ci - 1
		}
		if c.paren && c.start == "(" {
			c.anchor = ci - 1 // a bracket is about what stands before it: "VF-403 (new ETA 15:00)"
		}
	}
}

// leadValue is the value a clause starts with (after punctuation), or nil.
func (d *Doc) leadValue(s *sentence, c clause) *mention {
	for i := c.i0; i < c.i1; i++ {
		if m := s.items[i].m; m != nil {
			return m
		}
		if s.items[i].word {
			return nil
		}
	}
	return nil
}

// hasWordAfterValue reports whether a clause that starts with a value has a word of its own after
// it ("36 cartons of masks"), not only the value ("09:00, 11:00").
func (d *Doc) hasWordAfterValue(s *sentence, c clause) bool {
	seen := false
	for i := c.i0; i < c.i1; i++ {
		it := s.items[i]
		if it.m != nil {
			seen = true
			continue
		}
		if seen && it.word && !functionWords[d.toks[it.t0].low] {
			return true
		}
	}
	return false
}

// conjunctStart reports whether clause c starts a list's next item: a comma, "and" or "or".
func (d *Doc) conjunctStart(s *sentence, c *clause) bool {
	if c.start == "," || c.start == ";" {
		return true
	}
	for i := c.i0; i < c.i1; i++ {
		if s.items[i].m != nil {
			return false
		}
		switch d.toks[s.items[i].t0].low {
		case ",", ";", ")":
			continue
		case "and", "or":
			return true
		}
		return false
	}
	return false
}

// greetings start a clause that only addresses somebody.
var greetings = words(`hi hello hey dear morning afternoon evening thanks thank cheers regards best`)

func (d *Doc) isGreeting(s *sentence, c *clause) bool {
	n := 0
	first := true
	for i := c.i0; i < c.i1; i++ {
		it := s.items[i]
		if !it.word {
			continue
		}
		n++
		if first {
			if it.m != nil || !greetings[d.toks[it.t0].low] {
				return false
			}
			first = false
		}
	}
	return n > 0 && n <= 4
}

// personalPronouns are subjects of their own; alternativeStarts start a clause that is about what
// the one before it is about, whatever its subject ("…, or we could do 16:15").
var (
	personalPronouns  = words(`i we you he she they`)
	alternativeStarts = words(`or otherwise alternatively else nor`)
)

// determiners may stand before a clause's subject.
var determiners = words(`the a an our your their his her its my this that these those each every all both`)

// ownSubject reports whether a clause has a subject of its own: its first word (after the word
// that started it) is a content word, not a value, a name, an anaphor or a function word.
// A clause without one continues the clause before it: it is about the same thing.
func (d *Doc) ownSubject(s *sentence, c *clause) bool {
	for i := c.i0; i < c.i1; i++ {
		it := s.items[i]
		if !it.word {
			continue
		}
		if it.m != nil {
			return false
		}
		w := d.toks[it.t0].low
		if i == c.i0 && alternativeStarts[w] {
			return false // an alternative is about what the clause before it is about
		}
		if i == c.i0 {
			for _, cw := range clauseCorrections {
				if d.startsWith(it.t0, s.t1, cw) {
					return false // a correction is about what it corrects
				}
			}
		}
		if i == c.i0 && clauseBreaks[w] {
			continue
		}
		if personalPronouns[w] {
			return true
		}
		if determiners[w] && i+1 < c.i1 && s.items[i+1].word && s.items[i+1].m == nil {
			continue
		}
		if d.anaphor(it.t0) || functionWords[w] || d.triggerAt(s, i) != nil {
			return false
		}
		return true
	}
	return false
}

// ---- stances ----

// stances sets the stance of every item of a sentence.
func (d *Doc) stances(s *sentence) {
	ts, te := -1, -1 // the byte span of the trigger being applied
	set := func(i int, st Stance, trig string) {
		it := &s.items[i]
		if it.stance == "" || stancePriority[st] > stancePriority[it.stance] {
			it.stance, it.trigger = st, trig
			it.trigS, it.trigE = ts, te
		}
	}
	for i := range s.items {
		s.items[i].stance = Asserted
		s.items[i].trigS, s.items[i].trigE = -1, -1
	}
	// reported: quoted mail, quotation marks
	if d.lines[d.toks[s.t0].line].reported {
		for i := range s.items {
			set(i, Reported, ">")
		}
	}
	d.quotes(s, set)
	if s.question {
		for i := range s.items {
			set(i, Question, "?")
		}
	}
	// a weak past is superseded only by a now-word in its own clause or one next to it, or at the
	// start of the next sentence when that goes on with this one ("The slot was 09:00; it is now
	// 10:00."): "the Q3 total was 200, and the new target for Q4 is 250" keeps 200
	nowIn := make([]bool, len(s.clauses)+1)
	hasChange := false
	for _, it := range s.items {
		if it.m == nil && it.word {
			w := d.toks[it.t0].low
			if nowWords[w] && (w != "before" || it.t0+1 >= len(d.toks) || d.toks[it.t0+1].kind == tPunct) {
				nowIn[it.clause] = true // "it was Wednesday before", not "45 min before the unit recovered"
			}
			if changeVerbs[w] {
				hasChange = true
			}
		}
	}
	if n := s.idx + 1; n < len(d.sents) && d.sents[n].cont && !d.sents[n].corr {
		ns, words := d.sents[n], 0
		for t := ns.t0; t < ns.t1 && words < scopeWords; t++ {
			if d.toks[t].kind == tWord {
				words++
				if nowWords[d.toks[t].low] {
					nowIn[len(s.clauses)] = true
				}
			}
		}
	}
	nearNow := func(ci int) bool {
		return nowIn[ci] || ci > 0 && nowIn[ci-1] || nowIn[ci+1]
	}
	for i := 0; i < len(s.items); i++ {
		tr := d.triggerAt(s, i)
		if tr == nil {
			it := s.items[i]
			if c := s.clauses[it.clause]; it.m == nil && weakPast[d.toks[it.t0].low] && !(i+1 < len(s.items) && s.items[i+1].m == nil && changeVerbs[d.toks[s.items[i+1].t0].low]) &&
				(nearNow(it.clause) || c.paren && c.start == "(" && i == c.i0) { // "(was Tuesdays at 14:00)"
				ts, te = d.toks[it.t0].s, d.toks[it.t0].e
				d.scopeFwd(s, i+1, Past, d.toks[it.t0].low, set)
				ts, te = -1, -1
			}
			continue
		}
		end := tr.end
		t := tr.t
		if t.stance == "" {
			i = end - 1
			continue
		}
		if t.stance == Reported && t.words == "according to" {
			if !d.personAt(s, end) {
				i = end - 1
				continue
			}
		} else if t.stance == Reported && (!d.reportingSubject(s, i) || nounlike[t.words] && d.reportNoun(s, end)) {
			i = end - 1
			continue
		}
		name := t.words
		c := s.clauses[s.items[i].clause]
		ts, te = d.toks[s.items[i].t0].s, d.toks[s.items[end-1].t1-1].e
		switch {
		case t.stance == Reported:
			// to the end of the sentence, up to a terminator; a short reporting clause after a
			// comma ("…, Dirk said") reports the clause before it
			j := end
			for ; j < len(s.items); j++ {
				if s.items[j].m == nil && terminators[d.toks[s.items[j].t0].low] {
					break
				}
				set(j, Reported, name)
			}
			if end >= c.i1 && s.items[i].clause > 0 && i-c.i0 <= 3 {
				p := s.clauses[s.items[i].clause-1]
				for k := p.i0; k < p.i1; k++ {
					set(k, Reported, name)
				}
			}
		case t.dir&adj != 0:
			if t.stance == Hedged && end < len(s.items) && s.items[end].m != nil && !measured(s.items[end].m.Kind) {
				break // "about INV-2041", "under Dirk's name": no bound on an id or a name
			}
			if end < len(s.items) && s.items[end].m != nil {
				set(end, t.stance, name)
				// "instead of Wednesday 14 January at 16:00": the day's time goes with it
				k := end + 1
				if k < len(s.items) && s.items[k].m == nil && (d.toks[s.items[k].t0].low == "at" || d.toks[s.items[k].t0].low == ",") {
					k++
				}
				if x, y := s.items[end].m, k < len(s.items) && s.items[k].m != nil; y {
					if z := s.items[k].m; (x.Kind == Date && z.Kind == Time) || (x.Kind == Time && z.Kind == Date) {
						set(k, t.stance, name)
					}
				}
			} else if end+1 < len(s.items) && s.items[end+1].m != nil && s.items[end].m == nil && (d.toks[s.items[end].t0].low == "of" || d.toks[s.items[end].t0].low == "the" || d.toks[s.items[end].t0].low == ".") {
				// "approx. EUR 2,000": the abbreviation's dot
				set(end+1, t.stance, name)
			}
		default:
			set := set
			if t.dir&stat != 0 {
				all := set
				set = func(i int, st Stance, trig string) {
					if m := s.items[i].m; m == nil || m.Kind == Status {
						all(i, st, trig)
					}
				}
			}
			if t.dir&fwd != 0 {
				d.scopeFwd(s, end, t.stance, name, set)
				// a clause that holds only the trigger ("As far as I know, …", "Probably, …")
				// looks forward a clause
				label := t.stance == Past && d.toks[s.items[c.i1-1].t0].low == ":" && !d.valueIn(s, c.i0, c.i1) && c.i1-c.i0 <= 4
				if (d.onlyTrigger(s, c, i, end) || label) && s.items[i].clause+1 < len(s.clauses) &&
					(t.stance == Hedged || t.stance == Conditional || t.stance == Past && d.toks[s.items[c.i1-1].t0].low == ":") {
					// ("Old number: 0182 555 0100": the label's value)
					n := s.clauses[s.items[i].clause+1]
					for k := n.i0; k < n.i1; k++ {
						set(k, t.stance, name)
					}
				}
			}
			if t.dir&back == 0 && t.stance == Hedged && s.items[i].clause > 0 && s.items[i].clause == len(s.clauses)-1 && d.onlyTrigger(s, c, i, end) {
				// "…, maybe." at the end of a sentence: a hedge that has nothing after it looks back
				p := s.clauses[s.items[i].clause-1]
				for k := p.i0; k < p.i1; k++ {
					set(k, t.stance, name)
				}
			}
			if t.dir&back != 0 {
				back := set
				if t.stance == Negated && (d.valueAfter(s, end) || d.predicateBefore(s, i)) {
					// "VF-403 is not delayed": the flight is the subject, the status is denied
					// ("INV-2041 is not the credit note" denies the id)
					back = func(i int, st Stance, trig string) {
						if m := s.items[i].m; m == nil || (m.Kind != ID && m.Kind != Name) {
							set(i, st, trig)
						}
					}
				}
				d.scopeBack(s, i, t.stance, name, back)
				// a clause that holds only the trigger ("…, I think." "(tbc)") looks back a clause
				// ("PO-2026-204 or -205, can't remember": and the clauses that one goes on with)
				if d.onlyTrigger(s, c, i, end) && s.items[i].clause > 0 {
					for pi, n := s.items[i].clause-1, 0; pi >= 0 && n < 3; pi, n = s.clauses[pi].cont, n+1 {
						p := s.clauses[pi]
						for k := p.i0; k < p.i1; k++ {
							set(k, t.stance, name)
						}
						if p.own || t.stance != Hedged {
							break
						}
					}
				}
			}
			if t.dir&sent != 0 {
				for k := range s.items {
					set(k, t.stance, name) // "…, or it will be once …", "the approval was withdrawn"
				}
			}
			if t.stance == Conditional {
				d.conditionalScope(s, i, end, t, set)
			}
		}
		i = end - 1
	}
	ts, te = -1, -1
	d.unconfirmed(s, set)
	if s.table {
		// a column headed "Old", "Previous", "Was": its values are the old ones
		for i := range s.items {
			if m := s.items[i].m; m != nil && m.col >= 0 && m.col < len(s.header) {
				for k := s.header[m.col].t0; k < s.header[m.col].t1; k++ {
					if oldHeads[d.toks[k].low] {
						set(i, Past, d.toks[k].low)
						break
					}
				}
			}
		}
	}
	d.futureStatuses(s, set)
	d.changes(s, hasChange, set)
	d.alternatives(s, set)
	for i := range s.items {
		if m := s.items[i].m; m != nil {
			m.Stance, m.Trigger = s.items[i].stance, s.items[i].trigger
			m.TriggerStart, m.TriggerEnd = s.items[i].trigS, s.items[i].trigE
		}
	}
}

// futureWords before a status say it does not hold yet ("will be approved", "should be paid").
var futureWords = [][]string{{"will", "be"}, {"should", "be"}, {"should", "get"}, {"will", "be", "getting"}, {"to", "be"}, {"going", "to", "be"}, {"expected", "to", "be"},
	{"due", "to", "be"}, {"will", "get"}, {"would", "be"}, {"gets"}, {"will"}, {"to", "get"}}

// futureStatuses hedges a status said to come ("INV-2041 will be approved"): it is not one yet.
func (d *Doc) futureStatuses(s *sentence, set func(int, Stance, string)) {
	for i, it := range s.items {
		if it.m == nil || it.m.Kind != Status {
			continue
		}
		for _, fw := range futureWords {
			j := i - len(fw)
			if j < 0 {
				continue
			}
			ok := true
			for k, w := range fw {
				x := s.items[j+k]
				if x.m != nil || d.toks[x.t0].low != w {
					ok = false
					break
				}
			}
			if ok {
				set(i, Hedged, strings.Join(fw, " "))
				break
			}
		}
	}
}

// triggerMatch is a trigger found at an item: the trigger and the item after it.
type triggerMatch struct {
	t   *trigger
	end int
}

// triggerAt matches the longest trigger that starts at item i.
func (d *Doc) triggerAt(s *sentence, i int) *triggerMatch {
	it := s.items[i]
	if it.m != nil || !it.word {
		return nil
	}
	var best *triggerMatch
	for _, e := range d.r.triggerIndex[it.key] {
		j := i
		ok := true
		for k := 0; k < len(e.words); k++ {
			w := e.words[k]
			for k > 0 && j < len(s.items) && s.items[j].m == nil && d.toks[s.items[j].t0].low == "-" {
				j++
			}
			if j < len(s.items) && s.items[j].m != nil && k > 0 {
				// a trigger that holds a value's words ("not 100% sure"): the value's text is the
				// trigger's next words run together
				text, run := strings.ToLower(s.items[j].m.Text), ""
				for k < len(e.words) && len(run) < len(text) {
					run += e.words[k]
					k++
				}
				k--
				if run != text {
					ok = false
					break
				}
				j++
				continue
			}
			if j >= len(s.items) || s.items[j].m != nil || (s.items[j].key != w && d.toks[s.items[j].t0].low != w) {
				ok = false
				break
			}
			j++
		}
		if ok && (best == nil || j > best.end) {
			best = &triggerMatch{t: e.t, end: j}
		}
	}
	if best != nil && best.t.words == "may" {
		// "May" the month is read as a date; lower-case "may" before a number is not a hedge either
		if d.src[d.toks[it.t0].s] == 'M' && i > 0 {
			return nil
		}
	}
	return best
}

// scopeFwd applies a stance to the items from i to the end of their clause (at most scopeWords
// words, up to a terminator).
func (d *Doc) scopeFwd(s *sentence, i int, st Stance, name string, set func(int, Stance, string)) {
	if i >= len(s.items) {
		return
	}
	ci := s.items[i].clause
	if i > 0 && s.items[i-1].clause != ci {
		return // the trigger ended its clause
	}
	n := 0
	for j := i; j < len(s.items); j++ {
		if s.items[j].clause != ci {
			// "did not post or send the password": a negation covers the verb joined by "or"
			c := s.clauses[s.items[j].clause]
			if st != Negated || c.own || (c.start != "or" && c.start != "nor") {
				return
			}
			ci = s.items[j].clause
		}
		it := s.items[j]
		if it.m == nil && terminators[d.toks[it.t0].low] && !(d.toks[it.t0].low == "yet" && j > 0 && s.items[j-1].m == nil && negators[d.toks[s.items[j-1].t0].low]) {
			return // not "not yet booked"
		}
		if st == Past && it.m == nil && pastEnds[d.toks[it.t0].low] {
			return // "originally planned for 14:00 will now start at 15:00"
		}
		if it.word {
			n++
			if n > scopeWords {
				return
			}
		}
		set(j, st, name)
	}
}

// oldHeads head a table column of old values.
var oldHeads = words(`old previous was former prior before`)

// pastEnds end the scope of a past trigger: what follows them is the value now.
var pastEnds = words(`now new currently instead today`)

// predicateBefore reports whether a value other than a name or an id stands before item i in its
// clause: "VF-88402 was scanned as delivered by mistake" denies the status, not the shipment.
func (d *Doc) predicateBefore(s *sentence, i int) bool {
	for j := i - 1; j >= 0 && s.items[j].clause == s.items[i].clause; j-- {
		if m := s.items[j].m; m != nil && m.Kind != Name && m.Kind != ID {
			return true
		}
	}
	return false
}

// valueAfter reports whether a value follows item i in its clause.
func (d *Doc) valueAfter(s *sentence, i int) bool {
	if i >= len(s.items) {
		return false
	}
	for j := i; j < len(s.items) && s.items[j].clause == s.items[i].clause; j++ {
		if s.items[j].m != nil {
			return true
		}
	}
	return false
}

// scopeBack applies a stance to the items before i in its clause (at most scopeWords words).
func (d *Doc) scopeBack(s *sentence, i int, st Stance, name string, set func(int, Stance, string)) {
	ci := s.items[i].clause
	n := 0
	for j := i - 1; j >= 0 && s.items[j].clause == ci; j-- {
		if s.items[j].word {
			n++
			if n > scopeWords {
				return
			}
		}
		set(j, st, name)
	}
}

// triggerFillers may stand beside a trigger in a clause of its own ("if I remember correctly").
var triggerFillers = words(`correctly right rightly exactly though then now i i'm am we we're are`)

// onlyTrigger reports whether the clause c holds nothing but the trigger at items i..end (and
// punctuation, and triggerFillers).
func (d *Doc) onlyTrigger(s *sentence, c clause, i, end int) bool {
	for k := c.i0; k < c.i1; k++ {
		if k >= i && k < end {
			continue
		}
		if s.items[k].word && !(k == c.i0 && clauseBreaks[d.toks[s.items[k].t0].low]) && !(s.items[k].m == nil && triggerFillers[d.toks[s.items[k].t0].low]) {
			return false
		}
	}
	return true
}

// openers are conditional triggers that make a whole sentence conditional when it starts with
// them ("If the truck is late, the cut-off is 16:15"), and the clause before them when they follow
// it without a comma ("the cut-off is 16:15 if you go via Antwerp").
var openers = words(`if unless assuming once suppose supposing`)

// conditionWords are conditional triggers of more than one word that act as openers.
var conditionWords = map[string]bool{"in case": true, "provided that": true, "providing that": true, "as long as": true,
	"only if": true, "subject to": true, "as soon as": true, "on condition that": true}

var fallbacks = words(`otherwise alternatively failing`)

// unconfirmed hedges the values a confirmation that has not come is about: those of the clause
// that says so and of the clauses it continues, and, when it begins with "but", of the clause
// before it ("It arrives on Friday at 10:00, but the carrier hasn't confirmed yet"). The status
// keeps its own stance.
func (d *Doc) unconfirmed(s *sentence, set func(int, Stance, string)) {
	for _, it := range s.items {
		m := it.m
		if m == nil || m.Kind != Status || m.axis != "confirmation" ||
			!(m.Value == "confirmed" && it.stance == Negated || m.Value == "unconfirmed" && it.stance == Asserted) {
			continue
		}
		value := func(k int) bool {
			x := s.items[k].m
			return x != nil && x.Kind != Status && x.Kind != Name && x.Kind != ID
		}
		// a clause with a value of its own is the one said to be unconfirmed ("the 14:30 slot is
		// not confirmed yet"); one without goes on to the clauses it continues
		hedge := func(ci int) {
			for ; ci >= 0; ci = s.clauses[ci].cont {
				c, found := s.clauses[ci], false
				for k := c.i0; k < c.i1; k++ {
					if value(k) {
						set(k, Hedged, "not confirmed")
						found = true
					}
				}
				if found {
					return
				}
			}
		}
		ci := it.clause
		hedge(ci)
		if c := s.clauses[ci]; ci > 0 && (c.start == "but" || c.start == "though" || c.start == "although") {
			hedge(ci - 1)
		}
	}
}

// bareDenial reports whether clause ci holds nothing but the value at item at and the words of
// the trigger that denies it ("14:30 is wrong;", "not Thursday,").
func (d *Doc) bareDenial(s *sentence, ci, at int) bool {
	c, it := s.clauses[ci], s.items[at]
	if it.trigS < 0 {
		return false
	}
	for k := c.i0; k < c.i1; k++ {
		if k == at || !s.items[k].word {
			continue
		}
		if t := d.toks[s.items[k].t0]; t.s < it.trigS || t.e > it.trigE {
			return false
		}
	}
	return true
}

// unitKind reports whether a kind carries a unit a bare number beside it may share.
func unitKind(k Kind) bool {
	return k == Percent || k == Money || k == Count || k == Duration
}

// inUnitOf makes the bare number n a value of u's kind and unit: a duration's number is scaled by
// u's ("2-3 days": 2 days in seconds).
func inUnitOf(n, u *mention) {
	if u.Kind == Duration {
		if w, err := decimal.NewFromString(strings.ReplaceAll(digitsOf(u.Text), ",", ".")); err == nil && !w.IsZero() {
			n.num = n.num.Mul(u.num.Div(w))
		}
	}
	n.Kind, n.unit = u.Kind, u.unit
	n.Value = restate(n, u)
}

// elidedUnitWords may stand between a value and a bare number that shares its unit.
var elidedUnitWords = words(`or maybe perhaps possibly probably even sometimes`)

// elidedUnit reports whether the items between two values are a comma and at most words of
// elidedUnitWords: "4 days, 6 with …", "32 pallets, maybe 34", "3 working days, or 5"; or up to
// four words, a comma and at least one of them ("14 days of leave left, maybe 16").
func (d *Doc) elidedUnit(between []item) bool {
	last := -1
	for k, b := range between {
		if b.m != nil {
			return false
		}
		if d.toks[b.t0].low == "," {
			last = k
		}
	}
	if last < 0 || last > 4 {
		return false
	}
	for _, b := range between[last+1:] {
		if !elidedUnitWords[d.toks[b.t0].low] {
			return false
		}
	}
	// words before the comma ("14 days of leave left, maybe 16") only when a word after it says
	// the number is another value of the same thing
	return last == 0 || len(between) > last+1
}

// opensCondition reports whether clause c starts (after its punctuation) with a conditional
// opener: "if", "unless", "provided that", ….
func (d *Doc) opensCondition(s *sentence, c clause) bool {
	k := c.i0
	for k < c.i1 && !s.items[k].word {
		k++
	}
	if k >= c.i1 || s.items[k].m != nil {
		return false
	}
	return d.conditionAt(s.items[k].t0, s.t1)
}

// conditionAt reports whether token t (of tokens up to t1) starts a condition: an opener ("if",
// "unless", …) or one of conditionWords ("provided that", "subject to", …).
func (d *Doc) conditionAt(t, t1 int) bool {
	if openers[d.toks[t].low] {
		return true
	}
	for p := range conditionWords {
		if d.startsWith(t, t1, p) {
			return true
		}
	}
	return false
}

// valueIn reports whether items i0..i1 of s hold a value other than a name.
func (d *Doc) valueIn(s *sentence, i0, i1 int) bool {
	for k := i0; k < i1 && k < len(s.items); k++ {
		if m := s.items[k].m; m != nil && m.Kind != Name {
			return true
		}
	}
	return false
}

func (d *Doc) conditionalScope(s *sentence, i, end int, t *trigger, set func(int, Stance, string)) {
	ci := s.items[i].clause
	first := t.words
	if sp := strings.IndexByte(first, ' '); sp > 0 {
		first = first[:sp]
	}
	whole := func() {
		for k := range s.items {
			set(k, Conditional, t.words)
		}
	}
	if openers[first] || conditionWords[t.words] {
		c := s.clauses[ci]
		if ci == 0 || (ci == 1 && s.clauses[0].i1-s.clauses[0].i0 <= 1) || (c.i0 == i && !d.valueIn(s, 0, c.i0)) {
			// "If the truck is late, …", "The cut-off, if Bram agrees, is 14:30": nothing was
			// put forward before the condition
			whole()
			return
		}
		if c.i0 == i && (c.start != "," || !d.valueIn(s, c.i1, len(s.items))) {
			// "the cut-off is 16:15 if you go via Antwerp"; after a comma, a condition that
			// ends the sentence ("…, assuming the reefer passes inspection"): the clause it
			// follows and the clauses that one continues
			for p := ci - 1; p >= 0; p = s.clauses[p].cont {
				for k := s.clauses[p].i0; k < s.clauses[p].i1; k++ {
					set(k, Conditional, t.words)
				}
			}
		}
	}
	if fallbacks[first] || t.words == "or else" || t.words == "if not" || strings.HasPrefix(t.words, "as a ") || t.words == "in that case" || t.words == "fallback option" || t.words == "backup option" {
		if ci == 0 {
			whole()
			return
		}
		for k := end; k < len(s.items); k++ {
			set(k, Conditional, t.words)
		}
	}
}

// nounlike are the reporting words that are nouns too.
var nounlike = words(`claims claim reports report notes note states mentions`)

// reportNoun reports whether a reporting word is a noun by what follows it (item end): "customer
// claims on 31 December: 24", "claims were open", "the claims: 3".
func (d *Doc) reportNoun(s *sentence, end int) bool {
	if end >= len(s.items) {
		return true
	}
	it := s.items[end]
	if it.m != nil {
		return it.m.Kind == Number || it.m.Kind == Count
	}
	switch d.toks[it.t0].low {
	case "on", "of", "for", "in", "from", "at", "with", "by", "per", ":", ",", ".", ")", "were", "are", "was", "is", "and", "or":
		return true
	}
	return false
}

// reportingSubject reports whether the reporting verb at item i has somebody else as its subject:
// a person's name, a pronoun, a role or a capitalised word; not "I" or "we", and not a document
// ("the sheet says 14:30" is the writer's own statement).
func (d *Doc) reportingSubject(s *sentence, i int) bool {
	// "As Dirk said, …" endorses what follows
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if it := s.items[j]; it.m == nil && d.toks[it.t0].low == "as" {
			return false
		}
	}
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		it := s.items[j]
		if !it.word {
			return false
		}
		if it.m != nil {
			return it.m.Kind == Name && d.nameClass(it.m.nameKey) == Person
		}
		w := d.toks[it.t0].low
		switch w {
		case "also", "just", "has", "had", "have", "already", "then", "once", "originally", "previously", "earlier":
			continue
		case "i", "we", "as":
			return false
		case "he", "she", "they", "you", "someone", "somebody", "everyone", "customer", "supplier", "driver", "carrier",
			"manager", "colleague", "client", "caller", "sender", "boss", "team", "vendor", "broker", "forwarder",
			"dispatcher", "planner", "inspector", "auditor", "garage", "mechanic", "lawyer", "accountant", "bank", "agent":
			return true
		}
		t := d.toks[it.t0]
		return t.kind == tWord && d.src[t.s] >= 'A' && d.src[t.s] <= 'Z' && !d.anaphor(it.t0)
	}
	return false
}

// anaphor reports whether token t is an anaphor: "it", "It", not the department "IT".
func (d *Doc) anaphor(t int) bool {
	k := d.toks[t]
	if !anaphors[k.low] {
		return false
	}
	return k.e-k.s < 2 || strings.ToUpper(d.src[k.s:k.e]) != d.src[k.s:k.e]
}

// personAt reports whether item i names a person: a known person, a pronoun, or a capitalised
// word that is not a document's ("according to Dirk", not "according to the sheet").
func (d *Doc) personAt(s *sentence, i int) bool {
	if i >= len(s.items) {
		return false
	}
	it := s.items[i]
	if it.m != nil {
		return it.m.Kind == Name && d.nameClass(it.m.nameKey) == Person
	}
	t := d.toks[it.t0]
	switch t.low {
	case "him", "her", "them", "he", "she", "they":
		return true
	}
	return t.kind == tWord && d.src[t.s] >= 'A' && d.src[t.s] <= 'Z' && !determiners[t.low]
}

// measured reports whether a kind can be bounded or approximated ("about 14%", "up to 3 days").
func measured(k Kind) bool {
	switch k {
	case Number, Count, Money, Percent, Duration, Time, Date:
		return true
	}
	return false
}

// quotes marks the items between quotation marks as reported.
func (d *Doc) quotes(s *sentence, set func(int, Stance, string)) {
	open := -1
	for i, it := range s.items {
		if it.m != nil {
			continue
		}
		l := d.toks[it.t0].low
		switch {
		case l == "“" || l == "«" || l == "„":
			open = i
		case l == "”" || l == "»":
			if open >= 0 {
				for k := open + 1; k < i; k++ {
					set(k, Reported, "quote")
				}
			}
			open = -1
		case l == "\"":
			if open >= 0 {
				for k := open + 1; k < i; k++ {
					set(k, Reported, "quote")
				}
				open = -1
			} else {
				open = i
			}
		}
	}
}

// changes reads "from X to Y" with a verb of change ("moved the review from Thursday to Friday")
// and "X → Y": X is superseded. Without a verb of change "from X to Y" is a range.
func (d *Doc) changes(s *sentence, hasChange bool, set func(int, Stance, string)) {
	for i, it := range s.items {
		if it.m != nil {
			continue
		}
		l := d.toks[it.t0].low
		if l == "from" {
			x := d.nextMention(s, i+1, 3)
			if x < 0 {
				continue
			}
			j := x + 1
			if j < len(s.items) && s.items[j].m == nil && d.toks[s.items[j].t0].low == "(" {
				// "from EUR 10.80 (per pallet) to EUR 11.40": a bracket after the old value
				for k := j + 1; k < len(s.items) && k < j+8; k++ {
					if s.items[k].m == nil && d.toks[s.items[k].t0].low == ")" {
						j = k + 1
						break
					}
				}
			}
			if j < len(s.items) && s.items[j].m == nil && (d.toks[s.items[j].t0].low == "to" || d.toks[s.items[j].t0].low == "until" || d.toks[s.items[j].t0].low == "till") {
				y := d.nextMention(s, j+1, 3)
				if y < 0 || family(s.items[y].m.Kind) != family(s.items[x].m.Kind) {
					continue
				}
				if k := s.items[x].m.Kind; hasChange || (k != Time && k != Date) {
					set(x, Past, "from")
				} else if s.items[x].m.Role == "" && s.items[y].m.Role == "" {
					s.items[x].m.Role, s.items[y].m.Role = "start", "end"
				}
			}
		}
		if l == "to" && hasChange {
			d.movedTo(s, i, set)
		}
		if (l == "→" || l == "⇒") || (l == "-" && i+1 < len(s.items) && s.items[i+1].m == nil && d.toks[s.items[i+1].t0].low == ">") {
			if m := s.items[max(i-1, 0)].m; i > 0 && m != nil && !(m.Kind == Name && d.nameClass(m.nameKey) == Place) {
				set(i-1, Past, "→") // not a route: "Rotterdam -> Utrecht"
			}
		}
	}
}

// movedTo reads "moved the meetings of Thursday 8 January to Friday 9 January": in a clause with
// a change verb, a value between the verb and "to" is the old one when a value of its kind
// follows "to". Not when that value is itself a target ("moved the call to 16:00 and the review
// to 17:00") or an "and" stands between them.
func (d *Doc) movedTo(s *sentence, to int, set func(int, Stance, string)) {
	y := d.nextMention(s, to+1, 3)
	if y < 0 || s.items[y].clause != s.items[to].clause {
		return
	}
	if m := s.items[y].m; m.Kind == Number && m.t0 >= 1 && labelNouns[d.toks[m.t0-1].low] {
		return // "Bring 24 pallets to gate 7": a place, no new count
	}
	if to > 0 && s.items[to-1].m != nil && s.items[to-1].m.Kind == Number && y == to+1 && s.items[y].m.Kind != Number {
		return // "The increase will be 3 to 4%": a range, the bare number in the unit of the other
	}
	verb := -1
	for j := to - 1; j >= 0 && s.items[j].clause == s.items[to].clause; j-- {
		if it := s.items[j]; it.m == nil && changeVerbs[d.toks[it.t0].low] {
			verb = j
			break
		}
	}
	if verb < 0 {
		return
	}
	for j := to - 1; j > verb; j-- {
		it := s.items[j]
		if it.m == nil {
			if w := d.toks[it.t0].low; w == "and" || w == "to" || w == "from" {
				return
			}
			continue
		}
		if family(it.m.Kind) == family(s.items[y].m.Kind) && it.stance == Asserted {
			set(j, Past, d.toks[s.items[verb].t0].low)
		}
	}
}

// nextMention is the first value among the next n items after i (or -1).
func (d *Doc) nextMention(s *sentence, i, n int) int {
	for j := i; j < len(s.items) && j < i+n; j++ {
		if s.items[j].m != nil {
			return j
		}
	}
	return -1
}

// alternatives reads values offered side by side: "14% or 13.5%", "14:30/16:15", "either A or
// B" (both hedged; after a negation both negated), and ranges of amounts ("13-14%", "between EUR
// 900 and 1,000": both hedged, neither is stated exactly).
func (d *Doc) alternatives(s *sentence, set func(int, Stance, string)) {
	var prev = -1
	for i, it := range s.items {
		if it.m == nil {
			continue
		}
		if prev >= 0 {
			x, y := s.items[prev].m, it.m
			between := s.items[prev+1 : i]
			or, rng, words, brk, comma := false, false, 0, false, false
			for _, b := range between {
				if b.m != nil {
					continue
				}
				l := d.toks[b.t0].low
				switch l {
				case "(", ")", "[", "]":
					brk = true // "EUR 10.80 each (total EUR 6,480) to Noorderlaan 147": a bracket parts them
				case ",", ";":
					comma = true
				case "or", "nor":
					or = true
				case "/":
					or = or || len(between) == 1 // "14:30/16:15"; not "EUR 1.18/SDR = EUR 4,128.35"
				case "-", "–", "to":
					rng = true
				case "and":
					if prev > 0 && s.items[prev-1].m == nil && d.toks[s.items[prev-1].t0].low == "between" {
						rng = true
					}
				}
				if b.word {
					words++
				}
			}
			same := family(x.Kind) == family(y.Kind) || x.Kind == Duration && y.Kind == Duration
			if x.Kind == Number && unitKind(y.Kind) && rng && len(between) <= 2 {
				inUnitOf(x, y) // "2-3 days": the first number in the second's unit
				same = true
			}
			if y.Kind == Number && y.Role == "" && unitKind(x.Kind) && d.elidedUnit(between) {
				inUnitOf(y, x) // "4 days, 6 with customs checks", "32 pallets, maybe 34"
				same = true
			}
			if x.Kind == ID && y.Kind == Number && or && words <= 1 {
				// "PO-2026-204 or -205", "INV-2041 or 2042": the other id, its end written alone
				if v, ok := idWithEnd(x.Value, y.Text, rng); ok {
					y.Kind, y.Value = ID, v
					same = true
				}
			}
			if comma && !or {
				brk = true // "EUR 6,480, to Noorderlaan 147": a range is not split by a comma
			}
			if x.Kind == y.Kind && x.Value == y.Value && (x.Kind == Phone || x.Kind == Email || x.Kind == Date || x.Kind == Time) {
				same = false // "0182 555 0231 or +31 182 555 0231": one value in two forms
			}
			if same && words <= 3 && !brk {
				px := s.items[prev].stance
				switch {
				case rng && px == Past:
					// "from 12% to 14%" with a change: not a range
				case or && (px == Negated || px == Past):
					set(i, px, s.items[prev].trigger)
				case or:
					set(prev, Hedged, "or")
					set(i, Hedged, "or")
				case rng && (family(x.Kind) == Number || x.Kind == Duration) && x.Role == "" && y.Role == "" && px != Past:
					// only amounts make a range: "Rotterdam -> Utrecht", "to Lotte, … to Greta" do not
					set(prev, Hedged, "range")
					set(i, Hedged, "range")
				}
			}
		}
		prev = i
	}
}

// family groups the kinds that can stand in for each other: a plain number may be a count, an
// amount or a percentage written without its unit.
func family(k Kind) Kind {
	switch k {
	case Number, Count, Money, Percent:
		return Number
	}
	return k
}

// corrections supersede: a sentence that starts with a correction ("Correction: 14:30", "Sorry,
// I mean 14:30") and asserts a value makes the values of that kind its previous sentence asserted
// past.
func (d *Doc) corrections() {
	for _, s := range d.sents {
		if !s.corr || s.prev < 0 {
			continue
		}
		kinds := map[Kind]bool{}
		for _, it := range s.items {
			if it.m != nil && it.m.Stance == Asserted {
				kinds[family(it.m.Kind)] = true
			}
		}
		if len(kinds) == 0 {
			continue
		}
		p := d.sents[s.prev]
		for i := range p.items {
			if m := p.items[i].m; m != nil && kinds[family(m.Kind)] && m.Stance.puts() {
				m.Stance, m.Trigger, m.TriggerStart, m.TriggerEnd = Past, "correction", d.toks[s.t0].s, d.toks[s.t0].e
				p.items[i].stance = Past
			}
		}
	}
	// within a sentence: "16:15 – sorry, 14:30", "16:15, I mean 14:30"
	for _, s := range d.sents {
		for ci := 1; ci < len(s.clauses); ci++ {
			c := s.clauses[ci]
			corr := false
			for _, w := range clauseCorrections {
				if d.startsWith(s.items[c.i0].t0+boolInt(!s.items[c.i0].word), s.t1, w) {
					corr = true
				}
			}
			if !corr {
				continue
			}
			for i := c.i0; i < len(s.items); i++ {
				m := s.items[i].m
				if m == nil || m.Stance != Asserted {
					continue
				}
				for k := 0; k < c.i0; k++ {
					if p := s.items[k].m; p != nil && family(p.Kind) == family(m.Kind) && p.Stance.puts() {
						p.Stance, p.Trigger = Past, "correction"
						s.items[k].stance = Past
					}
				}
				break
			}
		}
	}
}

// clauseCorrections start a clause that corrects the one before it.
var clauseCorrections = []string{"sorry", "i mean", "correction", "make that", "or rather", "rather", "actually", "no wait", "scratch that"}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// shortValue reports whether a clause is a short value of a label before it (at most three words,
// no pronoun): "north", "Dock 4", "the Maas room".
func (d *Doc) shortValue(s *sentence, c clause) bool {
	n := 0
	for i := c.i0; i < c.i1; i++ {
		it := s.items[i]
		if !it.word {
			continue
		}
		n++
		if it.m == nil && personalPronouns[d.toks[it.t0].low] {
			return false
		}
	}
	return n <= 3
}

// bare reports whether a clause is only a value or a name, perhaps with a conjunction or a
// determiner: a conjunct ("VF-403", "and INV-2042").
func (d *Doc) bare(s *sentence, c clause) bool {
	n, vals := 0, 0
	var kind Kind
	for i := c.i0; i < c.i1; i++ {
		it := s.items[i]
		if !it.word {
			continue
		}
		if it.m != nil {
			if vals > 0 && it.m.Kind != kind {
				return false // "Tom Willems 13:30": a name with its value says all it says
			}
			vals++
			kind = it.m.Kind
			continue
		}
		if w := d.toks[it.t0].low; w == "and" || w == "or" || determiners[w] || w == "both" {
			continue
		}
		n++
	}
	return vals > 0 && n == 0
}

// ---- binding ----

// bind finds what each value is about: its clause, the clauses it continues, its sentence's
// headings (and, for a heading, the items under it).
func (d *Doc) bind() {
	for _, s := range d.sents {
		for _, h := range s.ctx {
			d.sents[h].children = append(d.sents[h].children, s.idx)
		}
	}
	for _, s := range d.sents {
		for _, it := range s.items {
			m := it.m
			if m == nil {
				continue
			}
			m.scope = d.scope(s, m.item, m.col, false)
			var b strings.Builder
			for _, r := range m.scope {
				if b.Len() > 0 {
					b.WriteString(" … ")
				}
				b.WriteString(d.src[d.toks[r.t0].s:d.toks[r.t1-1].e])
			}
			m.About = b.String()
			if m.Kind == Name {
				m.Entity = m.nameKey
			} else {
				m.Entity = d.entity(s, m.item, "")
			}
		}
	}
}

// scope is the token ranges a value is about: its clause and the clauses it continues (a clause
// without a subject of its own continues the one before it; with own, its clause alone), its
// table column's header, the headings of its list or section (and, for a heading, the items under
// it), and the previous sentence when its sentence continues it.
func (d *Doc) scope(s *sentence, at, col int, own bool) []span {
	var out []span
	ci := s.items[at].clause
	// a bare conjunct shares the predicate that follows it: "VF-403 and VF-405 are delayed"
	for x := ci; !own && x+1 < len(s.clauses) && x-ci < chainMax && s.clauses[x+1].cont == x && !s.clauses[x].paren && d.bare(s, s.clauses[x]); x++ {
		c := s.clauses[x+1]
		out = append(out, span{s.items[c.i0].t0, s.items[c.i1-1].t1})
	}
	first := false
	newPredicate := false
	for n := 0; ci >= 0 && n < chainMax; n++ {
		c := s.clauses[ci]
		sp := span{s.items[c.i0].t0, s.items[c.i1-1].t1}
		if newPredicate {
			// "The truck arrived at 21:10 and was unloaded by 22:00": the second predicate
			// shares the subject, not the first predicate
			if v := d.predicateStart(s, c); v > sp.t0 {
				sp.t1 = v
			}
		}
		out = append(out, sp)
		if ci == 0 {
			first = true
		}
		if own && !(c.start == ":" && !c.own && c.cont >= 0) {
			break // a name's own clause, and the label it is the value of ("Driver: Derek Olsen")
		}
		newPredicate = newPredicate || d.startsPredicate(s, c)
		ci = c.cont
	}
	if x := s.items[at].clause; x > 0 && d.topicClause(s) {
		// "For billing, ring +44 …", "As for Tulpen, …": a leading topic is the whole sentence's
		c := s.clauses[0]
		if sp := (span{s.items[c.i0].t0, s.items[c.i1-1].t1}); !containsSpan(out, sp) {
			out = append(out, sp)
		}
	}
	if x := s.items[at].clause; !own && s.items[at].stance == Negated && d.bareDenial(s, x, at) {
		// "14:30 is wrong; the cut-off is 15:00", "Not 14:30. It's 15:00.": the correction after
		// it says what was denied
		if x+1 < len(s.clauses) {
			c := s.clauses[x+1]
			out = append(out, span{s.items[c.i0].t0, s.items[c.i1-1].t1})
		} else if n := s.idx + 1; n < len(d.sents) && d.sents[n].block == s.block {
			out = append(out, span{d.sents[n].t0, d.sents[n].t1})
		}
	}
	if !own && d.itClause(s, s.items[at].clause) {
		// "I haven't heard back, so it is still unconfirmed": "it" is what the sentence before
		// (or a clause before) was about
		for x := 0; x < s.items[at].clause; x++ {
			c := s.clauses[x]
			if sp := (span{s.items[c.i0].t0, s.items[c.i1-1].t1}); !containsSpan(out, sp) {
				out = append(out, sp)
			}
		}
		if s.prev >= 0 && !s.cont {
			p := d.sents[s.prev]
			out = append(out, span{p.t0, p.t1})
		}
	}
	if h, ok := d.elidedHead(s, s.items[at].clause); ok {
		out = append(out, h) // "Noordster's is Joris Smit": the account manager of the clause before
	}
	if s.table && col >= 0 && col < len(s.header) {
		out = append(out, s.header[col])
	}
	if s.table && col > 0 {
		// and of its row's first cell, the row's key
		for x := 0; x < len(s.clauses); x++ {
			if fc := s.clauses[x]; d.hasWord(s, fc) {
				if sp := (span{s.items[fc.i0].t0, s.items[fc.i1-1].t1}); !containsSpan(out, sp) {
					out = append(out, sp)
				}
				break
			}
		}
	}
	for _, h := range s.ctx {
		hs := d.sents[h]
		out = append(out, span{hs.t0, hs.t1})
	}
	if s.items[at].m != nil && s.items[at].m.Kind == Status {
		// a status in a heading is said of the items under it ("Approved:" over a list)
		for _, c := range s.children {
			cs := d.sents[c]
			out = append(out, span{cs.t0, cs.t1})
		}
	}
	if (first || s.corr || s.condCont) && s.cont && s.prev >= 0 && (!own || s.condCont) {
		// the sentence it goes on with, and the ones that one goes on with (three at most:
		// "Pieter's line changed. Old: … New: …")
		for p, n := d.sents[s.prev], 0; n < 3; n++ {
			out = append(out, span{p.t0, p.t1})
			for _, h := range p.ctx {
				hs := d.sents[h]
				out = append(out, span{hs.t0, hs.t1})
			}
			if !p.cont || p.prev < 0 {
				break
			}
			p = d.sents[p.prev]
		}
	}
	return clip(out, s.items[at].t0)
}

// Bounds that keep a reading linear in the text's length however a sentence is built: a value's
// scope follows at most chainMax clauses, each span of it at most 2×reach tokens around the value
// (or the reach nearest it), and a name binds a value only within reach items.
const (
	chainMax = 12
	reach    = 64
)

// clip cuts each span to the tokens within reach of token at: the window around it for the span
// that holds it, the end nearest it for the others.
func clip(spans []span, at int) []span {
	out := spans[:0]
	for _, sp := range spans {
		if sp.t1 <= sp.t0 {
			continue // an empty cell of a table's header
		}
		switch {
		case sp.t1 <= at:
			sp.t0 = max(sp.t0, sp.t1-2*reach)
		case sp.t0 > at:
			sp.t1 = min(sp.t1, sp.t0+2*reach)
		default:
			sp.t0, sp.t1 = max(sp.t0, at-reach), min(sp.t1, at+reach+1)
		}
		out = append(out, sp)
	}
	return out
}

// entity is the name (of class, or of any class when class is "") or the id (class "id") a value
// at item at is bound to: the nearest in its clause (one before it first), else in the clauses it
// continues, else the nearest in its sentence, else in its headings (or the items under it, for a
// heading), else in the previous sentence when its sentence continues it.
func (d *Doc) entity(s *sentence, at int, class string) string {
	ci := s.items[at].clause
	c := s.clauses[ci]
	if s.table {
		// a table row is about its first cell ("| Tulpen BV | Dirk Peeters | 09:30 |")
		for x := 0; x < ci; x++ {
			fc := s.clauses[x]
			if !d.hasWord(s, fc) {
				continue
			}
			if k := d.nearest(s, fc.i0, fc.i1, at, class); k != "" {
				return k
			}
			break
		}
	}
	if k := d.nearest(s, c.i0, c.i1, at, class); k != "" {
		return k
	}
	if c.paren && c.start == "(" && c.anchor >= 0 && c.anchor < ci {
		a := s.clauses[c.anchor]
		if k := d.nearest(s, a.i0, a.i1, at, class); k != "" {
			return k
		}
	}
	if !s.cont && d.itClause(s, ci) {
		// "I checked with Dirk, and it is 16:15 now": "it" is no person but the thing named
		// before, in the sentence or the one before it
		classes := []string{"id", string(Company), string(Place), string(Other)}
		switch class {
		case string(Person):
			classes = nil
		case "":
		default:
			classes = []string{class}
		}
		for _, cl := range classes {
			if k := d.nearest(s, 0, c.i0, at, cl); k != "" {
				return k
			}
		}
		if p := s.prev; p >= 0 {
			ps := d.sents[p]
			for _, cl := range classes {
				if k := d.nearest(ps, 0, len(ps.items), len(ps.items), cl); k != "" {
					return k
				}
			}
		}
		return ""
	}
	first := ci == 0
	for x, n := c.cont, 0; x >= 0 && n < chainMax; x, n = s.clauses[x].cont, n+1 {
		cc := s.clauses[x]
		if k := d.nearest(s, cc.i0, cc.i1, at, class); k != "" {
			return k
		}
		if x == 0 {
			first = true
		}
	}
	if k := d.nearest(s, 0, len(s.items), at, class); k != "" {
		return k
	}
	for _, h := range append(append([]int(nil), s.ctx...), s.children...) {
		hs := d.sents[h]
		if k := d.nearest(hs, 0, len(hs.items), len(hs.items), class); k != "" {
			return k
		}
	}
	if (first || s.corr || s.condCont) && s.cont && s.prev >= 0 {
		for p, n := d.sents[s.prev], 0; n < 3; n++ {
			if k := d.nearest(p, 0, len(p.items), len(p.items), class); k != "" {
				return k
			}
			if !p.cont || p.prev < 0 {
				break
			}
			p = d.sents[p.prev]
		}
	}
	if n := s.idx + 1; ci == len(s.clauses)-1 && s.items[at].stance == Negated && d.bareDenial(s, ci, at) && n < len(d.sents) && d.sents[n].block == s.block {
		// "14:30 is wrong; the Kaasmakers cut-off is 15:00": the correction's
		ns := d.sents[n]
		return d.nearest(ns, 0, len(ns.items), 0, class)
	}
	return ""
}

// containsSpan reports whether spans holds sp.
func containsSpan(spans []span, sp span) bool {
	for _, x := range spans {
		if x == sp {
			return true
		}
	}
	return false
}

// hasWord reports whether clause c holds a word or a value.
func (d *Doc) hasWord(s *sentence, c clause) bool {
	for i := c.i0; i < c.i1; i++ {
		if s.items[i].word || s.items[i].m != nil {
			return true
		}
	}
	return false
}

// entityClass is the class a mention binds as: a name's class, "id" for an id, "" for others.
func (d *Doc) entityClass(m *mention) string {
	switch m.Kind {
	case Name:
		return string(d.nameClass(m.nameKey))
	case ID:
		return "id"
	}
	return ""
}

// nearest is the key of the name (of class; any when "") or id (class "id") among items i0..i1
// nearest to item at, one before it winning over one after it at the same distance. Names in a
// greeting do not count.
func (d *Doc) nearest(s *sentence, i0, i1, at int, class string) string {
	best, dist := "", 1<<30
	i0, i1 = max(i0, at-reach), min(i1, at+reach+1) // a name farther away binds nothing
	for i := i0; i < i1; i++ {
		m := s.items[i].m
		if m == nil || i == at || s.clauses[s.items[i].clause].greeting {
			continue
		}
		switch {
		case class == "" && m.Kind == Name:
		case class == "id" && m.Kind == ID:
		case class != "" && class != "id" && m.Kind == Name && string(d.nameClass(m.nameKey)) == class:
		default:
			continue
		}
		dd := at - i
		if dd < 0 {
			dd = -dd*2 + 1
		} else {
			dd *= 2
		}
		if dd < dist {
			best, dist = m.nameKey, dd
			if m.Kind == ID {
				best = m.Value
			}
		}
	}
	return best
}

// copulas link a possessive's head to its value ("Hollandia's account manager is Lotte Visser").
var copulas = []string{"is", "are", "was", "were"}

// possessive returns the last token of a possessive at token t ("dirk's"; "'", "s" after "B.V."),
// or -1.
func (d *Doc) possessive(t int) int {
	k := &d.toks[t]
	if k.kind == tWord && k.key != k.low && (strings.HasSuffix(k.low, "'s") || strings.HasSuffix(k.low, "'")) {
		return t
	}
	if k.low == "'" && t+1 < len(d.toks) && d.toks[t+1].low == "s" && !d.toks[t+1].sp && t > 0 && !k.sp {
		return t + 1
	}
	return -1
}

// elidedHead is the head a clause leaves out after a possessive, taken from the clause before it
// (in its sentence, or the last of the sentence before): in "Hollandia's account manager is Lotte
// Visser; Noordster's is Joris Smit." the second clause is about "account manager" too, and not
// about Hollandia. The clause must start with words that end in a possessive, followed at once by
// a copula; the clause before must hold a possessive, one to three words and a copula.
func (d *Doc) elidedHead(s *sentence, ci int) (span, bool) {
	c := s.clauses[ci]
	t0, t1 := s.items[c.i0].t0, s.items[c.i1-1].t1
	at := -1
	for t := t0; t < t1 && t < t0+8 && !slices.Contains(copulas, d.toks[t].low); t++ {
		if e := d.possessive(t); e >= 0 {
			at = e
			break
		}
	}
	if at < 0 || at+1 >= t1 || !slices.Contains(copulas, d.toks[at+1].low) {
		return span{}, false
	}
	var p0, p1 int
	switch {
	case ci > 0:
		pc := s.clauses[ci-1]
		p0, p1 = s.items[pc.i0].t0, s.items[pc.i1-1].t1
	case s.idx > 0 && d.sents[s.idx-1].block == s.block:
		ps := d.sents[s.idx-1]
		pc := ps.clauses[len(ps.clauses)-1]
		p0, p1 = ps.items[pc.i0].t0, ps.items[pc.i1-1].t1
	default:
		return span{}, false
	}
	for t := p0; t < p1; t++ {
		if e := d.possessive(t); e < 0 {
			continue
		} else {
			t = e
		}
		for n := 1; n <= 4 && t+n < p1; n++ {
			if k := d.toks[t+n]; k.kind != tWord {
				break
			} else if slices.Contains(copulas, k.low) {
				if n == 1 {
					break // "Hollandia's is …": no head to take
				}
				return span{t + 1, t + n}, true
			}
		}
	}
	return span{}, false
}

// itClause reports whether clause ci, not the first of its sentence, has "it" for its subject,
// after a conjunction at most ("so it is still unconfirmed", "but it is on other weekdays").
func (d *Doc) itClause(s *sentence, ci int) bool {
	if ci == 0 {
		return false
	}
	c := s.clauses[ci]
	t, t1 := s.items[c.i0].t0, s.items[c.i1-1].t1
	for t < t1 && d.toks[t].kind != tWord {
		t++ // the comma that began it
	}
	if t < t1 && clauseBreaks[d.toks[t].low] {
		t++
	}
	return t+1 < t1 && (d.toks[t].low == "it" || d.toks[t].low == "it's") && d.anaphor(t)
}

// idWithEnd is id with its last digits replaced by the digits of end: as many digits as id ends
// with ("INV-2041 or 2042"), or fewer after a hyphen (dashed: "PO-2026-204 or -05").
func idWithEnd(id, end string, dashed bool) (string, bool) {
	ds := strings.TrimLeft(end, "-–#")
	if ds == "" || strings.Trim(ds, "0123456789") != "" {
		return "", false
	}
	n := 0
	for n < len(id) && id[len(id)-1-n] >= '0' && id[len(id)-1-n] <= '9' {
		n++
	}
	if len(ds) > n || len(ds) < n && !dashed {
		return "", false
	}
	return id[:len(id)-len(ds)] + ds, true
}

// auxiliaries start a predicate of their own after a conjunction ("and was unloaded by 22:00").
var auxiliaries = words(`was were is are has had have will would can could should must`)

// startsPredicate reports whether clause c is a conjunction and a verb with no subject of its own:
// a second predicate of the clause it continues ("… and was unloaded by 22:00").
func (d *Doc) startsPredicate(s *sentence, c clause) bool {
	t, t1 := s.items[c.i0].t0, s.items[c.i1-1].t1
	if t+1 >= t1 || !(d.toks[t].low == "and" || d.toks[t].low == "but" || d.toks[t].low == "then") {
		return false
	}
	return auxiliaries[d.toks[t+1].low]
}

// predicateStart is the first token of the predicate of clause c: its first auxiliary, status or
// past-tense word after a subject of one word at least (-1 when it has none).
func (d *Doc) predicateStart(s *sentence, c clause) int {
	for k := c.i0 + 1; k < c.i1; k++ {
		it := s.items[k]
		if it.m != nil {
			if it.m.Kind == Status {
				return it.t0
			}
			continue
		}
		l := d.toks[it.t0].low
		if auxiliaries[l] || d.toks[it.t0].kind == tWord && len(l) > 3 && strings.HasSuffix(l, "ed") && d.src[d.toks[it.t0].s] >= 'a' {
			return it.t0
		}
	}
	return -1
}
