package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/validate/redteam"
	"github.com/stretchr/testify/require"
)

// The generator's committed cassette and its golden output (generator/cassette_test.go).
const (
	genTestdata  = "../../generator/testdata"
	genCassette  = genTestdata + "/cassette/run.cassette"
	genGolden    = genTestdata + "/cassette/golden"
	genReference = genTestdata + "/cassette/reference.md"
	genCorpus    = genTestdata + "/corpus"
)

func genMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// genFake is a chat-completions server answering each attempt (by the seed its prompt names)
// from a script, round by round. It is the red team too, one that finds nothing: it answers
// the red team's requests with no run.
func genFake(t *testing.T, script map[int64][]string) *chattest.Server {
	gen := chattest.SeedScript{
		Answers: script,
		Missing: "no answer for seed %d round %d",
		Tokens:  func(*chattest.Request, string) (int, int) { return 100, 50 },
	}.Answer
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if sys, _ := r.Messages[0]["content"].(string); sys == redteam.System {
			return chattest.Answer{Body: chattest.Completion{Model: r.Model, Message: chattest.Text("```json\n[]\n```"), PromptTokens: 30, CompletionTokens: 5}.String()}
		}
		return gen(r)
	})
}

// Candidates that stop their check: a string beyond the memory limit at once; one operator that
// runs for hours on little memory (== of a list nested eight deep, 200 wide, which charges no
// step: every builtin charges the step budget as it goes, so a regular expression no longer
// serves); a loop that never ends (the step budget stops it).
const (
	memoryBomb = "S = 'x' * (1 << 29)\n"
	runaway    = "T = [1]\nfor i in range(8):\n    T = [T] * 200\nU = T == T\n"
	steps      = "def f():\n    while True:\n        pass\n\nf()\n\n"
)

// goldenTask is a valid task file of the golden output, without the generator's header.
func goldenTask(t *testing.T, name string) string {
	data, err := os.ReadFile(filepath.Join(genGolden, name+".star"))
	require.NoError(t, err)
	s := string(data)
	return s[strings.Index(s, "\n\n")+2:]
}

func sameDir(t *testing.T, want, got string) {
	t.Helper()
	read := func(dir string) map[string]string {
		out := map[string]string{}
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			require.NoError(t, err)
			out[e.Name()] = string(data)
		}
		return out
	}
	require.Equal(t, read(want), read(got))
}

func TestGenerateReplaysTheCommittedCassette(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	// The golden tasks are of one template, so of one skeleton: --skeleton-dedup=false keeps
	// both (as the library does by default, which recorded the cassette).
	code, stdout, stderr := genMain(t, "generate", "--skeleton-dedup=false", "--capability", "mail.reply", "--count", "3", "--out", out,
		"--corpus", genCorpus, "--max-rounds", "2", "--jobs", "2", "--seed", "7", "--temperature", "0",
		"--replay", genCassette, "--reference", genReference, "--json")
	require.Equal(t, 1, code, "2 of 3 accepted: %s", stderr)
	require.Contains(t, stderr, "coworkenv generate: 2 of 3 tasks accepted")
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.EqualValues(t, 2, sum["accepted"])
	require.EqualValues(t, 1, sum["first_try"])
	require.Equal(t, map[string]any{"unsolved": 1.0}, sum["rejections"])
	sameDir(t, genGolden, out)

	// The accepted files pass validate --strict on their own, in this process and isolated.
	code, stdout, _ = genMain(t, "validate", "--strict", out)
	require.Equal(t, 0, code, stdout)
	require.Contains(t, stdout, "2 tasks: 2 ok, 0 warn, 0 invalid")
	code, stdout, _ = genMain(t, "validate", "--strict", "--isolate", out)
	require.Equal(t, 0, code, stdout)
	require.Contains(t, stdout, "2 tasks: 2 ok, 0 warn, 0 invalid")

	// Run again: everything is in the manifest, nothing is asked.
	code, stdout, stderr = genMain(t, "generate", "--skeleton-dedup=false", "--capability", "mail.reply", "--count", "3", "--out", out,
		"--corpus", genCorpus, "--max-rounds", "2", "--seed", "7", "--temperature", "0",
		"--replay", genCassette, "--reference", genReference)
	require.Equal(t, 1, code, "still 2 of 3 accepted: "+stderr)
	require.Contains(t, stdout, "3 attempts: 2 accepted (1 first try), 1 rejected; 3 resumed from the manifest")
	sameDir(t, genGolden, out)
}

func TestGenerateRecordsAndSurvivesRunawayCandidates(t *testing.T) {
	if genRaceBuild {
		t.Skip("memory limits under the race detector")
	}
	good := goldenTask(t, "loan-return-date")
	other := goldenTask(t, "rabies-vaccine-stock")
	// A builtin that outruns the worker's time limit, and a loop that outruns the step budget.
	// (Not a memory bomb: which limit stops it depends on the machine, and the repair prompt
	// that names it would then differ between the recording and the replay; TestRepairLoop in
	// generator covers it.)
	srv := genFake(t, map[int64][]string{
		0: {"```python\n" + runaway + good + "```", "```python\n" + good + "```"},
		1: {"```python\n" + steps + other + "```", "```python\n" + other + "```"},
	})
	dir := t.TempDir()
	cas := filepath.Join(dir, "run.cassette")
	args := func(out string, more ...string) []string {
		return append([]string{"generate", "--skeleton-dedup=false", "--capability", "mail.reply,files.extract", "--count", "2", "--out", out,
			"--corpus", genCorpus, "--model", "m", "--jobs", "1", "--memory-limit", "256", "--time-limit", "2s"}, more...)
	}
	live := filepath.Join(dir, "live")
	code, stdout, stderr := genMain(t, args(live, "--base-url", srv.URL+"/v1", "--record", cas)...)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "2 attempts: 2 accepted (0 first try), 0 rejected")
	require.Contains(t, stdout, "tokens: 400 prompt + 200 completion = 600")
	require.Contains(t, stdout, "red team: 2 requests, 60 prompt + 10 completion = 70 tokens; 0 hacks and 0 careful runs written, 0 kept beside accepted tasks", "asked by default, once per accepted candidate")
	manifest, err := os.ReadFile(filepath.Join(live, "manifest.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(manifest), `"history":[["timeout"],[]]`)
	require.Contains(t, string(manifest), `"history":[["step-limit"],[]]`)

	replayed := filepath.Join(dir, "replayed")
	code, _, stderr = genMain(t, args(replayed, "--replay", cas)...)
	require.Equal(t, 0, code, stderr)
	sameDir(t, live, replayed)
}

func TestGenerateUsageErrors(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "1", "--out", out, "--model", "m", "--base-url", "http://127.0.0.1:9/v1"}, "--capability NAME is required"},
		{[]string{"--capability", "mail.reply", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"}, "--out DIR is required"},
		{[]string{"--capability", "mail.nope", "--out", out, "--model", "m", "--base-url", "http://127.0.0.1:9/v1"}, `unknown capability "mail.nope"`},
		{[]string{"--capability", "mail.reply", "--out", out, "--base-url", "http://127.0.0.1:9/v1"}, "--model NAME is required"},
		{[]string{"--capability", "mail.reply", "--out", out, "--record", "a", "--replay", "b"}, "--record and --replay cannot be used together"},
		{[]string{"--capability", "mail.reply", "--out", out, "--replay", filepath.Join(out, "none.cassette")}, "--replay: "},
		{[]string{"--capability", "mail.reply", "--out", out, "--model", "m", "--count", "0"}, "--count: 0 is not a positive number"},
		{[]string{"--capability", "mail.reply", "--out", out, "--model", "m", "--corpus", "/no/such/dir"}, "--corpus: /no/such/dir"},
	} {
		code, _, stderr := genMain(t, append([]string{"generate"}, tc.args...)...)
		require.Equal(t, 2, code, tc.args)
		require.Contains(t, stderr, tc.want)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
}

func TestGenerateStopsWhenTheModelFails(t *testing.T) {
	t.Parallel()
	srv := genFake(t, map[int64][]string{0: {"```python\n" + goldenTask(t, "loan-return-date") + "```"}})
	out := t.TempDir()
	code, stdout, stderr := genMain(t, "generate", "--capability", "mail.reply", "--count", "2", "--out", out,
		"--corpus", genCorpus, "--model", "m", "--base-url", srv.URL+"/v1", "--jobs", "1")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, "1 attempt: 1 accepted")
	require.Contains(t, stderr, "no answer for seed 1 round 1")
	require.Contains(t, stderr, "run the same command again to resume")
}

func TestValidateIsolate(t *testing.T) {
	t.Parallel() // no outcome races a clock (below)
	if genRaceBuild {
		t.Skip("memory limits under the race detector")
	}
	// Two runs, so that no outcome races a clock against the machine's speed: the memory bomb
	// and the step-limited loop under a time limit they cannot reach, so that only their own
	// limits stop them; the runaway operator alone under a short one.
	validateDir := func(limit string, files map[string]string) (map[string]string, map[string]int) {
		dir := t.TempDir()
		for name, src := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
		}
		code, stdout, stderr := genMain(t, "validate", "--isolate", "--memory-limit", "256", "--time-limit", limit, "--json", dir)
		require.Equal(t, 1, code, stderr)
		var rep struct {
			Tasks []struct {
				File        string
				Status      string
				Diagnostics []struct{ Code, Message string }
			}
			Summary map[string]int
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
		got := map[string]string{}
		for _, tr := range rep.Tasks {
			code := tr.Status
			if len(tr.Diagnostics) > 0 {
				code = tr.Diagnostics[0].Code
				if code == "crash" {
					t.Logf("%s: %s", tr.File, tr.Diagnostics[0].Message)
				}
			}
			got[filepath.Base(tr.File)] = code
		}
		return got, rep.Summary
	}
	got, summary := validateDir("10m", map[string]string{
		"a_good.star":  goldenTask(t, "loan-return-date"),
		"b_bomb.star":  memoryBomb,
		"d_steps.star": steps,
	})
	require.Equal(t, map[string]string{"a_good.star": "ok", "b_bomb.star": "memory-limit", "d_steps.star": "step-limit"}, got)
	require.Equal(t, map[string]int{"ok": 1, "warn": 0, "invalid": 2}, summary)
	got, _ = validateDir("1500ms", map[string]string{"c_runaway.star": runaway})
	require.Equal(t, map[string]string{"c_runaway.star": "timeout"}, got)

	code, _, stderr := genMain(t, "validate", "--isolate", "--time-limit", "0s", t.TempDir())
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--time-limit")
}
