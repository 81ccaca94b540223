package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "write the golden files of testdata/golden")

// pages writes a page of each kind from the fixture's inputs and returns them by name (the
// golden file's); the rollout's episode views are in the fixture's folder.
func pages(t *testing.T, f *fixture) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	write := func(name string, fn func(path string) error) {
		path := filepath.Join(f.dir, name)
		require.NoError(t, fn(path), name)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		out[name] = data
	}
	model, oracle := f.modelTrace(t), f.oracleTrace(t)
	write("episode-model.html", func(p string) error { return WriteEpisodes(ctx, p, []string{model}, f.options()) })
	write("episode-oracle.html", func(p string) error { return WriteEpisodes(ctx, p, []string{oracle}, f.options()) })
	write("episode-no-task.html", func(p string) error { return WriteEpisodes(ctx, p, []string{model}, Options{}) })
	dir := f.rolloutDir(t, 3, rolloutPlan)
	write("rollout.html", func(p string) error {
		_, err := Write(ctx, p, []string{dir}, f.options())
		return err
	})
	ep, err := os.ReadFile(filepath.Join(EpisodesDir(filepath.Join(f.dir, "rollout.html")), "standup-room-move", "1.html"))
	require.NoError(t, err)
	out["rollout-episode.html"] = ep
	better := f.rolloutDirNamed(t, "rollout-b", 3, betterPlan)
	write("compare.html", func(p string) error { return WriteCompare(ctx, p, dir, better, f.options()) })
	write("validation.html", func(p string) error {
		_, err := Write(ctx, p, []string{"testdata/validate.json"}, Options{})
		return err
	})
	write("generation.html", func(p string) error {
		_, err := Write(ctx, p, []string{"testdata/generation"}, Options{})
		return err
	})
	return out
}

// The structure of each kind of page is its golden file's (go test ./report -update writes
// them): the markup, and the data block indented; the page's style and script, and the hashes
// that allow them, are left out (they would make every golden file change with any of them).
func TestGolden(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, data := range pages(t, f) {
		got := f.normalize(structure(t, data))
		path := filepath.Join("testdata", "golden", name)
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./report -update to write the golden files")
		if string(want) != got {
			t.Errorf("%s differs from its golden file (go test ./report -update writes it):\n%s", name, firstDiff(string(want), got))
		}
	}
}

// firstDiff shows the first line where two texts differ, with the lines around it.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	at := func(ls []string) string {
		lo, hi := max(i-2, 0), min(i+3, len(ls))
		return strings.Join(ls[lo:hi], "\n")
	}
	return fmt.Sprintf("line %d\n--- golden:\n%s\n--- now:\n%s", i+1, at(w), at(g))
}

var (
	styleRe = regexp.MustCompile(`(?s)<style>.*?</style>`)
	cspRe   = regexp.MustCompile(`(content="default-src[^"]*")`)
	dataRe  = regexp.MustCompile(`(?s)(<script type="application/json" id="report-data">)(.*?)(</script>)`)
	codeRe  = regexp.MustCompile(`(?s)<script>.*?</script>`)
)

// structure is a page without its style, script and their hashes, its data block indented.
func structure(t *testing.T, page []byte) string {
	s := string(page)
	s = styleRe.ReplaceAllString(s, "<style>(style.css)</style>")
	s = cspRe.ReplaceAllString(s, `content="(the policy)"`)
	s = codeRe.ReplaceAllString(s, "<script>(app.js)</script>")
	return dataRe.ReplaceAllStringFunc(s, func(m string) string {
		parts := dataRe.FindStringSubmatch(m)
		var b bytes.Buffer
		require.NoError(t, json.Indent(&b, []byte(parts[2]), "", " "))
		return parts[1] + "\n" + b.String() + "\n" + parts[3]
	})
}

// Two reports of the same inputs are the same bytes.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	f1, f2 := newFixture(t), newFixture(t)
	p1, p2 := pages(t, f1), pages(t, f2)
	require.Len(t, p1, len(p2))
	for name := range p1 {
		if a, b := f1.normalize(string(p1[name])), f2.normalize(string(p2[name])); a != b {
			t.Errorf("%s differs between two runs:\n%s", name, firstDiff(a, b))
		}
	}
}

var (
	handlerRe  = regexp.MustCompile(`(?i)<[a-z][^>]*\son[a-z]+\s*=`)
	externalRe = regexp.MustCompile(`(?i)(?:\b(?:src|href|action|poster|srcset|xlink:href)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.\-]*:|//))|url\(\s*["']?\s*(?:[a-z][a-z0-9+.\-]*:|//)|@import|<link\b|<iframe\b|<object\b|<embed\b`)
)

// No page refers to anything outside itself: no URL with a scheme or a host in src, href or
// url(), no @import, <link> or frame; and text from a trace, a report or a manifest (hostile
// here) is shown as text: it opens no element.
func TestSelfContainedAndInert(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, data := range pages(t, f) {
		s := string(data)
		assert.Empty(t, externalRe.FindAllString(s, -1), "%s refers to something outside itself", name)
		// the only scripts are the data block and the page's own, whole; no image; no handler;
		// links only to anchors and sibling files
		opened, closed := strings.Count(s, "<script"), strings.Count(s, "</script")
		assert.True(t, opened == closed && opened <= 2, "%s: %d <script and %d </script: a text opens or ends a script element", name, opened, closed)
		assert.Equal(t, 1, strings.Count(s, "<script>"+script+"</script>"), "%s: the page's script is not whole", name)
		assert.False(t, strings.Contains(s, "<img"), "%s has an image", name)
		assert.False(t, handlerRe.MatchString(s), "%s has an event handler attribute: %s", name, handlerRe.FindString(s))
		for _, m := range regexp.MustCompile(`<a\b[^>]*>`).FindAllString(s, -1) {
			assert.Regexp(t, `^<a (href="(#|\./|\.\./)[^"]*"|class="skip" href="#main")`, m, name)
		}
	}
	// the hostile text is there, as text
	model := f.modelTrace(t)
	out := filepath.Join(f.dir, "hostile.html")
	require.NoError(t, WriteEpisodes(context.Background(), out, []string{model}, f.options()))
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;")
}
