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
// Differences from go.starlark.net's lib/time, all for determinism (the same task, seed and
// tool calls give the same states):
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

	"github.com/coworkenv/coworkenv/internal/starargs"
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

// builtinFunc is a function of the module: fn is its name for errors, p its row's parameters,
// by which it binds its arguments.
type builtinFunc = func(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// member is one row of the table that builds Module, binds the arguments of its functions and
// gives Reference: a function (params, ret, fn) or a constant (val).
type member struct {
	name, ret, doc string
	params         starargs.Table
	fn             builtinFunc    // a function, or
	val            starlark.Value // a constant
}

var (
	req, opt = starargs.Req, starargs.Opt
	zero     = starlark.MakeInt(0)
	utc      = starlark.String("UTC")
)

var table = []member{
	{name: "parse_time", fn: parseTime, ret: "time.time",
		params: starargs.Table{Params: []starargs.Param{req("x"), opt("format", starlark.String(time.RFC3339)), opt("location", utc)}},
		doc:    `Parses x with a Go layout (RFC 3339 by default, e.g. "2026-01-05T09:00:00Z" or "2026-01-05T10:00:00+01:00"). Text without an offset is read in location, which is "UTC" or a fixed offset such as "+01:00"; an offset in the text gives a time in that fixed zone.`},
	{name: "parse_duration", fn: parseDuration, ret: "time.duration",
		params: starargs.Positional(req("d")),
		doc:    `Parses a Go duration string such as "45m", "1h30m" or "-2.5s" (units ns, us, ms, s, m, h; there is no "d"). A duration is returned unchanged.`},
	{name: "time", fn: newTime, ret: "time.time",
		params: starargs.Keywords(opt("year", zero), opt("month", zero), opt("day", zero), opt("hour", zero), opt("minute", zero),
			opt("second", zero), opt("nanosecond", zero), opt("location", utc)),
		doc: `Returns the time with the given fields (keyword arguments only) in location ("UTC" or a fixed offset). Out-of-range fields are normalized as by Go's time.Date: month=13 is January of the next year.`},
	{name: "from_timestamp", fn: fromTimestamp, ret: "time.time",
		params: starargs.Positional(req("sec"), opt("nsec", zero)),
		doc:    `Returns the time sec seconds and nsec nanoseconds after 1970-01-01T00:00:00Z, in UTC.`},
	{name: "is_valid_timezone", fn: isValidTimezone, ret: "bool",
		params: starargs.Positional(req("loc")),
		doc:    `Reports whether loc is a location this module accepts: "UTC" or a fixed offset such as "+01:00", "-0530" or "+01". Named zones such as "Europe/Berlin" are not available (no time zone database is read).`},
	{name: "nanosecond", val: Duration(time.Nanosecond), doc: "A duration of one nanosecond."},
	{name: "microsecond", val: Duration(time.Microsecond), doc: "A duration of one microsecond."},
	{name: "millisecond", val: Duration(time.Millisecond), doc: "A duration of one millisecond."},
	{name: "second", val: Duration(time.Second), doc: "A duration of one second."},
	{name: "minute", val: Duration(time.Minute), doc: "A duration of one minute."},
	{name: "hour", val: Duration(time.Hour), doc: "A duration of one hour."},
}

// Module is the Starlark module "time".
var Module = &starlarkstruct.Module{Name: "time", Members: buildMembers()}

// Reference documents every member of Module, then the value types and their fields and methods,
// in a stable order.
var Reference = buildReference()

func buildMembers() starlark.StringDict {
	d := make(starlark.StringDict, len(table))
	for i := range table {
		m := &table[i]
		if m.fn == nil {
			d[m.name] = m.val
			continue
		}
		if err := m.params.Check(); err != nil {
			panic("time." + m.name + ": " + err.Error())
		}
		d[m.name] = starlark.NewBuiltin("time."+m.name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return m.fn(b.Name(), &m.params, args, kwargs)
		})
	}
	return d
}

func buildReference() []FuncDoc {
	var out []FuncDoc
	for _, m := range table {
		sig := "time." + m.name
		if m.fn != nil {
			sig = m.params.Signature(sig, m.ret)
		}
		out = append(out, FuncDoc{Name: m.name, Signature: sig, Doc: m.doc})
	}
	out = append(out, FuncDoc{Name: "Time", Signature: "time.time",
		Doc: "A moment in time with a zone (UTC or a fixed offset). t + d, t - d and d + t give a time; t - u gives a duration; times compare as instants (==, <, ...). str(t) is like \"2026-01-05 09:00:00 +0000 UTC\"; a time is false only at Go's zero time."})
	for _, a := range timeAttrs {
		out = append(out, FuncDoc{Name: "Time." + a.name, Signature: a.signature("t."), Doc: a.doc})
	}
	out = append(out, FuncDoc{Name: "Duration", Signature: "time.duration",
		Doc: "A length of time in nanoseconds (at most about 292 years). d ± e, d * n and n * d give durations; d / e gives a float, d / n and d / x (float) a duration, d // e an int; durations compare by length. str(d) is like \"1h30m0s\"; a duration is false when zero."})
	for _, a := range durationAttrs {
		out = append(out, FuncDoc{Name: "Duration." + a.name, Signature: a.signature("d."), Doc: a.doc})
	}
	return out
}

// ---- locations ----

// Location resolves a location name as the module does: "UTC" or a fixed offset ("+01:00").
func Location(name string) (*time.Location, error) { return location(name) }

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

func parseTime(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, format, loc string
	if err := p.UnpackArgs(fn, args, kwargs, &x, &format, &loc); err != nil {
		return nil, err
	}
	l, err := location(loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	// ParseInLocation, unlike Parse, matches offsets and zone abbreviations against l and never
	// against the host's local zone.
	t, err := time.ParseInLocation(format, x, l)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	return Time(t), nil
}

func parseDuration(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var d Duration
	if err := p.UnpackArgs(fn, args, kwargs, &d); err != nil {
		return nil, err
	}
	return d, nil
}

func newTime(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var (
		year, month, day, hour, min, sec, nsec int
		loc                                    string
	)
	if err := p.UnpackArgs(fn, args, kwargs, &year, &month, &day, &hour, &min, &sec, &nsec, &loc); err != nil {
		return nil, err
	}
	l, err := location(loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", fn, err)
	}
	return Time(time.Date(year, time.Month(month), day, hour, min, sec, nsec, l)), nil
}

func fromTimestamp(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var sec, nsec int64
	if err := p.UnpackArgs(fn, args, kwargs, &sec, &nsec); err != nil {
		return nil, err
	}
	return Time(time.Unix(sec, nsec).UTC()), nil
}

func isValidTimezone(fn string, p *starargs.Table, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := p.UnpackArgs(fn, args, kwargs, &s); err != nil {
		return nil, err
	}
	_, err := location(s)
	return starlark.Bool(err == nil), nil
}

// ---- attribute tables (drive Attr, AttrNames and Reference) ----

// attr is one row of a value type's table: a field (get) or a method (params and method), and
// what it gives (ret), for the signature.
type attr[T any] struct {
	name, ret, doc string
	params         starargs.Table
	get            func(T) starlark.Value                                                                                       // a field, or
	method         func(fn string, p *starargs.Table, recv T, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) // a method
}

// signature is the attribute as Reference shows it: "t.year -> int", "t.format(layout, /) -> string".
func (a *attr[T]) signature(recv string) string {
	if a.method != nil {
		if err := a.params.Check(); err != nil {
			panic(recv + a.name + ": " + err.Error())
		}
		return a.params.Signature(recv+a.name, a.ret)
	}
	return recv + a.name + " -> " + a.ret
}

var timeAttrs = []attr[Time]{
	{name: "year", ret: "int", doc: "The year.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Year()) }},
	{name: "month", ret: "int", doc: "The month, 1 to 12.", get: func(t Time) starlark.Value { return starlark.MakeInt(int(t.t().Month())) }},
	{name: "day", ret: "int", doc: "The day of the month, 1 to 31.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Day()) }},
	{name: "hour", ret: "int", doc: "The hour, 0 to 23, in the time's zone.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Hour()) }},
	{name: "minute", ret: "int", doc: "The minute, 0 to 59.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Minute()) }},
	{name: "second", ret: "int", doc: "The second, 0 to 59.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Second()) }},
	{name: "nanosecond", ret: "int", doc: "The nanosecond within the second.", get: func(t Time) starlark.Value { return starlark.MakeInt(t.t().Nanosecond()) }},
	{name: "unix", ret: "int", doc: "Seconds since 1970-01-01T00:00:00Z.", get: func(t Time) starlark.Value { return starlark.MakeInt64(t.t().Unix()) }},
	{name: "unix_nano", ret: "int", doc: "Nanoseconds since 1970-01-01T00:00:00Z (meaningless outside the years 1678 to 2262).", get: func(t Time) starlark.Value { return starlark.MakeInt64(t.t().UnixNano()) }},
	{name: "format", ret: "string", params: starargs.Positional(req("layout")), doc: `Formats the time with a Go layout, e.g. "15:04", "2006-01-02", "Mon 2 Jan" or "2006-01-02T15:04:05Z07:00".`, method: timeFormat},
	{name: "in_location", ret: "time.time", params: starargs.Positional(req("loc")), doc: `The same instant in location loc ("UTC" or a fixed offset such as "+01:00").`, method: timeInLocation},
}

var durationAttrs = []attr[Duration]{
	{name: "hours", ret: "float", doc: "The duration in hours.", get: func(d Duration) starlark.Value { return starlark.Float(time.Duration(d).Hours()) }},
	{name: "minutes", ret: "float", doc: "The duration in minutes.", get: func(d Duration) starlark.Value { return starlark.Float(time.Duration(d).Minutes()) }},
	{name: "seconds", ret: "float", doc: "The duration in seconds.", get: func(d Duration) starlark.Value { return starlark.Float(time.Duration(d).Seconds()) }},
	{name: "milliseconds", ret: "int", doc: "The duration in whole milliseconds (truncated).", get: func(d Duration) starlark.Value { return starlark.MakeInt64(time.Duration(d).Milliseconds()) }},
	{name: "microseconds", ret: "int", doc: "The duration in whole microseconds (truncated).", get: func(d Duration) starlark.Value { return starlark.MakeInt64(time.Duration(d).Microseconds()) }},
	{name: "nanoseconds", ret: "int", doc: "The duration in nanoseconds.", get: func(d Duration) starlark.Value { return starlark.MakeInt64(time.Duration(d).Nanoseconds()) }},
}

func lookupAttr[T starlark.Value](recv T, typ, name string, attrs []attr[T]) (starlark.Value, error) {
	for i := range attrs {
		a := &attrs[i]
		if a.name != name {
			continue
		}
		if a.get != nil {
			return a.get(recv), nil
		}
		fn := typ + "." + name
		return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return a.method(fn, &a.params, recv, args, kwargs)
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

func timeFormat(fn string, p *starargs.Table, t Time, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var layout string
	if err := p.UnpackArgs(fn, args, kwargs, &layout); err != nil {
		return nil, err
	}
	return starlark.String(t.t().Format(layout)), nil
}

func timeInLocation(fn string, p *starargs.Table, t Time, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := p.UnpackArgs(fn, args, kwargs, &name); err != nil {
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
