package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// Event is one line of a trace.
type Event struct {
	Line int    // 1-based line number
	Kind string // start, user, assistant, call, result, reply, turn_end, end
	Obj  *jsonv.Object
}

// Str, Int, Bool and Value read fields that Read has already checked.
func (e Event) Str(k string) string {
	v, _ := e.Obj.Get(k)
	s, _ := v.(string)
	return s
}

func (e Event) Int(k string) int64 {
	v, _ := e.Obj.Get(k)
	i, _ := v.(int64)
	return i
}

func (e Event) Bool(k string) bool {
	v, _ := e.Obj.Get(k)
	b, _ := v.(bool)
	return b
}

func (e Event) Value(k string) jsonv.Value {
	v, _ := e.Obj.Get(k)
	return v
}

// field kinds for validation
const (
	tString = 1 << iota
	tInt
	tNumber
	tBool
	tArray
	tObject
	tNull
)

type fieldSpec struct {
	name string
	kind int
}

var schemas = map[string][]fieldSpec{
	"start":     {{"format", tString}, {"task", tString}, {"file", tString}, {"file_sha256", tString}, {"seed", tInt}, {"engine", tString}, {"agent", tString}, {"tools", tArray}, {"state", tString}},
	"user":      {{"turn", tInt}, {"content", tString}, {"state", tString}},
	"assistant": {{"turn", tInt}, {"content", tString | tNull}, {"tool_calls", tArray | tNull}, {"usage", tObject | tNull}},
	"call":      {{"turn", tInt}, {"id", tString}, {"name", tString}, {"args", tObject}},
	"result":    {{"turn", tInt}, {"id", tString}, {"content", tString}, {"error", tString | tNull}, {"fault", tBool}, {"state", tString}},
	"reply":     {{"turn", tInt}, {"content", tString}},
	"turn_end":  {{"turn", tInt}, {"score", tNumber | tNull}, {"truncated", tBool}, {"checks", tArray}},
	"end":       {{"score", tNumber}, {"passed", tBool}, {"completion", tNumber}, {"safety", tNumber}, {"robustness", tNumber}, {"checks", tArray}, {"state", tString}},
}

func kindOf(v jsonv.Value) int {
	switch v.(type) {
	case nil:
		return tNull
	case string:
		return tString
	case int64:
		return tInt | tNumber
	case float64:
		return tNumber
	case bool:
		return tBool
	case []jsonv.Value:
		return tArray
	case *jsonv.Object:
		return tObject
	}
	return 0
}

func kindName(k int) string {
	names := []string{"string", "integer", "number", "boolean", "array", "object", "null"}
	var out []string
	for i, n := range names {
		if k&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "?"
	}
	s := out[0]
	for _, o := range out[1:] {
		s += " or " + o
	}
	return s
}

// MaxLine bounds one trace line (a tool result can be large, but not unbounded).
const MaxLine = 64 << 20

// Read parses a whole trace. Every problem is an error that names the line: a line that is not
// a JSON object, an unknown event, a missing or mistyped field, a trace that does not start
// with `start`, a result without its call, a file cut short (no final newline, or no `end`).
func Read(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var events []Event
	pending := map[string]int{} // call id -> line, waiting for its result
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(line) == 0 {
				break
			}
			return nil, fmt.Errorf("line %d: the trace is truncated (the last line has no newline)", n)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if len(line) > MaxLine {
			return nil, fmt.Errorf("line %d: longer than %d bytes", n, MaxLine)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, fmt.Errorf("line %d: empty line", n)
		}
		v, err := jsonv.Decode(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		obj, ok := v.(*jsonv.Object)
		if !ok {
			return nil, fmt.Errorf("line %d: want a JSON object, got %s", n, jsonv.TypeName(v))
		}
		kv, _ := obj.Get("event")
		kind, ok := kv.(string)
		if !ok {
			return nil, fmt.Errorf("line %d: missing \"event\"", n)
		}
		schema, ok := schemas[kind]
		if !ok {
			return nil, fmt.Errorf("line %d: unknown event %q", n, kind)
		}
		for _, f := range schema {
			fv, present := obj.Get(f.name)
			if !present {
				return nil, fmt.Errorf("line %d: %s event: missing field %q", n, kind, f.name)
			}
			if kindOf(fv)&f.kind == 0 {
				return nil, fmt.Errorf("line %d: %s event: field %q is %s, want %s", n, kind, f.name, jsonv.TypeName(fv), kindName(f.kind))
			}
		}
		ev := Event{Line: n, Kind: kind, Obj: obj}
		switch {
		case n == 1 && kind != "start":
			return nil, fmt.Errorf("line 1: a trace starts with a start event, not %s", kind)
		case n > 1 && kind == "start":
			return nil, fmt.Errorf("line %d: a second start event", n)
		case len(events) > 0 && events[len(events)-1].Kind == "end":
			return nil, fmt.Errorf("line %d: %s event after the end event", n, kind)
		}
		if kind == "start" && ev.Str("format") != Format {
			return nil, fmt.Errorf("line %d: format %q is not %q", n, ev.Str("format"), Format)
		}
		switch kind {
		case "call":
			if _, dup := pending[ev.Str("id")]; dup {
				return nil, fmt.Errorf("line %d: call id %q is already waiting for its result", n, ev.Str("id"))
			}
			pending[ev.Str("id")] = n
		case "result":
			if _, ok := pending[ev.Str("id")]; !ok {
				return nil, fmt.Errorf("line %d: result for call id %q, which has no call before it", n, ev.Str("id"))
			}
			delete(pending, ev.Str("id"))
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
