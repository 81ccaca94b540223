package generator_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/require"
)

// TestInlinedExamplesStandAlone: every task file of the built-in corpus and of the test corpus,
// with its loads inlined as the prompt shows it, holds no load, loads on its own, and declares
// the same tasks, which behave the same: the same state after setup, and the same final
// state, score and items for the oracle and for the do-nothing agent.
func TestInlinedExamplesStandAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []*dsl.Corpus{corpus.Open(), testCorpus()} {
		rels, err := c.TaskFiles()
		require.NoError(t, err)
		require.NotEmpty(t, rels)
		inlined := 0
		for _, rel := range rels {
			orig := c.LoadFile(ctx, rel)
			if len(orig.Diags) > 0 {
				continue // not offered as an example
			}
			src, err := generator.InlineLoads(c.ReadSource, rel, orig.Source)
			require.NoError(t, err, rel)
			if src != string(orig.Source) {
				inlined++
			}
			require.NotContains(t, src, "\nload(", rel)
			require.False(t, strings.HasPrefix(src, "load("), rel)

			fsys := fstest.MapFS{rel: &fstest.MapFile{Data: []byte(src)}}
			if data, err := c.ReadSource(dsl.CapabilitiesFile); err == nil {
				fsys[dsl.CapabilitiesFile] = &fstest.MapFile{Data: data}
			}
			alone := dsl.NewCorpus(fsys, ".", "")
			got := alone.LoadFile(ctx, rel)
			require.Empty(t, got.Diags, "%s inlined:\n%s", rel, src)
			require.Len(t, got.Tasks, len(orig.Tasks), rel)
			for i, ot := range orig.Tasks {
				gt := got.Tasks[i]
				require.Equal(t, ot.Name, gt.Name, rel)
				require.Equal(t, episodes(ctx, t, ot), episodes(ctx, t, gt), "%s: task %s behaves otherwise once inlined:\n%s", rel, ot.Name, src)
			}
		}
		require.Greater(t, inlined, 0, "some files of %s load helpers", c.Display)
	}
}

// episodes sums up the oracle and noop episodes of a task.
func episodes(ctx context.Context, t *testing.T, task *dsl.Task) string {
	p, d := episode.Prepare(ctx, task, episode.Options{})
	if d != nil {
		return "prepare: " + d.String()
	}
	var b strings.Builder
	for _, a := range []episode.Agent{episode.Oracle{}, episode.Noop{}} {
		r := p.Run(ctx, a, episode.RunOptions{})
		fmt.Fprintf(&b, "%s: start %s final %s score %v err %v\n", a.Name(), r.StartState, r.FinalState, r.Score, r.Err != nil)
		for _, it := range r.Items {
			fmt.Fprintf(&b, "  %s %q %v %v\n", it.Kind, it.Message, it.Weight, it.Passed)
		}
	}
	return b.String()
}

// TestInlineRenamesClashes: two helper files that define the same name differently (the one
// the task loads keeps it), a helper that uses a private table filled by a loop, a load under
// another name (the definition takes it), and helpers that load from another helper file.
func TestInlineRenamesClashes(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"lib/a.star": {Data: []byte(`load("//lib/base.star", "COMPANY")

# Words of the first kind.
_WORDS = ["x"]
for _w in ["y", "z"]:
    _WORDS.append(_w)

def norm(s):
    return s.lower().strip()

def has_word(s):
    return norm(s) in _WORDS

def unused():
    return COMPANY
`)},
		"lib/b.star": {Data: []byte(`load("//lib/base.star", "COMPANY")

def norm(s):
    return s.upper()

def signed(s):
    return norm(s) + " / " + COMPANY
`)},
		"lib/base.star": {Data: []byte(`COMPANY = "Acme"
`)},
		"tasks/t.star": {Data: []byte(`load("//lib/a.star", "has_word")
load("//lib/b.star", sig = "signed", "norm")

def _setup(ws):
    ws.fs.write("/a.txt", sig("a") + str(has_word(" Y ")) + norm("q"))

task(name = "t", prompt = "p", tools = ["fs"], setup = _setup)
`)},
	}
	read := func(rel string) ([]byte, error) { return fs.ReadFile(files, rel) }
	src, err := generator.InlineLoads(read, "tasks/t.star", files["tasks/t.star"].Data)
	require.NoError(t, err)
	require.Equal(t, `# from //lib/a.star (inlined: a task file cannot load)

# Words of the first kind.
_WORDS = ["x"]
for _w in ["y", "z"]:
    _WORDS.append(_w)

def norm_a(s):
    return s.lower().strip()

def has_word(s):
    return norm_a(s) in _WORDS

# from //lib/base.star (inlined: a task file cannot load)

COMPANY = "Acme"

# from //lib/b.star (inlined: a task file cannot load)

def norm(s):
    return s.upper()

def sig(s):
    return norm(s) + " / " + COMPANY

def _setup(ws):
    ws.fs.write("/a.txt", sig("a") + str(has_word(" Y ")) + norm("q"))

task(name = "t", prompt = "p", tools = ["fs"], setup = _setup)
`, src)

	alone := dsl.NewCorpus(fstest.MapFS{"tasks/t.star": {Data: []byte(src)}}, ".", "")
	f := alone.LoadFile(context.Background(), "tasks/t.star")
	require.Empty(t, f.Diags)
	p, d := episode.Prepare(context.Background(), f.Tasks[0], episode.Options{})
	require.Nil(t, d)
	content, _ := p.Base.Files().Read("/a.txt")
	require.Equal(t, "A / AcmeTrueQ", content)
}

// TestInlineLayout: loads anywhere in the file, apart or together, leave one blank line where
// they were cut; a helper's global named like a builtin is renamed, so that the example's use
// of the builtin keeps its meaning; a file without loads comes back unchanged.
func TestInlineLayout(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"lib/a.star": {Data: []byte("A = 1\n")},
		"lib/b.star": {Data: []byte("# the builtin, shadowed\ndef len(x):\n    return 7\n\ndef size(x):\n    return len(x)\n")},
		"tasks/t.star": {Data: []byte(`load("//lib/a.star", "A")

# Header.

load("../lib/b.star", "size")


X = A + size([]) + len([1])
`)},
	}
	read := func(rel string) ([]byte, error) { return fs.ReadFile(files, rel) }
	src, err := generator.InlineLoads(read, "tasks/t.star", files["tasks/t.star"].Data)
	require.NoError(t, err)
	require.Equal(t, `# from //lib/a.star (inlined: a task file cannot load)

A = 1

# from //lib/b.star (inlined: a task file cannot load)

# the builtin, shadowed
def len_b(x):
    return 7

def size(x):
    return len_b(x)

# Header.

X = A + size([]) + len([1])
`, src)

	plain := []byte("# no loads\n\nX = 1\n")
	got, err := generator.InlineLoads(read, "tasks/p.star", plain)
	require.NoError(t, err)
	require.Equal(t, string(plain), got)
}

// TestInlineErrors: what the loader would refuse, inlining refuses too.
func TestInlineErrors(t *testing.T) {
	t.Parallel()
	files := fstest.MapFS{
		"lib/a.star":     {Data: []byte("_SECRET = 1\nB = 2\n")},
		"lib/cycle.star": {Data: []byte("load(\"//lib/cycle.star\", \"C\")\nD = C\n")},
	}
	read := func(rel string) ([]byte, error) { return fs.ReadFile(files, rel) }
	for src, want := range map[string]string{
		`load("//lib/none.star", "X")` + "\n":       "lib/none.star",
		`load("//lib/a.star", "_SECRET")` + "\n":    "not exported",
		`load("//lib/a.star", "Q")` + "\n":          "does not define Q",
		`load("../../x.star", "Q")` + "\n":          "leaves the corpus root",
		`load("//lib/cycle.star", "D")` + "\n":      "load cycle",
		`load("//lib/a.star", "B")` + "\nB(" + "\n": "t.star",
	} {
		_, err := generator.InlineLoads(read, "tasks/t.star", []byte(src))
		require.Error(t, err, src)
		require.Contains(t, err.Error(), want, src)
	}
}
