package validate_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/require"
)

// honestFile is one file of testdata/honest: weak files (first line "# weak: CODE") hold a task
// with one weakness and hacks (tasks NAME--hack-N) of which at least one passes; strong files
// ("# strong") hold a task that must validate ok and hacks that must all fail.
type honestFile struct {
	rel, code string
	weak      bool
}

func honestFiles(t *testing.T, dir string) []honestFile {
	var out []honestFile
	for _, kind := range []string{"weak", "strong"} {
		paths, err := filepath.Glob(filepath.Join(dir, kind, "*.star"))
		require.NoError(t, err)
		for _, p := range paths {
			src, err := os.ReadFile(p)
			require.NoError(t, err)
			line, _, _ := bufio.NewReader(bytes.NewReader(src)).ReadLine()
			f := honestFile{rel: kind + "/" + filepath.Base(p), weak: kind == "weak"}
			if f.weak {
				code, ok := strings.CutPrefix(string(line), "# weak: ")
				require.True(t, ok, "%s: the first line must be # weak: CODE", p)
				f.code = strings.TrimSpace(code)
				_, known := dsl.CodeByID(f.code)
				require.True(t, known, "%s: unknown code %s", p, f.code)
			} else {
				require.Equal(t, "# strong", strings.TrimSpace(string(line)), "%s: the first line must be # strong", p)
			}
			out = append(out, f)
		}
	}
	return out
}

// TestHonestPrecision measures the honest-reward checks on testdata/honest: every weak task is
// flagged with its code, no strong task is flagged at all, every weak file has a hack that
// passes and every hack of a strong file fails. `go test ./validate -run TestHonestPrecision -v`
// prints the counts docs/benchmarks.md reports.
func TestHonestPrecision(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "honest")
	c := dsl.NewCorpus(os.DirFS(dir), ".", "testdata/honest")
	files := honestFiles(t, dir)
	rels := make([]string, len(files))
	for i, f := range files {
		rels[i] = f.rel
	}
	rep, err := validate.Corpus(context.Background(), c, rels, validate.Options{Jobs: 2})
	require.NoError(t, err)

	flagged, weak, clean, strong := map[string]int{}, map[string]int{}, 0, 0
	for _, f := range files {
		path := c.DisplayPath(f.rel)
		var main *validate.TaskReport
		var hacks []string
		for _, tr := range rep.Tasks {
			if tr.File != path {
				continue
			}
			if strings.Contains(tr.Task, "--hack-") {
				hacks = append(hacks, tr.Task)
			} else if tr.Task != "" {
				require.Nil(t, main, "%s declares two tasks that are not hacks", f.rel)
				main = tr
			}
		}
		require.NotNil(t, main, "%s: no task; diagnostics: %v", f.rel, rep.Tasks)
		var codes []string
		for _, d := range main.Diagnostics {
			codes = append(codes, d.Code)
		}
		if f.weak {
			weak[f.code]++
			if contains(codes, f.code) {
				flagged[f.code]++
			} else {
				t.Errorf("%s: task %s is not flagged %s (diagnostics: %v)", f.rel, main.Task, f.code, codes)
			}
		} else {
			strong++
			if main.Status == "ok" {
				clean++
			} else {
				t.Errorf("%s: strong task %s is %s:\n%s", f.rel, main.Task, main.Status, diagText(main))
			}
		}
		passed := hackOutcomes(t, c, f.rel, hacks)
		if f.weak && len(hacks) > 0 && !contains(passed, "pass") {
			t.Errorf("%s: no hack passes the weak verifier", f.rel)
		}
		if !f.weak && contains(passed, "pass") {
			t.Errorf("%s: a hack passes the strong verifier: %v %v", f.rel, hacks, passed)
		}
	}
	var codes []string
	total, hit := 0, 0
	for code := range weak {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		t.Logf("weak %-22s %d of %d flagged", code, flagged[code], weak[code])
		total += weak[code]
		hit += flagged[code]
	}
	t.Logf("weak tasks flagged with their code: %d of %d; strong tasks left unflagged: %d of %d", hit, total, clean, strong)
	require.NotZero(t, total)
	require.NotZero(t, strong)
}

// hackOutcomes runs the reference of each hack task and says "pass" or "fail" for each.
func hackOutcomes(t *testing.T, c *dsl.Corpus, rel string, hacks []string) []string {
	if len(hacks) == 0 {
		return nil
	}
	f := c.LoadFile(context.Background(), rel)
	require.Empty(t, f.Diags)
	var out []string
	for _, task := range f.Tasks {
		if !contains(hacks, task.Name) {
			continue
		}
		p, d := episode.Prepare(context.Background(), task, episode.Options{})
		require.Nil(t, d)
		r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
		if r.Passed {
			out = append(out, "pass")
		} else {
			out = append(out, "fail")
		}
	}
	return out
}
