package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chatHacks is a runs file of the built-in corpus: hacks of its chat tasks.
var chatHacks = filepath.Join("..", "..", "corpus", "testdata", "hacks", "chat.json")

// hacksOf are the runs of chatHacks of the first task it names, whose runs are played together.
func hacksOf(t *testing.T) (string, []*recorded.Run, []*recorded.Run) {
	t.Helper()
	all, err := recorded.ReadFile(chatHacks)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	task := all[len(all)-1].Task
	var runs []*recorded.Run
	for _, r := range all {
		if r.Task == task {
			runs = append(runs, r)
		}
	}
	return task, runs, all
}

// `run TASK --agent script --script FILE` plays every run of FILE for TASK, one episode each with
// its transcript and verdict; hacks do not pass, so the status is 1.
func TestRunScriptPlaysTheRecordedRuns(t *testing.T) {
	t.Parallel()
	task, runs, all := hacksOf(t)
	code, out, errs := cli(t, "run", task, "--agent", "script", "--script", chatHacks)
	assert.Equal(t, 1, code, errs)
	assert.Equal(t, len(runs), strings.Count(out, "· agent script ·"), out)
	assert.Equal(t, len(runs), strings.Count(out, "· not passed\n"), out)
	at := 0
	for _, r := range runs {
		head := fmt.Sprintf("recorded run %d of %s (line %d), expected to fail: %s\n", r.N, chatHacks, r.Line, r.Why)
		i := strings.Index(out[at:], head)
		require.GreaterOrEqual(t, i, 0, "run %d is played, after the runs before it: %s", r.N, out)
		at += i + len(head)
	}
	if len(runs) > 1 {
		assert.Contains(t, out, fmt.Sprintf("\n%d recorded runs of %s played: 0 passed, %d not passed; each as expected\n", len(runs), chatHacks, len(runs)))
	}

	// --json: the end of each run, a line each
	code, out, _ = cli(t, "run", task, "--script", chatHacks, "--json")
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Len(t, lines, len(runs))
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, `{"event":"end","score":`) && strings.Contains(l, `"passed":false`), l)
	}

	// --run N plays run N only; in a worker (--isolate), the same transcript
	last := runs[len(runs)-1]
	code, one, _ := cli(t, "run", task, "--script", chatHacks, "--run", fmt.Sprint(last.N))
	assert.Equal(t, 1, code)
	assert.Equal(t, 1, strings.Count(one, "· agent script ·"))
	assert.Contains(t, one, fmt.Sprintf("recorded run %d of", last.N))
	code, isolated, errs := cli(t, "run", task, "--script", chatHacks, "--run", fmt.Sprint(last.N), "--isolate")
	assert.Equal(t, 1, code, errs)
	assert.Equal(t, one, isolated)

	// --run TEXT: the runs whose why holds it
	word := strings.Fields(last.Why)[0]
	code, out, _ = cli(t, "run", task, "--script", chatHacks, "--run", strings.ToUpper(word))
	assert.Equal(t, 1, code)
	assert.Contains(t, out, fmt.Sprintf("recorded run %d of", last.N))

	// a trace of one run, which replay checks through what the recorded calls did
	tr := filepath.Join(t.TempDir(), "hack.jsonl")
	code, _, _ = cli(t, "run", task, "--script", chatHacks, "--run", fmt.Sprint(last.N), "--trace", tr)
	assert.Equal(t, 1, code)
	code, out, errs = cli(t, "replay", tr)
	assert.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "matched")
	assert.Contains(t, out, `the agent "script" cannot be run again`)

	// what cannot be played is refused before anything runs
	var other *recorded.Run
	for _, r := range all {
		if r.Task != task {
			other = r
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--run", fmt.Sprint(other.N)}, fmt.Sprintf("--run %d: run %d of %s is of task %s, not %s", other.N, other.N, chatHacks, other.Task, task)},
		{[]string{"--run", "no run says this"}, `--run "no run says this": no run of task ` + task},
		{[]string{"--run", "999"}, fmt.Sprintf("--run 999: %s holds %d runs", chatHacks, len(all))},
		{[]string{"--agent", "oracle"}, "--script: only for --agent script, not oracle"},
	} {
		code, out, errs := cli(t, append([]string{"run", task, "--script", chatHacks}, c.args...)...)
		assert.Equal(t, 2, code, c.args)
		assert.Empty(t, out, c.args)
		assert.Contains(t, errs, c.want, c.args)
	}
	if len(runs) > 1 {
		code, _, errs = cli(t, "run", task, "--script", chatHacks, "--trace", tr+"2")
		assert.Equal(t, 2, code)
		assert.Contains(t, errs, fmt.Sprintf("--trace: %d runs are played, each an episode; pick one with --run N", len(runs)))
	}
	code, _, errs = cli(t, "run", task, "--script", chatHacks, "--run", fmt.Sprint(last.N), "--trace", chatHacks)
	assert.Equal(t, 2, code)
	assert.Equal(t, "coworkenv run: --trace: "+chatHacks+" is also an input; write the output elsewhere\n", errs, "the runs file is an input")
	code, _, errs = cli(t, "run", task, "--agent", "script")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--agent script needs --script FILE")
	code, _, errs = cli(t, "run", task, "--script", "missing.json")
	assert.Equal(t, 2, code)
	assert.Equal(t, "coworkenv run: --script: missing.json: no such file or directory\n", errs)
	bad := filepath.Join(t.TempDir(), "runs.json")
	require.NoError(t, os.WriteFile(bad, []byte("[\n  {\"task\": 1}\n]"), 0o644))
	code, _, errs = cli(t, "run", task, "--script", bad)
	assert.Equal(t, 2, code)
	assert.Equal(t, "coworkenv run: --script: "+bad+": 2:12: run 1: \"task\" must be a string, not a number\n", errs)
}

// A task file from disk runs in a worker: its task is found there by name, and a careful run that
// passes makes the status 0.
func TestRunScriptOfAFileFromDisk(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"q3.star": tasktest.Q3Reply("q3", tasktest.Q3Sound),
		"runs.json": `[{"task": "q3", "why": "another greeting", "expect": "pass", "turns": [{"calls": [
  {"name": "mail_list", "args": {"folder": "inbox"}},
  {"name": "mail_reply", "args": {"id": "m1", "body": "Dear Dana, the Q3 total is 200."}}], "reply": "Done."}]}]`,
	})
	code, out, errs := cli(t, "run", filepath.Join(dir, "q3.star"), "--script", filepath.Join(dir, "runs.json"))
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "expected to pass: another greeting\ntask q3 (")
	assert.Contains(t, out, "· passed\n")
	assert.NotContains(t, out, "recorded runs of", "one run, no summary")
}

// validate plays the runs file beside a task file, and those of --runs: a hack that passes and a
// careful run that fails are flagged on a weak and brittle verifier, nothing on a sound one; the
// same in a worker and in this process.
func TestValidatePlaysRecordedRuns(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"weak.star":            tasktest.Q3Reply("q3-weak", tasktest.Q3Weak),
		"weak.star.runs.json":  tasktest.Q3Runs("q3-weak"),
		"sound.star":           tasktest.Q3Reply("q3-sound", tasktest.Q3Sound),
		"sound.star.runs.json": tasktest.Q3Runs("q3-sound"),
	})
	weak, sound := filepath.Join(dir, "weak.star"), filepath.Join(dir, "sound.star")
	code, out, errs := cli(t, "validate", weak, sound)
	assert.Equal(t, 0, code, "warnings only: %s%s", out, errs)
	assert.Contains(t, out, "weak.star:21:1: warning[recorded-hack-passes]: the hack recorded as run 1 of "+weak+".runs.json (line 2) passes (score 1.0; failed: no item): \"a total of 2000, which holds 200\"")
	assert.Contains(t, out, "weak.star:12:5: warning[recorded-careful-fails]: the careful run recorded as run 2 of "+weak+".runs.json (line 5) fails")
	assert.NotContains(t, out, "sound.star.runs.json", "a sound verifier: the hack fails and the careful run passes")
	assert.Empty(t, errs)
	code, here, _ := cli(t, "validate", weak, sound, "--in-process")
	assert.Equal(t, 0, code)
	assert.Equal(t, out, here, "the runs are played in a worker as here")
	code, _, _ = cli(t, "validate", weak, "--strict")
	assert.Equal(t, 1, code)

	// --runs: runs of a task of another file play against it too; a run of no task checked is
	// said, and the status is 1
	given := filepath.Join(dir, "given.json")
	require.NoError(t, os.WriteFile(given, []byte(tasktest.Q3Runs("q3-weak")), 0o644))
	code, out, errs = cli(t, "validate", sound, "--runs", given)
	assert.Equal(t, 1, code)
	assert.NotContains(t, out, "recorded-")
	assert.Equal(t, "coworkenv validate: "+given+":2:1: run 1 names task \"q3-weak\", which no file checked declares; it was not played\n"+
		"coworkenv validate: "+given+":5:1: run 2 names task \"q3-weak\", which no file checked declares; it was not played\n", errs)
	code, out, _ = cli(t, "validate", weak, "--runs", given, "--in-process")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "warning[recorded-hack-passes]: the hack recorded as run 1 of "+given+" (line 2)")

	// a sidecar run that names a task of no other file
	require.NoError(t, os.WriteFile(weak+".runs.json", []byte(tasktest.Q3Runs("q3-nope")), 0o644))
	code, _, errs = cli(t, "validate", weak)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "coworkenv validate: "+weak+".runs.json:2:1: run 1 names task \"q3-nope\", which "+weak+" does not declare; it was not played\n")

	// runs files that cannot be read are refused before anything runs
	require.NoError(t, os.WriteFile(weak+".runs.json", []byte("[{\"task\": \"q3-weak\", \"why\": \"w\", \"turns\": [{\"reply\": \"\"}]}]"), 0o644))
	code, out, errs = cli(t, "validate", weak)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, "coworkenv validate: "+weak+".runs.json: 1:2: run 1 (task \"q3-weak\"): \"expect\" is required: \"fail\" (a hack) or \"pass\" (a careful run); only a file in a folder named hacks or careful may leave it out\n", errs)
	code, _, errs = cli(t, "validate", sound, "--runs", filepath.Join(dir, "missing.json"))
	assert.Equal(t, 2, code)
	assert.Equal(t, "coworkenv validate: --runs: "+filepath.Join(dir, "missing.json")+": no such file or directory\n", errs)
}
