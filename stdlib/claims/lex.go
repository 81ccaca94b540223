package claims

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tkind is the kind of a token.
type tkind uint8

const (
	tWord  tkind = iota // letters, with inner apostrophes ("isn't", "dirk's")
	tNum                // ASCII digits
	tPunct              // one other rune
)

// tok is one token of a text: a word, a run of digits or one other rune.
type tok struct {
	s, e int    // byte offsets in the text
	kind tkind  //
	low  string // lower case
	key  string // lower case, a possessive "'s" or trailing apostrophe cut, for matching names and cues
	sp   bool   // white space before it
	line int    // the line it is on (0-based)
}

// lineKind is the role of a line in a text's layout.
type lineKind uint8

const (
	lProse   lineKind = iota
	lBlank            // only white space
	lBullet           // a list item: "- ", "* ", "• ", "1. ", "2) "
	lTable            // a Markdown table row
	lHeading          // a Markdown heading, or a short line that ends with ":"
	lQuote            // "> " quoted mail
)

type line struct {
	s, e     int // byte offsets, without the newline
	kind     lineKind
	marker   int  // byte offset where the content starts (after a bullet or "#" marker)
	reported bool // quoted, or below a forwarded or quoted original message
	endPunct bool // ends with . ! ? : or ;
	colon    bool // holds "label: value" (a colon followed by a space or the end)
}

// lex splits text into lines and tokens.
func lex(src string) ([]line, []tok) {
	var lines []line
	start := 0
	for i := 0; i <= len(src); i++ {
		if i == len(src) || src[i] == '\n' {
			e := i
			if e > start && src[e-1] == '\r' {
				e--
			}
			lines = append(lines, classifyLine(src, start, e))
			start = i + 1
		}
	}
	markReported(src, lines)
	toks := make([]tok, 0, len(src)/4+4)
	ln := 0
	sp := true
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		for ln+1 < len(lines) && i > lines[ln].e {
			ln++
		}
		if r == '\n' || unicode.IsSpace(r) || r == '\u00a0' || r == '\u202f' {
			sp = true
			i += size
			continue
		}
		if ln < len(lines) && i < lines[ln].marker {
			// the bullet or heading marker of the line is layout, not words
			i = lines[ln].marker
			sp = true
			continue
		}
		t := tok{s: i, sp: sp, line: ln}
		switch {
		case r < utf8.RuneSelf && r >= '0' && r <= '9':
			j := i + 1
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			t.kind, t.e = tNum, j
		case unicode.IsLetter(r):
			j := i + size
			for j < len(src) {
				r2, n := utf8.DecodeRuneInString(src[j:])
				if unicode.IsLetter(r2) || unicode.IsMark(r2) {
					j += n
					continue
				}
				if (r2 == '\'' || r2 == '’') && j+n < len(src) {
					if r3, _ := utf8.DecodeRuneInString(src[j+n:]); unicode.IsLetter(r3) {
						j += n
						continue
					}
				}
				break
			}
			t.kind, t.e = tWord, j
		default:
			t.kind, t.e = tPunct, i+size
		}
		t.low = strings.ToLower(src[t.s:t.e])
		t.key = t.low
		if t.kind == tWord {
			t.key = wordKey(t.low)
		}
		toks = append(toks, t)
		sp = false
		i = t.e
	}
	return lines, toks
}

// wordKey is a word without a possessive ending, with a typographic apostrophe made plain.
func wordKey(low string) string {
	if strings.ContainsRune(low, '’') {
		low = strings.ReplaceAll(low, "’", "'")
	}
	if strings.HasSuffix(low, "'s") && len(low) > 2 {
		return low[:len(low)-2]
	}
	return low
}

// classifyLine finds the role of the line src[s:e].
func classifyLine(src string, s, e int) line {
	l := line{s: s, e: e, marker: s}
	i := s
	for i < e && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	text := strings.TrimRight(src[i:e], " \t")
	if text == "" {
		l.kind = lBlank
		return l
	}
	last := text[len(text)-1]
	l.endPunct = last == '.' || last == '!' || last == '?' || last == ':' || last == ';'
	l.colon = strings.Contains(text, ": ") || last == ':'
	switch {
	case text[0] == '>':
		l.kind, l.reported, l.marker = lQuote, true, i+1
	case text[0] == '|':
		l.kind = lTable
	case text[0] == '#' && (strings.HasPrefix(strings.TrimLeft(text, "#"), " ") || strings.Trim(text, "#") == ""):
		j := i
		for j < e && src[j] == '#' {
			j++
		}
		l.kind, l.marker = lHeading, j
	case bulletLen(text) > 0:
		l.kind, l.marker = lBullet, i+bulletLen(text)
	case last == ':' && len(text) <= 80:
		l.kind = lHeading
	case strings.HasPrefix(text, "**") && strings.HasSuffix(text, "**") && len(text) > 4:
		l.kind = lHeading
	}
	return l
}

// bulletLen is the length of a list item's marker at the start of text ("- ", "1. "), or 0.
func bulletLen(text string) int {
	for _, b := range []string{"- ", "* ", "• ", "– ", "· ", "+ "} {
		if strings.HasPrefix(text, b) {
			return len(b)
		}
	}
	j := 0
	for j < len(text) && j < 3 && text[j] >= '0' && text[j] <= '9' {
		j++
	}
	if j > 0 && j+1 < len(text) && (text[j] == '.' || text[j] == ')') && text[j+1] == ' ' {
		return j + 2
	}
	if len(text) > 3 && text[0] >= 'a' && text[0] <= 'h' && text[1] == ')' && text[2] == ' ' {
		return 3
	}
	return 0
}

// markReported marks the lines of a forwarded or quoted original message, which are somebody
// else's words: everything from a separator such as "-----Original Message-----", "---------- Forwarded
// message ---------" or "On Mon, 5 Jan 2026, Dirk wrote:" on.
func markReported(src string, lines []line) {
	on := false
	for i := range lines {
		l := &lines[i]
		if !on {
			t := strings.ToLower(strings.TrimSpace(src[l.s:l.e]))
			t = strings.Trim(t, "-_ ")
			if t == "original message" || t == "forwarded message" || t == "begin forwarded message:" ||
				(strings.HasPrefix(t, "on ") && strings.HasSuffix(t, " wrote:")) {
				on = true
			}
		}
		if on {
			l.reported = true
		}
	}
}
