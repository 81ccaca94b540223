package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// judgedNoteTask is copyNoteTask with a judge in its final verifier.
var judgedNoteTask = strings.Replace(copyNoteTask, `    check(claims.states(ep.reply, "call the bank"), "the reply says what the note says")`,
	`    judge(text = ep.reply or "", rubric = "Says what the note says.", stand_in = lambda text: ("call the bank" in text, "quotes it"))`, 1)

// interruptedTrace records the oracle on judgedNoteTask and makes its trace the one a served
// session deleted while the final verifier ran leaves: no judge event, and an end with the code
// interrupted. It returns the trace's path; runs/good.jsonl beside it is the trace as recorded.
func interruptedTrace(t *testing.T) string {
	t.Helper()
	require.NotEqual(t, copyNoteTask, judgedNoteTask)
	proj := writeFiles(t, map[string]string{"tasks/t.star": judgedNoteTask})
	t.Chdir(proj)
	tr := filepath.Join("runs", "t.jsonl")
	require.NoError(t, os.Mkdir("runs", 0o755))
	code, out, errs := cli(t, "run", "tasks/t.star", "--trace", tr)
	require.Equal(t, 0, code, out+errs)
	data, err := os.ReadFile(tr)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("runs", "good.jsonl"), data, 0o644))
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		switch {
		case strings.HasPrefix(l, `{"event":"judge"`):
			continue
		case strings.HasPrefix(l, `{"event":"end"`):
			l = `{"event":"end","score":0.0,"passed":false,"completion":0.0,"safety":1.0,"robustness":1.0,` +
				`"checks":[{"kind":"check","message":"the note is copied","weight":1.0,"passed":true,"turn":null},{"kind":"check","message":"written once","weight":1.0,"passed":true,"turn":null}],` +
				`"state":` + l[strings.Index(l, `"state":`)+len(`"state":`):strings.LastIndex(l, "}")] +
				`,"error":{"code":"interrupted","message":"verifier: Starlark computation cancelled: context canceled","file":"tasks/t.star","line":25,"col":10}}`
		}
		kept = append(kept, l)
	}
	require.NoError(t, os.WriteFile(tr, []byte(strings.Join(kept, "\n")+"\n"), 0o644))
	return tr
}

// The trace of an episode interrupted while its final verifier ran replays as far as it was
// recorded and says so (it once diverged: "recorded end, replayed judge"), in a worker and in
// this process; export leaves it out as inconclusive and says so, and keeps the trace beside it.
func TestInterruptedTraceReplaysAndExports(t *testing.T) {
	tr := interruptedTrace(t)
	for _, where := range [][]string{nil, {"--in-process"}} {
		code, out, errs := cli(t, append([]string{"replay", tr}, where...)...)
		assert.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		assert.Contains(t, out, tr+": matched up to its interruption (copy-note)", where)
		code, out, errs = cli(t, append([]string{"replay", tr, "--json"}, where...)...)
		assert.Equal(t, 0, code, "%v: %s%s", where, out, errs)
		assert.Contains(t, out, `"matched":true`)
		assert.Contains(t, out, `"interrupted":true`)
	}
	for _, kind := range []string{"sft", "rl", "inspect"} {
		dst := filepath.Join(t.TempDir(), kind+".jsonl")
		if kind == "inspect" {
			dst = strings.TrimSuffix(dst, "l")
		}
		args := []string{"export", kind, "runs", "--out", dst}
		if kind == "sft" {
			args = append(args, "--include-oracle")
		}
		code, out, errs := cli(t, args...)
		assert.Equal(t, 0, code, "%s: %s%s", kind, out, errs)
		assert.Contains(t, out, "wrote 1 episode", kind)
		assert.Contains(t, out, "skipped 1: 1 inconclusive (interrupted)", kind)
	}
}

// A trace over the size limit of a trace is refused by export and replay with an error that
// names the file and the limit, before it is read.
func TestTooLargeTraceIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.Mkdir("runs", 0o755))
	f, err := os.Create(filepath.Join("runs", "big.jsonl"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(128<<20+1))
	require.NoError(t, f.Close())
	code, out, errs := cli(t, "export", "sft", "runs", "--out", filepath.Join(t.TempDir(), "x.jsonl"))
	assert.Equal(t, 1, code, out+errs)
	assert.Contains(t, errs, "skipping runs/big.jsonl: the trace is over the 128 MiB limit of a trace that replay, export and report read")
	code, out, errs = cli(t, "replay", filepath.Join("runs", "big.jsonl"))
	assert.Equal(t, 1, code, out+errs)
	assert.Contains(t, out+errs, "big.jsonl: error: the trace is over the 128 MiB limit")
}
