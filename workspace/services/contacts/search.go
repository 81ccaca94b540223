package contacts

import (
	"slices"
	"strings"
	"unicode"

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

// list returns the contacts f keeps, by name.
func list(st *workspace.State, f filter) []*Contact {
	var out []*Contact
	for _, c := range All(st) {
		if f.keeps(c) {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, byName)
	return out
}

// search returns the contacts f keeps that match every word of q, best first.
func search(st *workspace.State, q string, f filter) []*Contact {
	ws := queryWords(q)
	if len(ws) == 0 {
		return nil
	}
	type hit struct {
		c *Contact
		s int
	}
	var hits []hit
	for _, notes := range []bool{false, true} {
		for _, c := range All(st) {
			if !f.keeps(c) {
				continue
			}
			if s := score(c, ws, notes); s > 0 {
				hits = append(hits, hit{c, s})
			}
		}
		if len(hits) > 0 {
			break
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.s != b.s {
			return b.s - a.s
		}
		return byName(a.c, b.c)
	})
	out := make([]*Contact, len(hits))
	for i, h := range hits {
		out[i] = h.c
	}
	return out
}
