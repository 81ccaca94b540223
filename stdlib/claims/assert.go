package claims

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"
)

// Value is a value a verifier expects, in its normal form: what a claim is compared with.
type Value struct {
	Kind  Kind
	Value string // the normal form, as Claim.Value
	Text  string // as the verifier gave it

	num     decimal.Decimal
	unit    string
	day     time.Time
	minutes int  // a time of day, in minutes after midnight
	zoned   bool // minutes is in the zone zone (a time given as an instant)
	zone    int  // minutes east of UTC
	axis    string
	nameKey string
	stems   string   // a phrase, as joined stems
	words   []string // a phrase's words
	// a date and a time given together ("2026-01-15T10:00:00+01:00"): both must be stated
	date, clock *Value
}

func (v Value) String() string {
	if v.date != nil {
		return v.date.Value + " " + v.clock.Value
	}
	return v.Value
}

// ParseValue reads what a verifier expects, as the reader reads a text: "14:30", "2026-01-15",
// "EUR 1,240.00", "13.5%", "18 pallets", "+31 182 555 0231", "approved", "Dirk Peeters",
// "INV-2041"; a date with a time ("2026-01-15T10:00:00+01:00") asks for both. kind ("" for any)
// says which kind to read. A text that holds no value is a phrase: its words are looked for.
func ParseValue(s string, kind Kind, opt Options) (Value, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Value{}, fmt.Errorf("an empty value")
	}
	if kind != "" && !validKind(kind) {
		return Value{}, fmt.Errorf("unknown kind %q (want one of %s)", kind, kindList())
	}
	if kind == Phrase {
		return phraseValue(s), nil
	}
	po := opt
	po.Written = time.Time{} // "Friday" in a verifier's value names a weekday, never a day of the text's
	if !opt.Written.IsZero() {
		po.Written = opt.Written
	}
	d := Read(s, po)
	var ms []*mention
	for _, m := range d.ments {
		switch {
		case kind == "" || m.Kind == kind || (kind == Number && family(m.Kind) == Number):
			ms = append(ms, m)
		case kind == Count && m.Kind == Number:
			// a count of no unit in particular
			c := *m
			c.Kind, c.Value = Count, m.num.String()
			ms = append(ms, &c)
		}
	}
	// a date and a time together
	if (kind == "" || kind == Date || kind == Time) && len(ms) >= 2 {
		var dm, tm *mention
		for _, m := range ms {
			if m.Kind == Date && dm == nil {
				dm = m
			}
			if m.Kind == Time && tm == nil {
				tm = m
			}
		}
		if dm != nil && tm != nil && kind == "" && coversPair(d, dm, tm) {
			dv, tv := fromMention(dm, d), fromMention(tm, d)
			if off := isoOffset(s); off != nil {
				// an instant: read it in the writer's zone
				loc := opt.Location
				if loc == nil {
					loc = time.UTC
				}
				t, err := time.Parse(time.RFC3339, s)
				if err == nil {
					lt := t.In(loc)
					dv = dateValue(time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, time.UTC))
					tv = clockValue(lt.Hour(), lt.Minute())
					_, zoff := lt.Zone()
					tv.zoned, tv.zone = true, zoff/60
				}
			}
			v := Value{Kind: Date, Value: dv.Value + " " + tv.Value, Text: s, date: &dv, clock: &tv}
			return v, nil
		}
	}
	if len(ms) == 0 {
		if kind != "" {
			return Value{}, fmt.Errorf("%q holds no %s", s, kind)
		}
		return phraseValue(s), nil
	}
	if kind == "" && !covers(d, ms[0]) {
		// "Havenstraat 14, 2161 BK Lisse" holds numbers but is no number: its words are the value
		return phraseValue(s), nil
	}
	v := fromMention(ms[0], d)
	v.Text = s
	return v, nil
}

// coversPair reports whether a date and a time are (nearly) the whole text: "Thursday 15 January at
// 10:00", "2026-01-15T10:00:00+01:00".
func coversPair(d *Doc, a, b *mention) bool {
	for i, t := range d.toks {
		if i >= a.t0 && i < a.t1 || i >= b.t0 && i < b.t1 || t.kind == tPunct {
			continue
		}
		switch t.low {
		case "at", "on", "the", "of", "by", "in", "t", "z", "from":
			continue
		}
		if _, ok := zoneWords[t.low]; ok {
			continue
		}
		return false
	}
	return true
}

// covers reports whether the value m is (nearly) the whole of its text: nothing but punctuation and
// a few small words ("at", "on", "the") around it.
func covers(d *Doc, m *mention) bool {
	for i, t := range d.toks {
		if i >= m.t0 && i < m.t1 {
			continue
		}
		if t.kind == tPunct {
			continue
		}
		switch t.low {
		case "at", "on", "the", "of", "by", "in":
			continue
		}
		return false
	}
	return true
}

// isoOffset is the zone of an RFC 3339 time ("Z", "+01:00"), or nil.
func isoOffset(s string) *int {
	if len(s) < 20 || s[10] != 'T' {
		return nil
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return nil
	}
	z := 0
	return &z
}

func fromMention(m *mention, d *Doc) Value {
	v := Value{Kind: m.Kind, Value: m.Value, Text: m.Text, num: m.num, unit: m.unit, day: m.day, axis: m.axis, nameKey: m.nameKey}
	if m.Kind == Time {
		v.minutes = atoi(m.Value[:2])*60 + atoi(m.Value[3:])
		if m.zone != nil {
			v.zoned, v.zone = true, *m.zone
		}
	}
	return v
}

func dateValue(t time.Time) Value {
	return Value{Kind: Date, Value: t.Format("2006-01-02"), day: t}
}

func clockValue(h, m int) Value {
	return Value{Kind: Time, Value: fmtHM(h, m), minutes: h*60 + m}
}

func phraseValue(s string) Value {
	ws := phraseWords(s)
	var st []string
	for _, w := range ws {
		if x := stem(w); x != "" && hasAlnum(x) {
			st = append(st, x)
		}
	}
	return Value{Kind: Phrase, Value: strings.ToLower(s), Text: s, words: st, stems: strings.Join(st, "")}
}

// NumberValue is a plain number a verifier expects (an int or a float in Starlark).
func NumberValue(x decimal.Decimal) Value {
	return Value{Kind: Number, Value: x.String(), Text: x.String(), num: x}
}

// TimeValue is an instant a verifier expects: its day and time of day in the writer's zone.
func TimeValue(t time.Time, opt Options) Value {
	loc := opt.Location
	if loc == nil {
		loc = t.Location()
	}
	lt := t.In(loc)
	dv := dateValue(time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, time.UTC))
	tv := clockValue(lt.Hour(), lt.Minute())
	_, off := lt.Zone()
	tv.zoned, tv.zone = true, off/60
	return Value{Kind: Date, Value: dv.Value + " " + tv.Value, Text: lt.Format(time.RFC3339), date: &dv, clock: &tv}
}

func validKind(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

func kindList() string {
	var parts []string
	for _, k := range Kinds {
		parts = append(parts, string(k))
	}
	return strings.Join(parts, ", ")
}

// ---- comparing ----

// matches reports whether the claim m states the value v.
func (d *Doc) matches(v *Value, m *mention) bool {
	switch v.Kind {
	case Date:
		if m.Kind != Date || m.conflict {
			return false
		}
		if m.weekday >= 0 && m.day.IsZero() {
			return int(v.day.Weekday()) == m.weekday
		}
		if !d.hasClock {
			return m.day.Month() == v.day.Month() && m.day.Day() == v.day.Day()
		}
		if m.day.Equal(v.day) {
			return true
		}
		for _, a := range m.alts {
			if a.Equal(v.day) {
				return true
			}
		}
		return false
	case Time:
		if m.Kind != Time {
			return false
		}
		return d.minutesOf(m, v) == v.minutes
	case Money:
		switch m.Kind {
		case Money:
			return m.unit == v.unit && m.num.Equal(v.num)
		case Number:
			return m.num.Equal(v.num)
		}
	case Percent:
		return (m.Kind == Percent || m.Kind == Number) && m.num.Equal(v.num)
	case Count:
		// a number that names a place ("gate 7") counts nothing
		return (m.Kind == Count && sameCountUnit(m.unit, v.unit) || m.Kind == Number && m.Role != "label") && m.num.Equal(v.num)
	case Number:
		return (m.Kind == Number || m.Kind == Count || m.Kind == Money) && m.num.Equal(v.num)
	case Duration:
		return m.Kind == Duration && m.num.Equal(v.num) && m.unit == v.unit
	case Phone, Email:
		return m.Kind == v.Kind && m.Value == v.Value
	case ID:
		return m.Kind == ID && strings.EqualFold(m.Value, v.Value)
	case Name:
		return m.Kind == Name && m.nameKey == v.nameKey
	case Status:
		return m.Kind == Status && m.axis == v.axis && m.Value == v.Value
	}
	return false
}

// sameCountUnit reports whether two units of counts name the same thing: equal, or one the last
// word of the other ("place" and "pallet place"); "" stands for any unit.
func sameCountUnit(a, b string) bool {
	if a == b || a == "" || b == "" {
		return true
	}
	return strings.HasSuffix(a, " "+b) || strings.HasSuffix(b, " "+a)
}

// minutesOf is a time of day of the text in the zone the verifier's value is in: a time written
// with a zone ("09:00 UTC") is moved to the value's zone (or the writer's).
func (d *Doc) minutesOf(m *mention, v *Value) int {
	mins := atoi(m.Value[:2])*60 + atoi(m.Value[3:])
	if m.zone == nil {
		return mins
	}
	target := 0
	switch {
	case v.zoned:
		target = v.zone
	case d.opt.Location != nil:
		_, off := time.Date(2026, 1, 1, 12, 0, 0, 0, d.opt.Location).Zone()
		target = off / 60
	}
	return ((mins-*m.zone+target)%1440 + 1440) % 1440
}

// idSeries is the letters an id starts with, upper case ("CN" of "CN-2026-0001"; "" for "4471").
func idSeries(id string) string {
	i := 0
	for i < len(id) && (id[i] >= 'A' && id[i] <= 'Z' || id[i] >= 'a' && id[i] <= 'z') {
		i++
	}
	return strings.ToUpper(id[:i])
}

// headingOver reports whether r stands in a heading of the sentence of one of supports.
func (d *Doc) headingOver(r *mention, supports []*mention) bool {
	for _, m := range supports {
		if m.Sentence == r.Sentence {
			continue
		}
		for _, h := range d.sents[m.Sentence].ctx {
			if h == r.Sentence {
				return true
			}
		}
	}
	return false
}

// plain reports whether ms (at least one) are all plain values, no rates.
func plain(ms []*mention) bool {
	for _, m := range ms {
		if m.Per != "" {
			return false
		}
	}
	return len(ms) > 0
}

// factor reports whether the rate r is a factor of a calculation: the text names a quantity in the
// unit it is per ("8.33 SDR per kg" beside "420 kg", "EUR 10.80 each" beside "600 pallets"). A rate
// per anything else ("EUR 7,000 per order") stays a rival of a plain amount, and so does a rate of
// one unit, which is an amount ("For 1 order, EUR 7,000 per order").
func (d *Doc) factor(r *mention) bool {
	one := decimal.NewFromInt(1)
	for _, m := range d.ments {
		if m == r || m.Per != "" || m.num.Equal(one) {
			continue
		}
		if r.Per == "each" && (m.Kind == Count || m.Kind == Number) {
			return true
		}
		if m.Kind == Count && (m.unit == r.Per || strings.HasSuffix(m.unit, " "+r.Per)) {
			return true
		}
	}
	return false
}

// rivals reports whether the claim m, which does not state v, states another value of v's kind.
func (d *Doc) rivals(v *Value, m *mention) bool {
	if m.Role == "whole" || m.Role == "part" && v.Kind == Percent || m.Role == "variant" || m.Role == "label" && v.Kind != Number {
		return false // "3 of the 48 racks failed", "92% (81 of 88)", "(EUR 1,240.00 without surcharge)"
	}
	switch v.Kind {
	case Date:
		return m.Kind == Date
	case Time:
		return m.Kind == Time && m.Role != "end"
	case Money:
		return m.Kind == Money || m.Kind == Number
	case Percent:
		return m.Kind == Percent || m.Kind == Number
	case Count:
		return m.Kind == Count && sameCountUnit(m.unit, v.unit) || m.Kind == Number
	case Number:
		return m.Kind == Number || m.Kind == Count || m.Kind == Money
	case Duration:
		return m.Kind == Duration
	case Phone, Email:
		return m.Kind == v.Kind
	case ID:
		return m.Kind == ID && idSeries(m.Value) == idSeries(v.Value) // "VF-88318" is no rival of "CN-2026-0001"
	case Name:
		return m.Kind == Name && d.nameClass(m.nameKey) == d.nameClass(v.nameKey)
	case Status:
		return m.Kind == Status && m.axis == v.axis
	}
	return false
}

// ---- what a claim is about ----

// cue is one thing a claim must be about: a label ("cut-off") or a known name ("Kaasmakers").
type cue struct {
	text  string
	key   string // the name's key or the id, for a name or an id
	class string // the name's class, or "id"
	alts  []string
}

// cues reads the things a claim must be about. An element may offer alternatives separated by
// "|" ("cut-off|deadline").
func (d *Doc) cues(about []string) []cue {
	var out []cue
	for _, a := range about {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		c := cue{text: a}
		for _, alt := range strings.Split(a, "|") {
			alt = strings.TrimSpace(alt)
			if alt == "" {
				continue
			}
			if !strings.Contains(a, "|") {
				if key := d.nameKeyOf(alt); key != "" {
					c.key, c.class = key, string(d.nameClass(key))
				} else if id := d.idOf(alt); id != "" {
					c.key, c.class = id, "id"
				}
			}
			c.alts = append(c.alts, phraseValue(alt).stems)
		}
		out = append(out, c)
	}
	return out
}

// nameKeyOf is the key of the known name a text is (one of its aliases), or "".
func (d *Doc) nameKeyOf(text string) string {
	ws := phraseWords(text)
	if len(ws) == 0 {
		return ""
	}
	for _, a := range d.names[ws[0]] {
		if strings.Join(a.words, " ") == strings.Join(ws, " ") {
			return a.key
		}
	}
	return ""
}

// idOf is the id a text is, when the reader reads it as one id, or "".
func (d *Doc) idOf(text string) string {
	x := Read(text, Options{idx: d.x})
	if len(x.ments) == 1 && x.ments[0].Kind == ID && x.ments[0].Start == 0 && x.ments[0].End == len(strings.TrimSpace(text)) {
		return x.ments[0].Value
	}
	return ""
}

// about reports whether the claim m is about every cue. A name a verifier expects is about the
// cues of its own clause only (another name in the clauses around it plays another part).
func (d *Doc) about(m *mention, cs []cue) bool {
	scope := m.scope
	if m.Kind == Name {
		scope = d.scope(d.sents[m.Sentence], m.item, m.col, true)
	}
	for _, c := range cs {
		if !d.aboutOne(scope, func(class string) []string { return d.entities(d.sents[m.Sentence], m.item, class) }, c) {
			return false
		}
	}
	return true
}

// entities are the names (or ids) of class a value at item at is about: the one it is bound to,
// or, for a value in a heading that names none itself, each one its items are bound to
// ("Approved:" over a list of invoices is about every invoice of the list).
func (d *Doc) entities(s *sentence, at int, class string) []string {
	if len(s.children) > 0 && d.nearest(s, 0, len(s.items), at, class) == "" {
		var out []string
		for _, c := range s.children {
			cs := d.sents[c]
			if k := d.nearest(cs, 0, len(cs.items), len(cs.items), class); k != "" {
				out = append(out, k)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	var out []string
	if k := d.entity(s, at, class); k != "" {
		out = append(out, k)
	}
	ci := s.items[at].clause
	// "VF-403 and VF-405 are delayed": the bare conjuncts before the clause share its predicate
	for x := s.clauses[ci].cont; x >= 0 && d.bare(s, s.clauses[x]); x = s.clauses[x].cont {
		if k := d.nearest(s, s.clauses[x].i0, s.clauses[x].i1, at, class); k != "" {
			out = append(out, k)
		}
	}
	// "Open with PalletPro: PO-11, PO-12, PO-13": a clause that names none is about the list after it
	if d.nearest(s, s.clauses[ci].i0, s.clauses[ci].i1, at, class) == "" {
		for x := ci + 1; x < len(s.clauses) && d.continues(s, x, ci); x++ {
			if k := d.nearest(s, s.clauses[x].i0, s.clauses[x].i1, at, class); k != "" && !contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// continues reports whether clause x of s continues clause ci (directly or through others).
func (d *Doc) continues(s *sentence, x, ci int) bool {
	for c := s.clauses[x].cont; c >= 0; c = s.clauses[c].cont {
		if c == ci {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (d *Doc) aboutOne(scope []span, entities func(class string) []string, c cue) bool {
	if c.key != "" {
		for _, e := range entities(c.class) {
			if strings.EqualFold(e, c.key) {
				return true
			}
		}
		return false
	}
	for _, alt := range c.alts {
		for _, r := range scope {
			if d.findStems(r.t0, r.t1, alt) >= 0 {
				return true
			}
		}
	}
	return false
}

// findStems finds the joined stems want in tokens t0..t1, at word boundaries; it returns the
// first token of the match, or -1.
func (d *Doc) findStems(t0, t1 int, want string) int {
	if want == "" {
		return -1
	}
	for k := t0; k < t1; k++ {
		st := d.stemOf(k)
		if st == "" {
			continue
		}
		if suffixed(st, want) {
			return k
		}
		if !strings.HasPrefix(want, st) {
			continue
		}
		acc := st
		j := k + 1
		for len(acc) < len(want) && j < t1 {
			if d.toks[j].kind == tPunct {
				j++ // "Havenstraat 14, 2161 BK" reads as its words
				continue
			}
			x := d.stemOf(j)
			if x != "" && suffixed(x, want[len(acc):]) {
				return k
			}
			if x == "" || !strings.HasPrefix(want[len(acc):], x) {
				break
			}
			acc += x
			j++
		}
		if acc == want {
			return k
		}
	}
	return -1
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// suffixed reports whether a word's stem is want with a suffix that makes another word of the
// same thing: "remind" finds "reminder", "approv" finds "approval".
func suffixed(stem, want string) bool {
	return len(stem) > len(want) && len(want) >= 3 && strings.HasPrefix(stem, want) && cueSuffixes[stem[len(want):]]
}

// cueSuffixes may follow a cue's last word in the text.
var cueSuffixes = words(`er ers al als ment ments ation ations ion ions or ors ance`)

func (d *Doc) stemOf(k int) string {
	t := &d.toks[k]
	if t.kind == tPunct {
		return ""
	}
	return stem(t.key)
}

// stem is a light English stem: "cut-offs" and "cut-off" and "cutoff" meet as "cut"+"off",
// "shipping" and "shipped" as "ship", "rates" and "rate" as "rat".
func stem(w string) string {
	w = strings.ReplaceAll(w, "'", "")
	w = strings.ReplaceAll(w, "’", "")
	n := len(w)
	switch {
	case n > 5 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = w[:n-2]
	case n > 4 && (strings.HasSuffix(w, "ses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:n-1]
	}
	cut := len(w) < n
	n = len(w)
	if n > 3 && w[n-1] == 'e' {
		w = w[:n-1]
		n--
	}
	if cut && n > 3 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) && !strings.ContainsRune("aeiou0123456789", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

// ---- statements ----

// Verdict is the answer to a statement about a text, with the claims that decided it.
type Verdict struct {
	OK      bool
	Why     string // one line: what was found, or what is missing or against it
	Support *Claim // the claim that states the value, when there is one
	Against *Claim // the rival, hedge or denial that fails it, when there is one
}

// States checks that the text asserts v about every cue, and asserts no other value of v's kind
// about them: a rival value, a hedge, a conditional alternative or a denial of v fails it; a past
// mention of another value ("moved from Thursday"), a question and somebody else's words do not.
func (d *Doc) States(v Value, about []string) Verdict { return d.StatesAll([]Value{v}, about) }

// StatesAll checks that the text asserts every one of vs about every cue, and no other value of
// their kinds about them. A date with a time must be stated as a pair: the time next to its day
// (in its clause, or the clauses it continues; or the only day the text names).
func (d *Doc) StatesAll(vs []Value, about []string) Verdict {
	cs := d.cues(about)
	if len(vs) == 1 && vs[0].Kind == Phrase {
		return d.statesPhrase(vs[0], cs, about)
	}
	parts := func(v *Value) []*Value {
		if v.date != nil {
			return []*Value{v.date, v.clock}
		}
		return []*Value{v}
	}
	var supports, rivals []*mention
	var weak, denial *mention
	for _, m := range d.ments {
		if !d.about(m, cs) {
			continue
		}
		matched, rival := false, false
		for i := range vs {
			for _, p := range parts(&vs[i]) {
				if d.matches(p, m) {
					matched = true
				} else if d.rivals(p, m) {
					rival = true
				}
			}
		}
		switch st := d.stanceFor(m, cs); {
		case matched && st == Asserted:
			supports = append(supports, m)
		case matched && st == Negated:
			if denial == nil {
				denial = m
			}
		case matched && (st == Hedged || st == Conditional):
			if weak == nil {
				weak = m
			}
		case !matched && rival && st.puts():
			rivals = append(rivals, m)
		}
	}
	var against *mention = denial
	for _, r := range rivals {
		if against != nil {
			break
		}
		if r.Kind == Name && d.sharesClause(r, supports) {
			continue // another person in the same clause plays another part ("Dirk covers Noor's leave")
		}
		if d.headingOver(r, supports) {
			continue // "### Open items" over "- claim-017: resolved": the item's own word wins
		}
		if r.Per != "" && plain(supports) && d.factor(r) {
			continue // a rate the stated value is worked out from ("at EUR 1.18/SDR that is EUR 4,128.35")
		}
		against = r
	}
	var first *mention
	for i := range vs {
		v := &vs[i]
		sup := d.supportOf(v, supports)
		if sup == nil {
			what := describe(*v, about)
			if against != nil || weak != nil {
				return d.verdict(*v, about, nil, weak, against)
			}
			if v.date != nil {
				for _, m := range supports {
					if d.matches(v.clock, m) || d.matches(v.date, m) {
						return Verdict{Why: fmt.Sprintf("it does not state %s as one: the day and the time are not together", what)}
					}
				}
			}
			return Verdict{Why: fmt.Sprintf("it does not state %s", what)}
		}
		if first == nil {
			first = sup
		}
	}
	v := vs[0]
	if len(vs) > 1 {
		v = Value{Kind: vs[0].Kind, Text: valueList(vs)}
	}
	return d.verdict(v, about, first, weak, against)
}

// changeNouns are the past triggers that name the size of a change ("increase of 3.5%"): the
// value is no old value of the thing changed, but it is the size of the change itself.
var changeNouns = map[string]string{"increase of": "increase", "decrease of": "decrease", "rise of": "rise", "drop of": "drop"}

// stanceFor is the stance of m as a statement about what the cues name: a change's size is
// asserted of the change ("your salary increase of 3.5%" states 3.5% about the increase).
func (d *Doc) stanceFor(m *mention, cs []cue) Stance {
	if noun, ok := changeNouns[m.Trigger]; ok && m.Stance == Past {
		want := phraseValue(noun).stems
		for _, c := range cs {
			for _, alt := range c.alts {
				if alt == want {
					return Asserted
				}
			}
		}
	}
	return m.Stance
}

// supportOf is the asserted claim among supports that states v: for a date with a time, a time
// whose day (pairedDate) is the date.
func (d *Doc) supportOf(v *Value, supports []*mention) *mention {
	for _, m := range supports {
		if v.date == nil {
			if d.matches(v, m) {
				return m
			}
			continue
		}
		if m.Kind != Time || !d.matches(v.clock, m) {
			continue
		}
		if dm := d.pairedDate(m); dm != nil && dm.Stance == Asserted && d.matches(v.date, dm) {
			return m
		}
	}
	return nil
}

// pairedDate is the day a time is stated for: the nearest date in its clause (one before it
// first), else in the clauses it continues, else in its sentence or its headings when they name
// one day only, else the only day the text asserts.
func (d *Doc) pairedDate(t *mention) *mention {
	s := d.sents[t.Sentence]
	ci := s.items[t.item].clause
	nearest := func(i0, i1 int) *mention {
		var best *mention
		dist := 1 << 30
		for i := i0; i < i1; i++ {
			m := s.items[i].m
			if m == nil || m.Kind != Date {
				continue
			}
			dd := t.item - i
			if dd < 0 {
				dd = -dd*2 + 1
			} else {
				dd *= 2
			}
			if dd < dist {
				best, dist = m, dd
			}
		}
		return best
	}
	c := s.clauses[ci]
	if m := nearest(c.i0, c.i1); m != nil {
		return m
	}
	for x := c.cont; x >= 0; x = s.clauses[x].cont {
		if m := nearest(s.clauses[x].i0, s.clauses[x].i1); m != nil {
			return m
		}
	}
	only := func(ms []*mention) *mention {
		var one *mention
		for _, m := range ms {
			if m.Kind != Date || m.Stance != Asserted {
				continue
			}
			if one != nil && one.Value != m.Value {
				return nil
			}
			one = m
		}
		return one
	}
	var inSentence []*mention
	for _, it := range s.items {
		if it.m != nil {
			inSentence = append(inSentence, it.m)
		}
	}
	for _, h := range s.ctx {
		for _, it := range d.sents[h].items {
			if it.m != nil {
				inSentence = append(inSentence, it.m)
			}
		}
	}
	if m := only(inSentence); m != nil {
		return m
	}
	return only(d.ments)
}

func (d *Doc) verdict(v Value, about []string, support, weak, against *mention) Verdict {
	what := describe(v, about)
	switch {
	case against != nil && d.matches(&v, against):
		return Verdict{Why: fmt.Sprintf("it denies %s: %s", what, quote(against)), Support: claimOf(support), Against: claimOf(against)}
	case against != nil:
		return Verdict{Why: fmt.Sprintf("it also %s %s: %s", verbOf(against.Stance), against.Value, quote(against)), Support: claimOf(support), Against: claimOf(against)}
	case support == nil && weak != nil:
		return Verdict{Why: fmt.Sprintf("it does not commit to %s (%s): %s", what, weak.Stance, quote(weak)), Against: claimOf(weak)}
	case support == nil:
		return Verdict{Why: fmt.Sprintf("it does not state %s", what)}
	case weak != nil:
		return Verdict{Why: fmt.Sprintf("it states %s, but also as a %s: %s", what, weak.Stance, quote(weak)), Support: claimOf(support), Against: claimOf(weak)}
	}
	return Verdict{OK: true, Why: fmt.Sprintf("it states %s: %s", what, quote(support)), Support: claimOf(support)}
}

func verbOf(s Stance) string {
	switch s {
	case Hedged:
		return "offers"
	case Conditional:
		return "offers, on a condition,"
	}
	return "states"
}

// inScope reports whether n lies in m's scope.
func (d *Doc) inScope(m, n *mention) bool {
	for _, r := range m.scope {
		if n.t0 >= r.t0 && n.t1 <= r.t1 {
			return true
		}
	}
	return false
}

// statesPhrase checks that the words of a phrase are asserted about the cues, and not denied.
func (d *Doc) statesPhrase(v Value, cs []cue, about []string) Verdict {
	var support, weak, against *occurrence
	for _, o := range d.occurrences(v) {
		if !d.occAbout(o, cs) {
			continue
		}
		switch {
		case o.stance == Asserted:
			if support == nil {
				support = o
			}
		case o.stance == Negated:
			if against == nil {
				against = o
			}
		case o.stance == Hedged || o.stance == Conditional:
			if weak == nil {
				weak = o
			}
		}
	}
	what := describe(v, about)
	switch {
	case against != nil:
		return Verdict{Why: fmt.Sprintf("it denies %s: %q", what, against.text)}
	case support == nil && weak != nil:
		return Verdict{Why: fmt.Sprintf("it does not commit to %s (%s): %q", what, weak.stance, weak.text)}
	case support == nil:
		return Verdict{Why: fmt.Sprintf("it does not state %s", what)}
	}
	return Verdict{OK: true, Why: fmt.Sprintf("it states %s: %q", what, support.text)}
}

// occurrence is where a phrase stands in the text, with the stance and scope of that place.
type occurrence struct {
	s      *sentence
	item   int
	stance Stance
	text   string
	scope  []span
}

func (d *Doc) occurrences(v Value) []*occurrence {
	var out []*occurrence
	for _, s := range d.sents {
		from := s.t0
		for from < s.t1 {
			k := d.findStems(from, s.t1, v.stems)
			if k < 0 {
				break
			}
			it := 0
			for i, x := range s.items {
				if k >= x.t0 && k < x.t1 {
					it = i
					break
				}
			}
			o := &occurrence{s: s, item: it, stance: s.items[it].stance, scope: d.scope(s, it, -1, false)}
			c := s.clauses[s.items[it].clause]
			o.text = d.src[d.toks[s.items[c.i0].t0].s:d.toks[s.items[c.i1-1].t1-1].e]
			out = append(out, o)
			from = k + 1
		}
	}
	return out
}

func (d *Doc) occAbout(o *occurrence, cs []cue) bool {
	for _, c := range cs {
		if !d.aboutOne(o.scope, func(class string) []string { return d.entities(o.s, o.item, class) }, c) {
			return false
		}
	}
	return true
}

// StatesOnly checks that every value of the kind the text puts forward (asserted, hedged or
// conditional) about the cues is one of values. It holds for a text that states none: combine it
// with States to require one.
func (d *Doc) StatesOnly(kind Kind, values []Value, about []string) Verdict {
	cs := d.cues(about)
	for _, m := range d.ments {
		if !m.Stance.puts() || !d.about(m, cs) {
			continue
		}
		relevant := false
		okv := false
		for i := range values {
			v := &values[i]
			want := v
			if v.date != nil {
				if m.Kind == Date {
					want = v.date
				} else {
					want = v.clock
				}
			}
			if d.matches(want, m) {
				okv = true
			}
			if d.rivals(want, m) || d.matches(want, m) {
				relevant = true
			}
		}
		if len(values) == 0 {
			relevant = m.Kind == kind || family(m.Kind) == family(kind) && kind != Percent && m.Kind != Percent
		}
		if kind == ID && m.Kind == ID {
			relevant = true // kind "id" asks for every id, of any series
		}
		if kind != "" && len(values) > 0 && m.Kind != kind && family(m.Kind) != family(kind) && !(kind == Date && m.Kind == Time) {
			relevant = false
		}
		if relevant && !okv {
			return Verdict{Why: fmt.Sprintf("it %s %s %s, which is not one of %s: %s", verbOf(m.Stance), kindName(m.Kind), m.Value, valueList(values), quote(m)), Against: claimOf(m)}
		}
	}
	return Verdict{OK: true, Why: fmt.Sprintf("every %s it states is one of %s", kindName(kind), valueList(values))}
}

// Denies checks that the text denies v about the cues ("not approved", "rejected" for approved,
// "I can't share it" for the phrase "share") and asserts it nowhere about them.
func (d *Doc) Denies(v Value, about []string) Verdict {
	cs := d.cues(about)
	what := describe(v, about)
	if v.Kind == Phrase {
		var deny, assert *occurrence
		for _, o := range d.occurrences(v) {
			if !d.occAbout(o, cs) {
				continue
			}
			if o.stance == Negated && deny == nil {
				deny = o
			}
			if o.stance == Asserted && assert == nil {
				assert = o
			}
		}
		switch {
		case assert != nil:
			return Verdict{Why: fmt.Sprintf("it states %s: %q", what, assert.text)}
		case deny == nil:
			return Verdict{Why: fmt.Sprintf("it does not deny %s", what)}
		}
		return Verdict{OK: true, Why: fmt.Sprintf("it denies %s: %q", what, deny.text)}
	}
	var deny, assert *mention
	for _, m := range d.ments {
		if !d.about(m, cs) {
			continue
		}
		if d.matches(&v, m) {
			if (m.Stance == Negated || m.Stance == Past && noLonger[m.Trigger]) && deny == nil {
				deny = m // "INV-5122 is no longer outstanding" denies it is unpaid now
			}
			if m.Stance.puts() && assert == nil {
				assert = m
			}
			continue
		}
		if v.Kind == Status && m.Kind == Status && m.axis == v.axis && m.Stance == Asserted && deny == nil {
			deny = m
		}
	}
	switch {
	case assert != nil:
		return Verdict{Why: fmt.Sprintf("it %s %s: %s", verbOf(assert.Stance), what, quote(assert)), Against: claimOf(assert)}
	case deny == nil:
		return Verdict{Why: fmt.Sprintf("it does not deny %s", what)}
	}
	return Verdict{OK: true, Why: fmt.Sprintf("it denies %s: %s", what, quote(deny)), Support: claimOf(deny)}
}

// noLonger are the past triggers that say a value does not hold now.
var noLonger = map[string]bool{"no longer": true, "not anymore": true, "not any more": true, "any more": true, "anymore": true}

// Claims lists every value the text names, in order.
func (d *Doc) Claims() []Claim {
	out := make([]Claim, len(d.ments))
	for i, m := range d.ments {
		out[i] = m.Claim
	}
	return out
}

func claimOf(m *mention) *Claim {
	if m == nil {
		return nil
	}
	c := m.Claim
	return &c
}

func quote(m *mention) string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("%q", shortAbout(m))
}

// shortAbout is the clause around a claim, for messages (at most 100 bytes).
func shortAbout(m *mention) string {
	s := m.About
	if i := strings.Index(s, " … "); i >= 0 {
		s = s[:i]
	}
	if len(s) > 100 {
		cut := 100
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func describe(v Value, about []string) string {
	s := v.Text
	if s == "" {
		s = v.String()
	}
	if len(about) > 0 {
		return fmt.Sprintf("%s about %s", s, strings.Join(about, " and "))
	}
	return s
}

func kindName(k Kind) string {
	if k == "" {
		return "value"
	}
	return string(k)
}

func valueList(vs []Value) string {
	var parts []string
	for _, v := range vs {
		s := v.Text
		if s == "" {
			s = v.String()
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "none"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// restate is the normal form of a number read as the kind of the value y it ranges to ("13" in
// "13-14%").
func restate(x, y *mention) string {
	switch y.Kind {
	case Money:
		return y.unit + " " + x.num.StringFixed(moneyDigits(y.unit))
	case Count:
		return x.num.String() + " " + y.unit
	}
	return x.num.String()
}

func (d *Doc) sharesClause(m *mention, others []*mention) bool {
	for _, o := range others {
		if o.Sentence == m.Sentence && d.clauseOf(o) == d.clauseOf(m) {
			return true
		}
	}
	return false
}

func (d *Doc) clauseOf(m *mention) int { return d.sents[m.Sentence].items[m.item].clause }
