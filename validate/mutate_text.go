package validate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/stdlib/claims"
)

// Value mutators on text: the small, deterministic changes blind-to-content makes to the facts
// inside a text (a number, an amount, a date, a time, a weekday, a timestamp; a statement
// negated), and the harmless rewrites brittle-verifier makes to prose (a greeting and a sign-off,
// extra line breaks, thousands separators).
//
// A token edit changes every standalone occurrence of one token (all the "14"s of a text, not
// the "14" of "T-14"), so that a text that states a fact twice states the wrong one twice.

// tokSpan is a token found in a text: s[start:end].
type tokSpan struct{ start, end int }

// textEdit is one change of the facts of a text.
type textEdit struct {
	kind     string // number, date, time, weekday, timestamp, negation
	old, new string // for people: "14" → "15"
	apply    func(string) string
}

// tokenKinds are the scanners of the token edits, in the order their edits are tried.
var tokenKinds = []struct {
	kind   string
	scan   func(string) []tokSpan
	mutate func(string) (string, bool)
}{
	{"date", scanDates, shiftDate},
	{"time", scanTimes, shiftTime},
	{"number", scanNumbers, bumpNumber},
	{"weekday", scanWeekdays, nextWeekday},
}

// tokenEdits lists the token edits of the texts, one per distinct (kind, token): the first token
// of each kind, then the second of each kind, and so on, at most perKind of each kind; kinds in
// the order of tokenKinds, tokens in order of first appearance. Each edit's apply changes every
// occurrence of its token in a text.
func tokenEdits(texts []string, perKind int) []textEdit {
	byKind := make([][]textEdit, len(tokenKinds))
	for i, k := range tokenKinds {
		done := map[string]bool{}
		for _, s := range texts {
			for _, sp := range k.scan(s) {
				tok := s[sp.start:sp.end]
				if done[tok] || len(byKind[i]) >= perKind {
					continue
				}
				done[tok] = true
				repl, ok := k.mutate(tok)
				if !ok || repl == tok {
					continue
				}
				byKind[i] = append(byKind[i], textEdit{kind: k.kind, old: tok, new: repl, apply: replaceTokens(k.scan, tok, repl)})
			}
		}
	}
	var out []textEdit
	for rank := 0; rank < perKind; rank++ {
		for _, es := range byKind {
			if rank < len(es) {
				out = append(out, es[rank])
			}
		}
	}
	return out
}

// replaceTokens returns a function that replaces every token found by scan that equals old.
func replaceTokens(scan func(string) []tokSpan, old, repl string) func(string) string {
	return func(s string) string {
		var b strings.Builder
		last := 0
		for _, sp := range scan(s) {
			if s[sp.start:sp.end] != old {
				continue
			}
			b.WriteString(s[last:sp.start])
			b.WriteString(repl)
			last = sp.end
		}
		if last == 0 {
			return s
		}
		b.WriteString(s[last:])
		return b.String()
	}
}

func runeBefore(s string, i int) rune {
	if i <= 0 {
		return 0
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

func runeAt(s string, i int) rune {
	if i >= len(s) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// runeBefore2 is the rune before the rune before i.
func runeBefore2(s string, i int) rune {
	if i <= 0 {
		return 0
	}
	_, n := utf8.DecodeLastRuneInString(s[:i])
	return runeBefore(s, i-n)
}

// runeAfter is the rune after the rune at i.
func runeAfter(s string, i int) rune {
	if i >= len(s) {
		return 0
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return runeAt(s, i+n)
}

func isAlnumRune(r rune) bool { return r != 0 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }
func isDigitR(r rune) bool    { return r >= '0' && r <= '9' }

// --- numbers and amounts

var numTokRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// Number formats: plain ("1240", "12.5", "12,5"), and grouped with a thousands separator
// ("1,240.00", "1.240,00").
var (
	plainNum   = regexp.MustCompile(`^\d+(?:[.,]\d+)?$`)
	commaGroup = regexp.MustCompile(`^\d{1,3}(?:,\d{3})+(?:\.\d+)?$`)
	dotGroup   = regexp.MustCompile(`^\d{1,3}(?:\.\d{3})+(?:,\d+)?$`)
)

// scanNumbers finds the standalone numbers and amounts of a text: not digits glued to letters
// ("Q3", "m4", "2nd"), not parts of ids, paths, dates or times ("T-104", "/team1", "2026-01-05",
// "09:30"), not ids after "#", not years (a four-digit whole number from 1900 to 2100) and not
// codes with a leading zero ("0417").
func scanNumbers(s string) []tokSpan {
	var out []tokSpan
	for _, m := range numTokRe.FindAllStringIndex(s, -1) {
		a, b := m[0], m[1]
		tok := s[a:b]
		if !plainNum.MatchString(tok) && !commaGroup.MatchString(tok) && !dotGroup.MatchString(tok) {
			continue
		}
		p, p2 := runeBefore(s, a), runeBefore2(s, a)
		n, n2 := runeAt(s, b), runeAfter(s, b)
		switch {
		case unicode.IsLetter(p) || p == '_' || p == '#' || p == '@' || p == '+' || p == '/' || p == '\\':
			continue
		case (p == '-' || p == '.' || p == ':') && isAlnumRune(p2):
			continue
		case unicode.IsLetter(n) || n == '_' || n == '@':
			continue
		case (n == '-' || n == '/' || n == ':') && isDigitR(n2):
			continue
		case n == '.' && unicode.IsLetter(n2):
			continue
		}
		if len(tok) == 4 && isYear(tok) || len(tok) > 1 && tok[0] == '0' && isDigitR(rune(tok[1])) {
			continue // a year, or a code with a leading zero
		}
		if inFileName(s, a, b) {
			continue
		}
		out = append(out, tokSpan{a, b})
	}
	return out
}

var extRe = regexp.MustCompile(`^[^\s]*?\.[A-Za-z][A-Za-z0-9]{1,4}\b`)

// inFileName reports whether s[a:b] is part of a file name: the run of non-space characters it
// is in holds a "/", or goes on with an extension ("report (1).pdf").
func inFileName(s string, a, b int) bool {
	i := strings.LastIndexAny(s[:a], " \t\n")
	j := strings.IndexAny(s[b:], " \t\n")
	run := s[i+1:]
	if j >= 0 {
		run = s[i+1 : b+j]
	}
	return strings.Contains(run, "/") || extRe.MatchString(s[b:])
}

func isYear(tok string) bool {
	y, err := strconv.Atoi(tok)
	return err == nil && y >= 1900 && y <= 2100
}

// numberParts splits a number token into its integer digits, the thousands separator it uses
// ("" when none) and the rest (the decimal separator and the decimals, or "").
func numberParts(tok string) (digits, sep, rest string) {
	switch {
	case commaGroup.MatchString(tok):
		sep = ","
	case dotGroup.MatchString(tok):
		sep = "."
	}
	intPart := tok
	if sep == "" {
		if i := strings.IndexAny(tok, ".,"); i >= 0 {
			intPart, rest = tok[:i], tok[i:]
		}
	} else {
		dec := map[string]string{",": ".", ".": ","}[sep]
		if i := strings.Index(tok, dec); i >= 0 {
			intPart, rest = tok[:i], tok[i:]
		}
	}
	return strings.ReplaceAll(intPart, sep, ""), sep, rest
}

// bumpNumber adds one to the integer part of a number token, keeping its format:
// "14" → "15", "12.5" → "13.5", "1,240.00" → "1,241.00", "999" → "1000".
func bumpNumber(tok string) (string, bool) {
	digits, sep, rest := numberParts(tok)
	if digits == "" {
		return "", false
	}
	b := []byte(digits)
	i := len(b) - 1
	for ; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			break
		}
		b[i] = '0'
	}
	out := string(b)
	if i < 0 {
		out = "1" + out
	}
	return claims.GroupDigits(out, sep) + rest, true
}

// --- dates, times, timestamps, weekdays

var (
	dateRe      = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)
	timeRe      = regexp.MustCompile(`\d{1,2}:\d{2}(?::\d{2})?`)
	timestampRe = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?`)
	weekdayRe   = regexp.MustCompile(`(?i)\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
)

// scanDates finds ISO dates (2026-01-05) that are not part of a timestamp.
func scanDates(s string) []tokSpan {
	var out []tokSpan
	for _, m := range dateRe.FindAllStringIndex(s, -1) {
		a, b := m[0], m[1]
		if p := runeBefore(s, a); isAlnumRune(p) || p == '-' {
			continue
		}
		if n := runeAt(s, b); isDigitR(n) || n == 'T' && isDigitR(runeAfter(s, b)) || n == '-' && isDigitR(runeAfter(s, b)) {
			continue
		}
		if _, err := time.Parse("2006-01-02", s[a:b]); err != nil {
			continue
		}
		out = append(out, tokSpan{a, b})
	}
	return out
}

func shiftDate(tok string) (string, bool) {
	t, err := time.Parse("2006-01-02", tok)
	if err != nil {
		return "", false
	}
	return t.AddDate(0, 0, 1).Format("2006-01-02"), true
}

// scanTimes finds times of day (09:30, 9:30, 14:00:00) that are not part of a timestamp.
func scanTimes(s string) []tokSpan {
	var out []tokSpan
	for _, m := range timeRe.FindAllStringIndex(s, -1) {
		a, b := m[0], m[1]
		if p := runeBefore(s, a); isAlnumRune(p) || p == ':' || p == '.' {
			continue
		}
		if n := runeAt(s, b); isDigitR(n) || n == ':' || n == '.' && isDigitR(runeAfter(s, b)) {
			continue
		}
		h, _ := strconv.Atoi(s[a : strings.IndexByte(s[a:], ':')+a])
		mm, _ := strconv.Atoi(s[strings.IndexByte(s[a:], ':')+a+1 : strings.IndexByte(s[a:], ':')+a+3])
		if h > 23 || mm > 59 {
			continue
		}
		out = append(out, tokSpan{a, b})
	}
	return out
}

// shiftTime moves a time of day an hour later, keeping its format: "09:30" → "10:30",
// "9:30" → "10:30", "23:15" → "00:15".
func shiftTime(tok string) (string, bool) {
	i := strings.IndexByte(tok, ':')
	h, err := strconv.Atoi(tok[:i])
	if err != nil {
		return "", false
	}
	h = (h + 1) % 24
	hs := strconv.Itoa(h)
	if i == 2 && h < 10 {
		hs = "0" + hs
	}
	return hs + tok[i:], true
}

var weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// scanWeekdays finds the weekdays that name a day alone: not one next to a date ("Tuesday 6
// January", "Tuesday, 2026-01-06"), where the date says which day it is.
func scanWeekdays(s string) []tokSpan {
	var out []tokSpan
	for _, m := range weekdayRe.FindAllStringIndex(s, -1) {
		rest := strings.TrimLeft(s[m[1]:], " ,(")
		if rest != "" && isDigitR(rune(rest[0])) || dateAfterRe.MatchString(rest) {
			continue
		}
		out = append(out, tokSpan{m[0], m[1]})
	}
	return out
}

var dateAfterRe = regexp.MustCompile(`^(?i)(?:the )?(?:\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d)`)

// nextWeekday gives the next day, in the same case: "Friday" → "Saturday".
func nextWeekday(tok string) (string, bool) {
	low := strings.ToLower(tok)
	for i, d := range weekdays {
		if d == low {
			return matchCase(tok, weekdays[(i+1)%7]), true
		}
	}
	return "", false
}

// matchCase writes repl in the case of like: all upper, capitalized, or as is.
func matchCase(like, repl string) string {
	switch {
	case like == "" || repl == "":
		return repl
	case len(like) > 1 && like == strings.ToUpper(like) && like != strings.ToLower(like):
		return strings.ToUpper(repl)
	case unicode.IsUpper(runeAt(like, 0)):
		r, n := utf8.DecodeRuneInString(repl)
		return string(unicode.ToUpper(r)) + repl[n:]
	}
	return repl
}

var timestampLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02T15:04"}

// shiftTimestamp moves an RFC 3339 timestamp by d, keeping its layout and offset.
func shiftTimestamp(tok string, d time.Duration) (string, bool) {
	for _, layout := range timestampLayouts {
		t, err := time.Parse(layout, tok)
		if err != nil {
			continue
		}
		out := layout
		if layout == time.RFC3339Nano {
			out = time.RFC3339
			if strings.Contains(tok, ".") {
				out = time.RFC3339Nano
			}
		}
		return t.Add(d).Format(out), true
	}
	return "", false
}

// shiftTimestamps moves every timestamp of s by d.
func shiftTimestamps(s string, d time.Duration) string {
	return timestampRe.ReplaceAllStringFunc(s, func(tok string) string {
		if out, ok := shiftTimestamp(tok, d); ok {
			return out
		}
		return tok
	})
}

func hasTimestamp(s string) bool { return timestampRe.MatchString(s) }

// --- negation

// negationRule turns a statement into its opposite: a polarity word swapped, a negation
// removed, or one added to a verb.
type negationRule struct {
	re   *regexp.Regexp
	word string // the word the rule matches, lower case: a text without it is not searched
	repl string
	// notBefore: skip a match followed by this (the "is" of "is not").
	notBefore []string
	// polarity: a polarity word swapped; skipped inside a negation ("is not approved yet" made
	// "is not rejected yet" is as true as before)
	polarity bool
}

func wholeWord(w string) *regexp.Regexp { return regexp.MustCompile(`(?i)\b` + w + `\b`) }

var negationRules = func() []negationRule {
	var rs []negationRule
	polarity := true
	swap := func(pairs ...string) {
		for i := 0; i+1 < len(pairs); i += 2 {
			rs = append(rs, negationRule{re: wholeWord(pairs[i]), word: pairs[i], repl: pairs[i+1], polarity: polarity})
		}
	}
	// polarity words, both ways
	swap("approved", "rejected", "rejected", "approved", "approve", "reject", "reject", "approve",
		"accepted", "declined", "declined", "accepted", "accept", "decline", "decline", "accept",
		"available", "unavailable", "unavailable", "available",
		"eligible", "ineligible", "ineligible", "eligible", "granted", "denied", "denied", "granted",
		"unpaid", "paid", "paid", "unpaid", "valid", "invalid", "invalid", "valid",
		"in stock", "out of stock", "out of stock", "in stock", "on time", "late",
		"correct", "incorrect", "incorrect", "correct",
		"always", "never", "never", "always", "yes", "no", "agree", "disagree")
	// negations removed
	polarity = false
	swap("cannot", "can", "can't", "can", "can not", "can", "won't", "will", "will not", "will",
		"isn't", "is", "is not", "is", "aren't", "are", "are not", "are", "wasn't", "was", "was not", "was",
		"doesn't", "does", "does not", "does", "don't", "do", "do not", "do", "didn't", "did", "did not", "did",
		"no longer", "still")
	// negations added
	for _, v := range []string{"is", "are", "was", "were", "will", "should", "must", "has been", "have been", "does"} {
		rs = append(rs, negationRule{re: wholeWord(v), word: v, repl: v + " not", notBefore: []string{" not", "n't"}})
	}
	rs = append(rs, negationRule{re: wholeWord("can"), word: "can", repl: "cannot", notBefore: []string{" not", "'t"}})
	return rs
}()

// negations lists up to max negations of s, each of one statement (the first match of a rule),
// in rule order: polarity words, then removed negations, then added ones. Questions state nothing
// and are left alone; a "not" is added only to a sentence without digits, whose numbers, dates
// and times the token edits change instead (so that "total is not 200" need not be told from
// "total is 200" by a verifier that checks the total next to its label).
func negations(s string, max int) []textEdit {
	var out []textEdit
	used := map[int]bool{} // start offsets already negated
	low := strings.ToLower(s)
	for _, r := range negationRules {
		if len(out) >= max {
			break
		}
		if !strings.Contains(low, r.word) {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(s, -1) {
			a, b := m[0], m[1]
			sentence := sentenceAround(s, a, b)
			skip := used[a] || strings.HasSuffix(sentence, "?") ||
				r.notBefore != nil && strings.ContainsAny(sentence, "0123456789")
			for _, nb := range r.notBefore {
				if strings.HasPrefix(strings.ToLower(s[b:]), nb) {
					skip = true
				}
			}
			if r.polarity && negatedBefore(s[:a]) {
				skip = true
			}
			if skip {
				continue
			}
			used[a] = true
			old := s[a:b]
			repl := matchCase(old, r.repl)
			// for people: the sentence, before and after
			st := strings.Index(s, sentence)
			shown := strings.TrimSpace(sentence)
			out = append(out, textEdit{kind: "negation", old: shown, new: strings.TrimSpace(s[st:a] + repl + s[b:st+len(sentence)]), apply: func(x string) string {
				if x != s {
					return x
				}
				return x[:a] + repl + x[b:]
			}})
			break
		}
	}
	return out
}

// negatedBefore reports whether one of the three words before the end of s is a negation.
func negatedBefore(s string) bool {
	ws := strings.Fields(strings.ToLower(s))
	if len(ws) > 3 {
		ws = ws[len(ws)-3:]
	}
	for _, w := range ws {
		w = strings.Trim(w, ".,;:!?()\"")
		if w == "not" || w == "no" || w == "never" || strings.HasSuffix(w, "n't") || w == "cannot" {
			return true
		}
	}
	return false
}

// sentenceAround is the sentence of s that holds s[a:b], with its final punctuation: it starts
// after the previous ". ", "! ", "? " or line break and ends at the next one (or at the end of s).
func sentenceAround(s string, a, b int) string {
	start := 0
	for i := a - 1; i > 0; i-- {
		if s[i] == '\n' || s[i] == ' ' && strings.IndexByte(".!?", s[i-1]) >= 0 {
			start = i + 1
			break
		}
	}
	end := len(s)
	for i := b; i < len(s); i++ {
		if s[i] == '\n' {
			end = i
			break
		}
		if strings.IndexByte(".!?", s[i]) >= 0 && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n') {
			end = i + 1
			break
		}
	}
	return s[start:end]
}

// --- harmless rewrites of prose

// The parts of a harmless rewrite, in the order they are applied.
const (
	rewriteGreeting  = "a greeting line and a sign-off added"
	rewriteBreaks    = "extra line breaks"
	rewriteThousands = "thousands separators in amounts of 1000 or more"
)

var rewriteParts = []string{rewriteThousands, rewriteBreaks, rewriteGreeting}

// rewriteProse applies the named parts of the harmless rewrite to s (all parts when none are
// named).
func rewriteProse(s string, parts ...string) string {
	if len(parts) == 0 {
		parts = rewriteParts
	}
	for _, p := range rewriteParts {
		if !hasStr(parts, p) {
			continue
		}
		switch p {
		case rewriteThousands:
			s = addThousands(s)
		case rewriteBreaks:
			s = addBreaks(s)
		case rewriteGreeting:
			s = "Hello,\n\n" + s + "\n\nBest regards"
		}
	}
	return s
}

// sentenceEnd is a full stop after a word of two lowercase letters or more (not "Mr." or
// "approx. 5"), or a digit or a closing bracket, before a capital letter.
var sentenceEnd = regexp.MustCompile(`([a-z]{2,}|[0-9)%])([.!?]) +([A-Z])`)

// addBreaks doubles the line breaks of s and breaks it after each sentence.
func addBreaks(s string) string {
	s = strings.ReplaceAll(s, "\n", "\n\n")
	return sentenceEnd.ReplaceAllString(s, "$1$2\n\n$3")
}

var currencyRe = regexp.MustCompile(`(?i)^(?:€|\$|£|eur|euro|euros|usd|gbp|chf|dollars?|pounds?)$`)

// addThousands writes the amounts of 1000 or more that have no separator with one:
// "EUR 1240.50" → "EUR 1,240.50", "1240,50 €" → "1.240,50 €". An amount is a number with a
// currency next to it, or with exactly two decimals.
func addThousands(s string) string {
	var b strings.Builder
	last := 0
	for _, sp := range scanNumbers(s) {
		tok := s[sp.start:sp.end]
		if !plainNum.MatchString(tok) {
			continue
		}
		digits, _, rest := numberParts(tok)
		if len(digits) < 4 || digits[0] == '0' {
			continue
		}
		if !(len(rest) == 3 || isAmountContext(s, sp)) {
			continue
		}
		sep := ","
		if strings.HasPrefix(rest, ",") {
			sep = "."
		}
		b.WriteString(s[last:sp.start])
		b.WriteString(claims.GroupDigits(digits, sep) + rest)
		last = sp.end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// isAmountContext reports whether a currency stands right before or after the number (one
// space allowed).
func isAmountContext(s string, sp tokSpan) bool {
	before := strings.TrimRight(s[:sp.start], " ")
	after := strings.TrimLeft(s[sp.end:], " ")
	if sp.start-len(before) > 1 || len(s)-sp.end-len(after) > 1 {
		// more than one space: not next to it
		before, after = before+"x", "x"+after
	}
	// the word before, and the word after
	i := strings.LastIndexFunc(before, func(r rune) bool { return !unicode.IsLetter(r) && !strings.ContainsRune("€$£", r) })
	wb := before[i+1:]
	if i >= 0 {
		_, n := utf8.DecodeRuneInString(before[i:])
		wb = before[i+n:]
	}
	j := strings.IndexFunc(after, func(r rune) bool { return !unicode.IsLetter(r) && !strings.ContainsRune("€$£", r) })
	wa := after
	if j >= 0 {
		wa = after[:j]
	}
	return wb != "" && currencyRe.MatchString(wb) || wa != "" && currencyRe.MatchString(wa)
}

func hasStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
