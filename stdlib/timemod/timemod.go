// Package timemod is the Starlark module "time": go.starlark.net's lib/time without now, made
// hermetic.
//
// Members (see Reference, generated from the same tables as Module and the two value types):
//
//	time.parse_time(x, format="2006-01-02T15:04:05Z07:00", location="UTC") -> time.time
//	time.parse_duration(d) -> time.duration
//	time.time(year=0, month=0, day=0, hour=0, minute=0, second=0, nanosecond=0, location="UTC") -> time.time
//	time.from_timestamp(sec, nsec=0) -> time.time   (in UTC)
//	time.is_valid_timezone(loc) -> bool
//	time.nanosecond, time.microsecond, time.millisecond, time.second, time.minute, time.hour
//
// A time.time has year, month, day, hour, minute, second, nanosecond, unix, unix_nano, and the
// methods format(layout) (Go layouts such as "15:04") and in_location(loc). A time.duration has
// hours, minutes, seconds (floats), milliseconds, microseconds, nanoseconds (ints). Arithmetic:
// time ± duration, time - time, -duration, duration ± duration, duration * int, int * duration,
// duration / duration (float), duration / int, duration / float, duration // duration (int).
// Times compare as instants; durations compare by length.
//
// Differences from go.starlark.net's lib/time, all for determinism (SPEC §4):
//
//   - there is no now(), and nothing here reads the host clock (no SetNow or NowFunc either);
//   - nothing reads the host's time zone database or the host's local zone: a location is "UTC"
//     (or "" or "Z", meaning UTC) or a fixed offset "+01:00", "-0530", "+01". IANA names such as
//     "Europe/Berlin" and "Local" are errors, and is_valid_timezone reports False for them;
//   - parse_time interprets an offset or zone abbreviation in the text against the given location
//     only (Go's time.Parse would consult the host's local zone): "+01:00" gives a fixed zone, "Z"
//     and "+00:00" give UTC;
//   - from_timestamp gives a time in UTC (not in the host's zone);
//   - float / duration is an error (lib/time silently computed duration / float).
//
// The value types are this package's own Time and Duration; their type names are "time.time" and
// "time.duration" as in lib/time, so values of the two packages must not be mixed in one program.
package timemod

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// FuncDoc documents one member of the module or of its value types.
type FuncDoc struct {
	Name      string // "parse_time", "hour", or "Time.format", "Duration.minutes" for value members
	Signature string
	Doc       string
}

type builtinFunc = func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)

// member is one row of the table that builds both Module and Reference.
type member struct {
	name, sig, doc string
	fn             builtinFunc    // a function, or
	val            starlark.Value // a constant
}

var table = []member{
	{name: "parse_time", fn: parseTime,
		sig: `time.parse_time(x, format="2006-01-02T15:04:05Z07:00", location="UTC") -> time.time`,
		doc: `Parses x with a Go layout (RFC 3339 by default, e.g. "2026-01-05T09:00:00Z" or "2026-01-05T10:00:00+01:00"). Text without an offset is read in location, which is "UTC" or a fixed offset such as "+01:00"; an offset in the text gives a time in that fixed zone.`},
	{name: "parse_duration", fn: parseDuration,
		sig: `time.parse_duration(d) -> time.duration`,
		doc: `Parses a Go duration string such as "45m", "1h30m" or "-2.5s" (units ns, us, ms, s, m, h; there is no "d"). A duration is returned unchanged.`},
	{name: "time", fn: newTime,
		sig: `time.time(year=0, month=0, day=0, hour=0, minute=0, second=0, nanosecond=0, location="UTC") -> time.time`,
		doc: `Returns the time with the given fields (keyword arguments only) in location ("UTC" or a fixed offset). Out-of-range fields are normalized as by Go's time.Date: month=13 is January of the next year.`},
	{name: "from_timestamp", fn: fromTimestamp,
		sig: `time.from_timestamp(sec, nsec=0) -> time.time`,
		doc: `Returns the time sec seconds and nsec nanoseconds after 1970-01-01T00:00:00Z, in UTC.`},
	{name: "is_valid_timezone", fn: isValidTimezone,
		sig: `time.is_valid_timezone(loc) -> bool`,
		doc: `Reports whether loc is a location this module accepts: "UTC" or a fixed offset such as "+01:00", "-0530" or "+01". Named zones such as "Europe/Berlin" are not available (no time zone database is read).`},
	{name: "nanosecond", sig: "time.nanosecond", val: Duration(time.Nanosecond), doc: "A duration of one nanosecond."},
	{name: "microsecond", sig: "time.microsecond", val: Duration(time.Microsecond), doc: "A duration of one microsecond."},
	{name: "millisecond", sig: "time.millisecond", val: Duration(time.Millisecond), doc: "A duration of one millisecond."},
	{name: "second", sig: "time.second", val: Duration(time.Second), doc: "A duration of one second."},
	{name: "minute", sig: "time.minute", val: Duration(time.Minute), doc: "A duration of one minute."},
	{name: "hour", sig: "time.hour", val: Duration(time.Hour), doc: "A duration of one hour."},
}

// Module is the Starlark module "time".
var Module = &starlarkstruct.Module{Name: "time", Members: buildMembers()}

// Reference documents every member of Module, then the value types and their fields and methods,
// in a stable order.
var Reference = buildReference()

func buildMembers() starlark.StringDict {
	d := make(starlark.StringDict, len(table))
	for _, m := range table {
		if m.fn != nil {
			d[m.name] = starlark.NewBuiltin("time."+m.name, m.fn)
		} else {
			d[m.name] = m.val
		}
	}
	return d
}

func buildReference() []FuncDoc {
	var out []FuncDoc
	for _, m := range table {
		out = append(out, FuncDoc{Name: m.name, Signature: m.sig, Doc: m.doc})
	}
	out = append(out, FuncDoc{Name: "Time", Signature: "time.time",
		Doc: "A moment in time with a zone (UTC or a fixed offset). t + d, t - d and d + t give a time; t - u gives a duration; times compare as instants (==, <, ...). str(t) is like \"2026-01-05 09:00:00 +0000 UTC\"; a time is false only at Go's zero time."})
	for _, a := range timeAttrs {
		out = append(out, FuncDoc{Name: "Time." + a.name, Signature: a.sig, Doc: a.doc})
	}
	out = append(out, FuncDoc{Name: "Duration", Signature: "time.duration",
		Doc: "A length of time in nanoseconds (at most about 292 years). d ± e, d * n and n * d give durations; d / e gives a float, d / n and d / x (float) a duration, d // e an int; durations compare by length. str(d) is like \"1h30m0s\"; a duration is false when zero."})
	for _, a := range durationAttrs {
		out = append(out, FuncDoc{Name: "Duration." + a.name, Signature: a.sig, Doc: a.doc})
	}
	return out
}

// ---- locations ----

// location resolves a location name without touching the host: "UTC", "", "Z" or a fixed offset
// ±HH, ±HHMM or ±HH:MM (hours 0-23, minutes 0-59). Fixed zones have no name, so a layout's "MST"
// prints them as "+0100", as Go does for offsets parsed from text.
func location(name string) (*time.Location, error) {
	switch name {
	case "", "UTC", "Z":
		return time.UTC, nil
	}
	if off, ok := parseOffset(name); ok {
		if off == 0 {
			return time.UTC, nil
		}
		return time.FixedZone("", off), nil
	}
	return nil, fmt.Errorf(`unsupported location %q (want "UTC" or a fixed offset such as "+01:00"; named time zones are not available)`, name)
}

func parseOffset(s string) (int, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	sign, rest := s[0], s[1:]
	var hh, mm string
	switch {
	case len(rest) == 2:
		hh = rest
	case len(rest) == 4:
		hh, mm = rest[:2], rest[2:]
	case len(rest) == 5 && rest[2] == ':':
		hh, mm = rest[:2], rest[3:]
	default:
		return 0, false
	}
	h, err := strconv.Atoi(hh)
	if err != nil || h > 23 || !isDigits(hh) {
		return 0, false
	}
	m := 0
	if mm != "" {
		m, err = strconv.Atoi(mm)
		if err != nil || m > 59 || !isDigits(mm) {
			return 0, false
		}
	}
	off := h*3600 + m*60
	if sign == '-' {
		off = -off
	}
	return off, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ---- module functions ----

func parseTime(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		x      string
		format = time.RFC3339
		loc    = "UTC"
	)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x, "format?", &format, "location?", &loc); err != nil {
		return nil, err
	}
	l, err := location(loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	// ParseInLocation, unlike Parse, matches offsets and zone abbreviations against l and never
	// against the host's local zone.
	t, err := time.ParseInLocation(format, x, l)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return Time(t), nil
}

func parseDuration(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d Duration
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &d); err != nil {
		return nil, err
	}
	return d, nil
}

func newTime(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("%s: unexpected positional arguments (all arguments are keywords)", b.Name())
	}
	var (
		year, month, day, hour, min, sec, nsec int
		loc                                    string
	)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"year?", &year, "month?", &month, "day?", &day,
		"hour?", &hour, "minute?", &min, "second?", &sec, "nanosecond?", &nsec,
		"location?", &loc,
	); err != nil {
		return nil, err
	}
	l, err := location(loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return Time(time.Date(year, time.Month(month), day, hour, min, sec, nsec, l)), nil
}

func fromTimestamp(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sec, nsec int64
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &sec, &nsec); err != nil {
		return nil, err
	}
	return Time(time.Unix(sec, nsec).UTC()), nil
}

func isValidTimezone(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	_, err := location(s)
	return starlark.Bool(err == nil), nil
}

// ---- attribute tables (drive Attr, AttrNames and Reference) ----

type attr[T any] struct {
	name, sig, doc string
	get            func(T) starlark.Value                                                                    // a field, or
	method         func(fn string, recv T, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) // a method
}

var timeAttrs = []attr[Time]{
	{name: "year", sig: "t.year -> int", doc: "The year.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Year()) }},
	{name: "month", sig: "t.month -> int", doc: "The month, 1 to 12.", get: func(t Time) starlark.Value { return starlark.MakeInt(int(t.t().Month())) }},
	{name: "day", sig: "t.day -> int", doc: "The day of the month, 1 to 31.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Day()) }},
	{name: "hour", sig: "t.hour -> int", doc: "The hour, 0 to 23, in the time's zone.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Hour()) }},
	{name: "minute", sig: "t.minute -> int", doc: "The minute, 0 to 59.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Minute()) }},
	{name: "second", sig: "t.second -> int", doc: "The second, 0 to 59.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Second()) }},
	{name: "nanosecond", sig: "t.nanosecond -> int", doc: "The nanosecond within the second.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Nanosecond()) }},
	{name: "unix", sig: "t.unix -> int", doc: "Seconds since 1970-01-01T00:00:00Z.", get: func(t Time) starlark.Value { return starlark.MakeInt64(t.t().Unix()) }},
	{name: "unix_nano", sig: "t.unix_nano -> int", doc: "Nanoseconds since 1970-01-01T00:00:00Z (meaningless outside the years 1678 to 2262).", get: func(t Time) starlark.Value { return starlark.MakeInt64(t.t().UnixNano()) }},
	{name: "format", sig: "t.format(layout) -> string", doc: `Formats the time with a Go layout, e.g. "15:04", "2006-01-02", "Mon 2 Jan" or "2006-01-02T15:04:05Z07:00".`, method: timeFormat},
	{name: "in_location", sig: "t.in_location(loc) -> time.time", doc: `The same instant in location loc ("UTC" or a fixed offset such as "+01:00").`, method: timeInLocation},
}

var durationAttrs = []attr[Duration]{
	{name: "hours", sig: "d.hours -> float", doc: "The duration in hours.", get: func(d Duration) starlark.Value { return starlark.Float(time.Duration(d).Hours()) }},
	{name: "minutes", sig: "d.minutes -> float", doc: "The duration in minutes.", get: func(d Duration) starlark.Value { return starlark.Float(time.Duration(d).Minutes()) }},
	{name: "seconds", sig: "d.seconds -> float", doc: "The duration in seconds.", get: func(d Duration) starlark.Value { return starlark.Float(time.Duration(d).Seconds()) }},
	{name: "milliseconds", sig: "d.milliseconds -> int", doc: "The duration in whole milliseconds (truncated).", get: func(d Duration) starlark.Value { return starlark.MakeInt64(time.Duration(d).Milliseconds()) }},
	{name: "microseconds", sig: "d.microseconds -> int", doc: "The duration in whole microseconds (truncated).", get: func(d Duration) starlark.Value { return starlark.MakeInt64(time.Duration(d).Microseconds()) }},
	{name: "nanoseconds", sig: "d.nanoseconds -> int", doc: "The duration in nanoseconds.", get: func(d Duration) starlark.Value { return starlark.MakeInt64(time.Duration(d).Nanoseconds()) }},
}

func lookupAttr[T starlark.Value](recv T, typ, name string, attrs []attr[T]) (starlark.Value, error) {
	for _, a := range attrs {
		if a.name != name {
			continue
		}
		if a.get != nil {
			return a.get(recv), nil
		}
		method := a.method
		fn := typ + "." + name
		return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return method(fn, recv, args, kwargs)
		}).BindReceiver(recv), nil
	}
	return nil, nil // no such attribute: Starlark reports it
}

func attrNames[T any](attrs []attr[T]) []string {
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = a.name
	}
	sort.Strings(names)
	return names
}

// ---- Time ----

// Time is a Starlark time.time: a Go time in UTC or in a fixed zone.
type Time time.Time

var (
	_ starlark.HasAttrs       = Time{}
	_ starlark.TotallyOrdered = Time{}
	_ starlark.HasBinary      = Time{}
)

func (t Time) t() time.Time { return time.Time(t) }

// String formats the time as "2006-01-02 15:04:05.999999999 -0700 MST".
func (t Time) String() string { return t.t().Format("2006-01-02 15:04:05.999999999 -0700 MST") }

// Type returns "time.time".
func (t Time) Type() string { return "time.time" }

// Freeze does nothing: a Time is immutable.
func (t Time) Freeze() {}

// Truth reports whether t is not Go's zero time.
func (t Time) Truth() starlark.Bool { return !starlark.Bool(t.t().IsZero()) }

// Hash is consistent with equality of instants.
func (t Time) Hash() (uint32, error) {
	sec := t.t().Unix()
	return uint32(sec) ^ uint32(sec>>32) ^ uint32(t.t().Nanosecond()), nil
}

// Attr returns a field or a bound method.
func (t Time) Attr(name string) (starlark.Value, error) {
	return lookupAttr(t, t.Type(), name, timeAttrs)
}

// AttrNames lists the fields and methods.
func (t Time) AttrNames() []string { return attrNames(timeAttrs) }

// Cmp compares instants.
func (t Time) Cmp(y starlark.Value, depth int) (int, error) {
	u, ok := y.(Time)
	if !ok {
		return 0, fmt.Errorf("cannot compare time.time with %s", y.Type())
	}
	return t.t().Compare(u.t()), nil
}

// Binary implements time ± duration and time - time.
func (t Time) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	switch op {
	case syntax.PLUS:
		if d, ok := y.(Duration); ok {
			return Time(t.t().Add(time.Duration(d))), nil
		}
	case syntax.MINUS:
		if side == starlark.Right {
			return nil, nil // x - time: only time - time, handled on the left
		}
		switch y := y.(type) {
		case Duration:
			if y == math.MinInt64 {
				return nil, fmt.Errorf("time.duration overflow")
			}
			return Time(t.t().Add(-time.Duration(y))), nil
		case Time:
			return Duration(t.t().Sub(y.t())), nil
		}
	}
	return nil, nil
}

func timeFormat(fn string, t Time, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var layout string
	if err := starlark.UnpackPositionalArgs(fn, args, kwargs, 1, &layout); err != nil {
		return nil, err
	}
	return starlark.String(t.t().Format(layout)), nil
}

func timeInLocation(fn string, t Time, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(fn, args, kwargs, 1, &name); err != nil {
		return nil, err
	}
	l, err := location(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	return Time(t.t().In(l)), nil
}

// ---- Duration ----

// Duration is a Starlark time.duration.
type Duration time.Duration

var (
	_ starlark.HasAttrs       = Duration(0)
	_ starlark.TotallyOrdered = Duration(0)
	_ starlark.HasBinary      = Duration(0)
	_ starlark.HasUnary       = Duration(0)
	_ starlark.Unpacker       = (*Duration)(nil)
)

// Unpack accepts a duration or a Go duration string, for use with starlark.UnpackArgs.
func (d *Duration) Unpack(v starlark.Value) error {
	switch x := v.(type) {
	case Duration:
		*d = x
		return nil
	case starlark.String:
		p, err := time.ParseDuration(string(x))
		if err != nil {
			return err
		}
		*d = Duration(p)
		return nil
	}
	return fmt.Errorf("got %s, want a duration or a string", v.Type())
}

// String formats the duration as Go does, e.g. "1h30m0s".
func (d Duration) String() string { return time.Duration(d).String() }

// Type returns "time.duration".
func (d Duration) Type() string { return "time.duration" }

// Freeze does nothing: a Duration is immutable.
func (d Duration) Freeze() {}

// Truth reports whether d is not zero.
func (d Duration) Truth() starlark.Bool { return d != 0 }

// Hash is consistent with equality.
func (d Duration) Hash() (uint32, error) { return uint32(d) ^ uint32(int64(d)>>32), nil }

// Attr returns a field.
func (d Duration) Attr(name string) (starlark.Value, error) {
	return lookupAttr(d, d.Type(), name, durationAttrs)
}

// AttrNames lists the fields.
func (d Duration) AttrNames() []string { return attrNames(durationAttrs) }

// Cmp compares lengths.
func (d Duration) Cmp(y starlark.Value, depth int) (int, error) {
	e, ok := y.(Duration)
	if !ok {
		return 0, fmt.Errorf("cannot compare time.duration with %s", y.Type())
	}
	switch {
	case d < e:
		return -1, nil
	case d > e:
		return 1, nil
	}
	return 0, nil
}

var errOverflow = fmt.Errorf("time.duration overflow")

// Unary implements -d and +d.
func (d Duration) Unary(op syntax.Token) (starlark.Value, error) {
	switch op {
	case syntax.MINUS:
		if d == math.MinInt64 {
			return nil, errOverflow
		}
		return -d, nil
	case syntax.PLUS:
		return d, nil
	}
	return nil, nil
}

// Binary implements duration arithmetic. Results that do not fit in a duration are errors.
func (d Duration) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	x := int64(d)
	switch op {
	case syntax.PLUS:
		switch y := y.(type) {
		case Duration:
			s, ok := addInt64(x, int64(y))
			if !ok {
				return nil, errOverflow
			}
			return Duration(s), nil
		case Time:
			return Time(y.t().Add(time.Duration(d))), nil
		}
	case syntax.MINUS:
		if y, ok := y.(Duration); ok {
			a, b := x, int64(y)
			if side == starlark.Right {
				a, b = b, a
			}
			if b == math.MinInt64 {
				return nil, errOverflow
			}
			s, ok := addInt64(a, -b)
			if !ok {
				return nil, errOverflow
			}
			return Duration(s), nil
		}
	case syntax.STAR:
		if y, ok := y.(starlark.Int); ok {
			n, ok := y.Int64()
			if !ok {
				return nil, errOverflow
			}
			p, ok := mulInt64(x, n)
			if !ok {
				return nil, errOverflow
			}
			return Duration(p), nil
		}
	case syntax.SLASH:
		if side == starlark.Right {
			return nil, nil // only duration / x
		}
		switch y := y.(type) {
		case Duration:
			if y == 0 {
				return nil, fmt.Errorf("time.duration division by zero")
			}
			return starlark.Float(float64(x) / float64(y)), nil
		case starlark.Int:
			n, ok := y.Int64()
			if !ok {
				return Duration(0), nil // |n| > 2^63 > |x|
			}
			if n == 0 {
				return nil, fmt.Errorf("time.duration division by zero")
			}
			if x == math.MinInt64 && n == -1 {
				return nil, errOverflow
			}
			return Duration(x / n), nil
		case starlark.Float:
			if y == 0 {
				return nil, fmt.Errorf("time.duration division by zero")
			}
			q := float64(x) / float64(y)
			if math.IsNaN(q) || q >= math.MaxInt64 || q < math.MinInt64 {
				return nil, errOverflow
			}
			return Duration(q), nil
		}
	case syntax.SLASHSLASH:
		if y, ok := y.(Duration); ok {
			a, b := x, int64(y)
			if side == starlark.Right {
				a, b = b, a
			}
			if b == 0 {
				return nil, fmt.Errorf("time.duration division by zero")
			}
			if a == math.MinInt64 && b == -1 {
				return nil, errOverflow
			}
			return starlark.MakeInt64(a / b), nil
		}
	}
	return nil, nil
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}
