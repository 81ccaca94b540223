package validate_test

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/conformance"
	"github.com/coworkenv/coworkenv/validate"
)

// acceptedNewWarnings lists, in one place, the conformance files that the honest-reward checks
// flag although the suite expects them `ok`, with the one warning code accepted on each. Every
// finding is real (a changed fact or a negated statement in the reference's text still passes);
// the suite's files are not ours to change, so the runner accepts exactly these and nothing
// else, and an entry that is no longer needed fails the test.
var acceptedNewWarnings = map[string]string{
	"multiturn/payroll_phishing.star":     "blind-to-content", // reply "is not almost certainly phishing" passes
	"ok/downloads_cleanup.star":           "blind-to-content", // reply total 2,150.00 → 2,151.00 passes
	"ok/helpdesk_close_resolved.star":     "blind-to-content", // ticket note "correct" → "incorrect" passes
	"scoring/carrier_booking_faults.star": "blind-to-content", // mail says Thursday instead of Wednesday
	"scoring/weighted_partial.star":       "blind-to-content", // mail "The rate card is not updated." passes
}

// TestConformanceExpect checks every `# expect:` line of the shared suite against a validation
// of the whole suite folder, as `coworkenv validate --json FOLDER` would run it.
func TestConformanceExpect(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("the conformance suite (../shared/conformance) is not there; set COWORKENV_CONFORMANCE")
	}
	files, err := conformance.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := dsl.NewCorpus(os.DirFS(dir), ".", dir)
	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cf := range files {
		path := c.DisplayPath(cf.Rel)
		for _, e := range cf.Expects {
			n++
			var entry *validate.TaskReport
			for _, tr := range rep.Tasks {
				if tr.File == path && (tr.Task == e.Task || e.Task == "*" && tr.Task == "") {
					entry = tr
				}
			}
			if entry == nil {
				t.Errorf("%s:%d: no entry for task %s", cf.Rel, e.Line, e.Task)
				continue
			}
			var codes []string
			hasError := false
			for _, d := range entry.Diagnostics {
				codes = append(codes, d.Code)
				hasError = hasError || d.Severity == dsl.Error
			}
			if e.Status == "ok" && entry.Status == "warn" && acceptedNewWarnings[cf.Rel] != "" {
				accepted := true
				for _, d := range entry.Diagnostics {
					accepted = accepted && d.Code == acceptedNewWarnings[cf.Rel]
				}
				if accepted {
					used[cf.Rel] = true
					continue
				}
			}
			if entry.Status != e.Status {
				t.Errorf("%s:%d: %s: status %s, want %s; diagnostics:\n%s", cf.Rel, e.Line, e.Task, entry.Status, e.Status, diagText(entry))
				continue
			}
			switch e.Status {
			case "ok":
				if len(entry.Diagnostics) > 0 {
					t.Errorf("%s:%d: %s: ok but has diagnostics:\n%s", cf.Rel, e.Line, e.Task, diagText(entry))
				}
			case "warn", "invalid":
				for _, want := range e.Codes {
					if !contains(codes, want) {
						t.Errorf("%s:%d: %s: no %s diagnostic; got:\n%s", cf.Rel, e.Line, e.Task, want, diagText(entry))
					}
				}
				if e.Status == "warn" && hasError {
					t.Errorf("%s:%d: %s: warn but has errors:\n%s", cf.Rel, e.Line, e.Task, diagText(entry))
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no expect lines found")
	}
	for _, f := range sortedKeys(acceptedNewWarnings) {
		if !used[f] {
			t.Errorf("%s: listed in acceptedNewWarnings but no longer flagged with %s: remove the entry", f, acceptedNewWarnings[f])
		}
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func diagText(tr *validate.TaskReport) string {
	var b strings.Builder
	for _, d := range tr.Diagnostics {
		validate.WriteDiag(&b, d, tr.Task, tr.Source)
	}
	return b.String()
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
