package isolate_test

import (
	"errors"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The files sent to a worker are read through the corpus, so a symbolic link that leads out of
// the root (a helper, the lib folder, a loaded folder) stops the job with an *EscapeError naming
// it, and nothing from outside is sent; links inside the root are followed.
func TestIsolateFilesStayInsideRoot(t *testing.T) {
	t.Parallel()
	secret := []byte("SECRET = 'outside the corpus root'\n")
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
	}
	file := func(src string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(src)} }
	base := func() fstest.MapFS {
		return fstest.MapFS{
			"outside/helper.star":  {Data: secret},
			"corpus/lib/real.star": file("X = 1\n"),
			"corpus/lib/same.star": link("real.star"),
			"corpus/a.star":        file("load(\"//lib/same.star\", \"X\")\n"),
		}
	}
	escape := func(t *testing.T, err error, link string) {
		t.Helper()
		var esc *dsl.EscapeError
		require.True(t, errors.As(err, &esc), "want an *EscapeError, got %v", err)
		assert.Equal(t, link, esc.Link)
	}

	c := dsl.NewCorpus(base(), "corpus", "corpus")
	support, err := isolate.Support(c)
	require.NoError(t, err)
	files, err := isolate.FilesFor(c, support, "a.star")
	require.NoError(t, err)
	assert.Equal(t, "X = 1\n", string(files["lib/same.star"]), "a link inside the root is followed")

	m := base()
	m["corpus/lib/evil.star"] = link("../../outside/helper.star")
	_, err = isolate.Support(dsl.NewCorpus(m, "corpus", "corpus"))
	escape(t, err, "lib/evil.star")

	m = base()
	delete(m, "corpus/lib/real.star")
	delete(m, "corpus/lib/same.star")
	m["corpus/lib"] = link("../outside")
	_, err = isolate.Support(dsl.NewCorpus(m, "corpus", "corpus"))
	escape(t, err, "lib")

	m = base()
	m["corpus/ext"] = link("../outside")
	m["corpus/b.star"] = file("load(\"//ext/helper.star\", \"SECRET\")\n")
	c = dsl.NewCorpus(m, "corpus", "corpus")
	support, err = isolate.Support(c)
	require.NoError(t, err)
	files, err = isolate.FilesFor(c, support, "b.star")
	escape(t, err, "ext")
	assert.Nil(t, files)
}
