package report

import (
	"bytes"
	"cmp"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/shown"
	"github.com/coworkenv/coworkenv/validate"
)

// maxSource bounds a task file read to quote its lines in a validation report.
const maxSource = 4 << 20

// WriteValidation writes the report of a validation (`validate --report FILE` gives the report
// it has; `report` reads `validate --json` output).
func WriteValidation(out string, rep *validate.Report) error {
	data, err := renderValidation(rep)
	if err != nil {
		return err
	}
	return writeFile(out, data)
}

// readValidation reads `validate --json` reports, merged. The source lines are quoted from the
// task files the reports name, read relative to the current folder and only inside it (a report
// is untrusted: it could name any file), and only .star files.
func readValidation(paths []string) (*validate.Report, error) {
	merged := &validate.Report{}
	root, _ := os.OpenRoot(".")
	if root != nil {
		defer root.Close()
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, &InputError{Path: p, Err: shown.Cause(err)}
		}
		rep, err := validate.ParseReport(data, func(file string) []byte { return readSource(root, file) })
		if err != nil {
			return nil, &InputError{Path: p, Err: err}
		}
		merged.Merge(rep)
	}
	return merged, nil
}

// readSource reads a task file a report names, behind the wall of root; nil when it cannot.
func readSource(root *os.Root, file string) []byte {
	if root == nil || !dsl.IsTaskFile(file) {
		return nil
	}
	rel := filepath.FromSlash(file)
	if !filepath.IsLocal(rel) {
		return nil
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSource+1))
	if err != nil || len(data) > maxSource {
		return nil
	}
	return data
}

type validationView struct {
	Summary validate.Summary
	Tasks   int
	Files   int // files that failed before declaring a task
	// Invalid is the invalid tasks: the summary's invalid count holds the files that failed
	// before declaring a task too, which the page shows apart, so that ok, warn and invalid add
	// up to Tasks.
	Invalid int
	Diags   int
	Codes   []codeRow
	Charts  []*barChart
}

type codeRow struct {
	Code, Severity string
	Count, Tasks   int
}

type validationData struct {
	Tasks []vtaskData `json:"tasks"`
}

type vtaskData struct {
	Task   string      `json:"t"`
	File   string      `json:"f"`
	Status string      `json:"st"`
	Diags  []vdiagData `json:"d"`
}

type vdiagData struct {
	Code     string `json:"c"`
	Severity string `json:"s"`
	Message  string `json:"m"`
	Text     string `json:"x"` // the diagnostic as validate prints it: the source line and caret
}

// statusRank orders tasks worst first.
var statusRank = map[string]int{"invalid": 0, "warn": 1, "ok": 2}

func renderValidation(rep *validate.Report) ([]byte, error) {
	v := &validationView{Summary: rep.Summary}
	data := validationData{Tasks: []vtaskData{}}
	codes := map[string]*codeRow{}
	for _, t := range rep.Tasks {
		if t.Task == "" {
			v.Files++
		} else {
			v.Tasks++
		}
		td := vtaskData{Task: t.Task, File: t.File, Status: t.Status, Diags: []vdiagData{}}
		seen := map[string]bool{}
		for _, d := range t.Diagnostics {
			v.Diags++
			src := t.Source
			if d.File != t.File {
				src = rep.Sources[d.File]
			}
			var b bytes.Buffer
			validate.WriteDiag(&b, d, "", src)
			text := b.String()
			if _, rest, ok := strings.Cut(text, "\n"); ok { // the first line repeats the message
				text = strings.TrimRight(rest, "\n")
			}
			loc := d.File
			if loc != "" && d.Line > 0 {
				loc += ":" + itoa(d.Line) + ":" + itoa(d.Col)
			}
			if text == "" {
				text = loc
			} else if loc != "" {
				text = loc + "\n" + text
			}
			td.Diags = append(td.Diags, vdiagData{Code: d.Code, Severity: string(d.Severity), Message: cut(d.Message), Text: cut(text)})
			c := codes[d.Code]
			if c == nil {
				c = &codeRow{Code: d.Code, Severity: string(d.Severity)}
				codes[d.Code] = c
			}
			c.Count++
			if !seen[d.Code] {
				seen[d.Code] = true
				c.Tasks++
			}
		}
		data.Tasks = append(data.Tasks, td)
	}
	// worst first: invalid, then warn, then ok; more errors first; then by file and task
	slices.SortStableFunc(data.Tasks, func(a, b vtaskData) int {
		return cmp.Or(cmp.Compare(statusRank[a.Status], statusRank[b.Status]),
			cmp.Compare(len(b.Diags), len(a.Diags)), cmp.Compare(a.File, b.File), cmp.Compare(a.Task, b.Task))
	})
	for _, c := range codes {
		v.Codes = append(v.Codes, *c)
	}
	slices.SortFunc(v.Codes, func(a, b codeRow) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code)) })

	v.Invalid = max(rep.Summary.Invalid-v.Files, 0)
	total := float64(rep.Summary.OK + rep.Summary.Warn + v.Invalid + v.Files)
	status := &barChart{ID: "chart-status", Title: "Tasks by status", Head: [2]string{"status", "tasks"},
		Desc: "How many tasks validate ok, with warnings, or are invalid (and how many files failed before declaring a task)."}
	statuses := []struct {
		name, class string
		n           int
	}{{"ok", "pass", rep.Summary.OK}, {"warn", "warn", rep.Summary.Warn}, {"invalid", "fail", v.Invalid}}
	if v.Files > 0 {
		statuses = append(statuses, struct {
			name, class string
			n           int
		}{"file without a task", "fail", v.Files})
	}
	for _, s := range statuses {
		text := itoa(s.n)
		if total > 0 {
			text += " (" + fmtPct(float64(s.n)/total) + ")"
		}
		status.Bars = append(status.Bars, bar{Label: s.name, Value: float64(s.n), Text: text, Class: s.class})
	}
	byCode := &barChart{ID: "chart-codes", Title: "Diagnostics by code", Head: [2]string{"code", "diagnostics"},
		Desc: "How many diagnostics of each code the tasks have, most frequent first."}
	for _, c := range v.Codes {
		class := "warn"
		if c.Severity == string(dsl.Error) {
			class = "fail"
		}
		byCode.Bars = append(byCode.Bars, bar{Label: c.Code, Value: float64(c.Count), Text: itoa(c.Count), Class: class})
	}
	v.Charts = []*barChart{status, byCode}
	p := page{Title: "Validation", Kind: "validation", Body: v, Data: data,
		Nav: []navLink{{"summary", "Summary"}, {"codes", "By code"}, {"tasks", "Tasks"}}}
	return render(p)
}

func itoa(n int) string { return strconv.Itoa(n) }
