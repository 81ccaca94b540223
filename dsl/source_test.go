package dsl_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	_ "github.com/coworkenv/coworkenv/corpus" // registers the built-in taxonomy
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const bom = "\xef\xbb\xbf"

// A leading byte-order mark is skipped, in task files and in the helpers they load, and the
// positions stay those a person sees.
func TestByteOrderMark(t *testing.T) {
	c := corpusOf(map[string]string{
		"a.star":          bom + okTask,
		"lib/h.star":      bom + "H = 1\n",
		"b.star":          bom + `load("//lib/h.star", "H")` + "\n" + okTask,
		"bad.star":        bom + "def f(:\n",
		"bad_plain.star":  "def f(:\n",
		"sources.star":    bom + `load("//lib/h.star", "H")` + "\n",
		"lib/other.star":  "X = 1\n",
		"lib/loads.star":  bom + `load("//lib/other.star", "X")` + "\nY = X\n",
		"uses_loads.star": `load("//lib/loads.star", "Y")` + "\n" + okTask,
	})
	ctx := context.Background()
	for _, rel := range []string{"a.star", "b.star", "uses_loads.star"} {
		f := c.LoadFile(ctx, rel)
		assert.Empty(t, f.Diags, rel)
		assert.Len(t, f.Tasks, 1, rel)
	}
	bad, plain := c.LoadFile(ctx, "bad.star"), c.LoadFile(ctx, "bad_plain.star")
	require.Len(t, bad.Diags, 1)
	require.Len(t, plain.Diags, 1)
	assert.Equal(t, plain.Diags[0].Line, bad.Diags[0].Line)
	assert.Equal(t, plain.Diags[0].Col, bad.Diags[0].Col, "the mark takes no column")
	assert.Equal(t, plain.Diags[0].Message, bad.Diags[0].Message)
	files, err := c.SourceFiles("sources.star")
	require.NoError(t, err)
	assert.Len(t, files, 2, "the load of a file with a mark is followed")
	assert.Equal(t, bom, string(files[0].Data[:3]), "sources keep the file's own bytes (their hashes are the file's)")
}

// A file that is not UTF-8 does not load: one syntax diagnostic at its first bad byte.
func TestNotUTF8(t *testing.T) {
	c := corpusOf(map[string]string{
		"a.star":       "X = 1\nY = \"caf\xe9 \xe9\"\n",
		"lib/h.star":   "H = \"\xff\"\n",
		"b.star":       `load("//lib/h.star", "H")` + "\n",
		"é.star":       "Z = \"né\"\nW = \"\xc3\"\n", // valid multi-byte characters before the bad one
		"sources.star": "\xfe\n",
	})
	ctx := context.Background()
	f := c.LoadFile(ctx, "a.star")
	require.Len(t, f.Diags, 1)
	d := f.Diags[0]
	assert.Equal(t, "syntax", d.Code)
	assert.Equal(t, "c/a.star", d.File)
	assert.Equal(t, []int{2, 9}, []int{d.Line, d.Col})
	assert.Equal(t, "the file is not UTF-8 text: byte 0xE9 is not valid UTF-8 (save the file as UTF-8)", d.Message)

	f = c.LoadFile(ctx, "é.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, []int{2, 6}, []int{f.Diags[0].Line, f.Diags[0].Col})

	f = c.LoadFile(ctx, "b.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "load", f.Diags[0].Code)
	assert.Contains(t, f.Diags[0].Message, "c/lib/h.star:1:6: error[syntax]: the file is not UTF-8 text: byte 0xFF")

	_, err := c.SourceFiles("sources.star")
	assert.ErrorContains(t, err, "c/sources.star:1:1: the file is not UTF-8 text: byte 0xFE")
}

// A script that runs out of steps in a loop whose jump has no position of its own is pointed at
// the loop, not at the def of its function.
func TestStepLimitPointsAtTheLoop(t *testing.T) {
	src := "def g():\n    return 1\n\ndef f():\n    n = 0\n    while True:\n        pass\n\nX = f()\n"
	c := corpusOf(map[string]string{"a.star": src})
	c = c.WithLimits(dsl.Limits{Steps: 10000, Timeout: c.Limits().Timeout})
	f := c.LoadFile(context.Background(), "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "step-limit", f.Diags[0].Code)
	assert.Equal(t, []int{6, 5}, []int{f.Diags[0].Line, f.Diags[0].Col}, "the while, not def f()")

	// PointAtLoop: only a step-limit at a def moves, to that function's first loop
	at := func(code string, line, col int) dsl.Diagnostic {
		return dsl.Diagnostic{Code: code, File: "a.star", Line: line, Col: col}
	}
	nested := "def f():\n    def inner():\n        for x in []:\n            pass\n    while True:\n        pass\n"
	d := dsl.PointAtLoop(at("step-limit", 1, 1), []byte(nested))
	assert.Equal(t, []int{5, 5}, []int{d.Line, d.Col}, "a nested function's loop is not f's")
	d = dsl.PointAtLoop(at("step-limit", 2, 5), []byte(nested))
	assert.Equal(t, []int{3, 9}, []int{d.Line, d.Col})
	d = dsl.PointAtLoop(at("script-error", 1, 1), []byte(nested))
	assert.Equal(t, []int{1, 1}, []int{d.Line, d.Col}, "other codes stay")
	d = dsl.PointAtLoop(at("step-limit", 1, 1), []byte("def g():\n    return 1\n"))
	assert.Equal(t, []int{1, 1}, []int{d.Line, d.Col}, "a function without a loop stays")
}

// A standalone folder's capabilities are checked against the taxonomy given (the built-in one,
// by the command line), which the diagnostic names; a corpus's own names its file.
func TestStandaloneTaxonomy(t *testing.T) {
	builtin := dsl.BuiltinTaxonomy()
	require.NotNil(t, builtin, "package corpus registers the built-in taxonomy")
	dir := t.TempDir()
	for name, capability := range map[string]string{"ok.star": "mail.reply", "typo.star": "mail.rply"} {
		src := `task(name = "` + name[:len(name)-5] + `", prompt = "p", tools = [], capabilities = ["` + capability + `"])` + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	c, err := dsl.OpenStandalone(dir, "d", builtin)
	require.NoError(t, err)
	assert.True(t, c.HasTaxonomy())
	data, err := c.ReadSource(dsl.CapabilitiesFile)
	require.NoError(t, err)
	assert.Equal(t, builtin, data, "workers are given it with the corpus's files")
	files, err := c.TaskFiles()
	require.NoError(t, err)
	assert.Equal(t, []string{"ok.star", "typo.star"}, files)

	ctx := context.Background()
	assert.Empty(t, c.LoadFile(ctx, "ok.star").Diags)
	f := c.LoadFile(ctx, "typo.star")
	require.Len(t, f.Diags, 1)
	assert.Contains(t, f.Diags[0].Message, `unknown capability "mail.rply": not declared in `+dsl.BuiltinTaxonomyName)

	own := dsl.NewCorpus(fstest.MapFS{
		"capabilities.star": {Data: []byte(`capability("mine", "mine")` + "\n")},
		"t.star":            {Data: []byte(`task(name = "t", prompt = "p", tools = [], capabilities = ["mail.reply"])` + "\n")},
	}, ".", "c")
	f = own.LoadFile(ctx, "t.star")
	require.Len(t, f.Diags, 1)
	assert.Contains(t, f.Diags[0].Message, `unknown capability "mail.reply": not declared in c/capabilities.star`)
}
