package dsl_test

import (
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SourceFiles: the file, then every file it loads, depth first and each once, by the loader's
// rule for paths (//root-relative, or relative to the loading file).
func TestSourceFiles(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"tasks/t.star":      {Data: []byte("load(\"//lib/a.star\", \"A\")\nload(\"helper.star\", \"H\")\n")},
		"tasks/helper.star": {Data: []byte("load(\"//lib/b.star\", \"B\")\nH = 1\n")},
		"lib/a.star":        {Data: []byte("load(\"b.star\", \"B\")\nA = 1\n")},
		"lib/b.star":        {Data: []byte("load(\"a.star\", \"A\")\nB = 1\n")}, // a cycle: listed once each
		"lib/unused.star":   {Data: []byte("X = 1\n")},
	}
	c := dsl.NewCorpus(fsys, ".", "c")
	files, err := c.SourceFiles("tasks/t.star")
	require.NoError(t, err)
	var rels []string
	for _, f := range files {
		rels = append(rels, f.Rel)
		assert.Equal(t, string(fsys[f.Rel].Data), string(f.Data))
	}
	assert.Equal(t, []string{"tasks/t.star", "lib/a.star", "lib/b.star", "tasks/helper.star"}, rels)

	fsys["tasks/missing.star"] = &fstest.MapFile{Data: []byte("load(\"//lib/none.star\", \"N\")\n")}
	_, err = c.SourceFiles("tasks/missing.star")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c/lib/none.star")

	fsys["tasks/out.star"] = &fstest.MapFile{Data: []byte("load(\"../../x.star\", \"X\")\n")}
	_, err = c.SourceFiles("tasks/out.star")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leaves the corpus root")

	fsys["tasks/bad.star"] = &fstest.MapFile{Data: []byte("load(\n")}
	_, err = c.SourceFiles("tasks/bad.star")
	require.Error(t, err)
}
