package generator_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/require"
)

// The test binary is its own isolated worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == isolate.WorkerCommand {
		os.Exit(isolate.WorkerMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// fakeModel is a chat-completions server that answers each attempt (found by the seed its
// prompt names) from a script: the n-th answer for the n-th round.
type fakeModel struct {
	srv *chattest.Server
}

func newFake(t *testing.T, script map[int64][]string) *fakeModel {
	return &fakeModel{chattest.New(t, chattest.SeedScript{
		Answers: script,
		Missing: "fake: no answer scripted for seed %d round %d",
		Tokens: func(r *chattest.Request, text string) (int, int) {
			return len(r.Body) / 4, len(text) / 4
		},
	}.Answer)}
}

// lastUserMessages returns the last user message of every request, in order of arrival.
func (f *fakeModel) lastUserMessages() []string {
	var out []string
	for _, r := range f.srv.Requests() {
		out = append(out, r.Messages[len(r.Messages)-1]["content"].(string))
	}
	return out
}

var (
	poolOnce sync.Once
	pool     *isolate.Pool
)

// testPool is shared by the tests: small limits keep the runaway cases fast.
func testPool(t *testing.T) *isolate.Pool {
	poolOnce.Do(func() {
		var err error
		opts := isolate.Options{Workers: 2, MemoryLimit: 256 << 20, TimeLimit: 2 * time.Second}
		if raceBuild {
			opts.MemoryLimit, opts.TimeLimit = 4<<30, 20*time.Second
		}
		pool, err = isolate.NewPool(opts)
		if err != nil {
			panic(err)
		}
	})
	return pool
}

func testCorpus() *dsl.Corpus {
	return dsl.NewCorpus(os.DirFS("testdata/corpus"), ".", "testdata/corpus")
}

func options(t *testing.T, f *fakeModel, out string, count int) generator.Options {
	zero := 0.0
	return generator.Options{
		Capabilities: []string{"mail.reply"},
		Count:        count,
		Out:          out,
		Corpus:       testCorpus(),
		MaxRounds:    4,
		Jobs:         2,
		Seed:         100,
		Pool:         testPool(t),
		Model:        modelagent.Config{Model: "fake-model", BaseURL: f.srv.BaseURL(), Temperature: &zero, MaxRetries: -1},
		Reference:    "(the language reference)",
	}
}

func readManifest(t *testing.T, dir string) []generator.Record {
	data, err := os.ReadFile(filepath.Join(dir, generator.ManifestFile))
	require.NoError(t, err)
	var out []generator.Record
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r generator.Record
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		out = append(out, r)
	}
	return out
}

// validateStrict checks the accepted files on their own, as `coworkenv validate --strict DIR`.
func validateStrict(t *testing.T, dir string) *validate.Report {
	c := dsl.NewCorpus(os.DirFS(dir), ".", dir)
	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{})
	require.NoError(t, err)
	var buf strings.Builder
	rep.WriteText(&buf, false)
	require.False(t, rep.Failed(true), buf.String())
	return rep
}

func TestCandidatesAreValid(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{}
	for _, r := range replies {
		fsys[r.name+".star"] = &fstest.MapFile{Data: []byte(r.source())}
	}
	rep, err := validate.Corpus(context.Background(), dsl.NewCorpus(fsys, ".", ""), nil, validate.Options{})
	require.NoError(t, err)
	var buf strings.Builder
	rep.WriteText(&buf, false)
	require.Equal(t, len(replies), rep.Summary.OK, buf.String())
}

// TestRepairLoop: a syntax error fixed in round 2, a trivial verifier fixed in round 3, a
// task still broken after --max-rounds and rejected, an answer without code, a memory bomb and
// a runaway operator that end as diagnostics while the run goes on, and duplicates rejected.
func TestRepairLoop(t *testing.T) {
	t.Parallel()
	if raceBuild {
		t.Skip("memory limits under the race detector")
	}
	a, b, c, d, e := replies[0], replies[1], replies[2], replies[3], replies[4]
	script := map[int64][]string{
		100: {fenced(syntaxError(a.source())), fenced(a.source())},
		101: {fenced(trivialVerifier(b)), fenced(unsolvable(b)), fenced(b.source())},
		102: {fenced(unsolvable(c)), fenced(unsolvable(c)), fenced(unsolvable(c))},
		103: {"I would write a task about vaccines, but first: which clinic is this for?", fenced(memoryBomb(d.source())), d.source()},
		104: {fenced(runaway(e.source())), fenced(e.source())},
		105: {fenced(renamed(a.source(), a.name, "flour-order-again"))},
		106: {fenced(strings.Replace(mustRead(t, "testdata/corpus/tasks/fuel_surcharge.star"), "# Lotte", "# Our Lotte", 1))},
	}
	f := newFake(t, script)
	out := t.TempDir()
	opts := options(t, f, out, 7)
	opts.MaxRounds = 3
	var log strings.Builder
	opts.Log = &log
	start := time.Now()
	sum, err := generator.Run(context.Background(), opts)
	require.NoError(t, err, log.String())
	t.Logf("run of 7 attempts in %s:\n%s", time.Since(start).Round(time.Millisecond), log.String())

	recs := readManifest(t, out)
	require.Len(t, recs, 7)
	type row struct {
		status, task string
		rounds       int
		history      string
	}
	// The memory bomb stops its worker, but which limit the pool names depends on the machine:
	// RLIMIT_DATA does not bound the Go heap exactly (a fresh arena mapped over its reservation
	// is not counted), so the worker may also die in the runtime or be killed at the time limit.
	// Any of the three is a worker stopped, which the loop must report and go past.
	stopped := map[string]bool{"memory-limit": true, "timeout": true, "crash": true}
	require.Len(t, recs[3].History, 3)
	require.Len(t, recs[3].History[1], 1)
	require.True(t, stopped[recs[3].History[1][0]], "the memory bomb: %v", recs[3].History[1])
	recs[3].History[1] = []string{"stopped"}
	var got []row
	for _, r := range recs {
		var h []string
		for _, codes := range r.History {
			h = append(h, strings.Join(uniq(codes), "+"))
		}
		got = append(got, row{r.Status, r.Task, r.Rounds, strings.Join(h, " | ")})
	}
	require.Equal(t, []row{
		{"accepted", a.name, 2, "syntax | "},
		{"accepted", b.name, 3, "blind-to-content+blind-to-reply+blind-to-side-effect+reply-only+trivial+weak-verifier | unsolved | "},
		{"rejected", c.name, 3, "unsolved | unsolved | unsolved"},
		{"accepted", d.name, 3, "no-code | stopped | "},
		{"accepted", e.name, 2, "timeout | "},
		{"rejected", "flour-order-again", 1, "duplicate"},
		{"rejected", "", 1, "duplicate"},
	}, got)
	require.Equal(t, a.name, recs[5].Twin)
	require.Contains(t, recs[5].Diagnostics[0].Message, `near-duplicate of "flour-order-quantity" (attempt 0)`)
	require.Equal(t, "fuel-surcharge", recs[6].Twin)
	require.Contains(t, recs[6].Diagnostics[0].Message, "a copy of task \"fuel-surcharge\" (corpus file tasks/fuel_surcharge.star)")
	require.Equal(t, "unsolved", recs[2].Diagnostics[0].Code)
	require.Greater(t, recs[0].Tokens.Total, 0)

	require.Equal(t, 7, sum.Attempts)
	require.Equal(t, 4, sum.Accepted)
	require.Equal(t, 0, sum.FirstTry)
	require.Equal(t, 3, sum.Rejected)
	require.Equal(t, 2.5, sum.MeanRounds)
	require.Equal(t, map[string]int{"unsolved": 1, "duplicate": 2}, sum.Rejections)

	// The accepted files: a header, then the candidate; valid on their own under --strict.
	data := mustRead(t, filepath.Join(out, a.name+".star"))
	require.True(t, strings.HasPrefix(data, "# coworkenv generate · attempt 0\n# capabilities: mail.reply\n# model: fake-model\n# seed: 100\n# rounds: 2\n\n"+a.source()), data)
	rep := validateStrict(t, out)
	require.Equal(t, 4, rep.Summary.OK)

	// The repair prompts carry the diagnostics with the source line and a caret.
	msgs := f.lastUserMessages()
	var syntaxRepair, trivialRepair string
	for _, m := range msgs {
		if strings.Contains(m, "error[syntax]") {
			syntaxRepair = m
		}
		if strings.Contains(m, "error[trivial]") {
			trivialRepair = m
		}
	}
	require.Contains(t, syntaxRepair, "round 1 of 3")
	require.Regexp(t, `candidate\.star:\d+:\d+: error\[syntax\]: `, syntaxRepair)
	require.Regexp(t, `(?m)^ *\d+ \| .*\n *\| *\^$`, syntaxRepair)
	require.Contains(t, syntaxRepair, "whole corrected file")
	require.Contains(t, trivialRepair, `it passed: check "the sheet is there"`)
	require.Contains(t, trivialRepair, "warning[weak-verifier]")
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func mustRead(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestResume: a run killed after its first accepted task and run again ends with the same
// manifest and files as a run that was never interrupted.
func TestResume(t *testing.T) {
	t.Parallel()
	script := map[int64][]string{}
	for i, r := range replies {
		answers := []string{fenced(r.source())}
		if i%2 == 1 {
			answers = []string{fenced(syntaxError(r.source())), fenced(r.source())}
		}
		script[int64(100+i)] = answers
	}
	f := newFake(t, script)

	whole := t.TempDir()
	_, err := generator.Run(context.Background(), options(t, f, whole, len(replies)))
	require.NoError(t, err)

	killed := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	opts := options(t, f, killed, len(replies))
	opts.OnRecord = func(r generator.Record) {
		if r.Status == "accepted" {
			cancel()
		}
	}
	_, err = generator.Run(ctx, opts)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, readManifest(t, killed), 1)
	// a file of an attempt that was not committed, as a kill between the two writes leaves it
	require.NoError(t, os.WriteFile(filepath.Join(killed, replies[1].name+".star"), []byte("# coworkenv generate · attempt 1\n\n"+replies[1].source()), 0o644))

	before := len(f.lastUserMessages())
	var log strings.Builder
	opts = options(t, f, killed, len(replies))
	opts.Log = &log
	sum, err := generator.Run(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Resumed)
	require.Equal(t, len(replies), sum.Accepted)
	require.Contains(t, log.String(), "removed "+filepath.Join(killed, replies[1].name+".star"))
	// attempt 0 was not asked again
	for _, m := range f.lastUserMessages()[before:] {
		require.NotContains(t, m, "attempt seed 100)")
	}
	requireSameDir(t, whole, killed)
	validateStrict(t, killed)
}

// requireSameDir compares two output folders byte for byte.
func requireSameDir(t *testing.T, want, got string) {
	t.Helper()
	list := func(dir string) map[string]string {
		out := map[string]string{}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			out[e.Name()] = mustRead(t, filepath.Join(dir, e.Name()))
		}
		return out
	}
	w, g := list(want), list(got)
	require.Equal(t, keys(w), keys(g))
	for k := range w {
		require.Equal(t, w[k], g[k], k)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestModelErrorStopsTheRun(t *testing.T) {
	t.Parallel()
	f := newFake(t, map[int64][]string{100: {fenced(replies[0].source())}})
	out := t.TempDir()
	opts := options(t, f, out, 3)
	opts.Jobs = 1
	_, err := generator.Run(context.Background(), opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "no answer scripted for seed 101 round 1")
	require.Len(t, readManifest(t, out), 1, "the attempt done before the error is kept")
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	opts := options(t, f, t.TempDir(), 1)
	opts.Capabilities = []string{"mail.nope"}
	_, err := generator.Run(context.Background(), opts)
	require.ErrorIs(t, err, generator.ErrUsage)
	require.Contains(t, err.Error(), `unknown capability "mail.nope" (the corpus declares mail.reply, files.extract, calendar.schedule)`)

	// a manifest of another run in --out
	out := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, generator.ManifestFile), []byte(`{"attempt":0,"seed":7,"status":"rejected","capabilities":["mail.reply"]}`+"\n"), 0o644))
	_, err = generator.Run(context.Background(), options(t, f, out, 2))
	require.ErrorIs(t, err, generator.ErrUsage)
	require.Contains(t, err.Error(), "holds attempts of another run")
	require.Contains(t, err.Error(), "resume with the same Seed and Capabilities, or use another Out", "a library names the fields of its options")
	var fe *generator.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, []string{"Seed", "Capabilities", "Out"}, fe.Fields)
	named := fe.Named(func(field string) string { return "--" + strings.ToLower(field) })
	require.Contains(t, named, "resume with the same --seed and --capabilities, or use another --out", "a command line names them by its flags")

	opts = options(t, f, t.TempDir(), 0)
	_, err = generator.Run(context.Background(), opts)
	require.ErrorIs(t, err, generator.ErrUsage)
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "Count must be at least 1", err.Error())
}
