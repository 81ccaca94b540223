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
// flag although the suite expects them `ok`, with the warning codes accepted on each. Every
// finding is real: the suite's verifiers check prose with regular expressions and keywords, so a
// changed fact, a rival value beside the right one, a hedge or a misreporting reply still passes
// (blind-to-content, blind-to-claim, blind-to-reply), another field changed or a wrong version
// written first goes unseen (blind-to-side-effect), a fair rewording (another date format,
// the old day named as the old one, a heading) fails (brittle-verifier), and parameters of the
// suite's own tools have no description (undocumented-param). The suite's files are not
// ours to change, so the runner accepts exactly these and nothing else, and an entry that is no
// longer needed fails the test.
var acceptedNewWarnings = map[string][]string{
	"multiturn/budget_silent_correction.star":  {"blind-to-reply", "blind-to-side-effect", "brittle-verifier"},
	"multiturn/crm_call_followup.star":         {"blind-to-claim", "blind-to-reply", "blind-to-side-effect", "brittle-verifier", "undocumented-param"},
	"multiturn/ledger_invoice_correction.star": {"blind-to-reply", "blind-to-side-effect", "brittle-verifier"},
	"multiturn/onboarding_week.star":           {"blind-to-reply", "brittle-verifier"},
	"multiturn/payroll_phishing.star":          {"blind-to-content", "blind-to-reply"},
	"multiturn/reschedule_one_on_one.star":     {"blind-to-reply", "blind-to-side-effect", "brittle-verifier"},
	"multiturn/ticket_escalation.star":         {"blind-to-reply", "undocumented-param"},
	"ok/december_expense_summary.star":         {"blind-to-reply", "blind-to-side-effect"},
	"ok/downloads_cleanup.star":                {"blind-to-content", "blind-to-reply"},
	"ok/helpdesk_close_resolved.star":          {"blind-to-content", "blind-to-reply", "blind-to-side-effect", "undocumented-param"},
	"ok/inbox_triage.star":                     {"blind-to-reply"},
	"ok/invoice_attachment_reply.star":         {"blind-to-reply"},
	"ok/offsite_cross_service.star":            {"blind-to-reply", "blind-to-side-effect", "undocumented-param"},
	"ok/payment_reminder_family.star":          {"blind-to-claim", "blind-to-reply", "brittle-verifier", "undocumented-param"},
	"ok/schedule_carrier_review.star":          {"blind-to-reply"},
	"scoring/carrier_booking_faults.star":      {"blind-to-claim", "blind-to-content", "blind-to-reply", "undocumented-param"},
	"scoring/pass_threshold.star":              {"blind-to-claim", "blind-to-reply", "brittle-verifier"},
	"scoring/per_turn_credit.star":             {"blind-to-reply", "blind-to-side-effect"},
	"scoring/weighted_partial.star":            {"blind-to-content", "blind-to-reply", "blind-to-side-effect"},
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
			if e.Status == "ok" && entry.Status == "warn" && len(acceptedNewWarnings[cf.Rel]) > 0 {
				accepted := true
				for _, d := range entry.Diagnostics {
					accepted = accepted && contains(acceptedNewWarnings[cf.Rel], d.Code)
				}
				if accepted {
					for _, d := range entry.Diagnostics {
						used[cf.Rel+" "+d.Code] = true
					}
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
		for _, code := range acceptedNewWarnings[f] {
			if !used[f+" "+code] {
				t.Errorf("%s: listed in acceptedNewWarnings with %s, which it no longer raises: remove the code", f, code)
			}
		}
	}
}

func sortedKeys(m map[string][]string) []string {
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
