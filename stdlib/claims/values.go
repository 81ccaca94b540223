package claims

import (
	"strconv"
	"strings"
	"time"

	"github.com/bojanz/currency"
	"github.com/nyaruka/phonenumbers"
	"github.com/shopspring/decimal"
)

// mention is a value found in a text: a claim under construction.
type mention struct {
	Claim
	t0, t1 int    // token range
	col    int    // column in a Markdown table, -1 elsewhere
	item   int    // index of its item in the sentence
	scope  []span // the token ranges it is about (see Doc.scope)
}

// scanner finds the values of one sentence, toks[t0:t1].
type scanner struct {
	d      *Doc
	t0, t1 int
	out    []*mention
}

func (sc *scanner) tok(i int) *tok {
	if i < sc.t0 || i >= sc.t1 {
		return nil
	}
	return &sc.d.toks[i]
}

// low is the lower-case text of token i ("" outside the sentence).
func (sc *scanner) low(i int) string {
	if t := sc.tok(i); t != nil {
		return t.low
	}
	return ""
}

// attached reports whether token i follows token i-1 without white space.
func (sc *scanner) attached(i int) bool {
	t := sc.tok(i)
	return t != nil && !t.sp
}

func (sc *scanner) add(k Kind, t0, t1 int, value string) *mention {
	d := sc.d
	m := &mention{t0: t0, t1: t1, col: -1}
	m.Kind, m.Value = k, value
	m.Start, m.End = d.toks[t0].s, d.toks[t1-1].e
	m.Text = d.src[m.Start:m.End]
	m.weekday = -1
	sc.out = append(sc.out, m)
	return m
}

// scan finds the values left to right; at each token the first recogniser that matches takes the
// longest form it knows.
func (sc *scanner) scan() {
	for i := sc.t0; i < sc.t1; {
		if j := sc.at(i); j > i {
			i = j
			continue
		}
		i++
	}
}

func (sc *scanner) at(i int) int {
	d := sc.d
	t := &d.toks[i]
	if sp, ok := d.spanAt(t.s); ok {
		j := i
		for j < sc.t1 && d.toks[j].e <= sp.e {
			j++
		}
		if sp.kind == Email {
			sc.add(Email, i, j, strings.ToLower(d.src[sp.s:sp.e]))
		}
		return j
	}
	if j := sc.knownID(i); j > i {
		return j
	}
	switch t.kind {
	case tNum:
		if i > sc.t0 && sc.attached(i) && d.toks[i-1].kind == tWord {
			if j := sc.attachedID(i - 1); j > i {
				return j
			}
			return sc.skipAttached(i) // "Q3", "A4": part of a word
		}
		if j := sc.numID(i); j > i {
			return j
		}
		if u := sc.tok(i + 1); u != nil && t.e-t.s == 4 && u.sp && u.kind == tWord && u.e-u.s == 2 && strings.ToUpper(d.src[u.s:u.e]) == d.src[u.s:u.e] {
			if n := sc.tok(i + 2); n == nil || n.kind != tWord || strings.ToUpper(d.src[n.s:n.s+1]) == d.src[n.s:n.s+1] {
				sc.add(ID, i, i+2, t.low+" "+strings.ToUpper(sc.low(i+1))) // a Dutch postcode: "1505 HX Zaandam"
				return i + 2
			}
		}
		if t.e-t.s == 4 && (sc.low(i+1) == "hrs" || sc.low(i+1) == "hours" && t.low[0] == '0') {
			// "0700 hrs": a time written the military way
			if h, m := atoi(t.low[:2]), atoi(t.low[2:]); h < 24 && m < 60 {
				sc.addTime(i, i+2, h, m, "", sc.zone(i+2))
				return i + 2
			}
		}
		if refWords[sc.low(i-1)] && i > sc.t0 {
			// "clause 9.3", "section 4", "page 12": a reference, no value
			j := i + 1
			for j+1 < sc.t1 && (sc.low(j) == "." || sc.low(j) == "-") && sc.attached(j) && sc.tok(j+1).kind == tNum && sc.attached(j+1) {
				j += 2
			}
			return j
		}
		for _, f := range []func(int) int{sc.isoDate, sc.numericDate, sc.phone, sc.clock, sc.dayMonth, sc.quantity} {
			if j := f(i); j > i {
				return sc.bracketWeekday(j)
			}
		}
	case tPunct:
		switch t.low {
		case "+", "(":
			return sc.phone(i)
		case "#":
			if n := sc.tok(i + 1); n != nil && n.kind == tNum && !n.sp {
				sc.add(ID, i, i+2, n.low)
				return i + 2
			}
		}
		if _, ok := currencyWords[t.low]; ok {
			return sc.quantity(i)
		}
	case tWord:
		for _, f := range []func(int) int{sc.attachedID, sc.wordDate, sc.wordTime, sc.phoneCue, sc.quantity, sc.name, sc.status} {
			if j := f(i); j > i {
				return sc.bracketWeekday(j)
			}
		}
	}
	return i
}

// bracketWeekday takes a weekday in brackets after a date ending at j into it: "22/01 (a
// Thursday)", "8 January (Thu)"; a weekday that disagrees marks the date's conflict.
func (sc *scanner) bracketWeekday(j int) int {
	if len(sc.out) == 0 || sc.out[len(sc.out)-1].Kind != Date || sc.out[len(sc.out)-1].t1 != j || sc.low(j) != "(" {
		return j
	}
	k := j + 1
	if w := sc.low(k); w == "a" || w == "an" {
		k++
	}
	wd, e := sc.weekday(k)
	if wd < 0 || sc.low(e) != ")" {
		return j
	}
	m := sc.out[len(sc.out)-1]
	m.t1 = e + 1
	if !m.day.IsZero() && int(m.day.Weekday()) != wd {
		m.conflict, m.weekday = true, wd
	}
	return e + 1
}

// numID reads an id that starts with digits and has capitals between hyphens: a plate
// ("1-VFR-218"), a rack ("14-C").
func (sc *scanner) numID(i int) int {
	j, letters := i+1, false
	for j+1 < sc.t1 && sc.low(j) == "-" && sc.attached(j) && sc.attached(j+1) {
		n := sc.d.toks[j+1]
		if n.kind == tWord {
			w := sc.d.src[n.s:n.e]
			if len(w) > 4 || strings.ToUpper(w) != w {
				return i
			}
			letters = true
		} else if n.kind != tNum {
			return i
		}
		j += 2
	}
	if !letters {
		return i
	}
	if t := sc.tok(j); t != nil && !t.sp && (t.kind == tWord || t.kind == tNum) {
		return i
	}
	sc.add(ID, i, j, sc.d.src[sc.d.toks[i].s:sc.d.toks[j-1].e])
	return j
}

// tellVerbs are status words that also tell somebody something ("confirmed to Jonas").
var tellVerbs = words(`confirmed confirm confirms approved`)

// durationAdjectives may stand between a number and its unit of time.
var durationAdjectives = words(`free extra additional full whole more further`)

// refWords name a part of a document: the number after them is a reference, no value.
var refWords = words(`clause clauses section sections article articles paragraph chapter page pages appendix annex`)

// skipAttached skips the digits and letters glued to a word ("Q3", "3rd").
func (sc *scanner) skipAttached(i int) int {
	j := i + 1
	for j < sc.t1 && sc.attached(j) && (sc.d.toks[j].kind == tNum || sc.d.toks[j].kind == tWord) {
		j++
	}
	return j
}

// ---- identifiers ----

// attachedID reads an identifier at a word: capitals then digits, with or without a hyphen
// ("INV-2041", "PO-2026-118", "R-22", "PO2041").
func (sc *scanner) attachedID(i int) int {
	d := sc.d
	t := sc.tok(i)
	if t == nil || t.kind != tWord || !isUpperASCII(d.src[t.s:t.e]) || t.e-t.s > 6 || isCurrencyCode(d.src[t.s:t.e]) {
		return i // "EUR1240" is money
	}
	j := i + 1
	if n := sc.tok(j); n != nil && !n.sp && n.low == "-" {
		j++
	}
	n := sc.tok(j)
	if n == nil || n.sp || n.kind != tNum || (j == i+1 && t.e-t.s < 2) {
		return i
	}
	j++
	for j+1 < sc.t1 && sc.attached(j) && d.toks[j].low == "-" && sc.attached(j+1) &&
		(d.toks[j+1].kind == tNum || (d.toks[j+1].kind == tWord && isUpperASCII(d.src[d.toks[j+1].s:d.toks[j+1].e]))) {
		j += 2
	}
	sc.add(ID, i, j, strings.ToUpper(d.src[d.toks[i].s:d.toks[j-1].e]))
	return j
}

func isUpperASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// knownID reads one of the workspace's identifiers (Options.IDs) at token i.
func (sc *scanner) knownID(i int) int {
	d := sc.d
	best := i
	var bestID string
	for _, id := range d.ids[d.toks[i].low] {
		if j, ok := sc.matchRaw(i, id.toks); ok && j > best {
			best, bestID = j, id.id
		}
	}
	if best > i {
		sc.add(ID, i, best, bestID)
	}
	return best
}

// matchRaw matches the lower-case token texts want at token i, glued as they are in want.
func (sc *scanner) matchRaw(i int, want []string) (int, bool) {
	for k, w := range want {
		t := sc.tok(i + k)
		if t == nil || t.low != w || (k > 0 && t.sp) {
			return i, false
		}
	}
	j := i + len(want)
	if t := sc.tok(j); t != nil && !t.sp && (t.kind == tWord || t.kind == tNum) {
		return i, false
	}
	return j, true
}

// ---- dates ----

// isoDate reads "2026-01-15", with a time after it ("2026-01-15T10:00:00+01:00", "2026-01-15 10:00").
func (sc *scanner) isoDate(i int) int {
	y := sc.tok(i)
	if y == nil || y.e-y.s != 4 || sc.low(i+1) != "-" || !sc.attached(i+1) || sc.low(i+3) != "-" || !sc.attached(i+3) {
		return i
	}
	mo, da := sc.tok(i+2), sc.tok(i+4)
	if mo == nil || da == nil || mo.kind != tNum || da.kind != tNum || !sc.attached(i+2) || !sc.attached(i+4) {
		return i
	}
	day, ok := mkDate(atoi(y.low), atoi(mo.low), atoi(da.low))
	if !ok {
		return i
	}
	j := i + 5
	// "T10:00:00Z" comes as the word "T10"? no: "T" is a word and "10" a number, glued
	if t := sc.tok(j); t != nil && (t.low == "t" && !t.sp) {
		m := sc.add(Date, i, j, day.Format("2006-01-02"))
		m.day = day
		if k := sc.clockAt(j+1, true); k > j+1 {
			// an offset after the time ("+01:00", "-05:00") belongs to it
			if o := sc.low(k); (o == "+" || o == "-") && sc.attached(k) {
				if h := sc.tok(k + 1); h != nil && h.kind == tNum && sc.attached(k+1) {
					k += 2
					if sc.low(k) == ":" && sc.attached(k) {
						if m := sc.tok(k + 1); m != nil && m.kind == tNum && sc.attached(k+1) {
							k += 2
						}
					}
					if t := sc.out[len(sc.out)-1]; t.Kind == Time {
						t.t1, t.End = k, sc.d.toks[k-1].e
						t.Text = sc.d.src[t.Start:t.End]
					}
				}
			}
			return k
		}
		return j
	}
	m := sc.add(Date, i, j, day.Format("2006-01-02"))
	m.day = day
	return j
}

// numericDate reads "08.01.2026", "8/1/2026", "8-1-26", and "8/1" or "08/01" without a year (day
// first, or month first in the US region).
func (sc *scanner) numericDate(i int) int {
	a := sc.tok(i)
	if a == nil || a.e-a.s > 2 {
		return i
	}
	sep := sc.low(i + 1)
	if (sep != "." && sep != "/" && sep != "-") || !sc.attached(i+1) {
		return i
	}
	b := sc.tok(i + 2)
	if b == nil || b.kind != tNum || b.e-b.s > 2 || !sc.attached(i+2) {
		return i
	}
	x, y := atoi(a.low), atoi(b.low)
	year := 0
	j := i + 3
	if t := sc.tok(j + 1); sep == "." && sc.low(j) == "." && sc.attached(j) && (t == nil || t.sp || t.kind != tNum) {
		// "16.11." with its closing dot and no year, in a region that writes dates so or after
		// a word that asks for a day ("on 8.1.", "Delivery date: 16.11."): not "The total is 16.11."
		if !(dottedDates[strings.ToUpper(sc.d.opt.Region)] || sc.dayCue(i)) {
			return i
		}
		dt, ok := sc.d.yearless(y, x)
		if !ok {
			return i
		}
		m := sc.add(Date, i, j, dt.Format("2006-01-02")) // the closing dot may end the sentence too
		m.day = dt
		return j
	}
	if sc.low(j) == sep && sc.attached(j) {
		c := sc.tok(j + 1)
		if c == nil || c.kind != tNum || !sc.attached(j+1) || (c.e-c.s != 2 && c.e-c.s != 4) {
			return i
		}
		year = atoi(c.low)
		if year < 100 {
			year += 2000
		}
		j += 2
	} else {
		// without a year: only "d/m" (a slash), not "8.1" (a decimal) or "8-1" (a range), and not
		// a fraction ("8/10 pallets"): after a word that asks for a day, or before no noun; and
		// "16.11." with its closing dot, in a region that writes dates so or after a word that
		// asks for a day ("on 8.1.", "Delivery date: 16.11.")
		if sep != "/" {
			return i
		}
		if t := sc.tok(j); t != nil && !t.sp && (t.low == "%" || t.kind == tNum || t.kind == tWord) {
			return i
		}
		prev := ""
		if i > 0 {
			prev = sc.d.toks[i-1].low
		}
		if t := sc.tok(j); t != nil && t.kind == tWord && !functionWords[t.low] && !personalPronouns[t.low] && !dateCues[prev] && !isMonthOrDay(prev) {
			if _, _, ok := sc.meridiem(j); !ok {
				return i
			}
		}
	}
	if t := sc.tok(j); t != nil && !t.sp && (t.kind == tNum || t.kind == tWord) {
		return i
	}
	day, month := x, y
	us := strings.EqualFold(sc.d.opt.Region, "US")
	if us {
		day, month = y, x
	}
	var alts []time.Time
	if year == 0 {
		dt, ok := sc.d.yearless(month, day)
		if !ok {
			return i
		}
		if sc.d.opt.Region == "" && x <= 12 && y <= 12 && x != y {
			if other, ok := sc.d.yearless(x, y); ok {
				alts = append(alts, other) // "8/1" may be the 1st of August to an American
			}
		}
		m := sc.add(Date, i, j, dt.Format("2006-01-02"))
		m.day, m.alts = dt, alts
		return j
	}
	dt, ok := mkDate(year, month, day)
	if !ok {
		return i
	}
	m := sc.add(Date, i, j, dt.Format("2006-01-02"))
	m.day = dt
	return j
}

// dottedDates are the regions that write a day and month as "16.11.".
var dottedDates = map[string]bool{"DE": true, "AT": true, "CH": true, "DK": true, "NO": true, "FI": true, "PL": true, "CZ": true, "SK": true, "HU": true}

// dayCue reports whether the words before token i ask for a day: "on", "by", "due", "date:".
func (sc *scanner) dayCue(i int) bool {
	if i == 0 {
		return false
	}
	prev := sc.d.toks[i-1].low
	if prev == ":" && i >= 2 {
		prev = sc.d.toks[i-2].low
		return prev == "date" || prev == "day" || prev == "datum" || prev == "deadline" || prev == "due"
	}
	return dateCues[prev]
}

// dayMonth reads a date that starts with its day: "8 January", "8th of Jan 2026", "8. Januar"
// is not read (English only).
func (sc *scanner) dayMonth(i int) int {
	a := sc.tok(i)
	if a == nil || a.e-a.s > 2 {
		return i
	}
	day := atoi(a.low)
	j := i + 1
	if t := sc.tok(j); t != nil && !t.sp && (t.low == "st" || t.low == "nd" || t.low == "rd" || t.low == "th") {
		j++
	}
	if sc.low(j) == "." && sc.attached(j) {
		j++
	}
	if sc.low(j) == "of" {
		j++
	}
	mo, k := sc.month(j)
	if mo == 0 || day < 1 || day > 31 {
		return i
	}
	year, k2 := sc.year(k)
	return sc.finishDate(i, k2, year, mo, day, -1)
}

// month reads a month name at token i ("January", "Jan", "Jan.", "Sept"), returning 1-12 and
// the token after it. "May" counts only when capitalised.
func (sc *scanner) month(i int) (int, int) {
	t := sc.tok(i)
	if t == nil || t.kind != tWord {
		return 0, i
	}
	w := t.low
	for k, m := range months {
		if w == m || (len(w) >= 3 && strings.HasPrefix(m, w) && (len(w) == 3 || w == "sept")) {
			if w == "may" && sc.d.src[t.s] != 'M' {
				return 0, i
			}
			j := i + 1
			if len(w) < len(m) && sc.low(j) == "." && sc.attached(j) {
				j++
			}
			return k + 1, j
		}
	}
	return 0, i
}

// year reads ", 2026" or " 2026" after a date.
func (sc *scanner) year(i int) (int, int) {
	j := i
	if sc.low(j) == "," {
		j++
	}
	t := sc.tok(j)
	if t != nil && t.kind == tNum && t.e-t.s == 4 {
		if y := atoi(t.low); y >= 1900 && y <= 2200 {
			if n := sc.tok(j + 1); n == nil || n.sp || n.kind == tPunct {
				if n != nil && n.low == ":" {
					return 0, i
				}
				return y, j + 1
			}
		}
	}
	return 0, i
}

// wordDate reads a date that starts with a word: a weekday ("Thursday", "Thu, 8 Jan", "Thursday
// the 8th"), a month ("January 8th, 2026", "Jan 8"), or a relative day ("today", "tomorrow", "the
// day after tomorrow", "next Friday", "Friday next week").
func (sc *scanner) wordDate(i int) int {
	t := sc.tok(i)
	// relative days
	switch t.low {
	case "today", "tonight":
		return sc.relative(i, i+1, 0)
	case "tomorrow":
		return sc.relative(i, i+1, 1)
	case "yesterday":
		return sc.relative(i, i+1, -1)
	case "the":
		if sc.low(i+1) == "day" && sc.low(i+2) == "after" && sc.low(i+3) == "tomorrow" {
			return sc.relative(i, i+4, 2)
		}
		return i
	case "this", "next", "last", "coming":
		if wd, j := sc.weekday(i + 1); wd >= 0 {
			return sc.weekdayDate(i, j, wd, t.low)
		}
		return i
	}
	if wd, j := sc.weekday(i); wd >= 0 {
		// "Thursday 8 January", "Thursday, January 8", "Thursday the 8th", "Thu 08/01"
		k := j
		if sc.low(k) == "," {
			k++
		}
		if sc.low(k) == "the" {
			k++
		}
		if n := sc.tok(k); n != nil && n.kind == tNum {
			sub := &scanner{d: sc.d, t0: k, t1: sc.t1}
			for _, f := range []func(int) int{sub.isoDate, sub.numericDate, sub.dayMonth} {
				if e := f(k); e > k {
					m := sub.out[len(sub.out)-1]
					return sc.withWeekday(i, e, m, wd)
				}
			}
			// "from Monday 19 to Friday 23 January": the month of the range's end
			if n.e-n.s <= 2 && !sc.attached(k) {
				q := k + 1
				if sep := sc.low(q); sep == "to" || sep == "-" || sep == "–" || sep == "until" || sep == "till" || sep == "and" {
					q++
					if _, e := sc.weekday(q); e > q {
						q = e
					}
					if d2 := sc.tok(q); d2 != nil && d2.kind == tNum && d2.e-d2.s <= 2 {
						if mo, e := sc.month(q + 1); mo > 0 {
							year, _ := sc.year(e)
							if end := sc.finishDate(i, k+1, year, mo, atoi(n.low), wd); end > i {
								m := sc.out[len(sc.out)-1]
								if int(m.day.Weekday()) != wd {
									m.conflict, m.weekday = true, wd
								}
								return end
							}
						}
					}
				}
			}
			// "Thursday the 8th": the day of the written month
			if e, day, ok := sc.ordinalDay(k); ok {
				m := sc.add(Date, i, e, day.Format("2006-01-02"))
				m.day = day
				if int(day.Weekday()) != wd {
					m.conflict, m.weekday = true, wd
				}
				return e
			}
		}
		if mo, e := sc.month(k); mo > 0 {
			if n := sc.tok(e); n != nil && n.kind == tNum && n.e-n.s <= 2 {
				e2 := e + 1
				if s := sc.tok(e2); s != nil && !s.sp && (s.low == "st" || s.low == "nd" || s.low == "rd" || s.low == "th") {
					e2++
				}
				year, e3 := sc.year(e2)
				sub := &scanner{d: sc.d, t0: i, t1: sc.t1}
				if end := sub.finishDate(k, e3, year, mo, atoi(n.low), wd); end > k {
					return sc.withWeekday(i, end, sub.out[len(sub.out)-1], wd)
				}
			}
		}
		// "Carnival Tuesday (17 February)": the date in brackets says which Tuesday
		if sc.low(j) == "(" {
			if n := sc.tok(j + 1); n != nil && (n.kind == tNum || n.kind == tWord) {
				sub := &scanner{d: sc.d, t0: j + 1, t1: sc.t1}
				for _, f := range []func(int) int{sub.isoDate, sub.numericDate, sub.dayMonth, sub.wordDate} {
					if e := f(j + 1); e > j+1 && len(sub.out) > 0 && sub.out[len(sub.out)-1].Kind == Date && sc.low(e) == ")" {
						return sc.withWeekday(i, e+1, sub.out[len(sub.out)-1], wd)
					}
				}
			}
		}
		// "Friday next week"
		if sc.low(j) == "next" && sc.low(j+1) == "week" {
			return sc.weekdayDate(i, j+2, wd, "next week")
		}
		return sc.weekdayDate(i, j, wd, "")
	}
	if mo, j := sc.month(i); mo > 0 {
		n := sc.tok(j)
		if n == nil || n.kind != tNum || n.e-n.s > 2 {
			return i
		}
		k := j + 1
		if s := sc.tok(k); s != nil && !s.sp && (s.low == "st" || s.low == "nd" || s.low == "rd" || s.low == "th") {
			k++
		}
		if s := sc.tok(k); s != nil && !s.sp && s.kind == tNum {
			return i
		}
		year, k2 := sc.year(k)
		return sc.finishDate(i, k2, year, mo, atoi(n.low), -1)
	}
	return i
}

// ordinalDay reads "the 8th" after a weekday (at token k, the number): that day of the written
// month, or of the next month when it is more than two weeks past.
func (sc *scanner) ordinalDay(k int) (int, time.Time, bool) {
	n := sc.tok(k)
	s := sc.tok(k + 1)
	if n == nil || s == nil || s.sp || (s.low != "st" && s.low != "nd" && s.low != "rd" && s.low != "th") || !sc.d.hasClock {
		return k, time.Time{}, false
	}
	today := sc.d.today
	day, ok := mkDate(today.Year(), int(today.Month()), atoi(n.low))
	if !ok {
		return k, time.Time{}, false
	}
	if today.Sub(day) > 14*24*time.Hour {
		day = day.AddDate(0, 1, 0)
	}
	return k + 2, day, true
}

// withWeekday replaces the date m (found after a weekday at token i) with one that spans the
// weekday too, and marks a weekday that disagrees with the date.
func (sc *scanner) withWeekday(i, end int, m *mention, wd int) int {
	n := sc.add(Date, i, end, m.Value)
	n.day, n.alts = m.day, m.alts
	if int(m.day.Weekday()) != wd {
		n.conflict = true
		n.weekday = wd
	}
	return end
}

// finishDate adds the date year-month-day (year 0: the nearest to the written day) spanning
// tokens i..j.
func (sc *scanner) finishDate(i, j, year, month, day, wd int) int {
	var dt time.Time
	var ok bool
	if year == 0 {
		dt, ok = sc.d.yearless(month, day)
	} else {
		dt, ok = mkDate(year, month, day)
	}
	if !ok {
		return i
	}
	m := sc.add(Date, i, j, dt.Format("2006-01-02"))
	m.day = dt
	return j
}

// weekday reads a weekday at token i: the full name in any case ("Thursday", "Thursday's"), or a
// capitalised abbreviation ("Thu", "Thurs", "Tue."); "Sat", "Sun" and "Wed" only before a date, a
// comma or a period.
func (sc *scanner) weekday(i int) (int, int) {
	t := sc.tok(i)
	if t == nil || t.kind != tWord {
		return -1, i
	}
	for k, name := range weekdays {
		if t.key == name {
			return k, i + 1
		}
		if len(t.low) >= 3 && len(t.low) <= 5 && strings.HasPrefix(name, t.low) && sc.d.src[t.s] >= 'A' && sc.d.src[t.s] <= 'Z' {
			if t.low == "sun" || t.low == "sat" || t.low == "wed" {
				if n := sc.tok(i + 1); n == nil || (n.low != "," && n.kind != tNum && n.low != ".") {
					return -1, i
				}
			}
			j := i + 1
			if sc.low(j) == "." && sc.attached(j) {
				j++
			}
			return k, j
		}
	}
	return -1, i
}

// weekdayDate adds a date named by its weekday: the next such day on or after the written day
// ("this" and no word alike), "next" the same day (and the one a week later as an alternative),
// "last" the one before, "next week" the one in the following week.
func (sc *scanner) weekdayDate(i, j, wd int, how string) int {
	d := sc.d
	if !d.hasClock {
		m := sc.add(Date, i, j, weekdays[wd])
		m.weekday = wd
		return j
	}
	today := d.today
	ahead := (wd - int(today.Weekday()) + 7) % 7
	var day time.Time
	var alts []time.Time
	switch how {
	case "last":
		back := (int(today.Weekday()) - wd + 7) % 7
		if back == 0 {
			back = 7
		}
		day = today.AddDate(0, 0, -back)
	case "next":
		if ahead == 0 {
			ahead = 7
		}
		day = today.AddDate(0, 0, ahead)
		alts = []time.Time{day.AddDate(0, 0, 7)}
	case "next week":
		// the weekday of the week (Monday to Sunday) after this one
		mon := today.AddDate(0, 0, -((int(today.Weekday())+6)%7)+7)
		day = mon.AddDate(0, 0, (wd+6)%7)
	default:
		day = today.AddDate(0, 0, ahead)
	}
	m := sc.add(Date, i, j, day.Format("2006-01-02"))
	m.day, m.alts = day, alts
	return j
}

func (sc *scanner) relative(i, j, days int) int {
	d := sc.d
	if !d.hasClock {
		return i
	}
	day := d.today.AddDate(0, 0, days)
	m := sc.add(Date, i, j, day.Format("2006-01-02"))
	m.day = day
	return j
}

func mkDate(y, m, d int) (time.Time, bool) {
	if m < 1 || m > 12 || d < 1 || d > 31 || y < 1900 || y > 2200 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false
	}
	return t, true
}

// yearless is the day month/day nearest to the written day (within half a year either way), or in
// the written year; without a clock, in the year 2000 (a leap year) and compared without its year.
func (d *Doc) yearless(month, day int) (time.Time, bool) {
	if !d.hasClock {
		t, ok := mkDate(2000, month, day)
		return t, ok
	}
	y := d.today.Year()
	best, ok := time.Time{}, false
	for _, yy := range []int{y - 1, y, y + 1} {
		t, good := mkDate(yy, month, day)
		if !good {
			continue
		}
		if !ok || absDur(t.Sub(d.today)) < absDur(best.Sub(d.today)) {
			best, ok = t, true
		}
	}
	return best, ok
}

func absDur(x time.Duration) time.Duration {
	if x < 0 {
		return -x
	}
	return x
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// ---- times ----

// dateCues are words after which "8/1" is a day.
var dateCues = words(`on by until till from before after due dated since starting through`)

// timeWords set the context in which "14.30" and "9-11" are times.
var timeWords = words(`at by from until till to before after around between @ starts start starting ends end ending`)

// clock reads a time of day at a number, and a range that starts with it ("10:00-11:00", "9-11 am",
// "10:00 to 11:30", "2:30 pm", "14h30", "14.30" after "at").
func (sc *scanner) clock(i int) int {
	return sc.clockAt(i, false)
}

// clockAt reads a time of day at token i; iso says it follows "T" in an ISO date.
func (sc *scanner) clockAt(i int, iso bool) int {
	h, mi, j, ok := sc.hm(i, iso)
	if !ok {
		// a bare hour is a time only as part of a range with am/pm or in a time context
		return sc.bareRange(i)
	}
	// a range?
	k := j
	if sep := sc.low(k); sep == "-" || sep == "–" || sep == "—" || sep == "to" || sep == "until" || sep == "till" ||
		(sep == "and" && sc.low(i-1) == "between") {
		if h2, mi2, j2, ok2 := sc.hm(k+1, false); ok2 {
			h2, mi2, j2 = sc.ampm(h2, mi2, j2)
			_, _, startAP := sc.meridiem(j)
			h, mi, j = sc.ampm(h, mi, j)
			if pm, ok := sc.meridiemIn(k+1, j2); ok && pm && !startAP && h < 12 && (h+12)*60+mi <= h2*60+mi2 {
				h += 12 // "1:30-2:15 pm": the start in the afternoon too
			}
			sc.addTime(i, j, h, mi, "start", sc.zone(j2))
			sc.addTime(k+1, j2, h2, mi2, "end", sc.zone(j2))
			return sc.zoneEnd(j2)
		} else if n := sc.tok(k + 1); n != nil && n.kind == tNum && n.e-n.s <= 2 {
			// "9:00 - 11 am"
			if hh, mm, jj, ok3 := sc.hourWithAmPm(k + 1); ok3 {
				sc.addTime(i, j, h, mi, "start", sc.zone(jj))
				sc.addTime(k+1, jj, hh, mm, "end", sc.zone(jj))
				return sc.zoneEnd(jj)
			}
		}
	}
	sc.addTime(i, j, h, mi, "", sc.zone(j))
	return sc.zoneEnd(j)
}

// hm reads "14:30", "14:30:00", "2:30 pm", "14h30", "14h", "2 pm", "14.30" in a time context, at
// token i, with am/pm applied.
func (sc *scanner) hm(i int, iso bool) (h, m, j int, ok bool) {
	a := sc.tok(i)
	if a == nil || a.kind != tNum || a.e-a.s > 2 {
		return 0, 0, i, false
	}
	h = atoi(a.low)
	sep := sc.low(i + 1)
	if (sep == ":" || sep == ".") && sc.attached(i+1) {
		b := sc.tok(i + 2)
		if b != nil && b.kind == tNum && b.e-b.s == 2 && sc.attached(i+2) {
			m = atoi(b.low)
			j = i + 3
			if sep == "." && !iso && !sc.timeContext(i, j) {
				return 0, 0, i, false
			}
			if sep == "." && !iso {
				// "at 1.18 EUR/SDR", "at 2.50 per kg": a rate, not a time
				if c, _ := sc.currency(j); c != "" || sc.low(j) == "/" || sc.low(j) == "per" {
					return 0, 0, i, false
				}
			}
			if sc.low(j) == ":" && sc.attached(j) {
				if c := sc.tok(j + 1); c != nil && c.kind == tNum && c.e-c.s == 2 && sc.attached(j+1) {
					j += 2
				}
			}
			if t := sc.tok(j); t != nil && !t.sp && (t.kind == tNum || t.low == "%") {
				return 0, 0, i, false
			}
			h, m, j = sc.ampm(h, m, j)
			if h > 24 || m > 59 || (h == 24 && m > 0) {
				return 0, 0, i, false
			}
			return h % 24, m, j, true
		}
	}
	if sep == "h" && sc.attached(i+1) && (a.e-a.s == 2 || timeWords[sc.low(i-1)]) {
		// "14h30", "09h00", "at 9h"; "1h30" is a duration
		j = i + 2
		if b := sc.tok(j); b != nil && b.kind == tNum && b.e-b.s == 2 && sc.attached(j) {
			m = atoi(b.low)
			j++
		}
		if t := sc.tok(j); t != nil && !t.sp && (t.kind == tWord || t.kind == tNum) {
			return 0, 0, i, false
		}
		if h > 23 || m > 59 {
			return 0, 0, i, false
		}
		return h, m, j, true
	}
	if hh, mm, jj, ok := sc.hourWithAmPm(i); ok {
		return hh, mm, jj, true
	}
	if sc.low(i+1) == "o'clock" {
		if h >= 1 && h <= 12 {
			return h, 0, i + 2, true
		}
	}
	return 0, 0, i, false
}

// hourWithAmPm reads "2 pm", "2pm", "11 a.m." at token i.
func (sc *scanner) hourWithAmPm(i int) (int, int, int, bool) {
	a := sc.tok(i)
	if a == nil || a.kind != tNum || a.e-a.s > 2 {
		return 0, 0, i, false
	}
	h := atoi(a.low)
	if h < 1 || h > 12 {
		return 0, 0, i, false
	}
	if pm, j, ok := sc.meridiem(i + 1); ok {
		if pm && h < 12 {
			h += 12
		}
		if !pm && h == 12 {
			h = 0
		}
		return h, 0, j, true
	}
	return 0, 0, i, false
}

// meridiem reads "am", "pm", "a.m.", "p.m." at token i.
func (sc *scanner) meridiem(i int) (pm bool, j int, ok bool) {
	t := sc.tok(i)
	if t == nil {
		return false, i, false
	}
	switch t.low {
	case "am", "pm":
		if n := sc.tok(i + 1); n != nil && !n.sp && (n.kind == tWord || n.kind == tNum) {
			return false, i, false
		}
		j = i + 1
		if sc.low(j) == "." && sc.attached(j) && sc.tok(j+1) != nil && !sc.tok(j+1).sp {
			j++
		}
		return t.low == "pm", j, true
	case "a", "p":
		if sc.low(i+1) == "." && sc.attached(i+1) && sc.low(i+2) == "m" && sc.attached(i+2) {
			j = i + 3
			if sc.low(j) == "." && sc.attached(j) {
				j++
			}
			return t.low == "p", j, true
		}
	}
	return false, i, false
}

// meridiemIn reports the am/pm written between tokens a and b, if any.
func (sc *scanner) meridiemIn(a, b int) (pm, ok bool) {
	for i := a; i < b; i++ {
		if p, _, found := sc.meridiem(i); found {
			return p, true
		}
	}
	return false, false
}

// ampm applies an am/pm after a time read without one ("2:30 pm" is read by hm already; this
// serves the first end of "9:00-11:00 pm" and "9-11 am").
func (sc *scanner) ampm(h, m, j int) (int, int, int) {
	if pm, k, ok := sc.meridiem(j); ok {
		if pm && h < 12 {
			h += 12
		}
		if !pm && h == 12 {
			h = 0
		}
		return h, m, k
	}
	return h, m, j
}

// bareRange reads "9-11 am", "9–11h", or "9-11" after a time word ("from 9-11", "at 9-11").
func (sc *scanner) bareRange(i int) int {
	a := sc.tok(i)
	sep := sc.low(i + 1)
	if a == nil || a.e-a.s > 2 || !(sep == "-" || sep == "–" || sep == "to" || sep == "until" || sep == "till" || sep == "and" && sc.low(i-1) == "between") {
		return i
	}
	b := sc.tok(i + 2)
	if b == nil || b.kind != tNum || b.e-b.s > 2 {
		return i
	}
	h1, h2 := atoi(a.low), atoi(b.low)
	if h1 > 24 || h2 > 24 || h1 >= h2 && h2 > 12 {
		return i
	}
	j := i + 3
	if pm, k, ok := sc.meridiem(j); ok {
		if pm {
			if h2 < 12 {
				h2 += 12
			}
			if h1 < 12 && h1+12 <= h2 {
				h1 += 12
			}
		}
		sc.addTime(i, i+1, h1, 0, "start", nil)
		sc.addTime(i+2, k, h2, 0, "end", nil)
		return k
	}
	if n := sc.tok(j); n != nil && n.kind == tWord && !(n.low == "h" || n.low == "hrs" || n.low == "uhr") {
		if _, _, ok := sc.zoneAt(j); !ok {
			return i // "from 12 to 14 crates" counts crates
		}
	}
	if n := sc.tok(j); n != nil && !n.sp && (n.low == "%" || n.low == "." || n.low == ",") && sc.tok(j+1) != nil && sc.tok(j+1).kind == tNum && !sc.tok(j+1).sp || n != nil && !n.sp && n.low == "%" {
		return i // "from 3 to 4%", "from 3 to 4.5%": a percentage, not hours
	}
	if sc.low(j) == "h" || sc.low(j) == "hrs" || sc.low(j) == "uhr" || sc.timeContext(i, j) {
		if sc.low(j) == "h" || sc.low(j) == "hrs" || sc.low(j) == "uhr" {
			j++
		}
		sc.addTime(i, i+1, h1, 0, "start", nil)
		sc.addTime(i+2, j, h2, 0, "end", nil)
		return j
	}
	return i
}

// timeContext reports whether tokens i..j are a time by their context: a time word just before
// them or a date right before, or am/pm, "h" or a zone right after.
func (sc *scanner) timeContext(i, j int) bool {
	if timeWords[sc.low(i-1)] {
		return true
	}
	if len(sc.out) > 0 {
		last := sc.out[len(sc.out)-1]
		if last.Kind == Date && (last.t1 == i || last.t1 == i-1 || (last.t1 == i-2 && sc.low(i-1) == "at")) {
			return true
		}
	}
	n := sc.low(j)
	if n == "h" || n == "hrs" || n == "uhr" {
		return true
	}
	if _, ok := zoneWords[n]; ok && n != "z" {
		return true
	}
	_, _, ok := sc.meridiem(j)
	return ok
}

// zone reads a zone after a time ("UTC", "CET", "(CET)", "PT", "Central time", "London time"), in
// minutes east of UTC.
func (sc *scanner) zone(j int) *int {
	off, _, ok := sc.zoneAt(j)
	if !ok {
		return nil
	}
	return &off
}

// zoneAt reads a zone at token j: its offset and the token after it. A zone named without saying
// standard or daylight time ("PT", "Central time", "London time") is the one in force where it
// is on the day the text was written (when that is known).
func (sc *scanner) zoneAt(j int) (int, int, bool) {
	off, e, key, ok := sc.zoneKeyAt(j)
	if ok && sc.d.hasClock && inDaylightTime(zoneRules[key], sc.d.today) {
		off += 60
	}
	return off, e, ok
}

// zoneKeyAt reads a zone at token j: its standard offset, the token after it, and the word(s)
// that named it.
func (sc *scanner) zoneKeyAt(j int) (int, int, string, bool) {
	k := j
	if sc.low(k) == "(" {
		k++
	}
	t := sc.tok(k)
	if t == nil || t.kind != tWord {
		return 0, j, "", false
	}
	end := func(e int) int {
		if sc.low(e) == "time" {
			e++
		}
		if k > j && sc.low(e) == ")" {
			e++
		}
		return e
	}
	if off, ok := zoneWords[t.low]; ok && (t.low != "z" || !t.sp) && (len(t.low) > 2 || isUpperASCII(sc.d.src[t.s:t.e])) {
		return off, end(k + 1), t.low, true
	}
	if off, ok := zoneNames[t.low+" "+sc.low(k+1)]; ok && sc.low(k+2) == "time" {
		return off, end(k + 2), t.low + " " + sc.low(k+1), true
	}
	if off, ok := zoneNames[t.low]; ok && sc.low(k+1) == "time" {
		return off, end(k + 1), t.low, true
	}
	if off, ok := zoneNames[t.low]; ok && zoneRules[t.low] == "us" && !strings.Contains(t.low, " ") {
		// "9 AM Central", "at 2:30 Pacific.": a US zone's name alone, before no other word
		if n := sc.tok(k + 1); n == nil || n.kind != tWord {
			return off, end(k + 1), t.low, true
		}
	}
	return 0, j, "", false
}

// inDaylightTime reports whether day (midnight UTC) is in daylight saving time by a rule of
// zoneRules: "us" from the second Sunday of March to the first Sunday of November, "eu" from the
// last Sunday of March to the last Sunday of October; "" never.
func inDaylightTime(rule string, day time.Time) bool {
	y := day.Year()
	// nth is the n-th Sunday of month m (n = -1: the last)
	nth := func(m time.Month, n int) time.Time {
		if n < 0 {
			t := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC)
			return t.AddDate(0, 0, -int(t.Weekday()))
		}
		t := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return t.AddDate(0, 0, (7-int(t.Weekday()))%7+7*(n-1))
	}
	var from, to time.Time
	switch rule {
	case "us":
		from, to = nth(time.March, 2), nth(time.November, 1)
	case "eu":
		from, to = nth(time.March, -1), nth(time.October, -1)
	default:
		return false
	}
	return !day.Before(from) && day.Before(to)
}

// zoneEnd skips a zone after a time.
func (sc *scanner) zoneEnd(j int) int {
	_, e, ok := sc.zoneAt(j)
	if !ok {
		return j
	}
	return e
}

func (sc *scanner) addTime(i, j, h, m int, role string, zone *int) {
	if j <= i {
		j = i + 1
	}
	x := sc.add(Time, i, j, fmtHM(h, m))
	x.Role, x.zone = role, zone
}

func fmtHM(h, m int) string {
	return strconv.Itoa(100 + h)[1:] + ":" + strconv.Itoa(100 + m)[1:]
}

// wordTime reads "noon", "midday", "midnight".
func (sc *scanner) wordTime(i int) int {
	switch sc.low(i) {
	case "noon", "midday":
		sc.addTime(i, i+1, 12, 0, "", nil)
		return i + 1
	case "midnight":
		sc.addTime(i, i+1, 0, 0, "", nil)
		return i + 1
	}
	return i
}

// ---- phone numbers ----

// phoneCues make the number after them a phone number even without "+" or a leading 0.
var phoneCues = words(`tel tel. phone telephone mobile mob cell number call ring fax whatsapp dial`)

func (sc *scanner) phoneCue(i int) int {
	if !phoneCues[sc.low(i)] {
		return i
	}
	j := i + 1
	for j < sc.t1 && j <= i+3 && (sc.low(j) == ":" || sc.low(j) == "." || sc.low(j) == "is" || sc.low(j) == "on" || sc.low(j) == "at" || sc.low(j) == "number") {
		j++
	}
	if t := sc.tok(j); t != nil && (t.kind == tNum || t.low == "+" || t.low == "(") {
		if k := sc.phoneAt(j, true); k > j {
			return k
		}
	}
	return i
}

func (sc *scanner) phone(i int) int { return sc.phoneAt(i, false) }

// phoneAt reads a phone number at token i: digits with spaces, hyphens, dots, slashes and
// brackets between them, 7 to 15 digits, that libphonenumber parses as a possible number of the
// default region (or of the country its "+" or "00" names). Without a cue word before it, it
// must start with "+", "00", "0" or "(".
func (sc *scanner) phoneAt(i int, cued bool) int {
	d := sc.d
	first := sc.tok(i)
	if first == nil {
		return i
	}
	if !cued && first.low != "+" && first.low != "(" && !(first.kind == tNum && first.low[0] == '0') && !sc.nanp(i) {
		return i
	}
	var b strings.Builder
	digits := 0
	j := i
	last := i
	for j < sc.t1 {
		t := &d.toks[j]
		if j > i && t.sp && t.kind != tNum && t.low != "(" && t.low != "+" {
			break
		}
		if j > i && t.sp && d.src[d.toks[j-1].e:t.s] != " " {
			break // one plain space at most between groups
		}
		switch {
		case t.kind == tNum:
			digits += t.e - t.s
			b.WriteString(t.low)
			last = j + 1
		case t.low == "+" && j == i:
			b.WriteString("+")
		case t.low == "(" || t.low == ")" || t.low == "-" || t.low == "." || t.low == "/" || t.low == "–":
			if t.low == ")" {
				last = j + 1
			}
		default:
			j = sc.t1
			continue
		}
		if digits > 17 {
			return i
		}
		j++
	}
	if digits < 7 || digits > 15 {
		return i
	}
	raw := d.src[first.s:d.toks[last-1].e]
	if strings.Count(raw, "(") != strings.Count(raw, ")") && !strings.Contains(raw, "(0)") {
		if strings.HasPrefix(raw, "(") {
			return i
		}
	}
	region := strings.ToUpper(d.opt.Region)
	if region == "" {
		region = "ZZ"
	}
	num, err := phonenumbers.Parse(raw, region)
	if err != nil || !phonenumbers.IsPossibleNumber(num) {
		return i
	}
	sc.add(Phone, i, last, phonenumbers.Format(num, phonenumbers.E164))
	return last
}

// nanp reports whether tokens i.. are a number of the North American plan written as people in
// its region write it, in a region that uses it: three digits, three and four, joined by the same
// hyphen, dot or space ("312-555-0147", "312.555.0147", "312 555 0147").
func (sc *scanner) nanp(i int) bool {
	if phonenumbers.GetCountryCodeForRegion(strings.ToUpper(sc.d.opt.Region)) != 1 {
		return false
	}
	d := sc.d
	want := []int{3, 3, 4}
	sep := ""
	j := i
	for g, n := range want {
		t := sc.tok(j)
		if t == nil || t.kind != tNum || t.e-t.s != n || (g > 0 && sep == " " && d.src[d.toks[j-1].e:t.s] != " ") {
			return false
		}
		if g == len(want)-1 {
			next := sc.tok(j + 1)
			return next == nil || next.kind != tNum && !(next.low == "-" || next.low == ".") || next.low == "." && sc.tok(j+2) == nil
		}
		s := sc.tok(j + 1)
		switch {
		case s != nil && !s.sp && (s.low == "-" || s.low == ".") && (sep == "" || sep == s.low):
			sep = s.low
			j += 2
		case s != nil && s.kind == tNum && s.sp && (sep == "" || sep == " "):
			sep = " "
			j++
		default:
			return false
		}
	}
	return false
}

// ---- quantities: money, percentages, durations, counts, numbers ----

// unitStop are words after a number that are not the unit of a count.
var unitStop = words(`am pm a an the and or but of in on at by for to from with per via is are was were be
	this that these those it its th st nd rd o'clock h hrs uhr percent pct k m mn bn million billion thousand
	times x more less than over under euros euro dollars pounds eur usd gbp minus plus p.m a.m utc cet cest gmt
	since because until till when while after before unless if so as each apiece`)

// countAdjectives may stand between a number and the unit of a count ("2 other offers").
var countAdjectives = words(`other more extra additional new full empty open free remaining separate further spare
	damaged missing broken late open old unused used`)

// quantity reads money, a percentage, a duration, a count or a plain number at token i.
func (sc *scanner) quantity(i int) int {
	d := sc.d
	t := sc.tok(i)
	// a currency before the number: "EUR 1,240.00", "€1.240,00", "US$ 5"
	if code, k := sc.currency(i); code != "" {
		if n, ok := readNumber(d.src, d.toks, k, sc.t1); ok {
			val, end := sc.scale(n.val, n.end, true)
			m := sc.add(Money, i, end, code+" "+val.StringFixed(moneyDigits(code)))
			m.num, m.unit = val, code
			return end
		}
		if v, e, ok := wordNumber(d.toks, k, sc.t1); ok {
			val := decimal.NewFromInt(int64(v))
			m := sc.add(Money, i, e, code+" "+val.StringFixed(moneyDigits(code)))
			m.num, m.unit = val, code
			return e
		}
		return i
	}
	var val decimal.Decimal
	var end int
	isWord := false
	switch t.kind {
	case tNum:
		n, ok := readNumber(d.src, d.toks, i, sc.t1)
		if !ok {
			return i
		}
		if sc.low(n.end) == ":" && sc.attached(n.end) && sc.tok(n.end+1) != nil && sc.tok(n.end+1).kind == tNum && sc.attached(n.end+1) {
			return n.end + 2 // "1:1", "3:2": a ratio or a score, no number
		}
		val, end = n.val, n.end
		if n.digits == 4 && !n.grouped && n.frac == 0 && !isQuantityFollower(sc, end) && sc.yearContext(i, end) {
			if y := val.IntPart(); y >= 1900 && y <= 2200 {
				return end // a year
			}
		}
	case tWord:
		switch t.low {
		case "half":
			if (sc.low(i+1) == "an" || sc.low(i+1) == "a") && durationUnits[sc.low(i+2)] > 0 {
				secs := durationUnits[sc.low(i+2)] / 2
				m := sc.add(Duration, i, i+3, strconv.FormatInt(secs, 10))
				m.num = decimal.NewFromInt(secs)
				return i + 3
			}
			return i
		case "a", "an":
			w := sc.low(i + 1)
			u := durationUnits[w]
			if u == 0 || len(w) == 1 {
				return i
			}
			if len(sc.out) > 0 && sc.out[len(sc.out)-1].t1 == i {
				return i + 2 // "EUR 120 a year", "3 calls a day": a rate, no duration
			}
			if u < 0 {
				m := sc.add(Duration, i, i+2, durationValue(decimal.NewFromInt(-u), true))
				m.num, m.unit = decimal.NewFromInt(-u), "mo"
				return i + 2
			}
			secs, j := u, i+2
			if sc.low(j) == "and" && sc.low(j+1) == "a" && sc.low(j+2) == "half" {
				secs, j = u+u/2, j+3
			}
			m := sc.add(Duration, i, j, strconv.FormatInt(secs, 10))
			m.num = decimal.NewFromInt(secs)
			return j
		}
		v, e, ok := wordNumber(d.toks, i, sc.t1)
		if !ok {
			return i
		}
		val, end, isWord = decimal.NewFromInt(int64(v)), e, true
	default:
		return i
	}
	val, end = sc.scale(val, end, false)
	// money after the number: "1240 euros", "1.240,00 €", "1,240 EUR"; not "18 Euro pallets"
	if code, k := sc.currency(end); code != "" && !sc.euroPallet(end, k) {
		m := sc.add(Money, i, k, code+" "+val.StringFixed(moneyDigits(code)))
		m.num, m.unit = val, code
		return k
	}
	// a percentage
	if p := sc.low(end); p == "%" {
		m := sc.add(Percent, i, end+1, val.String())
		m.num = val
		return end + 1
	}
	switch sc.low(end) {
	case "percent", "pct", "pp":
		m := sc.add(Percent, i, end+1, val.String())
		m.num = val
		return end + 1
	case "per":
		if sc.low(end+1) == "cent" {
			m := sc.add(Percent, i, end+2, val.String())
			m.num = val
			return end + 2
		}
	case "percentage":
		if w := sc.low(end + 1); w == "point" || w == "points" {
			m := sc.add(Percent, i, end+2, val.String())
			m.num = val
			return end + 2
		}
	}
	// a duration: "45 minutes", "1.5 hours", "2h", "1h30", "30-minute", "3 working days"
	if j, secs, months, ok := sc.durationUnit(end, val); ok {
		m := sc.add(Duration, i, j, durationValue(secs, months))
		m.num = secs
		if months {
			m.unit = "mo"
		}
		return j
	}
	// a count: "18 pallets", "two other offers"
	k := end
	if countAdjectives[sc.low(k)] || sc.euroPallet(k, k+1) {
		k++
	}
	if sc.low(k) == "-" && sc.attached(k) {
		k++
	}
	// a measure: "1,200 m2", "1,200 m²", "40 m3", "400 m", "5 t"
	if u := sc.tok(k); u != nil && u.kind == tWord && (u.low == "m" || u.low == "km" || u.low == "cm" || u.low == "t") {
		unit, e := u.low, k+1
		if p := sc.low(e); (p == "2" || p == "3" || p == "²" || p == "³") && sc.attached(e) {
			unit, e = unit+map[string]string{"2": "2", "3": "3", "²": "2", "³": "3"}[p], e+1
		}
		if n := sc.tok(e); n == nil || n.sp || n.kind != tWord {
			m := sc.add(Count, i, e, val.String()+" "+unit)
			m.num, m.unit = val, unit
			return e
		}
	}
	if u := sc.tok(k); u != nil && u.kind == tWord && len(u.low) >= 2 && !unitStop[u.low] && !functionWords[u.low] &&
		!isMonthOrDay(u.low) && durationUnits[u.low] == 0 {
		if _, cur := currencyWords[u.low]; !cur {
			unit := singular(u.key)
			e := k + 1
			// a compound of two nouns: "9 pallet places", "3 loading slots"
			if n := sc.tok(e); n != nil && n.kind == tWord && strings.HasSuffix(n.low, "s") && len(n.low) > 3 &&
				!unitStop[n.low] && !functionWords[n.low] && !isMonthOrDay(n.low) && durationUnits[n.low] == 0 && !strings.HasSuffix(u.low, "s") {
				if _, isStatus := sc.d.r.statusIndex[n.key]; !isStatus {
					unit += " " + singular(n.key)
					e++
				}
			}
			m := sc.add(Count, i, e, val.String()+" "+unit)
			m.num, m.unit = val, unit
			return e
		}
	}
	if isWord && sc.low(i-1) != ":" {
		return i // a number word alone is not read, but after a label it is ("Failed racks: three")
	}
	m := sc.add(Number, i, end, val.String())
	m.num = val
	return end
}

// euroPallet reports whether the currency word at j (ending at k) names the EUR pallet, a kind
// of pallet: "18 Euro pallets", "18 EUR-pallets".
func (sc *scanner) euroPallet(j, k int) bool {
	w := sc.low(j)
	if w != "euro" && w != "eur" {
		return false
	}
	if sc.low(k) == "-" {
		k++
	}
	n := sc.tok(k)
	return n != nil && (n.key == "pallet" || n.key == "pallets")
}

// yearWords before or after a four-digit number make it a year ("in 2026", "Q3 2026", "the 2026
// tariffs", "December 2025", "FY 2026").
var yearWords = words(`in since until till by of from to the our this next last fy year q1 q2 q3 q4 h1 h2 financial fiscal during before after for
	roadmap tender budget plan planning report audit season forecast review strategy contract agreement policy programme
	program calendar edition cohort campaign rollout outlook kickoff targets accounts statements`)

// yearContext reports whether the number at i..end is a year by its neighbours: a year word or a
// month before it, or a word glued to a quarter ("Q3"); a number alone ("Total: 2000") is no year.
func (sc *scanner) yearContext(i, end int) bool {
	prev := sc.low(i - 1)
	if yearWords[prev] || isMonthOrDay(prev) {
		return true
	}
	if t := sc.tok(i - 1); t != nil && t.kind == tNum && sc.low(i-2) == "q" {
		return true // "Q3 2026"
	}
	for _, m := range months {
		if len(prev) >= 3 && strings.HasPrefix(m, prev) {
			return true
		}
	}
	return false
}

// isQuantityFollower reports whether the token at j makes the number before it a quantity.
func isQuantityFollower(sc *scanner, j int) bool {
	w := sc.low(j)
	if w == "%" || w == "percent" {
		return true
	}
	if _, ok := currencyWords[w]; ok {
		return true
	}
	if u := sc.tok(j); u != nil && u.kind == tWord && isCurrencyCode(sc.d.src[u.s:u.e]) {
		return true
	}
	return false
}

// scale applies "k", "m", "million", "thousand", "bn" after a number.
func (sc *scanner) scale(v decimal.Decimal, j int, money bool) (decimal.Decimal, int) {
	t := sc.tok(j)
	if t == nil {
		return v, j
	}
	mul := int64(0)
	switch t.low {
	case "k":
		if !t.sp {
			mul = 1000
		}
	case "thousand":
		mul = 1000
	case "m", "mn":
		// "12m" is twelve minutes or metres unless money is around it
		if code, _ := sc.currency(j + 1); code != "" || money {
			mul = 1000000
		}
	case "million", "mln", "mio":
		mul = 1000000
	case "bn", "billion":
		mul = 1000000000
	}
	if mul == 0 {
		return v, j
	}
	return v.Mul(decimal.NewFromInt(mul)), j + 1
}

// currency reads a currency at token i: a symbol ("€", "$", "US$"), a word ("euros") or an ISO
// 4217 code written in capitals ("EUR", "CHF").
func (sc *scanner) currency(i int) (string, int) {
	t := sc.tok(i)
	if t == nil {
		return "", i
	}
	if sc.low(i+1) == "$" && sc.attached(i+1) {
		switch t.low {
		case "us":
			return "USD", i + 2
		case "c", "ca", "can":
			return "CAD", i + 2
		case "a", "au":
			return "AUD", i + 2
		case "nz":
			return "NZD", i + 2
		case "hk":
			return "HKD", i + 2
		}
	}
	if t.low == "$" || t.low == "dollar" || t.low == "dollars" {
		// "$85" in Australia is 85 Australian dollars: the region's own dollar
		if code, ok := regionDollars[strings.ToUpper(sc.d.opt.Region)]; ok {
			return code, i + 1
		}
	}
	if code, ok := currencyWords[t.low]; ok {
		if t.kind == tWord && len(t.low) == 3 && !isUpperASCII(sc.d.src[t.s:t.e]) && t.low != "eur" && t.low != "usd" {
			return "", i // "kr", "sek" lower case are not read; "eur" is
		}
		return code, i + 1
	}
	if t.kind == tWord && isCurrencyCode(sc.d.src[t.s:t.e]) {
		return sc.d.src[t.s:t.e], i + 1
	}
	return "", i
}

// regionDollars are the regions whose own currency "$" and "dollars" name.
var regionDollars = map[string]string{"AU": "AUD", "CA": "CAD", "NZ": "NZD", "SG": "SGD", "HK": "HKD"}

// isCurrencyCode reports whether s is an ISO 4217 code written in capitals.
func isCurrencyCode(s string) bool {
	return len(s) == 3 && isUpperASCII(s) && currency.IsValid(s)
}

// moneyDigits is the number of minor digits of a currency (2 for EUR, 0 for JPY).
func moneyDigits(code string) int32 {
	if d, ok := currency.GetDigits(code); ok {
		return int32(d)
	}
	return 2
}

// durationUnit reads the unit of a duration after a number (at token j), returning its end, the
// length in seconds (in months for months and years) and whether it counts months.
func (sc *scanner) durationUnit(j int, val decimal.Decimal) (int, decimal.Decimal, bool, bool) {
	t := sc.tok(j)
	if t == nil {
		return j, decimal.Zero, false, false
	}
	k := j
	if t.low == "-" && !t.sp {
		k++ // "30-minute"
		t = sc.tok(k)
		if t == nil || t.sp {
			return j, decimal.Zero, false, false
		}
	}
	w := t.low
	if (w == "working" || w == "business") && (sc.low(k+1) == "day" || sc.low(k+1) == "days") {
		w, k = w+" "+sc.low(k+1), k+1
	}
	if durationAdjectives[w] && durationUnits[sc.low(k+1)] != 0 {
		w, k = sc.low(k+1), k+1 // "2 free hours", "3 extra days"
	}
	u, ok := durationUnits[w]
	if !ok {
		return j, decimal.Zero, false, false
	}
	if len(w) == 1 && t.sp {
		return j, decimal.Zero, false, false // "45 m" is not read; "45m" is
	}
	if w == "m" || w == "s" || w == "d" {
		if n := sc.tok(k + 1); n != nil && !n.sp && (n.kind == tWord) {
			return j, decimal.Zero, false, false
		}
	}
	k++
	if u < 0 {
		return k, val.Mul(decimal.NewFromInt(-u)), true, true
	}
	secs := val.Mul(decimal.NewFromInt(u))
	// "1h30", "1h 30m", "1 hour 30 minutes", "an hour and a half"
	if u == 3600 {
		if n := sc.tok(k); n != nil && n.kind == tNum && (!n.sp || sc.low(k+1) == "m" || sc.low(k+1) == "min" || sc.low(k+1) == "mins" || sc.low(k+1) == "minutes") {
			mins, ok := readNumber(sc.d.src, sc.d.toks, k, sc.t1)
			if ok {
				e := mins.end
				if x := sc.low(e); x == "m" || x == "min" || x == "mins" || x == "minutes" {
					e++
				}
				return e, secs.Add(mins.val.Mul(decimal.NewFromInt(60))), false, true
			}
		}
		if sc.low(k) == "and" && sc.low(k+1) == "a" && sc.low(k+2) == "half" {
			return k + 3, secs.Add(decimal.NewFromInt(1800)), false, true
		}
	}
	return k, secs, false, true
}

func durationValue(n decimal.Decimal, months bool) string {
	if months {
		return n.String() + "mo"
	}
	return n.String()
}

func isMonthOrDay(w string) bool {
	for _, m := range months {
		if w == m {
			return true
		}
	}
	for _, d := range weekdays {
		if w == d {
			return true
		}
	}
	return false
}

// singular is a light English singular of a unit: "pallets" → "pallet", "boxes" → "box",
// "deliveries" → "delivery".
func singular(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// ---- names and statuses ----

// name reads a known name at token i (the longest alias that matches).
func (sc *scanner) name(i int) int {
	d := sc.d
	best, key := i, ""
	for _, a := range d.names[d.toks[i].key] {
		if j, ok := sc.matchWords(i, a.words); ok && j > best {
			best, key = j, a.key
		}
	}
	if best == i {
		return i
	}
	m := sc.add(Name, i, best, key)
	m.nameKey = key
	return best
}

// status reads a status word at token i (the longest that matches).
func (sc *scanner) status(i int) int {
	d := sc.d
	best := i
	var w *statusEntry
	for _, s := range d.r.statusIndex[d.toks[i].key] {
		if j, ok := sc.matchWords(i, s.words); ok && j > best {
			best, w = j, s
		}
	}
	if w == nil {
		return i
	}
	if sc.low(i-1) == "feel" && w.word.word == "free" {
		return i
	}
	if tellVerbs[sc.low(i)] && sc.low(best) == "to" {
		// "confirmed to Jonas", "confirmed it to the customer": told, no status
		if n := sc.tok(best + 1); n != nil && n.kind == tWord && (personalPronouns[n.low] || n.low == "the" || d.src[n.s] >= 'A' && d.src[n.s] <= 'Z') {
			return best
		}
	}
	m := sc.add(Status, i, best, w.word.pole)
	m.axis = w.word.axis
	return best
}

// matchWords matches the word keys want at token i, skipping hyphens between them.
func (sc *scanner) matchWords(i int, want []string) (int, bool) {
	j := i
	for k, w := range want {
		if k > 0 && sc.low(j) == "-" {
			j++
		}
		t := sc.tok(j)
		if t == nil || (t.key != w && t.low != w) {
			return i, false
		}
		j++
	}
	return j, true
}
