package contacts

import (
	"slices"
	"strings"
	"unicode"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
)

// Search the way a colleague looks someone up. The query is cut into words, ignoring case,
// accents and punctuation; small words such as "in", "the" or "team" are dropped ("Greta in
// dispatch" is "greta dispatch"). A contact matches when every word matches some field: the
// start of a word of its name, aliases, role, team, email, company, location or notes ("gre"
// finds Greta), a close form of one ("dispatchers" finds "dispatcher", "planning" finds
// "planner"), or, for a word of digits, part of its phone number. Notes are searched only when
// no contact matches on its other fields, so a note that mentions "Greta in dispatch" does not
// crowd out Greta. Contacts are ranked by where their words matched (name above role and team,
// above email, company and location), then by name, then by id.

// stopWords are dropped from a query unless it holds nothing else.
var stopWords = []string{"a", "an", "and", "at", "by", "dept", "department", "for", "from", "in", "is", "my", "of", "on",
	"our", "the", "to", "team", "who", "with"}

// folds are the letters fold turns into plain ones (beyond case).
var folds = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ą': "a", 'æ': "ae",
	'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'đ': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ę': "e", 'ě': "e", 'ğ': "g",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ı': "i", 'ł': "l", 'ñ': "n", 'ń': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'œ': "oe", 'ř': "r",
	'ś': "s", 'š': "s", 'ş': "s", 'ß': "ss", 'ť': "t", 'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ů': "u",
	'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
}

// fold lowers s and takes the accents off its letters.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < 0x80
	}
	if ascii { // nothing to take off: the common case, and a search folds every name it ranks
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if f, ok := folds[r]; ok {
			b.WriteString(f)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// words cuts s into folded words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// queryWords are the words of a query without its stop words (all of them when it has nothing
// else).
func queryWords(q string) []string {
	all := words(q)
	var out []string
	for _, w := range all {
		if !slices.Contains(stopWords, w) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// wordMatches reports whether query word w matches word t of a field: w starts t, or the two
// share a stem (at least five letters in common, and at most three letters more in the shorter).
func wordMatches(w, t string) bool {
	if strings.HasPrefix(t, w) {
		return true
	}
	n := 0
	for n < len(w) && n < len(t) && w[n] == t[n] {
		n++
	}
	return n >= 5 && n >= min(len(w), len(t))-3
}

// field is one searchable field of a contact with its weight in the ranking.
type field struct {
	words  []string
	weight int
}

func fields(c *Contact, notes bool) []field {
	name := words(c.Name)
	for _, a := range c.Aliases {
		name = append(name, words(a)...)
	}
	fs := []field{
		{name, 8},
		{words(c.Role), 5},
		{words(c.Team), 5},
		{words(c.Email), 4},
		{words(c.Company), 3},
		{words(c.Location), 3},
	}
	if notes {
		fs = append(fs, field{words(c.Notes), 1})
	}
	return fs
}

// digits keeps the digits of s.
func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// score is how well contact c matches every query word (0: it does not), its notes included or
// not. An exact word of the name weighs a little more than its start.
func score(c *Contact, ws []string, notes bool) int {
	fs := fields(c, notes)
	total := 0
	for _, w := range ws {
		best := 0
		for _, f := range fs {
			for _, t := range f.words {
				if !wordMatches(w, t) {
					continue
				}
				s := f.weight
				if t == w && f.weight == 8 {
					s += 2
				}
				best = max(best, s)
			}
		}
		if best == 0 && len(w) >= 4 && digits(w) == w && strings.Contains(digits(c.Phone), w) {
			best = 4
		}
		if best == 0 {
			return 0
		}
		total += best
	}
	return total
}

// fieldMatches reports whether every word of filter matches a word of value ("" matches all).
func fieldMatches(filter, value string) bool {
	if filter == "" {
		return true
	}
	vs := words(value)
	for _, w := range queryWords(filter) {
		if !slices.ContainsFunc(vs, func(t string) bool { return wordMatches(w, t) }) {
			return false
		}
	}
	return true
}

// filter is what a listing or search keeps: every non-empty field must match.
type filter struct {
	team, location, company, source string
}

func (f filter) keeps(c *Contact) bool {
	return (f.source == "" || c.Source == f.source) && fieldMatches(f.team, c.Team) &&
		fieldMatches(f.location, c.Location) && fieldMatches(f.company, c.Company)
}

// byName orders contacts by folded name, then by id.
func byName(a, b *Contact) int {
	if c := strings.Compare(fold(a.Name), fold(b.Name)); c != 0 {
		return c
	}
	return workspace.NaturalCompare(a.ID, b.ID)
}

// list returns the first limit contacts f keeps, by name, and no more than a listing shows;
// total is how many of them there are, up to limit.
func list(st *workspace.State, f filter, limit int64) (kept []*Contact, total int) {
	for c := range contactsOf(st.PartIndex(Part, nameIndex, "", "", false)) {
		if !f.keeps(c) {
			continue
		}
		if int64(total) >= limit {
			break
		}
		if total++; len(kept) < limits.ListItems {
			kept = append(kept, c)
		}
	}
	return kept, total
}

// searchWords are the words search reads of c (its key in wordIndex): those of the fields it
// scores, its notes included, each once.
func searchWords(c *Contact) []string {
	var out []string
	for _, f := range fields(c, true) {
		out = append(out, f.words...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// candidates returns the contacts that may match every word of ws, in no order: those with a
// word in wordIndex that the query word of the fewest such words may match (it starts with that
// query word, or with its first five bytes, which a word of the same stem shares). A word of
// four digits or more may also match inside a phone number, which wordIndex does not hold: when
// the query has no other word, every contact is a candidate. charge is charged a step per
// entry looked at.
func candidates(st *workspace.State, ws []string, charge func(int) error) ([]*Contact, error) {
	prefix, n := "", -1
	for _, w := range ws {
		if len(w) >= 4 && digits(w) == w {
			continue
		}
		p := w[:min(len(w), 5)]
		if k := st.PartIndexLen(Part, wordIndex, p, workspace.PrefixEnd(p)); n < 0 || k < n {
			prefix, n = p, k
		}
	}
	if n < 0 {
		if err := charge(st.PartLen(Part)); err != nil {
			return nil, err
		}
		return All(st), nil
	}
	if err := charge(n); err != nil {
		return nil, err
	}
	var out []*Contact
	seen := map[string]bool{}
	for c := range contactsOf(st.PartIndex(Part, wordIndex, prefix, workspace.PrefixEnd(prefix), false)) {
		if !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// search returns the contacts f keeps that match every word of q, best first. charge (nil:
// none) is charged a step per contact looked at.
func search(st *workspace.State, q string, f filter, charge func(int) error) ([]*Contact, error) {
	if charge == nil {
		charge = func(int) error { return nil }
	}
	ws := queryWords(q)
	if len(ws) == 0 {
		return nil, nil
	}
	cands, err := candidates(st, ws, charge)
	if err != nil {
		return nil, err
	}
	type hit struct {
		c    *Contact
		s    int
		name string // folded, as byName compares it: folded once, not at every comparison
	}
	var hits []hit
	for _, notes := range []bool{false, true} {
		if notes {
			if err := charge(len(cands)); err != nil { // looked at again
				return nil, err
			}
		}
		for _, c := range cands {
			if !f.keeps(c) {
				continue
			}
			if s := score(c, ws, notes); s > 0 {
				hits = append(hits, hit{c, s, fold(c.Name)})
			}
		}
		if len(hits) > 0 {
			break
		}
	}
	// The order of the candidates does not show: byName orders any two contacts.
	slices.SortFunc(hits, func(a, b hit) int {
		if a.s != b.s {
			return b.s - a.s
		}
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return workspace.NaturalCompare(a.c.ID, b.c.ID)
	})
	out := make([]*Contact, len(hits))
	for i, h := range hits {
		out[i] = h.c
	}
	return out, nil
}
