package validate

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// JSON is the report as `coworkenv validate --json` prints it: the tasks with their status,
// diagnostics and reference runs, and the summary (read back by ParseReport).
func (r *Report) JSON() *jsonv.Object {
	tasks := make([]jsonv.Value, len(r.Tasks))
	for i, t := range r.Tasks {
		var name jsonv.Value
		if t.Task != "" {
			name = t.Task
		}
		ds := make([]jsonv.Value, len(t.Diagnostics))
		for j, d := range t.Diagnostics {
			ds[j] = DiagJSON(d)
		}
		tasks[i] = jsonv.NewObject("task", name, "file", t.File, "status", t.Status, "diagnostics", ds,
			"oracle", summaryJSON(t.Oracle), "noop", summaryJSON(t.Noop))
	}
	return jsonv.NewObject("tasks", tasks, "summary",
		jsonv.NewObject("ok", int64(r.Summary.OK), "warn", int64(r.Summary.Warn), "invalid", int64(r.Summary.Invalid)))
}

// DiagJSON is one diagnostic as JSON; absent positions and backtraces are null.
func DiagJSON(d dsl.Diagnostic) *jsonv.Object {
	var file, line, col, bt jsonv.Value
	if d.File != "" {
		file = d.File
	}
	if d.Line > 0 {
		line, col = int64(d.Line), int64(d.Col)
	}
	if d.Backtrace != "" {
		bt = d.Backtrace
	}
	return jsonv.NewObject("code", d.Code, "severity", string(d.Severity), "message", d.Message,
		"file", file, "line", line, "col", col, "backtrace", bt)
}

func summaryJSON(s *RunSummary) jsonv.Value {
	if s == nil {
		return nil
	}
	return jsonv.NewObject("score", s.Score, "passed", s.Passed)
}

// ParseReport reads what JSON wrote, the inverse of JSON and DiagJSON: the tasks in order, their
// diagnostics and runs, with the summary recounted. source gives a file's text by the path shown
// (nil when unknown), for quoting offending lines.
func ParseReport(data []byte, source func(file string) []byte) (*Report, error) {
	v, err := jsonv.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("the validation report is not JSON: %v", err)
	}
	root, ok := v.(*jsonv.Object)
	if !ok {
		return nil, fmt.Errorf("the validation report is not a JSON object")
	}
	r := rd{}
	rep := &Report{}
	for i, tv := range r.list(root, "tasks") {
		t, ok := tv.(*jsonv.Object)
		if !ok {
			return nil, fmt.Errorf("the validation report's task %d is not an object", i)
		}
		tr := &TaskReport{Task: r.str(t, "task"), File: r.str(t, "file"), Diagnostics: []dsl.Diagnostic{},
			Oracle: r.summary(t, "oracle"), Noop: r.summary(t, "noop")}
		for _, dv := range r.list(t, "diagnostics") {
			d, ok := dv.(*jsonv.Object)
			if !ok {
				r.err = fmt.Errorf("a diagnostic of task %d is not an object", i)
				break
			}
			tr.Diagnostics = append(tr.Diagnostics, dsl.Diagnostic{Code: r.str(d, "code"),
				Severity: dsl.Severity(r.str(d, "severity")), Message: r.str(d, "message"),
				File: r.str(d, "file"), Line: r.int(d, "line"), Col: r.int(d, "col"),
				Backtrace: r.str(d, "backtrace")})
		}
		if r.err != nil {
			return nil, fmt.Errorf("the validation report's task %d: %v", i, r.err)
		}
		if source != nil {
			tr.Source = source(tr.File)
		}
		tr.Status = status(tr.Diagnostics)
		rep.count(tr.Status)
		rep.Tasks = append(rep.Tasks, tr)
	}
	if r.err != nil {
		return nil, fmt.Errorf("the validation report: %v", r.err)
	}
	return rep, nil
}

// rd reads fields of a decoded report, keeping the first error: a missing or null field reads
// as its zero value, a field of the wrong type is an error.
type rd struct{ err error }

func (r *rd) get(o *jsonv.Object, k string) jsonv.Value {
	v, _ := o.Get(k)
	return v
}

func (r *rd) wrong(k string, v jsonv.Value) {
	if r.err == nil {
		r.err = fmt.Errorf("field %q is %s", k, jsonv.TypeName(v))
	}
}

func (r *rd) str(o *jsonv.Object, k string) string {
	switch v := r.get(o, k).(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		r.wrong(k, v)
		return ""
	}
}

func (r *rd) int(o *jsonv.Object, k string) int {
	switch v := r.get(o, k).(type) {
	case nil:
		return 0
	case int64:
		return int(v)
	default:
		r.wrong(k, v)
		return 0
	}
}

func (r *rd) list(o *jsonv.Object, k string) []jsonv.Value {
	switch v := r.get(o, k).(type) {
	case nil:
		return nil
	case []jsonv.Value:
		return v
	default:
		r.wrong(k, v)
		return nil
	}
}

func (r *rd) summary(o *jsonv.Object, k string) *RunSummary {
	switch v := r.get(o, k).(type) {
	case nil:
		return nil
	case *jsonv.Object:
		score, ok := jsonv.Number(r.get(v, "score"))
		if !ok {
			r.wrong(k+".score", r.get(v, "score"))
		}
		passed, ok := r.get(v, "passed").(bool)
		if !ok {
			r.wrong(k+".passed", r.get(v, "passed"))
		}
		return &RunSummary{Score: score, Passed: passed}
	default:
		r.wrong(k, v)
		return nil
	}
}

// WriteText prints the report like a compiler: each diagnostic as file:line:col: severity[code]:
// message, the source line with a caret, the backtrace; then a summary line. verbose also lists
// the tasks that are ok.
func (r *Report) WriteText(w io.Writer, verbose bool) {
	for _, t := range r.Tasks {
		if len(t.Diagnostics) == 0 {
			if verbose {
				fmt.Fprintf(w, "%s: ok: %s\n", t.File, t.Task)
			}
			continue
		}
		for _, d := range t.Diagnostics {
			WriteDiag(w, d, t.Task, r.source(t, d))
		}
	}
	tasks, files := 0, 0
	for _, t := range r.Tasks {
		if t.Task == "" {
			files++
		} else {
			tasks++
		}
	}
	what := fmt.Sprintf("%d task%s", tasks, plural(tasks))
	if files > 0 {
		what += fmt.Sprintf(" and %d file%s that failed before declaring any", files, plural(files))
	}
	fmt.Fprintf(w, "%s: %d ok, %d warn, %d invalid\n", what, r.Summary.OK, r.Summary.Warn, r.Summary.Invalid)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// WriteDiag prints one diagnostic with its source line and caret, and the backtrace.
func WriteDiag(w io.Writer, d dsl.Diagnostic, task string, src []byte) {
	head := d.String()
	if task != "" {
		head += fmt.Sprintf(" (task %s)", task)
	}
	fmt.Fprintln(w, head)
	if line, ok := SourceLine(src, d.Line); ok && d.Col > 0 {
		num := fmt.Sprintf("%d", d.Line)
		fmt.Fprintf(w, " %s | %s\n", num, line)
		caret := " " + strings.Repeat(" ", len(num)) + " | " + caretPad(line, d.Col-1) + "^"
		fmt.Fprintln(w, caret)
	}
	// A backtrace of one frame only repeats the position and the message.
	if d.Backtrace != "" && strings.Count(d.Backtrace, "\n  ") > 1 {
		for _, l := range strings.Split(strings.TrimRight(d.Backtrace, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// SourceLine returns line n (1-based) of src as a person sees it, tabs kept: without a leading
// byte-order mark, and with each byte that is not UTF-8 shown as U+FFFD (never echoed raw), so
// that columns count characters as the interpreter does.
func SourceLine(src []byte, n int) (string, bool) {
	if n <= 0 || src == nil {
		return "", false
	}
	lines := bytes.Split(bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")), []byte("\n"))
	if n > len(lines) {
		return "", false
	}
	line := bytes.TrimRight(lines[n-1], "\r")
	var b strings.Builder
	for len(line) > 0 {
		r, size := utf8.DecodeRune(line)
		b.WriteRune(r) // utf8.RuneError for a bad byte
		line = line[size:]
	}
	return b.String(), true
}

// caretPad is the white space before column col (0-based, in characters), keeping tabs so the
// caret lines up.
func caretPad(line string, col int) string {
	var b strings.Builder
	i := 0
	for _, r := range line {
		if i >= col {
			break
		}
		i++
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
