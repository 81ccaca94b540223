package claims

import (
	"strconv"
	"strings"
	"time"

	"github.com/bojanz/currency"
	"github.com/nyaruka/phonenumbers"
	"github.com/shopspring/decimal"
)

// This file writes values: the other common formats of a claim's value (the validator's fairness
// rewrites), another value of the same kind in the claim's own format (its attacks), and the words
// of a status's other poles. Every rewrite is checked by reading it back: a format the reader would
// not read as the same value at that place is never offered.

// Formats lists other common ways to write the value of claim c of text, each read back in place
// as the same value with the same stance (at most n, in a fixed order).
func Formats(text string, c Claim, opt Options, n int) []string {
	var cands []string
	d := Read(text, opt)
	m := d.mentionAt(c.Start, c.End)
	if m == nil {
		return nil
	}
	switch c.Kind {
	case Time:
		h, mi := atoi(c.Value[:2]), atoi(c.Value[3:])
		h12, ap := h%12, "am"
		if h12 == 0 {
			h12 = 12
		}
		if h >= 12 {
			ap = "pm"
		}
		if mi == 0 {
			cands = append(cands, strconv.Itoa(h12)+" "+ap)
		} else {
			cands = append(cands, strconv.Itoa(h12)+":"+c.Value[3:]+" "+ap)
		}
		cands = append(cands, strconv.Itoa(h)+"h"+c.Value[3:], c.Value, strconv.Itoa(h)+"."+c.Value[3:]+" h")
	case Date:
		if m.day.IsZero() || !strings.ContainsAny(c.Text, "0123456789") {
			break // a weekday or "tomorrow" alone: which day it is depends on when it was written
		}
		t := m.day
		dm := t.Format("02/01/2006")
		if strings.EqualFold(opt.Region, "US") {
			dm = t.Format("01/02/2006")
		}
		cands = append(cands, t.Format("Monday 2 January 2006"), t.Format("2006-01-02"), dm, t.Format("January 2, 2006"), t.Format("Mon 2 Jan"))
	case Money:
		if a, err := currency.NewAmount(m.num.String(), m.unit); err == nil {
			for _, loc := range []string{"en", "de", "nl"} {
				f := currency.NewFormatter(currency.NewLocale(loc))
				cands = append(cands, strings.ReplaceAll(f.Format(a), "\u00a0", " "))
			}
		}
		cands = append(cands, m.unit+" "+m.num.StringFixed(moneyDigits(m.unit)))
	case Percent:
		cands = append(cands, m.num.String()+" percent", m.num.String()+" %", m.num.String()+"%")
	case Count:
		// the number in words or digits, the unit as written
		if ds := digitsOf(c.Text); ds != "" && m.num.IsInteger() && m.num.IntPart() > 0 && m.num.IntPart() < 100 {
			cands = append(cands, strings.Replace(c.Text, ds, numberWord(int(m.num.IntPart())), 1))
		}
	case Number:
		if m.num.Abs().GreaterThanOrEqual(decimal.NewFromInt(1000)) {
			cands = append(cands, groupThousands(m.num))
		}
		cands = append(cands, m.num.String())
	case Duration:
		secs := m.num.IntPart()
		if m.unit == "" && secs > 0 {
			switch {
			case secs%3600 == 0:
				h := secs / 3600
				cands = append(cands, strconv.FormatInt(h, 10)+map[bool]string{true: " hour", false: " hours"}[h == 1], strconv.FormatInt(secs/60, 10)+" minutes")
			case secs%60 == 0:
				mins := secs / 60
				cands = append(cands, strconv.FormatInt(mins, 10)+" min", strconv.FormatInt(mins, 10)+" minutes")
				if mins > 60 {
					cands = append(cands, strconv.FormatInt(mins/60, 10)+"h"+strconv.FormatInt(100+mins%60, 10)[1:])
				}
			}
		}
	case Phone:
		region := strings.ToUpper(opt.Region)
		if region == "" {
			region = "ZZ"
		}
		if num, err := phonenumbers.Parse(c.Value, region); err == nil {
			cands = append(cands, phonenumbers.Format(num, phonenumbers.INTERNATIONAL))
			if region != "ZZ" {
				cands = append(cands, phonenumbers.Format(num, phonenumbers.NATIONAL))
			}
			cands = append(cands, phonenumbers.Format(num, phonenumbers.E164))
		}
	case Status:
		// only words that mean the same in every use ("open" and "opened" do not)
		l := strings.ToLower(c.Text)
		for _, pair := range statusSynonyms {
			if l == pair[0] {
				cands = append(cands, matchCase(c.Text, pair[1]))
			}
		}
	case Email:
		cands = append(cands, strings.ToUpper(c.Value[:1])+c.Value[1:])
	}
	var out []string
	seen := map[string]bool{strings.ToLower(c.Text): true}
	for _, x := range cands {
		if len(out) >= n {
			break
		}
		if seen[strings.ToLower(x)] {
			continue
		}
		seen[strings.ToLower(x)] = true
		if sameInPlace(text, c, x, opt) {
			out = append(out, x)
		}
	}
	return out
}

// statusSynonyms are the status words a fair rewrite may exchange.
var statusSynonyms = [][2]string{{"cancelled", "canceled"}, {"canceled", "cancelled"}, {"done", "completed"},
	{"completed", "done"}, {"unpaid", "outstanding"}, {"outstanding", "unpaid"}, {"finished", "completed"},
	{"authorised", "authorized"}, {"authorized", "authorised"}}

// matchCase writes w capitalised when like is.
func matchCase(like, w string) string {
	if like != "" && like[0] >= 'A' && like[0] <= 'Z' {
		return strings.ToUpper(w[:1]) + w[1:]
	}
	return w
}

// Restyle writes value, a normal form of claim c's kind, in c's style: a time in 12 hours when c
// is, a date with its weekday when c has one, an amount with c's separators and currency; "" when
// it cannot.
func Restyle(c Claim, value string) string {
	switch c.Kind {
	case Time:
		if len(value) != 5 {
			return ""
		}
		return restyleTime(c.Text, atoi(value[:2]), atoi(value[3:]))
	case Date:
		t, err := time.Parse("2006-01-02", value)
		if err != nil {
			return ""
		}
		l := strings.ToLower(c.Text)
		switch {
		case len(c.Text) == 10 && c.Text[4] == '-':
			return value
		case strings.ContainsAny(l, "/.") && !strings.ContainsAny(l, "abcdefghijklmnopqrstuvwxyz"):
			return t.Format("02/01/2006")
		}
		for _, w := range weekdays {
			if strings.Contains(l, w[:3]) {
				return t.Format("Monday 2 January")
			}
		}
		return t.Format("2 January")
	case Money, Percent, Count, Number:
		v, err := decimal.NewFromString(strings.Fields(value + " ")[0])
		if c.Kind == Money {
			f := strings.Fields(value)
			if len(f) != 2 {
				return ""
			}
			v, err = decimal.NewFromString(f[1])
		}
		if err != nil {
			return ""
		}
		ds := digitsOf(c.Text)
		if ds == "" {
			return ""
		}
		return strings.Replace(c.Text, ds, restyleNumber(ds, v), 1)
	}
	return ""
}

// sameInPlace reports whether text with claim c written as x still names c's value there, with c's
// stance.
func sameInPlace(text string, c Claim, x string, opt Options) bool {
	nt := text[:c.Start] + x + text[c.End:]
	d := Read(nt, opt)
	m := d.mentionAt(c.Start, c.Start+len(x))
	if m == nil || m.Stance != c.Stance {
		return false
	}
	if m.Kind == c.Kind && m.Value == c.Value {
		return true
	}
	// a count written as a bare number, or a number as a count, is the same
	return family(m.Kind) == family(c.Kind) && m.num.Equal(numOf(c)) && c.Kind != Money
}

func numOf(c Claim) decimal.Decimal {
	f := strings.Fields(c.Value)
	if len(f) == 0 {
		return decimal.Zero
	}
	s := f[0]
	if c.Kind == Money && len(f) > 1 {
		s = f[1]
	}
	v, _ := decimal.NewFromString(s)
	return v
}

// mentionAt is the mention that spans exactly (or, failing that, covers) bytes s..e.
func (d *Doc) mentionAt(s, e int) *mention {
	var cover *mention
	for _, m := range d.ments {
		if m.Start == s && m.End == e {
			return m
		}
		if cover == nil && m.Start <= s && m.End >= e {
			cover = m
		}
	}
	return cover
}

// Rival is another value of claim c's kind written in c's style: the day after, an hour later,
// one more, another pole of a status; "" when there is none.
func Rival(c Claim, opt Options) string {
	switch c.Kind {
	case Time:
		h, mi := atoi(c.Value[:2]), atoi(c.Value[3:])
		return restyleTime(c.Text, (h+1)%24, mi)
	case Date:
		t, err := time.Parse("2006-01-02", c.Value)
		if err != nil {
			return ""
		}
		n := t.AddDate(0, 0, 1)
		if n.Weekday() == time.Saturday {
			n = n.AddDate(0, 0, 2)
		}
		if s := Restyle(c, n.Format("2006-01-02")); s != "" {
			return s
		}
		return n.Format("Monday 2 January")
	case Money, Percent, Count, Number:
		v := numOf(c)
		w := v.Add(decimal.NewFromInt(1))
		if v.GreaterThan(decimal.NewFromInt(100)) {
			w = v.Mul(decimal.NewFromFloat(1.1)).Round(0)
		}
		ds := digitsOf(c.Text)
		if ds == "" {
			// a number in words ("two files"): the figure in its place
			_, rest, _ := strings.Cut(c.Text, " ")
			return strings.TrimSpace(w.String() + " " + rest)
		}
		return strings.Replace(c.Text, ds, restyleNumber(ds, w), 1)
	case Duration:
		return "2 hours"
	case Status:
		if o := OtherPoles(c); len(o) > 0 {
			return o[0]
		}
	case Phone:
		t := []byte(c.Text)
		for i := len(t) - 1; i >= 0; i-- {
			if t[i] >= '0' && t[i] <= '9' {
				t[i] = '0' + (t[i]-'0'+1)%10
				return string(t)
			}
		}
	}
	return ""
}

// OtherPoles are a word of each other pole of a status claim's axis, in the lexicon's order.
func OtherPoles(c Claim) []string {
	axis := ""
	for _, s := range statuses {
		if s.pole == c.Value && (axis == "" || s.axis == axis) && strings.Contains(strings.ToLower(c.Text), strings.Fields(s.word)[0]) {
			axis = s.axis
		}
	}
	if axis == "" {
		for _, s := range statuses {
			if s.pole == c.Value {
				axis = s.axis
				break
			}
		}
	}
	var out []string
	seen := map[string]bool{c.Value: true}
	for _, s := range statuses {
		if s.axis == axis && !seen[s.pole] {
			seen[s.pole] = true
			out = append(out, s.canon)
		}
	}
	return out
}

// SentenceOf is the byte span of the sentence that holds claim c.
func (d *Doc) SentenceOf(c Claim) (int, int) {
	if c.Sentence < 0 || c.Sentence >= len(d.sents) {
		return c.Start, c.End
	}
	s := d.sents[c.Sentence]
	return d.toks[s.t0].s, d.toks[s.t1-1].e
}

// Entities are the known names of a class other than key, for the validator's "another party".
func (d *Doc) Entities(class NameClass, except string) []string {
	var out []string
	for _, n := range d.x.known {
		if n.Class == class && n.Key != except {
			out = append(out, n.Key)
		}
	}
	return out
}

// NameClassOf is the class of a known name ("" when the reader does not know it).
func (d *Doc) NameClassOf(key string) NameClass {
	return d.x.classes[key]
}

// NameKey is the key of the known name a text is, or "".
func (d *Doc) NameKey(text string) string { return d.nameKeyOf(text) }

func restyleTime(like string, h, m int) string {
	l := strings.ToLower(like)
	if strings.Contains(l, "am") || strings.Contains(l, "pm") || strings.Contains(l, "a.m") || strings.Contains(l, "p.m") {
		h12, ap := h%12, "am"
		if h12 == 0 {
			h12 = 12
		}
		if h >= 12 {
			ap = "pm"
		}
		if m == 0 && !strings.Contains(like, ":") {
			return strconv.Itoa(h12) + " " + ap
		}
		return strconv.Itoa(h12) + ":" + strconv.Itoa(100 + m)[1:] + " " + ap
	}
	if strings.Contains(l, "h") && !strings.Contains(l, ":") {
		return strconv.Itoa(h) + "h" + strconv.Itoa(100 + m)[1:]
	}
	return fmtHM(h, m)
}

// digitsOf is the first run of digits and separators in s ("1,240.00" of "EUR 1,240.00").
func digitsOf(s string) string {
	start := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		isD := c >= '0' && c <= '9'
		if start < 0 && isD {
			start = i
		}
		if start >= 0 && !isD && c != ',' && c != '.' && c != '\'' {
			return strings.TrimRight(s[start:i], ",.'")
		}
	}
	if start < 0 {
		return ""
	}
	return strings.TrimRight(s[start:], ",.'")
}

// restyleNumber writes v in the style of like: its thousands and decimal separators and its
// number of decimals.
func restyleNumber(like string, v decimal.Decimal) string {
	dec, grp := byte('.'), byte(0)
	decimals := int32(0)
	if i := strings.LastIndexAny(like, ".,"); i >= 0 && len(like)-i-1 != 3 {
		dec = like[i]
		decimals = int32(len(like) - i - 1)
		if strings.ContainsRune(like[:i], rune(other(dec))) {
			grp = other(dec)
		}
	} else if i >= 0 {
		grp = like[i]
		dec = other(grp)
	}
	s := v.StringFixed(decimals)
	intPart, frac, _ := strings.Cut(s, ".")
	if grp != 0 {
		intPart = group(intPart, grp)
	}
	if frac != "" {
		return intPart + string(dec) + frac
	}
	return intPart
}

func other(c byte) byte {
	if c == ',' {
		return '.'
	}
	return ','
}

func group(digits string, sep byte) string { return GroupDigits(digits, string(sep)) }

// GroupDigits writes digits in groups of three with sep ("1240", "," → "1,240"; no sep: as they are).
func GroupDigits(digits, sep string) string {
	if sep == "" || len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	first := len(digits) % 3
	if first > 0 {
		b.WriteString(digits[:first])
	}
	for i := first; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

func groupThousands(v decimal.Decimal) string {
	s := v.String()
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	out := group(intPart, ',')
	if neg {
		out = "-" + out
	}
	if frac != "" {
		out += "." + frac
	}
	return out
}

var smallNumberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
var tensWords = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}

func numberWord(n int) string {
	if n < 20 {
		return smallNumberWords[n]
	}
	if n%10 == 0 {
		return tensWords[n/10]
	}
	return tensWords[n/10] + "-" + smallNumberWords[n%10]
}

// plural is a unit for a count (a light English plural).
func plural(unit string, n decimal.Decimal) string {
	if n.Equal(decimal.NewFromInt(1)) {
		return unit
	}
	switch {
	case strings.HasSuffix(unit, "y") && len(unit) > 2 && !strings.ContainsRune("aeiou", rune(unit[len(unit)-2])):
		return unit[:len(unit)-1] + "ies"
	case strings.HasSuffix(unit, "x") || strings.HasSuffix(unit, "ch") || strings.HasSuffix(unit, "sh") || strings.HasSuffix(unit, "s"):
		return unit + "es"
	}
	return unit + "s"
}

// Interchangeable reports whether b could stand where a stands, so that a text with one in the
// other's place is a plausible false statement: values of one kind, counts of one unit, amounts
// of one currency, ids of one series, names of one class, statuses of one axis, rates for rates
// ("Noor" never stands for the company "Houtbouw", "420 kg" never for "8.33 SDR", "VF-88318" never
// for "CN-2026-0001", "3,498.60 SDR" never for "8.33 SDR per kg").
func (d *Doc) Interchangeable(a, b Claim) bool {
	if a.Kind != b.Kind || (a.Per == "") != (b.Per == "") {
		return false
	}
	switch a.Kind {
	case Count:
		return sameCountUnit(a.unit, b.unit) && a.unit != "" && b.unit != "" || a.unit == b.unit
	case Money:
		return a.unit == b.unit
	case ID:
		return idSeries(a.Value) == idSeries(b.Value)
	case Name:
		return d.NameClassOf(a.Value) == d.NameClassOf(b.Value)
	case Status:
		return a.axis == b.axis
	}
	return true
}
