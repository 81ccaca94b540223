// Package conformance reads the expectation lines of the shared conformance suite
// (../shared/conformance, see its README): `# expect: TASK STATUS [CODE ...]` and
// `# run: TASK AGENT score=X passed=true|false`.
package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Expect is one `# expect:` line.
type Expect struct {
	Line   int
	Task   string // "*" for the file's null-task entry
	Status string // ok, warn, invalid
	Codes  []string
}

// Run is one `# run:` line.
type Run struct {
	Line   int
	Task   string
	Agent  string
	Score  float64
	Passed bool
}

// File holds the expectations of one task file.
type File struct {
	Rel     string // relative to the suite root, slash-separated
	Expects []Expect
	Runs    []Run
}

// Dir finds the suite: $COWORKENV_CONFORMANCE, else ../shared/conformance beside the
// repository root (the folder holding go.mod above the working directory). ok is false when
// it is not there.
func Dir() (string, bool) {
	if d := os.Getenv("COWORKENV_CONFORMANCE"); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			s := filepath.Join(filepath.Dir(d), "shared", "conformance")
			_, err := os.Stat(s)
			return s, err == nil
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Load parses every .star file under dir that carries expectation lines, in path order.
func Load(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".star") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := Parse(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		if len(f.Expects)+len(f.Runs) > 0 {
			out = append(out, f)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out, err
}

// Parse reads the expectation lines of one file.
func Parse(rel string, src []byte) (File, error) {
	f := File{Rel: rel}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "# expect:"):
			fields := strings.Fields(strings.TrimPrefix(line, "# expect:"))
			if len(fields) < 2 {
				return f, fmt.Errorf("%s:%d: malformed expect line", rel, n)
			}
			f.Expects = append(f.Expects, Expect{Line: n, Task: fields[0], Status: fields[1], Codes: fields[2:]})
		case strings.HasPrefix(line, "# run:"):
			fields := strings.Fields(strings.TrimPrefix(line, "# run:"))
			if len(fields) != 4 || !strings.HasPrefix(fields[2], "score=") || !strings.HasPrefix(fields[3], "passed=") {
				return f, fmt.Errorf("%s:%d: malformed run line", rel, n)
			}
			score, err := strconv.ParseFloat(strings.TrimPrefix(fields[2], "score="), 64)
			if err != nil {
				return f, fmt.Errorf("%s:%d: %v", rel, n, err)
			}
			f.Runs = append(f.Runs, Run{Line: n, Task: fields[0], Agent: fields[1], Score: score,
				Passed: strings.TrimPrefix(fields[3], "passed=") == "true"})
		}
	}
	return f, sc.Err()
}
