package claims

import (
	"strings"

	"github.com/shopspring/decimal"
)

// number is a number as written: its value and how it was written.
type number struct {
	val     decimal.Decimal
	end     int  // the token after it
	grouped bool // had a thousands separator
	frac    int  // digits after the decimal separator (0 when none)
	dsep    byte // the decimal separator ('.' or ','), 0 when none
	digits  int  // digits before the decimal separator
}

// readNumber reads the number that starts at toks[i] (a run of digits): "1240", "1,240.00",
// "1.240,00", "13,5", "1'240". A separator followed by exactly three digits is a thousands
// separator unless it is the only one and another kind follows it; when both '.' and ',' appear,
// the last one is the decimal separator. A separator not followed by a digit is left alone.
func readNumber(src string, toks []tok, i, lim int) (number, bool) {
	if i >= lim || toks[i].kind != tNum {
		return number{}, false
	}
	groups := []string{toks[i].low}
	var seps []byte
	j := i + 1
	for j+1 < lim {
		p, g := toks[j], toks[j+1]
		if p.kind != tPunct || p.sp || g.kind != tNum || g.sp {
			break
		}
		c := src[p.s]
		if p.e-p.s != 1 || (c != ',' && c != '.' && c != '\'') {
			if p.low != "’" {
				break
			}
			c = '\''
		}
		seps = append(seps, c)
		groups = append(groups, g.low)
		j += 2
	}
	n := number{end: j}
	var intPart, fracPart string
	switch {
	case len(seps) == 0:
		intPart = groups[0]
	default:
		dec := byte(0)
		last := seps[len(seps)-1]
		mixed := false
		for _, s := range seps {
			if s != last {
				mixed = true
			}
		}
		switch {
		case mixed:
			dec = last
		case last == '\'':
			dec = 0
		case len(seps) > 1:
			dec = 0 // 1,240,000 or 1.240.000
		case len(groups[1]) == 3 && groups[0] != "0":
			dec = 0 // 1,240 or 1.240
		default:
			dec = last // 13.5, 13,5, 0.125
		}
		// the thousands groups must have three digits; stop before the first that does not
		k := 1
		for ; k < len(groups); k++ {
			if seps[k-1] == dec {
				break
			}
			if len(groups[k]) != 3 {
				break
			}
		}
		intPart = strings.Join(groups[:k], "")
		if k > 1 {
			n.grouped = true
		}
		if k < len(groups) && seps[k-1] == dec && dec != 0 {
			fracPart = groups[k]
			n.dsep = dec
			k++
		}
		n.end = i + 1 + 2*(k-1)
	}
	n.digits = len(intPart)
	n.frac = len(fracPart)
	s := intPart
	if fracPart != "" {
		s += "." + fracPart
	}
	v, err := decimal.NewFromString(s)
	if err != nil {
		return number{}, false
	}
	n.val = v
	return n, true
}

// wordNumber reads a number written in words at toks[i]: "eighteen", "twenty-five", "a dozen".
func wordNumber(toks []tok, i, lim int) (int, int, bool) {
	if i >= lim || toks[i].kind != tWord {
		return 0, i, false
	}
	v, ok := numberWords[toks[i].low]
	if !ok {
		return 0, i, false
	}
	j := i + 1
	if v >= 20 && v < 100 && j+1 < lim && toks[j].low == "-" && !toks[j].sp && toks[j+1].kind == tWord {
		if u, ok := numberWords[toks[j+1].low]; ok && u > 0 && u < 10 {
			return v + u, j + 2, true
		}
	}
	if v == 100 {
		return 0, i, false // "hundred" alone
	}
	if j < lim && v < 100 && (toks[j].low == "dozen" || toks[j].low == "hundred") {
		return v * numberWords[toks[j].low], j + 1, true // "two dozen", "three hundred"
	}
	return v, j, true
}
