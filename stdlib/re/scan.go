package re

import (
	"io"
	"regexp"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/budget"
	"go.starlark.net/starlark"
)

// How matching is charged. Go's regexp takes time linear in the text it reads times the size of
// the program (each character read steps at most every instruction), and finding every match
// of a pattern can read the text again from each match (a*b|a over aaaa… reads to the end from
// every a). So the functions read their subject through a reader that counts what the matcher
// reads and charges it to the script's step budget as it goes (package budget), which also looks
// at the call's deadline: a pattern of hundreds of alternatives over a MiB stops at the budget
// instead of running for minutes. A character read costs (runeBase + instructions) units, and
// unitsPerStep units are a step: a small pattern costs under half a step per character, a 1 MiB
// subject read once about 400,000 steps; the largest program allowed, about 300 steps a character.
const (
	runeBase     = 16
	unitsPerStep = 64
	chargeEvery  = 256 * unitsPerStep // units charged at once
)

// scanner finds the matches of one compiled pattern in one subject for one call, charging th.
type scanner struct {
	th      *starlark.Thread
	first   *regexp.Regexp // the pattern, in its mode (unanchored, anchored)
	after   *regexp.Regexp // for searches past the start: \A(?s:.)(?s:.*?)(pattern)
	perRune uint64         // units per character read
	units   uint64         // read and not yet charged
	err     error          // the charge that stopped the scan
	rd      reader
}

func newScanner(th *starlark.Thread, c *compiled, after *compiled) *scanner {
	sc := &scanner{th: th, first: c.re, perRune: runeBase + uint64(c.insts)}
	if after != nil {
		sc.after = after.re
	}
	sc.rd.sc = sc
	return sc
}

// reader hands the matcher the characters of s from i, as the string matcher decodes them (an
// invalid byte is utf8.RuneError of width 1), and counts them. A first rune may be given (lead):
// the character before the search's start, decoded backwards as the string matcher does for its
// context.
type reader struct {
	sc       *scanner
	s        string
	i        int
	lead     rune
	leadSize int
}

func (r *reader) ReadRune() (rune, int, error) {
	sc := r.sc
	if sc.err != nil {
		return 0, 0, io.EOF
	}
	sc.units += sc.perRune
	if sc.units >= chargeEvery {
		if err := budget.Charge(sc.th, sc.units/unitsPerStep); err != nil {
			sc.err = err
			return 0, 0, io.EOF
		}
		sc.units %= unitsPerStep
	}
	if r.leadSize > 0 {
		c, w := r.lead, r.leadSize
		r.leadSize = 0
		return c, w, nil
	}
	if r.i >= len(r.s) {
		return 0, 0, io.EOF
	}
	c, w := rune(r.s[r.i]), 1
	if c >= utf8.RuneSelf {
		c, w = utf8.DecodeRuneInString(r.s[r.i:])
	}
	r.i += w
	return c, w, nil
}

// find returns the leftmost match of the pattern in s that starts at pos or later, as
// FindStringSubmatchIndex would give it for a search from pos (its positions in s), or nil.
// After an error (sc.err) its result means nothing.
func (sc *scanner) find(s string, pos int) []int {
	if pos == 0 || sc.after == nil {
		sc.rd = reader{sc: sc, s: s}
		return sc.first.FindReaderSubmatchIndex(&sc.rd)
	}
	c, w := utf8.DecodeLastRuneInString(s[:pos])
	start := pos - w
	sc.rd = reader{sc: sc, s: s, i: pos, lead: c, leadSize: w}
	loc := sc.after.FindReaderSubmatchIndex(&sc.rd)
	if loc == nil {
		return nil
	}
	out := loc[2:] // group 1 of after is the whole match of the pattern
	for i, p := range out {
		if p >= 0 {
			out[i] = p + start
		}
	}
	return out
}

// all returns up to n matches (all when n < 0) as FindAllStringSubmatchIndex does: an empty
// match right after the previous match is skipped.
func (sc *scanner) all(s string, n int) [][]int {
	var out [][]int
	prevEnd := -1
	for pos := 0; (n < 0 || len(out) < n) && pos <= len(s); {
		loc := sc.find(s, pos)
		if loc == nil || sc.err != nil {
			break
		}
		accept := true
		if loc[1] == pos { // an empty match
			if loc[0] == prevEnd {
				accept = false
			}
			if pos < len(s) {
				_, w := utf8.DecodeRuneInString(s[pos:])
				pos += w
			} else {
				pos++
			}
		} else {
			pos = loc[1]
		}
		prevEnd = loc[1]
		if accept {
			out = append(out, loc)
		}
	}
	return out
}

// done charges what is left and returns the error that stopped the scan, if any.
func (sc *scanner) done() error {
	if sc.err != nil {
		return sc.err
	}
	if sc.units > 0 {
		sc.err = budget.Charge(sc.th, (sc.units+unitsPerStep-1)/unitsPerStep)
		sc.units = 0
	}
	return sc.err
}
