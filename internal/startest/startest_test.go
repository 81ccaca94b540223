package startest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

func TestRun(t *testing.T) {
	Run(t, "testdata/ok", starlark.StringDict{"greeting": starlark.String("hi there")})
}

// fakeReporter records what a file reports.
type fakeReporter struct{ errors, logs []string }

func (f *fakeReporter) Error(args ...any) { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *fakeReporter) Log(args ...any)   { f.logs = append(f.logs, fmt.Sprint(args...)) }

func TestFailuresNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		file    string
		wantErr string // substring of the returned error, "" for none
		wantRep string // substring of a reported assertion failure, "" for none
	}{
		{"assert.star", "", "assert.star:3:10: in <toplevel>"},
		{"raise.star", "raise.star:2:14: in f", ""},
		{"syntax.star", "syntax.star:2:8", ""},
		{"recursion.star", "called recursively", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "fail", tc.file)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var rep fakeReporter
			err = runFile(&rep, path, src, nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error = %v, want it to contain %q", err, tc.wantErr)
			}
			got := strings.Join(rep.errors, "\n")
			if tc.wantRep == "" && got != "" {
				t.Errorf("unexpected reports: %s", got)
			}
			if tc.wantRep != "" && (len(rep.errors) != 1 || !strings.Contains(got, tc.wantRep)) {
				t.Errorf("reports = %q, want one containing %q", got, tc.wantRep)
			}
		})
	}
}
