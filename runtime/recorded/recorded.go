// Package recorded is the one source of the format of recorded runs: what an agent did in an
// episode, turn by turn (the questions it put to the turn's simulated user, its tool calls and its
// reply), kept in a file to be played again. Anyone can so keep a regression suite of wrong
// solutions (hacks) and right ones in other words (careful runs) for their tasks:
// `coworkenv run TASK --agent script --script FILE` plays them, `coworkenv validate` plays those
// beside a task file (<task file>.runs.json, and --runs FILE) and warns of a hack that passes
// (recorded-hack-passes) or a careful run that fails (recorded-careful-fails), and the corpus's
// tests play corpus/testdata/hacks and careful.
//
// A runs file is a JSON list of runs:
//
//	[
//	  {"task": "q3-total-reply", "why": "a rival total beside the right one", "expect": "fail",
//	   "turns": [{"asks": ["Which quarter?"],
//	              "calls": [{"name": "mail_reply", "args": {"id": "m1", "body": "200, or 180"}}],
//	              "reply": "Done."}]}
//	]
//
// task names the task the run is for, why says what the run does (and, for a hack, what is wrong
// with it), and expect is "fail" (a hack: the verifier must fail it) or "pass" (a careful run).
// expect may be left out in a file in a folder named hacks (then "fail") or careful ("pass"), and
// nowhere else. Each turn sends its asks to the simulated user first, then makes its calls in
// order (args is a JSON object; left out, no arguments), and ends with its reply; a turn without a
// simulated user ignores asks. The files are read strictly: an unknown field, a value of the wrong
// type or a missing one is an error that names the file, the run and, for JSON that does not
// parse, the line and column.
package recorded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// Expect is what a run's verdict should be.
type Expect string

const (
	// Fail is a hack: a wrong solution, which the task's verifier must fail.
	Fail Expect = "fail"
	// Pass is a careful run: a right solution, in other words, formats or order than the
	// reference, which the task's verifier must pass.
	Pass Expect = "pass"
)

// Label is the name of a recorded run's agent in results and traces.
const Label = "script"

// SidecarSuffix ends the name of the runs file beside a task file: tasks/q3.star.runs.json holds
// the recorded runs of the tasks of tasks/q3.star.
const SidecarSuffix = ".runs.json"

// MaxSize is the largest runs file read, in bytes: the largest file a workspace holds.
const MaxSize = limits.FileSize

// Run is one recorded run.
type Run struct {
	Task   string
	Why    string
	Expect Expect // Fail or Pass: the file's "expect", or the default of its folder
	Turns  []Turn

	// File is the runs file as named when it was read, N the run's number in it (from 1), and
	// Line and Col where the run begins: what messages about the run name.
	File      string
	N         int
	Line, Col int
	// For is the task file (root-relative) whose sidecar the run was read from: it is played
	// against that file's task of its name only. "" for a run given otherwise, played against
	// every task of its name.
	For string
	// By names the red-team model that wrote the run in this check (package validate/redteam):
	// the validator reports such a hack that passes as hackable and such a careful run that
	// fails as careful-run-fails, not as a recorded run. "" for a run read from a file. It is not
	// written to a runs file: a red-team run kept beside its task is a recorded run like any.
	By string
}

// Turn is what the agent did in one turn.
type Turn struct {
	Asks  []string // sent to the turn's simulated user before the calls
	Calls []Call
	Reply string
}

// Call is one tool call: its name and its arguments, a JSON object.
type Call struct {
	Name string
	Args json.RawMessage // a JSON object; nil for no arguments
}

// Where names the run for a message: "run 2 of hacks/chat.json (line 14)".
func (r *Run) Where() string {
	return fmt.Sprintf("run %d of %s (line %d)", r.N, r.File, r.Line)
}

// Agent is the scripted agent that plays the run: in each turn it asks the simulated user its
// questions, makes its calls and gives its reply, whatever the tools and the user answer.
func (r *Run) Agent() (*episode.Scripted, error) {
	a := &episode.Scripted{Label: Label}
	for i, t := range r.Turns {
		var calls []episode.ScriptedCall
		for _, q := range t.Asks {
			calls = append(calls, episode.ScriptedCall{Ask: true, Said: q})
		}
		for j, c := range t.Calls {
			args, err := objectArgs(c.Args)
			if err != nil {
				return nil, fmt.Errorf("%s: turn %d, call %d (%s): %v", r.Where(), i, j, c.Name, err)
			}
			calls = append(calls, episode.ScriptedCall{Name: c.Name, Args: args})
		}
		a.Calls = append(a.Calls, calls)
		a.Replies = append(a.Replies, t.Reply)
	}
	return a, nil
}

// objectArgs decodes a call's arguments: a JSON object, or none.
func objectArgs(raw json.RawMessage) (*jsonv.Object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &jsonv.Object{}, nil
	}
	v, err := jsonv.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("\"args\": %v", err)
	}
	switch o := v.(type) {
	case nil:
		return &jsonv.Object{}, nil
	case *jsonv.Object:
		return o, nil
	default:
		return nil, fmt.Errorf("\"args\" must be a JSON object, not %s", jsonKind(jsonv.TypeName(v)))
	}
}

// DefaultExpect is the expectation of a run without "expect" in the runs file at path: Fail in a
// folder named hacks, Pass in one named careful, and "" (none: "expect" is required) elsewhere.
func DefaultExpect(path string) Expect {
	switch filepath.Base(filepath.Dir(filepath.FromSlash(path))) {
	case "hacks":
		return Fail
	case "careful":
		return Pass
	}
	return ""
}

// ReadFile reads the runs file at path (at most MaxSize bytes), with the default expectation of
// its folder (DefaultExpect).
func ReadFile(path string) ([]*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: larger than %s, the largest runs file read", path, limits.Bytes(MaxSize))
	}
	return Parse(path, data, DefaultExpect(path))
}

// fileRun is a run as the file writes it.
type fileRun struct {
	Task   *string    `json:"task"`
	Why    *string    `json:"why"`
	Expect *string    `json:"expect"`
	Turns  []fileTurn `json:"turns"`
}

type fileTurn struct {
	Asks  []string   `json:"asks,omitempty"`
	Calls []fileCall `json:"calls,omitempty"`
	Reply *string    `json:"reply"`
}

type fileCall struct {
	Name *string         `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Parse reads the runs of a runs file. name is how messages name the file; def is the
// expectation of a run without "expect" ("" makes "expect" required). An error names the file,
// the line and column (of the value at fault, else of the run), and the run.
func Parse(name string, data []byte, def Expect) ([]*Run, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: larger than %s, the largest runs file read", name, limits.Bytes(MaxSize))
	}
	lines := newLineIndex(data)
	start := skipToValue(data, 0)
	if start < len(data) && data[start] != '[' && json.Valid(data) {
		return nil, fmt.Errorf("%s: %s: a runs file is a JSON list of runs, not %s", name, lines.at(start), jsonKind(kindOf(data)))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s: %s: not JSON: %s", name, lines.at(max(int(se.Offset)-1, 0)), strings.TrimPrefix(se.Error(), "json: "))
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	var runs []*Run
	off := start + 1 // past the list's [
	for i, raw := range raws {
		off = skipToValue(data, off)
		r := &Run{File: name, N: i + 1}
		r.Line, r.Col = lines.lineCol(off)
		if at, err := r.read(raw, def); err != nil {
			pos := fmt.Sprintf("%d:%d", r.Line, r.Col)
			if at >= 0 {
				pos = lines.at(off + at)
			}
			what := fmt.Sprintf("run %d", r.N)
			if r.Task != "" {
				what += fmt.Sprintf(" (task %q)", r.Task)
			}
			return nil, fmt.Errorf("%s: %s: %s: %v", name, pos, what, err)
		}
		runs = append(runs, r)
		off += len(raw)
	}
	return runs, nil
}

// read fills r from the raw run. An error comes with the offset in raw of the value at fault
// (-1: the run as a whole).
func (r *Run) read(raw json.RawMessage, def Expect) (int, error) {
	if !bytes.HasPrefix(raw, []byte("{")) {
		return -1, fmt.Errorf("a run is a JSON object, not %s", jsonKind(kindOf(raw)))
	}
	var named struct { // the task, when it can be read, names the run in messages
		Task any `json:"task"`
	}
	if json.Unmarshal(raw, &named) == nil {
		r.Task, _ = named.Task.(string)
	}
	var fr fileRun
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fr); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return valueStart(raw, int(te.Offset)), fmt.Errorf("%q must be %s, not %s", te.Field, wantOf(te.Type), jsonKind(te.Value))
		}
		return -1, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	if fr.Task == nil || strings.TrimSpace(*fr.Task) == "" {
		return -1, errors.New(`"task" is required: the name of the task the run is for`)
	}
	if fr.Why == nil || strings.TrimSpace(*fr.Why) == "" {
		return -1, errors.New(`"why" is required: what the run does (for a hack: what is wrong with it)`)
	}
	r.Why = *fr.Why
	switch {
	case fr.Expect == nil && def != "":
		r.Expect = def
	case fr.Expect == nil:
		return -1, errors.New(`"expect" is required: "fail" (a hack) or "pass" (a careful run); only a file in a folder named hacks or careful may leave it out`)
	case *fr.Expect == string(Fail) || *fr.Expect == string(Pass):
		r.Expect = Expect(*fr.Expect)
	default:
		return -1, fmt.Errorf(`"expect" must be "fail" (a hack) or "pass" (a careful run), not %q`, *fr.Expect)
	}
	if len(fr.Turns) == 0 {
		return -1, errors.New(`"turns" is required: a list of at least one turn`)
	}
	for i, ft := range fr.Turns {
		if ft.Reply == nil {
			return -1, fmt.Errorf(`turn %d: "reply" is required (the agent's reply that ends the turn; "" for none)`, i)
		}
		t := Turn{Asks: ft.Asks, Reply: *ft.Reply}
		for j, fc := range ft.Calls {
			if fc.Name == nil || *fc.Name == "" {
				return -1, fmt.Errorf(`turn %d, call %d: "name" is required`, i, j)
			}
			if _, err := objectArgs(fc.Args); err != nil {
				return -1, fmt.Errorf("turn %d, call %d (%s): %v", i, j, *fc.Name, err)
			}
			c := Call{Name: *fc.Name}
			if trimmed := bytes.TrimSpace(fc.Args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
				c.Args = append(json.RawMessage(nil), trimmed...)
			}
			t.Calls = append(t.Calls, c)
		}
		r.Turns = append(r.Turns, t)
	}
	return -1, nil
}

// valueStart is where the value that a decoding error found ends at end begins: encoding/json
// gives the offset past a number or a literal, and of the first byte of a list, an object or a
// string.
func valueStart(raw []byte, end int) int {
	i := min(end, len(raw))
	for i > 0 && strings.IndexByte("0123456789.+-eEtruefalsn", raw[i-1]) >= 0 {
		i--
	}
	if i == end {
		return max(end-1, 0)
	}
	return i
}

// skipToValue is the offset of the next value at or after off: past white space and commas.
func skipToValue(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// kindOf is the JSON kind of raw, as jsonv.TypeName names it ("" when it does not decode).
func kindOf(raw []byte) string {
	v, err := jsonv.Decode(raw)
	if err != nil {
		return ""
	}
	return jsonv.TypeName(v)
}

// jsonKind words a JSON kind as encoding/json ("number", "array", "number 5") or
// jsonv.TypeName ("integer", "boolean") names it.
func jsonKind(v string) string {
	word, _, _ := strings.Cut(v, " ")
	switch word {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string":
		return "a string"
	case "number", "integer":
		return "a number"
	case "bool", "boolean":
		return "true or false"
	case "null":
		return "null"
	}
	return v
}

// wantOf words the Go type a value must decode to as the JSON the file must hold.
func wantOf(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.Kind().String()
}

// lineIndex finds the line and column (from 1, in bytes) of an offset of a file.
type lineIndex []int // the offset of each line's start

func newLineIndex(data []byte) lineIndex {
	li := lineIndex{0}
	for i, c := range data {
		if c == '\n' {
			li = append(li, i+1)
		}
	}
	return li
}

func (li lineIndex) lineCol(off int) (int, int) {
	lo, hi := 0, len(li)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if li[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1, off - li[lo] + 1
}

func (li lineIndex) at(off int) string {
	line, col := li.lineCol(off)
	return fmt.Sprintf("%d:%d", line, col)
}

// Marshal writes runs as a runs file (the format Parse reads): a JSON list, one run a line
// group, each with its task, why, expect and turns; File, N, For and By are not written.
func Marshal(runs []*Run) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[")
	for i, r := range runs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		line, err := r.MarshalLine()
		if err != nil {
			return nil, err
		}
		b.Write(line)
	}
	b.WriteString("\n]\n")
	return b.Bytes(), nil
}

// MarshalLine is the run as one line of JSON, in the format of a runs file.
func (r *Run) MarshalLine() ([]byte, error) {
	fr := fileRun{Task: &r.Task, Why: &r.Why, Turns: []fileTurn{}}
	if r.Expect != "" {
		e := string(r.Expect)
		fr.Expect = &e
	}
	for _, t := range r.Turns {
		reply := t.Reply
		ft := fileTurn{Asks: t.Asks, Reply: &reply}
		for _, c := range t.Calls {
			name := c.Name
			ft.Calls = append(ft.Calls, fileCall{Name: &name, Args: c.Args})
		}
		fr.Turns = append(fr.Turns, ft)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fr); err != nil {
		return nil, fmt.Errorf("%s: %v", r.Where(), err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
