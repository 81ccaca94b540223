package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
)

// Event is one line of a trace.
type Event struct {
	Line int    // 1-based line number
	Kind string // Body.Kind(): start, user, assistant, call, result, reply, turn_end, end
	Body Body   // *Start, *User, *Assistant, *Call, *CallResult, *Reply, *TurnEnd or *End
}

// Turn is the turn of an event of a turn, -1 for start and end.
func (e Event) Turn() int {
	if e.Body == nil {
		return -1
	}
	s, v := schemaOf(e.Body)
	return s.turnOf(v)
}

// Value is the field of JSON name k as its line holds it (nil when absent); Str, Int and Bool
// are the field as a string, integer or boolean (the zero value when it is not one). They serve
// tests and generic tools; code that knows the event reads Body.
func (e Event) Value(k string) jsonv.Value { return value(e.Body, k) }

func (e Event) Str(k string) string {
	s, _ := e.Value(k).(string)
	return s
}

func (e Event) Int(k string) int64 {
	i, _ := e.Value(k).(int64)
	return i
}

func (e Event) Bool(k string) bool {
	b, _ := e.Value(k).(bool)
	return b
}

// MaxLine bounds one trace line, its newline included (a tool result can be large, but not
// unbounded): limits.TraceLine, which the largest call and result events fit in. The Writer
// refuses to write a longer line.
const MaxLine = limits.TraceLine

// Read parses a whole trace into the event types. Every problem is an error that names the
// line: a line that is not a JSON object, an unknown event, a missing or mistyped field (named
// by its path, such as "checks[2].turn"), a turn out of range, a trace that does not start with
// `start`, a result without its call, a file cut short (no final newline, or no `end`).
func Read(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var events []Event
	pending := map[string]int{} // call id -> line, waiting for its result
	for n := 1; ; n++ {
		line, err := readLine(br)
		if err == errLongLine {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n, MaxLine)
		}
		if err == io.EOF {
			if len(line) == 0 {
				break
			}
			return nil, fmt.Errorf("line %d: the trace is truncated (the last line has no newline)", n)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, fmt.Errorf("line %d: empty line", n)
		}
		v, err := jsonv.Decode(line)
		if err != nil {
			return nil, notTrace(n, fmt.Errorf("line %d: %v", n, err))
		}
		obj, ok := v.(*jsonv.Object)
		if !ok {
			return nil, notTrace(n, fmt.Errorf("line %d: want a JSON object, got %s", n, jsonv.TypeName(v)))
		}
		kv, _ := obj.Get("event")
		kind, ok := kv.(string)
		if !ok {
			return nil, notTrace(n, fmt.Errorf("line %d: missing \"event\"", n))
		}
		schema, ok := schemas[kind]
		if !ok {
			return nil, notTrace(n, fmt.Errorf("line %d: unknown event %q", n, kind))
		}
		if n == 1 && kind != "start" {
			return nil, notTrace(n, fmt.Errorf("line 1: a trace starts with a start event, not %s", kind))
		}
		body := reflect.New(schema.typ)
		if err := schema.decode(obj, body.Elem()); err != nil {
			return nil, fmt.Errorf("line %d: %s event: %v", n, kind, err)
		}
		ev := Event{Line: n, Kind: kind, Body: body.Interface().(Body)}
		switch {
		case n > 1 && kind == "start":
			return nil, fmt.Errorf("line %d: a second start event", n)
		case len(events) > 0 && events[len(events)-1].Kind == "end":
			return nil, fmt.Errorf("line %d: %s event after the end event", n, kind)
		}
		// a turn is opened by a user line, so its number is below the line's: this bounds what
		// a reader that indexes by turn allocates
		if t := schema.turnOf(body.Elem()); schema.turn >= 0 && (t < 0 || t >= n) {
			return nil, fmt.Errorf("line %d: %s event: turn %d is out of range", n, kind, t)
		}
		switch b := ev.Body.(type) {
		case *Start:
			if hashFormats[b.Format] == 0 {
				return nil, fmt.Errorf("line %d: format %q is not one this engine reads (%q, or the older %q)", n, b.Format, Format, "coworkenv-trace/1")
			}
		case *Call:
			if _, dup := pending[b.ID]; dup {
				return nil, fmt.Errorf("line %d: call id %q is already waiting for its result", n, b.ID)
			}
			pending[b.ID] = n
		case *CallResult:
			if _, ok := pending[b.ID]; !ok {
				return nil, fmt.Errorf("line %d: result for call id %q, which has no call before it", n, b.ID)
			}
			delete(pending, b.ID)
		}
		events = append(events, ev)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("line 1: the trace is empty")
	}
	if last := events[len(events)-1]; last.Kind != "end" {
		return nil, fmt.Errorf("line %d: the trace is truncated: it ends with a %s event, not end", last.Line, last.Kind)
	}
	return events, nil
}

var errLongLine = errors.New("line too long")

// notTrace says that a file whose first line is not a start event is not a trace at all (a
// README, a JSON Lines file of another kind), rather than a trace with a bad line; err is the
// line's error, kept after it. Errors of other lines are a trace's own.
func notTrace(n int, err error) error {
	if n != 1 {
		return err
	}
	return fmt.Errorf("not a trace (its first line is not a coworkenv start event): %w", err)
}

// readLine reads one line and its newline, like ReadBytes('\n'), but gives up with errLongLine
// as soon as the line passes MaxLine bytes: a file with no newline cannot make it hold more.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLine {
			return nil, errLongLine
		}
		if err != bufio.ErrBufferFull {
			if line == nil {
				return bytes.Clone(frag), err
			}
			return append(line, frag...), err
		}
		line = append(line, frag...)
	}
}
