package dsl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hostile targets: a file whose first line a syntax error would quote, a helper that would
// load, and their folder. None of them is inside any corpus root of these tests.
const (
	outsidePasswd = "testdata/outside/passwd"
	outsideHelper = "testdata/outside/helper.star"
	outsideDir    = "testdata/outside"
	passwdLine    = "root:x:0:0"
	helperSecret  = "outside the corpus root"
)

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}

// wallRoot makes a corpus folder: files maps root-relative paths to contents, links maps
// root-relative paths to symbolic link targets (used as they are).
func wallRoot(t *testing.T, files, links map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.MkdirAll(root, 0o755))
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	for rel, target := range links {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}
	return root
}

// openers are the two ways a folder on disk becomes a corpus: behind an os.Root (what the
// command line does), and a plain os.DirFS, where the corpus's own checks are the only wall.
var openers = map[string]func(t *testing.T, root string) *dsl.Corpus{
	"OpenDir": func(t *testing.T, root string) *dsl.Corpus {
		c, err := dsl.OpenDir(root, "c")
		require.NoError(t, err)
		return c
	},
	"DirFS": func(t *testing.T, root string) *dsl.Corpus { return dsl.NewCorpus(os.DirFS(root), ".", "c") },
}

func requireEscape(t *testing.T, err error, rel, link string) {
	t.Helper()
	var esc *dsl.EscapeError
	require.True(t, errors.As(err, &esc), "want an *EscapeError, got %v", err)
	assert.Equal(t, rel, esc.Rel)
	assert.Equal(t, link, esc.Link)
}

// A task file that is a symbolic link out of the root (absolute or relative) is refused by a
// load diagnostic that names it and quotes nothing of the target.
func TestWallTaskFileLinkOut(t *testing.T) {
	t.Parallel()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			target := abs(t, outsidePasswd)
			root := wallRoot(t, map[string]string{"tasks/ok.star": okTask}, map[string]string{"evil.star": target})
			relTarget, err := filepath.Rel(filepath.Join(root, "tasks"), target)
			require.NoError(t, err)
			require.NoError(t, os.Symlink(relTarget, filepath.Join(root, "tasks", "rel.star")))
			c := open(t, root)
			for _, rel := range []string{"evil.star", "tasks/rel.star"} {
				f := c.LoadFile(context.Background(), rel)
				require.Len(t, f.Diags, 1, rel)
				d := f.Diags[0]
				assert.Equal(t, "load", d.Code)
				assert.Equal(t, "c/"+rel, d.File)
				assert.Equal(t, rel+" is a symbolic link that leads out of the corpus root; only files inside the root are read", d.Message)
				assert.Zero(t, d.Line, "no position, so no source line is shown")
				assert.Nil(t, f.Source)
				assert.NotContains(t, d.String(), passwdLine)
				_, err := c.ReadSource(rel)
				requireEscape(t, err, rel, rel)
			}
			_, err = c.TaskFiles()
			requireEscape(t, err, "evil.star", "evil.star")
		})
	}
}

// The same in any fs.FS with symbolic links (here a map whose corpus root is a sub-folder).
func TestWallTaskFileLinkOutFS(t *testing.T) {
	t.Parallel()
	m := fstest.MapFS{
		"secret.star":      {Data: []byte(passwdLine + ":root:/root:/bin/bash\n")},
		"corpus/ok.star":   {Data: []byte(okTask)},
		"corpus/evil.star": {Data: []byte("../secret.star"), Mode: os.ModeSymlink},
	}
	c := dsl.NewCorpus(m, "corpus", "c")
	f := c.LoadFile(context.Background(), "evil.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "evil.star is a symbolic link that leads out of the corpus root; only files inside the root are read", f.Diags[0].Message)
	assert.Nil(t, f.Source)
	assert.Empty(t, c.LoadFile(context.Background(), "ok.star").Diags)
}

// A helper reached by load() through a link out (the file's own, or its folder's) fails the
// load with a message naming the link, and its globals never reach the loading file.
func TestWallHelperLinkOut(t *testing.T) {
	t.Parallel()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			root := wallRoot(t, map[string]string{
				"a.star": "load(\"//lib/evil.star\", \"SECRET\")\n" + okTask,
				"b.star": "load(\"//ext/helper.star\", \"SECRET\")\n" + okTask,
			}, map[string]string{
				"lib/evil.star": abs(t, outsideHelper),
				"ext":           abs(t, outsideDir),
			})
			c := open(t, root)
			a := c.LoadFile(context.Background(), "a.star")
			require.Len(t, a.Diags, 1)
			assert.Equal(t, "load", a.Diags[0].Code)
			assert.Contains(t, a.Diags[0].Message, "//lib/evil.star: lib/evil.star is a symbolic link that leads out of the corpus root")
			b := c.LoadFile(context.Background(), "b.star")
			require.Len(t, b.Diags, 1)
			assert.Contains(t, b.Diags[0].Message, "//ext/helper.star: ext/helper.star: ext is a symbolic link that leads out of the corpus root")
			for _, f := range []*dsl.File{a, b} {
				assert.NotContains(t, f.Diags[0].String(), helperSecret)
				assert.Empty(t, f.Tasks)
			}
		})
	}
}

// Listing a corpus fails on a folder that links out, naming it, and never lists what is behind.
func TestWallFolderLinkOut(t *testing.T) {
	t.Parallel()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			root := wallRoot(t, map[string]string{"tasks/ok.star": okTask},
				map[string]string{"tasks/ext": abs(t, outsideDir)})
			c := open(t, root)
			files, err := c.TaskFiles()
			requireEscape(t, err, "tasks/ext", "tasks/ext")
			assert.EqualError(t, err, "tasks/ext is a symbolic link that leads out of the corpus root; only files inside the root are read")
			assert.Empty(t, files)
			_, err = c.ReadSource("tasks/ext/helper.star")
			requireEscape(t, err, "tasks/ext/helper.star", "tasks/ext")
			assert.Contains(t, c.LoadFile(context.Background(), "tasks/ext/helper.star").Diags[0].Message,
				"tasks/ext/helper.star: tasks/ext is a symbolic link that leads out")
		})
	}
}

// Links that stay inside the root keep working: a task file, a helper file and a folder, also
// through "..", in the listing, in load() and in ReadSource. An absolute link is refused even
// when it points inside (os.Root refuses absolute links; the corpus check does the same).
func TestWallLinksInside(t *testing.T) {
	t.Parallel()
	for name, open := range openers {
		t.Run(name, func(t *testing.T) {
			root := wallRoot(t, map[string]string{
				"lib/real.star": "X = \"in\"\n",
				"tasks/t.star": "load(\"//lib/alias.star\", \"X\")\nload(\"//shared/real.star\", Y = \"X\")\n" +
					"load(\"//tasks/up/lib/real.star\", Z = \"X\")\n" + okTask,
			}, map[string]string{
				"lib/alias.star": "real.star",
				"shared":         "lib",
				"tasks/up":       "..",
				"top.star":       "tasks/t.star",
			})
			c := open(t, root)
			for _, rel := range []string{"top.star", "tasks/t.star"} {
				f := c.LoadFile(context.Background(), rel)
				require.Empty(t, f.Diags, "%s: %v", rel, f.Diags)
				require.Len(t, f.Tasks, 1)
			}
			files, err := c.TaskFiles()
			require.NoError(t, err)
			assert.Equal(t, []string{"tasks/t.star", "top.star"}, files, "linked folders are not descended into")
			src, err := c.ReadSource("shared/alias.star")
			require.NoError(t, err)
			assert.Equal(t, "X = \"in\"\n", string(src))
			require.NoError(t, os.Symlink(filepath.Join(root, "lib", "real.star"), filepath.Join(root, "lib", "abs.star")))
			_, err = c.ReadSource("lib/abs.star")
			requireEscape(t, err, "lib/abs.star", "lib/abs.star")
		})
	}
}

// Paths that are not plain root-relative ones are refused before anything is read.
func TestWallCheckPath(t *testing.T) {
	t.Parallel()
	c := corpusOf(map[string]string{"a.star": okTask})
	for _, rel := range []string{"../a.star", "/a.star", "x/../../a.star", "", "."} {
		requireEscape(t, c.CheckPath(rel), rel, "")
		_, err := c.ReadSource(rel)
		assert.True(t, strings.Contains(err.Error(), "leaves the corpus root"), "%q: %v", rel, err)
	}
	assert.NoError(t, c.CheckPath("a.star"))
	assert.NoError(t, c.CheckPath("missing.star"), "a missing file is reported by the read")
}
