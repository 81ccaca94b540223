// Package timefmt is how the workspace reads and writes times and durations: RFC 3339 times
// with optional parts, and Go durations with a day unit. It is a leaf: the task language, the
// workspace and the validator all parse times here.
package timefmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Layout is how times are stored and shown: RFC 3339 with seconds, in the offset given.
const Layout = "2006-01-02T15:04:05Z07:00"

// layouts accepted by Parse, tried in order. Those without an offset are read as UTC.
var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// Parse reads an RFC 3339 time. The offset may be left out (the time is then UTC), and so
// may the seconds ("2026-01-05T09:00") or the whole time of day ("2026-01-05" is midnight UTC);
// a space may stand for the "T". Fractions of a second are dropped. The result keeps the
// offset given.
func Parse(s string) (time.Time, error) {
	v := strings.TrimSpace(s)
	if len(v) > 10 && v[10] == ' ' {
		v = v[:10] + "T" + v[11:]
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.Truncate(time.Second), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid time %q: want RFC 3339, like 2026-01-05T09:00:00Z", s)
}

// Normalize parses s with Parse and formats it with Layout.
func Normalize(s string) (string, time.Time, error) {
	t, err := Parse(s)
	if err != nil {
		return "", time.Time{}, err
	}
	return t.Format(Layout), t, nil
}

// ParseDuration reads a duration: Go's syntax ("90m", "2h30m", "1.5h", "45s") plus the unit
// "d" for 24 hours ("1d", "1d12h", "0.5d"). A leading "-" makes it negative.
func ParseDuration(s string) (time.Duration, error) {
	bad := func() (time.Duration, error) {
		return 0, fmt.Errorf("invalid duration %q: want something like \"1d\", \"2h30m\" or \"90m\"", s)
	}
	v := strings.TrimSpace(s)
	neg := false
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg = v[0] == '-'
		v = v[1:]
	}
	if v == "" {
		return bad()
	}
	if v == "0" {
		return 0, nil
	}
	var total float64
	for v != "" {
		i := 0
		for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
			i++
		}
		num := v[:i]
		j := i
		for j < len(v) && !(v[j] >= '0' && v[j] <= '9' || v[j] == '.') {
			j++
		}
		unit := v[i:j]
		v = v[j:]
		if num == "" || unit == "" {
			return bad()
		}
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return bad()
		}
		var u time.Duration
		switch unit {
		case "d":
			u = 24 * time.Hour
		case "h":
			u = time.Hour
		case "m":
			u = time.Minute
		case "s":
			u = time.Second
		case "ms":
			u = time.Millisecond
		case "us", "µs", "μs":
			u = time.Microsecond
		case "ns":
			u = time.Nanosecond
		default:
			return bad()
		}
		total += n * float64(u)
	}
	if total > math.MaxInt64 {
		return bad()
	}
	d := time.Duration(math.Round(total))
	if neg {
		d = -d
	}
	return d, nil
}
