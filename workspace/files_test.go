package workspace

import (
	"errors"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/spf13/afero"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func newWS() *State { return New(t0, 1) }

func TestCleanPath(t *testing.T) {
	cases := map[string]string{
		"":             "/",
		"/":            "/",
		"a.txt":        "/a.txt",
		"/a.txt":       "/a.txt",
		"../../x":      "/x",
		"/a/../../b":   "/b",
		"a//b/./c/":    "/a/b/c",
		"/docs/..":     "/",
		"./notes.md":   "/notes.md",
		"/a/b/../c.md": "/a/c.md",
	}
	for in, want := range cases {
		assert.Equal(t, want, CleanPath(in), "CleanPath(%q)", in)
	}
	ws := newWS()
	fs := ws.Files()
	require.NoError(t, fs.Write("a.txt", "one"))
	got, err := fs.Read("/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "one", got)
	require.NoError(t, fs.Write("../../x", "x"))
	assert.True(t, fs.Exists("/x"))
	assert.Equal(t, []string{"/a.txt", "/x"}, fs.Walk("/"))
}

func TestFilesWriteRead(t *testing.T) {
	fs := newWS().Files()
	require.NoError(t, fs.Write("/a/b/c.txt", "hello"))
	assert.True(t, fs.IsDir("/a"))
	assert.True(t, fs.IsDir("/a/b"))
	assert.True(t, fs.IsFile("/a/b/c.txt"))
	assert.False(t, fs.IsDir("/a/b/c.txt"))
	assert.True(t, fs.Exists("/"))
	assert.True(t, fs.IsDir("/"))

	_, err := fs.Read("/nope")
	assert.EqualError(t, err, "no such file: /nope")
	_, err = fs.Read("/a")
	assert.EqualError(t, err, "/a is a folder")

	assert.EqualError(t, fs.Write("/a", "x"), "cannot write /a: it is a folder")
	assert.EqualError(t, fs.Write("/", "x"), "cannot write /: it is a folder")
	assert.EqualError(t, fs.Write("/a/b/c.txt/d", "x"), "cannot write /a/b/c.txt/d: /a/b/c.txt is a file, not a folder")

	big := strings.Repeat("x", limits.FileSize+1)
	err = fs.Write("/big", big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "8 MiB")
	require.NoError(t, fs.Write("/max", big[:limits.FileSize]))

	require.NoError(t, fs.Write("/a/b/c.txt", "replaced"))
	got, _ := fs.Read("/a/b/c.txt")
	assert.Equal(t, "replaced", got)
	require.NoError(t, fs.Write("/empty", ""))
	got, err = fs.Read("/empty")
	require.NoError(t, err)
	assert.Equal(t, "", got)
	n, _ := fs.Size()
	assert.Equal(t, 3, n)
}

func TestFilesList(t *testing.T) {
	fs := newWS().Files()
	list, err := fs.List("/")
	require.NoError(t, err)
	assert.Equal(t, []string{}, list)
	require.NoError(t, fs.Write("/b.txt", ""))
	require.NoError(t, fs.Write("/a/x.txt", ""))
	require.NoError(t, fs.Write("/a/sub/y.txt", ""))
	require.NoError(t, fs.Mkdir("/empty"))
	require.NoError(t, fs.Write("/a.txt", ""))

	list, err = fs.List("/")
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt", "a/", "b.txt", "empty/"}, list)
	list, err = fs.List("a")
	require.NoError(t, err)
	assert.Equal(t, []string{"sub/", "x.txt"}, list)
	list, err = fs.List("/empty/")
	require.NoError(t, err)
	assert.Equal(t, []string{}, list)

	_, err = fs.List("/missing")
	assert.EqualError(t, err, "no such folder: /missing")
	_, err = fs.List("/b.txt")
	assert.EqualError(t, err, "/b.txt is a file, not a folder")
}

func TestFilesWalk(t *testing.T) {
	fs := newWS().Files()
	for _, p := range []string{"/z.txt", "/a/2.txt", "/a/10.txt", "/a/b/c.txt", "/ab.txt"} {
		require.NoError(t, fs.Write(p, p))
	}
	require.NoError(t, fs.Mkdir("/a/empty"))
	assert.Equal(t, []string{"/a/10.txt", "/a/2.txt", "/a/b/c.txt", "/ab.txt", "/z.txt"}, fs.Walk("/"))
	assert.Equal(t, []string{"/a/10.txt", "/a/2.txt", "/a/b/c.txt"}, fs.Walk("/a"))
	assert.Equal(t, []string{}, fs.Walk("/a/empty"))
	assert.Equal(t, []string{}, fs.Walk("/missing"))
	assert.Equal(t, []string{}, fs.Walk("/z.txt"))
	assert.Equal(t, []string{"/a/b", "/a/empty"}, fs.Dirs("/a"))
}

func TestFilesRemove(t *testing.T) {
	fs := newWS().Files()
	require.NoError(t, fs.Write("/a/b/c.txt", "c"))
	require.NoError(t, fs.Write("/a/d.txt", "d"))
	require.NoError(t, fs.Write("/ab.txt", "keep"))
	require.NoError(t, fs.Remove("/a/d.txt"))
	assert.False(t, fs.Exists("/a/d.txt"))
	assert.True(t, fs.IsDir("/a"), "removing a file keeps its folder")

	require.NoError(t, fs.Remove("/a"))
	assert.False(t, fs.Exists("/a"))
	assert.False(t, fs.Exists("/a/b"))
	assert.False(t, fs.Exists("/a/b/c.txt"))
	assert.True(t, fs.Exists("/ab.txt"), "a sibling with the same prefix is kept")

	assert.EqualError(t, fs.Remove("/"), "cannot remove /")
	assert.EqualError(t, fs.Remove("/a"), "no such file or folder: /a")
}

func TestFilesMove(t *testing.T) {
	fs := newWS().Files()
	require.NoError(t, fs.Write("/in/a.txt", "A"))
	require.NoError(t, fs.Write("/in/b.txt", "B"))
	require.NoError(t, fs.Write("/tree/x/y.txt", "Y"))
	require.NoError(t, fs.Mkdir("/tree/empty"))
	require.NoError(t, fs.Mkdir("/archive"))

	// rename, creating parents
	p, err := fs.MoveTo("/in/a.txt", "/deep/new/a2.txt")
	require.NoError(t, err)
	assert.Equal(t, "/deep/new/a2.txt", p)
	got, _ := fs.Read("/deep/new/a2.txt")
	assert.Equal(t, "A", got)
	assert.False(t, fs.Exists("/in/a.txt"))

	// into an existing folder
	p, err = fs.MoveTo("/in/b.txt", "/archive")
	require.NoError(t, err)
	assert.Equal(t, "/archive/b.txt", p)

	// into a folder named with a trailing slash, created
	p, err = fs.MoveTo("/archive/b.txt", "/new/")
	require.NoError(t, err)
	assert.Equal(t, "/new/b.txt", p)

	// a folder with its tree, empty folders included
	require.NoError(t, fs.Move("/tree", "/moved"))
	assert.Equal(t, []string{"/moved/x/y.txt"}, fs.Walk("/moved"))
	assert.True(t, fs.IsDir("/moved/empty"))
	assert.False(t, fs.Exists("/tree"))
	assert.False(t, fs.Exists("/tree/x"))

	// errors
	assert.EqualError(t, fs.Move("/missing", "/x"), "no such file or folder: /missing")
	require.NoError(t, fs.Write("/f1", "1"))
	require.NoError(t, fs.Write("/f2", "2"))
	assert.EqualError(t, fs.Move("/f1", "/f2"), "cannot move /f1 to /f2: /f2 already exists")
	assert.EqualError(t, fs.Move("/moved", "/moved/x"), "cannot move /moved into itself (/moved/x/moved)")
	assert.EqualError(t, fs.Move("/", "/x"), "cannot move /")
	assert.EqualError(t, fs.Move("/f1", "/f2/"), "cannot move /f1 into /f2: it is a file")
	assert.EqualError(t, fs.Move("/f1", "/f2/sub"), "cannot move /f1 to /f2/sub: /f2 is a file, not a folder")
	require.NoError(t, fs.Mkdir("/archive/f1"))
	assert.EqualError(t, fs.Move("/f1", "/archive"), "cannot move /f1 to /archive/f1: /archive/f1 already exists")

	// onto itself: nothing changes
	h := (*State)(fs).Hash()
	p, err = fs.MoveTo("/f1", "/f1")
	require.NoError(t, err)
	assert.Equal(t, "/f1", p)
	p, err = fs.MoveTo("/f1", "/")
	require.NoError(t, err)
	assert.Equal(t, "/f1", p)
	assert.Equal(t, h, (*State)(fs).Hash())
}

func TestFilesMkdir(t *testing.T) {
	fs := newWS().Files()
	require.NoError(t, fs.Mkdir("/a/b/c"))
	assert.True(t, fs.IsDir("/a/b/c"))
	assert.True(t, fs.IsDir("/a/b"))
	require.NoError(t, fs.Mkdir("/a/b"))
	require.NoError(t, fs.Mkdir("/"))
	require.NoError(t, fs.Write("/f", ""))
	assert.EqualError(t, fs.Mkdir("/f"), "cannot make folder /f: it is a file")
	assert.EqualError(t, fs.Mkdir("/f/g"), "cannot make folder /f/g: /f is a file, not a folder")
}

func TestFilesGlob(t *testing.T) {
	fs := newWS().Files()
	for _, p := range []string{"/a.csv", "/b.txt", "/docs/x.md", "/docs/y.txt", "/docs/deep/z.md", "/docs/deep/er/w.md", "/other/v.md"} {
		require.NoError(t, fs.Write(p, ""))
	}
	require.NoError(t, fs.Mkdir("/folder.md"))
	cases := map[string][]string{
		"*.csv":            {"/a.csv"},
		"/*":               {"/a.csv", "/b.txt"},
		"/docs/*.md":       {"/docs/x.md"},
		"/docs/**/*.md":    {"/docs/deep/er/w.md", "/docs/deep/z.md", "/docs/x.md"},
		"/docs/**":         {"/docs/deep/er/w.md", "/docs/deep/z.md", "/docs/x.md", "/docs/y.txt"},
		"**/*.md":          {"/docs/deep/er/w.md", "/docs/deep/z.md", "/docs/x.md", "/other/v.md"},
		"/**/**/w.md":      {"/docs/deep/er/w.md"},
		"/?.txt":           {"/b.txt"},
		"/[ab].*":          {"/a.csv", "/b.txt"},
		"/docs/deep":       {},
		"/*.md":            {},
		"/nothing/**/*.md": {},
	}
	for pat, want := range cases {
		got, err := fs.Glob(pat)
		require.NoError(t, err, pat)
		assert.Equal(t, want, got, "Glob(%q)", pat)
	}
	_, err := fs.Glob("/[a")
	assert.EqualError(t, err, `bad glob pattern "/[a"`)
}

func TestFilesAfero(t *testing.T) {
	ws := newWS()
	fs := ws.Files()
	require.NoError(t, fs.Write("a.txt", "A"))
	require.NoError(t, fs.Write("/d/e/f.txt", "F"))
	require.NoError(t, fs.Mkdir("/empty"))

	mem := afero.NewMemMapFs()
	require.NoError(t, fs.ExportTo(mem, "/export"))
	b, err := afero.ReadFile(mem, "/export/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "A", string(b))
	b, err = afero.ReadFile(mem, "/export/d/e/f.txt")
	require.NoError(t, err)
	assert.Equal(t, "F", string(b))
	isDir, err := afero.IsDir(mem, "/export/empty")
	require.NoError(t, err)
	assert.True(t, isDir)

	back := New(t0, 1)
	require.NoError(t, back.Files().ImportFrom(mem, "/export"))
	assert.Equal(t, ws.Hash(), back.Hash(), "export then import gives the same workspace")

	assert.Error(t, back.Files().ImportFrom(mem, "/missing"))
	assert.Error(t, back.Files().ImportFrom(mem, "/export/a.txt"))
	back.Freeze()
	assert.ErrorIs(t, back.Files().ImportFrom(mem, "/export"), ErrFrozen)

	// a file system with a file over the limit
	big := afero.NewMemMapFs()
	require.NoError(t, afero.WriteFile(big, "/r/big", make([]byte, limits.FileSize+1), 0o644))
	assert.Error(t, New(t0, 1).Files().ImportFrom(big, "/r"))
}

// globRecursive is the matcher Glob had before globber: every way of matching each "**", tried
// in turn (exponential for many of them), as the reference of globber.
func globRecursive(segs, parts []string) bool {
	for len(segs) > 0 {
		if segs[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if globRecursive(segs[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(segs[0], parts[0]); !ok {
			return false
		}
		segs, parts = segs[1:], parts[1:]
	}
	return len(parts) == 0
}

func TestGlobberMatchesAsTheRecursiveMatcher(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 3))
	pieces := []string{"**", "*", "a", "b", "?", "a*", "[ab]", "**", "x.md", "*.md"}
	names := []string{"a", "b", "ab", "x.md", "y.md", "c"}
	for range 20000 {
		var segs, parts []string
		for range rng.IntN(6) {
			segs = append(segs, pieces[rng.IntN(len(pieces))])
		}
		for range rng.IntN(7) {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		g := newGlobber(segs)
		ok, extra := g.match(parts)
		require.Equal(t, globRecursive(segs, parts), ok, "%q %q", segs, parts)
		if !slices.Contains(segs, "**") {
			require.Zero(t, extra, "%q %q", segs, parts)
		}
	}
}

// A pattern of many "**" costs one path at most segments × parts comparisons, and says so.
func TestGlobOfManyStarsIsPolynomialAndCharged(t *testing.T) {
	t.Parallel()
	fs := newWS().Files()
	deep := "/" + strings.Repeat("a/", 60) + "c.txt"
	require.NoError(t, fs.Write(deep, ""))
	pattern := "/" + strings.Repeat("**/a/", 12) + "b.txt" // tried every way, about C(60, 12) matchings
	charged := 0
	got, err := fs.GlobCharged(pattern, func(n int) error { charged += n; return nil })
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Greater(t, charged, 60, "the alternatives the stars made it try")
	assert.LessOrEqual(t, charged, 13*62, "at most a comparison per segment and part")

	stop := errors.New("out of steps")
	_, err = fs.GlobCharged(pattern, func(int) error { return stop })
	assert.ErrorIs(t, err, stop)
}

// Paths that differ only in Unicode normalization name one file: a path is kept in form C, so
// a file written with a decomposed accent is read, listed and replaced under the composed one.
func TestPathsAreNormalized(t *testing.T) {
	t.Parallel()
	st := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 0)
	fs := st.Files()
	require.NoError(t, fs.Write("/notes/cafe\u0301.txt", "one"))
	got, err := fs.Read("/notes/caf\u00e9.txt")
	require.NoError(t, err)
	assert.Equal(t, "one", got)
	require.NoError(t, fs.Write("/notes/caf\u00e9.txt", "two"))
	names, err := fs.List("/notes")
	require.NoError(t, err)
	assert.Equal(t, []string{"caf\u00e9.txt"}, names, "one file, named in form C")
	assert.Equal(t, "/\u00c4/x", CleanPath("A\u0308/x"), "CleanPath composes")
}
