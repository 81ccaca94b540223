package workspace

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeLayout is how times are stored and shown: RFC 3339 with seconds, in the offset given.
const TimeLayout = "2006-01-02T15:04:05Z07:00"

// layouts accepted by ParseTime, tried in order. Those without an offset are read as UTC.
var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseTime reads an RFC 3339 time. The offset may be left out (the time is then UTC), and so
// may the seconds ("2026-01-05T09:00") or the whole time of day ("2026-01-05" is midnight UTC);
// a space may stand for the "T". Fractions of a second are dropped. The result keeps the
// offset given.
func ParseTime(s string) (time.Time, error) {
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

// NormalizeTime parses s with ParseTime and formats it with TimeLayout.
func NormalizeTime(s string) (string, time.Time, error) {
	t, err := ParseTime(s)
	if err != nil {
		return "", time.Time{}, err
	}
	return t.Format(TimeLayout), t, nil
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

// Clock is the virtual clock of a state. It moves only when a script moves it.
type Clock State

// Now returns the clock's time, in UTC.
func (c *Clock) Now() time.Time { return c.clock }

// NowString returns the clock's time as RFC 3339 in UTC with seconds ("2026-01-05T09:00:00Z").
func (c *Clock) NowString() string { return c.clock.Format(TimeLayout) }

// Set moves the clock to ts (any time ParseTime reads), forwards or backwards.
func (c *Clock) Set(ts string) error {
	s := (*State)(c)
	if s.frozen {
		return ErrFrozen
	}
	t, err := ParseTime(ts)
	if err != nil {
		return err
	}
	_ = s.begin()
	s.clock = t.UTC()
	return nil
}

// Advance moves the clock forward by d (see ParseDuration). A negative duration is an error.
func (c *Clock) Advance(d string) error {
	s := (*State)(c)
	if s.frozen {
		return ErrFrozen
	}
	dur, err := ParseDuration(d)
	if err != nil {
		return err
	}
	if dur < 0 {
		return fmt.Errorf("cannot advance the clock by a negative duration %q", d)
	}
	_ = s.begin()
	s.clock = s.clock.Add(dur)
	return nil
}
