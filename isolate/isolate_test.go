package isolate_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/require"
)

// The test binary is its own worker: the pool re-executes it with the worker command.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case isolate.WorkerCommand:
			os.Exit(isolate.WorkerMain(os.Args[2:]))
		case "__crashing_worker":
			// reads one request, then dies the way a bug in a builtin would
			bufio.NewReader(os.Stdin).ReadBytes('\n')
			panic("boom: a bug in a builtin")
		case "__env_worker":
			// reads one request, then says what key it has
			bufio.NewReader(os.Stdin).ReadBytes('\n')
			panic(fmt.Sprintf("key=[%s]", os.Getenv("OPENAI_API_KEY")))
		}
	}
	os.Exit(m.Run())
}

const okTask = `
def _setup(ws):
    ws.fs.write("/notes/todo.txt", "call the plumber\n")

def _verify(ws, ep):
    check(ws.fs.exists("/notes/done.txt") and claims.states(ep.reply, "/notes/done.txt", about = "moved"), "done.txt exists, and the user is told")

def _solve(agent):
    agent.call("fs_move", src = "/notes/todo.txt", dst = "/notes/done.txt")
    agent.reply("Moved it to /notes/done.txt.")

task(
    name = "move-todo",
    prompt = "Please rename my todo file to done.txt.",
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

// hangSrc runs for ages in one step and little memory: == compares 200**8 pairs of ints, and no
// in-process guard reaches inside an operator.
const hangSrc = "x = [1]\nfor i in range(8):\n    x = [x] * 200\ny = x == x\n"

func newPool(t *testing.T, opts isolate.Options) *isolate.Pool {
	t.Helper()
	p, err := isolate.NewPool(opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

func job(src string) isolate.Job {
	return isolate.Job{Display: "gen", Files: map[string][]byte{"t.star": []byte(src)}, Check: []string{"t.star"}, Setup: true}
}

func reportJSON(r *validate.Report) string { return jsonv.MustEncode(r.JSON()) }

func TestSameVerdictAsInProcess(t *testing.T) {
	t.Parallel()
	p := newPool(t, isolate.Options{Workers: 1})
	bad := strings.Replace(okTask, `check(ws.fs.exists("/notes/done.txt"), "done.txt exists")`, `check(True, "anything goes")`, 1)
	for _, src := range []string{okTask, bad, "task(\n", "x = 1 // 0\n"} {
		res, err := p.Run(context.Background(), job(src))
		require.NoError(t, err)
		c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "gen")
		want, err := validate.Corpus(context.Background(), c, []string{"t.star"}, validate.Options{Jobs: 1})
		require.NoError(t, err)
		require.Equal(t, reportJSON(want), reportJSON(res.Report))
		require.Equal(t, "", res.Stopped)
		require.Equal(t, string(want.Tasks[0].Source), string(res.Report.Tasks[0].Source))
	}
	require.EqualValues(t, 1, p.Started(), "one worker serves every request")

	res, err := p.Run(context.Background(), job(okTask))
	require.NoError(t, err)
	require.Len(t, res.Tasks, 1)
	ti := res.Tasks[0]
	require.Equal(t, "move-todo", ti.Name)
	require.Equal(t, "gen/t.star", ti.File)
	require.Equal(t, 12, ti.Line)
	require.Equal(t, []string{"Please rename my todo file to done.txt."}, ti.Prompts)
	require.Contains(t, ti.Setup, "file /notes/todo.txt\ncall the plumber\n")
}

func TestRunawayScriptsEndAsDiagnostics(t *testing.T) {
	if raceBuild {
		t.Skip("memory limits under the race detector")
	}
	// A small memory limit makes the bomb fail fast; the runaway builtin gets room (the race
	// detector multiplies the memory it needs), so that only the clock stops it.
	// the bomb must end at its memory limit: the clock is only a backstop, generous for a
	// loaded machine
	small := newPool(t, isolate.Options{Workers: 1, MemoryLimit: 256 << 20, TimeLimit: 20 * time.Second})
	roomy := newPool(t, isolate.Options{Workers: 1, MemoryLimit: 2 << 30, TimeLimit: 1500 * time.Millisecond})
	cases := []struct {
		name, src, code string
		p               *isolate.Pool
	}{
		// 30 doublings are a few steps and 1 GiB: the step budget cannot see it coming.
		{"memory bomb", "s = 'x'\nfor i in range(40):\n    s = s + s\n", "memory-limit", small},
		// == between deeply nested lists is one step that runs for ages.
		{"runaway operator", hangSrc, "timeout", roomy},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			p := tc.p
			res, err := p.Run(context.Background(), job(tc.src))
			require.NoError(t, err)
			require.Len(t, res.Report.Tasks, 1)
			require.Equal(t, tc.code, res.Stopped, "%s", res.Report.Tasks[0].Diagnostics)
			tr := res.Report.Tasks[0]
			require.Equal(t, "invalid", tr.Status)
			require.Equal(t, "gen/t.star", tr.File)
			require.Len(t, tr.Diagnostics, 1)
			require.Equal(t, tc.code, tr.Diagnostics[0].Code)
			require.Equal(t, "gen/t.star", tr.Diagnostics[0].File)
			t.Logf("%s: %s after %s", tc.name, tr.Diagnostics[0], time.Since(start).Round(time.Millisecond))
			// the pool goes on with a fresh worker
			res, err = p.Run(context.Background(), job(okTask))
			require.NoError(t, err)
			require.Equal(t, "ok", res.Report.Tasks[0].Status)
		})
	}
}

func TestCrashingWorker(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	p := newPool(t, isolate.Options{Workers: 1, Command: []string{exe, "__crashing_worker"}})
	res, err := p.Run(context.Background(), job(okTask))
	require.NoError(t, err)
	require.Equal(t, "crash", res.Stopped)
	d := res.Report.Tasks[0].Diagnostics[0]
	require.Equal(t, "crash", d.Code)
	require.Contains(t, d.Message, "panic: boom: a bug in a builtin")
	require.Contains(t, d.Message, "exit status 2")
}

func TestCancel(t *testing.T) {
	p := newPool(t, isolate.Options{Workers: 1, TimeLimit: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Run(ctx, job(hangSrc))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestValidateCorpusMatchesInProcess(t *testing.T) {
	// not in parallel: a corpus-wide or load test, it keeps both cores busy on its own
	if testing.Short() {
		t.Skip("validates the whole built-in corpus, here and in workers")
	}
	p := newPool(t, isolate.Options{Workers: 2})
	c := corpus.Open()
	want, err := validate.Corpus(context.Background(), corpus.Open(), nil, validate.Options{})
	require.NoError(t, err)
	got, err := isolate.ValidateCorpus(context.Background(), p, c, nil, nil)
	require.NoError(t, err)
	require.Equal(t, reportJSON(want), reportJSON(got))
	require.NotEmpty(t, got.Tasks)
}

func TestValidateCorpusDuplicateNamesAndLoads(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"capabilities.star": {Data: []byte(`capability(name = "files.edit", description = "edit files")` + "\n")},
		"lib/util.star":     {Data: []byte("load(\"//lib/more.star\", \"PATH\")\nTODO = PATH\n")},
		"lib/more.star":     {Data: []byte("PATH = \"/notes/todo.txt\"\n")},
		"a/one.star":        {Data: []byte(strings.Replace(okTask, "prompt =", "capabilities = [\"files.edit\"],\n    prompt =", 1))},
		"b/two.star":        {Data: []byte("load(\"//lib/util.star\", \"TODO\")\n" + strings.Replace(okTask, `"/notes/todo.txt"`, "TODO", 2))},
		"b/three.star":      {Data: []byte(strings.Replace(okTask, "capabilities", "x", 1) + "\ntask(name = \"z\", prompt = \"p\", tools = [], capabilities = [\"nope\"])\n")},
	}
	c := dsl.NewCorpus(fsys, ".", "ext")
	want, err := validate.Corpus(context.Background(), dsl.NewCorpus(fsys, ".", "ext"), nil, validate.Options{})
	require.NoError(t, err)
	p := newPool(t, isolate.Options{Workers: 2})
	got, err := isolate.ValidateCorpus(context.Background(), p, c, nil, nil)
	require.NoError(t, err)
	require.Equal(t, reportJSON(want), reportJSON(got))
	require.Contains(t, reportJSON(got), "already declared at ext/a/one.star:12:5")
}
