package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coworkenv/coworkenv/internal/conformance"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rolloutCaps = `
capability("files.organize", "copy, move and rename files")
capability("files.edit", "write and delete files")
capability("luck", "depends on the seed")
`

// coin passes for the oracle only when the seeded coin shows heads: samples differ by seed.
const coinTask = `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.fs.write("/coin.txt", ws.rand.choice(["heads", "tails", "heads", "tails", "edge"]))

def _verify(ws, ep):
    check(ws.fs.exists("/out.txt"), "the coin is copied")
    check(ws.fs.read("/coin.txt") == "heads", "the coin shows heads")

def _solve(agent):
    c = agent.call("fs_read", path = "/coin.txt")
    agent.call("fs_write", path = "/out.txt", content = c)
    agent.reply("The coin shows " + c)

task(name = "coin", capabilities = ["luck", "files.organize"], prompt = "Copy /coin.txt to /out.txt.",
     tools = ["fs"], setup = _setup, verify = _verify, solution = _solve)
`

const twoStepsTask = `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.fs.write("/a.txt", "alpha")

def _v1(ws, ep):
    check(ws.fs.exists("/b.txt"), "b is written")

def _s1(agent):
    agent.call("fs_write", path = "/b.txt", content = "beta")
    agent.reply("Written.")

def _v2(ws, ep):
    check(not ws.fs.exists("/a.txt"), "a is deleted")
    check(ws.fs.exists("/b.txt"), "b is kept")

def _s2(agent):
    agent.call("fs_delete", path = "/a.txt")
    agent.reply("Deleted.")

task(
    name = "two-steps",
    capabilities = ["files.edit"],
    turns = [
        turn(user = "Write beta to /b.txt.", verify = _v1, solution = _s1),
        turn(user = "Now delete /a.txt.", verify = _v2, solution = _s2, advance = "1h"),
    ],
    tools = ["fs"],
    setup = _setup,
)
`

func rolloutCorpus(t *testing.T) string {
	return writeFiles(t, map[string]string{
		"capabilities.star":  rolloutCaps,
		"tasks/copy.star":    copyNoteTask,
		"tasks/coin.star":    coinTask,
		"tasks/two.star":     twoStepsTask,
		"lib/nothing.star":   "X = 1\n",
		"tasks/README.txt":   "not a task\n",
		"tasks/more/.hidden": "",
	})
}

// dirContents maps every file under dir (relative path) to its bytes.
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	}))
	return out
}

func rolloutJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m), "%s", out)
	return m
}

// The oracle over a folder, K=3: the traces are byte-identical whatever --jobs is, and a second
// run resumes instead of running again.
func TestRolloutOracleDeterministicAndResumable(t *testing.T) {
	t.Parallel()
	corpus := rolloutCorpus(t)
	outA, outB := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	code, out, errs := cli(t, "rollout", corpus, "--samples", "3", "--jobs", "1", "--out", outA)
	require.Equal(t, 1, code, "the coin's samples do not pass: %s%s", out, errs)
	assert.Contains(t, out, "pass@3")
	assert.Contains(t, out, "by capability:")
	assert.Contains(t, out, "9 episodes run, 0 resumed, 0 failed")
	code, out, errs = cli(t, "rollout", corpus, "--samples", "3", "--jobs", "4", "--out", outB, "--json")
	require.Equal(t, 1, code, "the coin: "+"%s%s", out, errs)

	a, b := dirContents(t, outA), dirContents(t, outB)
	require.Len(t, a, 10, "9 traces and the manifest: %v", keys(a))
	for _, name := range []string{"rollout.json", "coin/0.jsonl", "coin/1.jsonl", "coin/2.jsonl", "copy-note/0.jsonl", "two-steps/2.jsonl"} {
		assert.Contains(t, a, name)
	}
	assert.Equal(t, a, b, "jobs 1 and jobs 4 give identical folders")

	// every sample runs with seed 0: the coin, drawn in setup, is the same for all of them
	for i := 0; i < 3; i++ {
		lines := readLines(t, filepath.Join(outA, "coin", []string{"0", "1", "2"}[i]+".jsonl"))
		assert.EqualValues(t, 0, lines[0]["seed"])
	}
	assert.Equal(t, a["coin/0.jsonl"], a["coin/1.jsonl"], "the oracle from one start state: identical traces")
	assert.Equal(t, a["coin/0.jsonl"], a["coin/2.jsonl"])
	assert.Contains(t, a["rollout.json"], `"vary_setup": false`)

	// the summary agrees with the traces
	sum := rolloutJSON(t, out)
	assert.Equal(t, "oracle", sum["agent"])
	assert.EqualValues(t, 3, sum["samples"])
	assert.Equal(t, false, sum["vary_setup"])
	tasks := sum["tasks"].([]any)
	require.Len(t, tasks, 3)
	var names []string
	for _, x := range tasks {
		names = append(names, x.(map[string]any)["task"].(string))
	}
	assert.Equal(t, []string{"coin", "copy-note", "two-steps"}, names, "tasks in path order")
	coin := tasks[0].(map[string]any)
	passed := 0
	for i := 0; i < 3; i++ {
		lines := readLines(t, filepath.Join(outA, "coin", []string{"0", "1", "2"}[i]+".jsonl"))
		if lines[len(lines)-1]["passed"] == true {
			passed++
		}
	}
	assert.EqualValues(t, passed, coin["passed"])
	assert.InDelta(t, float64(passed)/3, coin["pass_rate"], 1e-6)
	assert.InDelta(t, rollout.PassAtK(3, passed, 3), coin["pass@k"].(map[string]any)["3"], 1e-6)
	assert.InDelta(t, rollout.PassHatK(3, passed, 3), coin["pass^k"].(map[string]any)["3"], 1e-6)
	multi := sum["multi_turn"].(map[string]any)
	assert.EqualValues(t, 1, multi["tasks"])
	assert.EqualValues(t, 1.0, multi["mean_score"])
	single := sum["single_turn"].(map[string]any)
	assert.EqualValues(t, 2, single["tasks"])
	caps := sum["by_capability"].([]any)
	require.Len(t, caps, 3)
	assert.Equal(t, "files.organize", caps[1].(map[string]any)["capability"], "by name: files.edit, files.organize, luck")
	assert.EqualValues(t, 2, caps[1].(map[string]any)["tasks"])
	assert.EqualValues(t, 9, sum["episodes"].(map[string]any)["run"])

	// resume: nothing runs again, and the summary is the same
	code, out2, errs := cli(t, "rollout", corpus, "--samples", "3", "--jobs", "4", "--out", outB, "--json")
	require.Equal(t, 1, code, "the coin: "+errs)
	sum2 := rolloutJSON(t, out2)
	assert.EqualValues(t, 0, sum2["episodes"].(map[string]any)["run"])
	assert.EqualValues(t, 9, sum2["episodes"].(map[string]any)["resumed"])
	assert.Equal(t, sum["tasks"], sum2["tasks"])
	assert.Equal(t, sum["overall"], sum2["overall"])

	// a lost sample runs again, alone, and comes back identical
	require.NoError(t, os.Remove(filepath.Join(outB, "coin", "1.jsonl")))
	require.NoError(t, os.WriteFile(filepath.Join(outB, "two-steps", "0.jsonl.partial"), []byte("{\"event\":"), 0o644))
	code, out3, errs := cli(t, "rollout", corpus, "--samples", "3", "--out", outB, "--json")
	require.Equal(t, 1, code, "the coin: "+errs)
	ep := rolloutJSON(t, out3)["episodes"].(map[string]any)
	assert.EqualValues(t, 1, ep["run"])
	assert.EqualValues(t, 8, ep["resumed"])
	b = dirContents(t, outB)
	delete(b, "two-steps/0.jsonl.partial")
	assert.Equal(t, a, b)

	// more samples later: only the new ones run
	code, out4, errs := cli(t, "rollout", corpus, "--samples", "4", "--out", outB, "--json")
	require.Equal(t, 1, code, "the coin: "+errs)
	ep = rolloutJSON(t, out4)["episodes"].(map[string]any)
	assert.EqualValues(t, 3, ep["run"])
	assert.EqualValues(t, 9, ep["resumed"])

	// another seed or agent into the same folder is refused
	code, _, errs = cli(t, "rollout", corpus, "--samples", "3", "--out", outB, "--seed", "7")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "seed")
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
	code, _, errs = cli(t, "rollout", corpus, "--samples", "3", "--out", outB, "--agent", "noop")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "agent")
	// and so is --vary-setup, which would give the samples other seeds
	code, _, errs = cli(t, "rollout", corpus, "--samples", "3", "--out", outB, "--vary-setup")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "was made without --vary-setup")
	assert.Equal(t, 1, strings.Count(errs, "\n"), errs)
}

// startStates are the seeds and start state hashes of a task's traces in a rollout folder.
func startStates(t *testing.T, out, task string, k int) (seeds []any, states []string) {
	t.Helper()
	for i := 0; i < k; i++ {
		start := readLines(t, filepath.Join(out, task, fmt.Sprint(i)+".jsonl"))[0]
		seeds = append(seeds, start["seed"])
		states = append(states, start["state"].(string))
	}
	return seeds, states
}

// A task whose setup draws from ws.rand (the coin): by default every sample of a task starts from
// the same state, with the same seed; with --vary-setup sample i runs with seed+i and the
// samples start from different states. Each setting resumes only into its own folder.
func TestRolloutSetupSeed(t *testing.T) {
	t.Parallel()
	corpus := writeFiles(t, map[string]string{"capabilities.star": rolloutCaps, "coin.star": coinTask})
	same, vary := filepath.Join(t.TempDir(), "same"), filepath.Join(t.TempDir(), "vary")
	code, stdout, errs := cli(t, "rollout", corpus, "--samples", "4", "--seed", "5", "--out", same)
	require.Equal(t, 1, code, "the coin's samples do not pass: %s%s", stdout, errs)
	assert.Contains(t, stdout, "every sample of a task ran with seed 5, from the same start state")
	seeds, states := startStates(t, same, "coin", 4)
	assert.Equal(t, []any{5.0, 5.0, 5.0, 5.0}, seeds)
	for i := 1; i < 4; i++ {
		assert.Equal(t, states[0], states[i], "sample %d starts where sample 0 did", i)
	}

	code, stdout, errs = cli(t, "rollout", corpus, "--samples", "4", "--seed", "5", "--vary-setup", "--out", vary, "--json")
	require.Equal(t, 1, code, "some coins: "+"%s%s", stdout, errs)
	assert.Equal(t, true, rolloutJSON(t, stdout)["vary_setup"])
	seeds, states = startStates(t, vary, "coin", 4)
	assert.Equal(t, []any{5.0, 6.0, 7.0, 8.0}, seeds)
	distinct := map[string]bool{}
	for _, s := range states {
		distinct[s] = true
	}
	assert.Greater(t, len(distinct), 1, "the coin differs between set-ups: %v", states)

	// resuming with the same setting reads everything back; with the other one it is refused
	code, stdout, errs = cli(t, "rollout", corpus, "--samples", "4", "--seed", "5", "--vary-setup", "--out", vary, "--json")
	require.Equal(t, 1, code, "some coins: %s%s", stdout, errs)
	assert.EqualValues(t, 4, rolloutJSON(t, stdout)["episodes"].(map[string]any)["resumed"])
	code, _, errs = cli(t, "rollout", corpus, "--samples", "4", "--seed", "5", "--out", vary)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "was made with --vary-setup (sample i ran with seed+i); add --vary-setup to resume")
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TASKS may be files, file.star:name and folders; a task named twice runs once.
func TestRolloutResolvesTasks(t *testing.T) {
	t.Parallel()
	corpus := rolloutCorpus(t)
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", filepath.Join(corpus, "tasks", "two.star"),
		filepath.Join(corpus, "tasks", "copy.star")+":copy-note", filepath.Join(corpus, "tasks"), "--out", out, "--json")
	require.Equal(t, 1, code, "the coin's sample does not pass: %s%s", stdout, errs)
	var names []string
	for _, x := range rolloutJSON(t, stdout)["tasks"].([]any) {
		names = append(names, x.(map[string]any)["task"].(string))
	}
	assert.Equal(t, []string{"two-steps", "copy-note", "coin"}, names)

	for _, args := range [][]string{
		{"rollout", "--out", out, "no-such-task-anywhere"},
		{"rollout", "--out", out, filepath.Join(corpus, "tasks", "copy.star") + ":nope"},
		{"rollout", corpus},
		{"rollout", corpus, "--out", out, "--samples", "0"},
		{"rollout", corpus, "--out", out, "--jobs", "0"},
	} {
		code, _, errs := cli(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: %q", args, errs)
	}

	// a file in a folder that does not load is skipped and reported; the rest runs
	broken := writeFiles(t, map[string]string{"ok.star": copyNoteTask, "bad.star": "task(\n"})
	code, _, errs = cli(t, "rollout", broken, "--out", filepath.Join(t.TempDir(), "x"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "skipping")
	assert.Contains(t, errs, "bad.star")
}

// The oracle over the shared conformance suite's multi-turn folder.
func TestRolloutConformance(t *testing.T) {
	t.Parallel()
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("the conformance suite is not there")
	}
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", filepath.Join(dir, "multiturn"), "--samples", "2", "--jobs", "4", "--out", out, "--json")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	sum := rolloutJSON(t, stdout)
	assert.Greater(t, sum["multi_turn"].(map[string]any)["tasks"], 0.0)
	code, stdout, errs = cli(t, "replay", out, "--corpus", dir)
	assert.Equal(t, 0, code, "%s%s", stdout, errs)
}

// A model rollout: episodes run concurrently against one server, one agent each; a task whose
// requests fail leaves .partial traces, exit 1, and is retried by the next run while finished
// samples are not asked again.
func TestRolloutOpenAIFailuresAndResume(t *testing.T) {
	modelEnv(t)
	var broken atomic.Bool
	broken.Store(true)
	f := newChatFake(t, func(msgs []map[string]any) string {
		if strings.Contains(msgs[1]["content"].(string), "coin") {
			if broken.Load() {
				return "!" + `{"error":{"message":"the model is not loaded","type":"invalid_request_error"}}`
			}
			return chatSay("I cannot do that.")
		}
		return copyNotePolicy(msgs)
	})
	corpus := writeFiles(t, map[string]string{"capabilities.star": rolloutCaps, "copy.star": copyNoteTask, "coin.star": coinTask})
	out := filepath.Join(t.TempDir(), "o")
	args := []string{"rollout", corpus, "--model", "fake-model", "--base-url", f.url(), "--temperature", "0.7",
		"--samples", "2", "--jobs", "3", "--out", out, "--json"}
	code, stdout, errs := cli(t, args...)
	require.Equal(t, 1, code, "%s%s", stdout, errs)
	assert.Contains(t, errs, "coin sample 0 failed")
	assert.Contains(t, errs, "the model is not loaded")
	sum := rolloutJSON(t, stdout)
	assert.EqualValues(t, 2, sum["episodes"].(map[string]any)["failed"])
	assert.EqualValues(t, 2, sum["episodes"].(map[string]any)["run"])
	assert.Contains(t, sum, "usage")
	files := dirContents(t, out)
	assert.Contains(t, files, "copy-note/0.jsonl")
	assert.Contains(t, files, "copy-note/1.jsonl")
	assert.Contains(t, files, "coin/0.jsonl.partial")
	assert.NotContains(t, files, "coin/0.jsonl")
	var manifest map[string]any
	require.NoError(t, json.Unmarshal([]byte(files["rollout.json"]), &manifest))
	assert.Equal(t, "fake-model", manifest["model"])
	assert.Equal(t, 0.7, manifest["temperature"])

	before := len(f.requests())
	broken.Store(false)
	code, stdout, errs = cli(t, args...)
	require.Equal(t, 1, code, "every sample has a trace, and the coin's do not pass: %s%s", stdout, errs)
	ep := rolloutJSON(t, stdout)["episodes"].(map[string]any)
	assert.EqualValues(t, 2, ep["run"])
	assert.EqualValues(t, 2, ep["resumed"])
	assert.Len(t, f.requests(), before+2, "only the coin samples ask the model again")

	// another model into the same folder is refused
	args[3] = "other-model"
	code, _, errs = cli(t, args...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "model")
}

// The simulated user's rounds reach the summary the same way whether the episodes run in worker
// processes or in this one.
func TestRolloutUserRoundsIsolatedAndInProcess(t *testing.T) {
	t.Parallel()
	corpus := writeFiles(t, map[string]string{"asking.star": tasktest.AskingForColour})
	for _, mode := range []string{"--isolate", "--in-process"} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, errs := cli(t, "rollout", corpus, "--samples", "2", "--out", out, "--json", mode)
		require.Equal(t, 0, code, "%s: %s%s", mode, stdout, errs)
		tasks := rolloutJSON(t, stdout)["tasks"].([]any)
		require.Len(t, tasks, 1)
		assert.Equal(t, 1.0, tasks[0].(map[string]any)["mean_user_rounds"], mode)
	}
}
