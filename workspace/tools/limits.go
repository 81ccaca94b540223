package tools

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
)

// The limits of a tool call (package internal/limits holds their values): the arguments that go
// in, the result and the error that come out, and what a listing shows at once.

// CheckArgsLimits reports arguments over the limits of a tool call: more than limits.ToolArgs
// bytes of JSON, or nested deeper than limits.ToolArgsDepth. CheckArgs checks them first, and an
// episode checks them before it records the call (arguments over a limit are not recorded) and
// then calls CheckParams.
func CheckArgsLimits(args *jsonv.Object) error {
	if args == nil {
		return nil
	}
	m := measure{budget: limits.ToolArgs, depth: limits.ToolArgsDepth}
	if err := m.value(args, 0); err != nil {
		return err
	}
	switch {
	case m.deep:
		return fmt.Errorf("the arguments are nested deeper than %d levels, the limit of a tool call's arguments", limits.ToolArgsDepth)
	case m.size > limits.ToolArgs:
		return fmt.Errorf("the arguments are more than %s of JSON, the limit of a tool call's arguments", limits.Bytes(limits.ToolArgs))
	}
	return nil
}

// Size is the length of v encoded as jsonv.Encode does, without encoding it.
func Size(v jsonv.Value) (int, error) {
	m := measure{budget: math.MaxInt, depth: math.MaxInt}
	err := m.value(v, 0)
	return m.size, err
}

// measure adds up the length of a value's JSON encoding, and stops as soon as it passes budget
// or a value is nested deeper than depth.
type measure struct {
	budget, depth int
	size          int
	deep          bool
	num           [32]byte
}

// done reports whether the measure can stop.
func (m *measure) done() bool { return m.deep || m.size > m.budget }

func (m *measure) value(v jsonv.Value, depth int) error {
	if depth > m.depth {
		m.deep = true
		return nil
	}
	switch x := v.(type) {
	case nil:
		m.size += 4
	case bool:
		m.size += 5
		if x {
			m.size--
		}
	case int64:
		m.size += len(strconv.AppendInt(m.num[:0], x, 10))
	case int:
		m.size += len(strconv.AppendInt(m.num[:0], int64(x), 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("cannot encode %v as JSON", x)
		}
		b := strconv.AppendFloat(m.num[:0], x, 'g', -1, 64)
		m.size += len(b)
		if !strings.ContainsAny(string(b), ".eE") {
			m.size += 2
		}
	case string:
		m.size += quotedLen(x)
	case []jsonv.Value:
		m.size += 2 + max(len(x)-1, 0)
		for _, e := range x {
			if err := m.value(e, depth+1); err != nil || m.done() {
				return err
			}
		}
	case []string:
		m.size += 2 + max(len(x)-1, 0)
		for _, e := range x {
			if depth+1 > m.depth {
				m.deep = true
				return nil
			}
			if m.size += quotedLen(e); m.done() {
				return nil
			}
		}
	case *jsonv.Object:
		if x == nil {
			m.size += 4
			return nil
		}
		m.size += 2 + max(len(x.Members)-1, 0)
		for _, mb := range x.Members {
			m.size += quotedLen(mb.Key) + 1
			if err := m.value(mb.Value, depth+1); err != nil || m.done() {
				return err
			}
		}
	default:
		return fmt.Errorf("cannot encode %T as JSON", v)
	}
	return nil
}

// quotedLen is the length of s as a JSON string, as jsonv writes it: " and \ and the control
// characters \n, \r, \t take two bytes, the other control characters six (\u00XX).
func quotedLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// CheckResult reports a result over limits.ToolResult: content is the JSON text of what tool
// returned. The episode turns it into the call's error.
func CheckResult(tool string, content []byte) error {
	if len(content) <= limits.ToolResult {
		return nil
	}
	return fmt.Errorf("the result of %s is %d bytes of JSON, over the %s limit of a tool result; ask for less", tool, len(content), limits.Bytes(limits.ToolResult))
}

// ErrorText is a tool error message as the agent is shown it: cut at limits.ToolError bytes.
func ErrorText(msg string) string {
	if len(msg) <= limits.ToolError {
		return msg
	}
	keep := limits.ToolError - 64 // room for the note
	for keep > 0 && !utf8.RuneStart(msg[keep]) {
		keep--
	}
	return msg[:keep] + fmt.Sprintf("… (%d more bytes not shown)", len(msg)-keep)
}

// CallDoc says the limits of every tool call, for the documentation of tools.
var CallDoc = fmt.Sprintf("The arguments of a call (of any tool) that are over %s of JSON or nested deeper than %d levels "+
	"are refused before the tool runs; a result over %s of JSON becomes a tool error that names the limit (the call changes nothing); "+
	"a tool error is cut at %s.", limits.Bytes(limits.ToolArgs), limits.ToolArgsDepth, limits.Bytes(limits.ToolResult), limits.Bytes(limits.ToolError))

// ListingDoc says, for the description of a listing tool, what a listing shows at once.
var ListingDoc = fmt.Sprintf("At most %d items (%s of JSON) are returned: when there are more, the result is "+
	"{items, truncated: true, total, note} instead of a list, with the first items and how many there are; narrow the request to see the others.",
	limits.ListItems, limits.Bytes(limits.ListBytes))

// Listing is the result of a listing or search tool: its items in order, as a JSON array, when
// they are all there are (total is len(items)) and fit in a listing, that is at most
// limits.ListItems items and limits.ListBytes bytes of JSON. Otherwise it is the object
//
//	{"items": [...], "truncated": true, "total": N,
//	 "note": "showing 200 of 4194304 matches (a result holds at most 200 items and 256 KiB of JSON); narrow the query or the path"}
//
// with as many items as fit, and at least one: the first ones, or with newest the last ones (a
// listing of the newest messages, oldest first). total is how many items the call would have
// shown without these limits; what names them ("matches") and narrow says how to ask for less.
func Listing(items []jsonv.Value, total int, newest bool, what, narrow string) jsonv.Value {
	n, size := 0, 2
	for n < len(items) && n < limits.ListItems {
		i := n
		if newest {
			i = len(items) - 1 - n
		}
		s, err := Size(items[i])
		if err != nil {
			break // not JSON: the episode says so when it encodes the result
		}
		if n > 0 && size+s+1 > limits.ListBytes {
			break
		}
		n, size = n+1, size+s+1
	}
	if n == len(items) && total <= len(items) {
		return items
	}
	kept := items[:n]
	if newest {
		kept = items[len(items)-n:]
	}
	note := fmt.Sprintf("showing %d of %d %s (a result holds at most %d items and %s of JSON); %s",
		n, total, what, limits.ListItems, limits.Bytes(limits.ListBytes), narrow)
	return jsonv.NewObject("items", kept, "truncated", true, "total", int64(total), "note", note)
}
