package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corpusFacts reads the built-in corpus through `coworkenv list --json`, once for the package's
// tests (a noop episode of every task); they only read the facts.
func corpusFacts(t *testing.T) []*jsonv.Object {
	t.Helper()
	l := listCorpus()
	require.Equal(t, 0, l.code, l.errs)
	var facts []*jsonv.Object
	for _, line := range strings.Split(strings.TrimSpace(l.out), "\n") {
		v, err := jsonv.DecodeString(line)
		require.NoError(t, err)
		facts = append(facts, v.(*jsonv.Object))
	}
	return facts
}

// listCorpus is `coworkenv list --json` of the built-in corpus, run once.
var listCorpus = sync.OnceValue(func() (l struct {
	code      int
	out, errs string
}) {
	var out, errs bytes.Buffer
	l.code = Main([]string{"list", "--json"}, &out, &errs)
	l.out, l.errs = out.String(), errs.String()
	return l
})

func get[T any](o *jsonv.Object, k string) T {
	v, _ := o.Get(k)
	x, _ := v.(T)
	return x
}

func traits(o *jsonv.Object) []string {
	md := get[*jsonv.Object](o, "metadata")
	var out []string
	for _, v := range get[[]jsonv.Value](md, "traits") {
		out = append(out, v.(string))
	}
	return out
}

// TestCorpusCounts holds the built-in corpus to issue 5's promises.
func TestCorpusCounts(t *testing.T) {
	t.Parallel()
	facts := corpusFacts(t)
	var (
		multi, silent, replyDep, dbTools, safety, faults int
		families                                         = map[string]bool{}
		perCap                                           = map[string]int{}
	)
	for _, f := range facts {
		name := get[string](f, "task")
		assert.Empty(t, get[string](f, "error"), name)
		turns := get[int64](f, "turns")
		if turns > 1 {
			multi++
		}
		for _, tr := range traits(f) {
			if tr == "silent-change" {
				silent++
				assert.True(t, turns > 1 && get[int64](f, "before_hooks") > 0, "%s: a silent change needs a later turn with before", name)
			}
		}
		if get[int64](f, "user_functions") > 0 {
			replyDep++
		}
		if get[int64](f, "task_tools") > 0 && len(get[[]jsonv.Value](f, "db_collections")) > 0 {
			dbTools++
		}
		if get[int64](f, "safety_items") > 0 {
			safety++
		}
		if get[bool](f, "faults") {
			faults++
		}
		if get[int64](f, "family_size") > 1 {
			families[get[string](f, "file")] = true
		}
		for _, c := range get[[]jsonv.Value](f, "capabilities") {
			perCap[c.(string)]++
		}
	}
	assert.GreaterOrEqual(t, len(facts), 48, "tasks")
	assert.GreaterOrEqual(t, multi, 16, "multi-turn tasks")
	assert.GreaterOrEqual(t, silent, 6, "tasks with a silent change between turns")
	assert.GreaterOrEqual(t, replyDep, 4, "tasks whose user turn depends on the agent's reply")
	assert.GreaterOrEqual(t, dbTools, 10, "tasks with their own tools over ws.db")
	assert.GreaterOrEqual(t, safety, 8, "tasks with safety red lines")
	assert.GreaterOrEqual(t, faults, 4, "tasks with injected faults")
	assert.GreaterOrEqual(t, len(families), 2, "task families")
	assert.GreaterOrEqual(t, len(perCap), 16, "capabilities in use")
	for c, n := range perCap {
		assert.GreaterOrEqual(t, n, 3, "tasks using %s", c)
	}
	t.Logf("%d tasks, %d multi-turn, %d silent, %d reply-dependent, %d db tools, %d safety, %d faults, %d families",
		len(facts), multi, silent, replyDep, dbTools, safety, faults, len(families))
}

// TestCorpusReadmeTable: the table in corpus/README.md is what `coworkenv list --capabilities`
// prints; set COWORKENV_UPDATE=1 to rewrite it.
func TestCorpusReadmeTable(t *testing.T) {
	t.Parallel()
	code, table, errs := cli(t, "list", "--capabilities")
	require.Equal(t, 0, code, errs)
	path := filepath.Join("..", "..", "corpus", "README.md")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	const begin, end = "<!-- begin: coworkenv list --capabilities -->\n", "<!-- end -->\n"
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "corpus/README.md has no generated table markers")
	fresh := s[:i+len(begin)] + table + s[j:]
	if os.Getenv("COWORKENV_UPDATE") == "1" {
		require.NoError(t, os.WriteFile(path, []byte(fresh), 0o644))
		return
	}
	assert.Equal(t, fresh, s, "corpus/README.md is stale: run COWORKENV_UPDATE=1 go test ./cmd/coworkenv -run TestCorpusReadmeTable")
}

// TestCorpusValidatesStrict: every task of the built-in corpus is ok, with no warning.
func TestCorpusValidatesStrict(t *testing.T) {
	// not in parallel: a corpus-wide or load test, it keeps both cores busy on its own
	if testing.Short() {
		t.Skip("validates the whole built-in corpus")
	}
	code, out, errs := cli(t, "validate", "--strict")
	assert.Equal(t, 0, code, "%s%s", out, errs)
}

// TestCorpusExamples: the taxonomy's examples name corpus tasks with that capability.
func TestCorpusExamples(t *testing.T) {
	t.Parallel()
	caps := map[string]map[string]bool{}
	for _, f := range corpusFacts(t) {
		for _, c := range get[[]jsonv.Value](f, "capabilities") {
			if caps[c.(string)] == nil {
				caps[c.(string)] = map[string]bool{}
			}
			caps[c.(string)][get[string](f, "task")] = true
		}
	}
	tax := corpus.Open().Taxonomy()
	require.NotNil(t, tax)
	for _, c := range tax.Capabilities {
		assert.NotEmpty(t, c.Examples, c.Name)
		for _, ex := range c.Examples {
			assert.True(t, caps[c.Name][ex], "%s: example %s is not a corpus task with this capability", c.Name, ex)
		}
	}
}

// TestCorpusTracesReplay: the oracle trace of every corpus task replays exactly.
func TestCorpusTracesReplay(t *testing.T) {
	// not in parallel: a corpus-wide or load test, it keeps both cores busy on its own
	if testing.Short() {
		t.Skip("runs and replays every task of the built-in corpus")
	}
	dir := t.TempDir()
	n := 0
	for _, f := range corpusFacts(t) {
		name := get[string](f, "task")
		tr := filepath.Join(dir, name+".jsonl")
		code, _, errs := cli(t, "run", name, "--trace", tr, "--json")
		require.Equal(t, 0, code, "%s: %s", name, errs)
		n++
	}
	code, out, _ := cli(t, "replay", dir)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, fmt.Sprintf("%d traces: %d matched, 0 diverged", n, n))
}
