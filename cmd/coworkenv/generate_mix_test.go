package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/stretchr/testify/require"
)

func readRecords(t *testing.T, dir string) []generator.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, generator.ManifestFile))
	require.NoError(t, err)
	recs, err := generator.ParseManifest(data)
	require.NoError(t, err)
	return recs
}

// A run over the whole taxonomy of the built-in corpus draws every capability as a primary at
// least twice in 40 attempts, prints the coverage table, and keeps every first request within
// 40 KB and every repair request within 50 KB, with an answer the size of a corpus task.
func TestGenerateMixCoversTheTaxonomy(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../corpus/tasks/records/nordlicht_duplicate_tickets.star")
	require.NoError(t, err)
	broken := "```python\ndef broken(:\n" + string(src) + "```"
	script := map[int64][]string{}
	for s := int64(0); s < 40; s++ {
		script[s] = []string{broken, "I cannot write this one."}
	}
	srv := chattest.New(t, chattest.SeedScript{Answers: script, Missing: "no answer for seed %d round %d",
		Tokens: func(*chattest.Request, string) (int, int) { return 1000, 200 }}.Answer)
	out := t.TempDir()
	code, stdout, stderr := genMain(t, "generate", "--capability", "all", "--count", "40", "--out", out,
		"--model", "m", "--base-url", srv.URL+"/v1", "--jobs", "2", "--max-rounds", "2")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stdout, "40 attempts: 0 accepted (0 first try), 40 rejected")
	require.Contains(t, stdout, "coverage:\ncapability")

	recs := readRecords(t, out)
	require.Len(t, recs, 40)
	primaries := map[string]int{}
	for _, r := range recs {
		require.Equal(t, r.Primary, r.Capabilities[0])
		require.LessOrEqual(t, len(r.Capabilities), 2, "one other at most (--combine 1)")
		primaries[r.Primary]++
		require.Equal(t, 2400, r.Tokens.Total, "two rounds of 1000 + 200 tokens")
	}
	tax := corpus.Open().Taxonomy()
	require.NotNil(t, tax)
	for _, c := range tax.Capabilities {
		require.GreaterOrEqual(t, primaries[c.Name], 2, "%s as a primary", c.Name)
		require.Regexp(t, `(?m)^`+strings.ReplaceAll(c.Name, ".", `\.`)+` +\d+ +\d+ +0 +\d+ +0 +0$`, stdout, "its row of the coverage table")
	}

	firsts, repairs, maxFirst, maxRepair := 0, 0, 0, 0
	for _, r := range srv.Requests() {
		if r.Rounds() == 0 {
			firsts++
			maxFirst = max(maxFirst, len(r.Body))
			require.LessOrEqual(t, len(r.Body), 40*1024, "a first request")
		} else {
			repairs++
			maxRepair = max(maxRepair, len(r.Body))
			require.LessOrEqual(t, len(r.Body), 50*1024, "a repair request")
		}
	}
	t.Logf("largest first request %d bytes, repair %d bytes", maxFirst, maxRepair)
	require.Equal(t, 40, firsts)
	require.Equal(t, 40, repairs)

	// The same command draws the same: a resumed run accepts the manifest as its own.
	code, stdout, stderr = genMain(t, "generate", "--capability", "all", "--count", "40", "--out", out,
		"--model", "m", "--base-url", srv.URL+"/v1", "--jobs", "2", "--max-rounds", "2")
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stdout, "40 resumed from the manifest")
	// Another mix does not.
	code, _, stderr = genMain(t, "generate", "--capability", "all", "--count", "41", "--out", out, "--mix", "mail.reply=3",
		"--model", "m", "--base-url", srv.URL+"/v1", "--jobs", "2", "--max-rounds", "2")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "holds attempts of another run")
}

// --budget-tokens stops a run before the attempt that would pass it; a larger budget resumes it.
func TestGenerateBudgetStopsAndResumes(t *testing.T) {
	t.Parallel()
	script := map[int64][]string{}
	for s := int64(0); s < 5; s++ {
		script[s] = []string{"no file, sorry"}
	}
	srv := chattest.New(t, chattest.SeedScript{Answers: script, Missing: "no answer for seed %d round %d",
		Tokens: func(*chattest.Request, string) (int, int) { return 100, 50 }}.Answer)
	out := t.TempDir()
	args := func(budget string) []string {
		return []string{"generate", "--capability", "mail.reply,files.extract", "--count", "5", "--out", out, "--corpus", genCorpus,
			"--model", "m", "--base-url", srv.URL + "/v1", "--jobs", "1", "--max-rounds", "1", "--budget-tokens", budget, "--json"}
	}
	// 150 tokens an attempt: after two (300), a third would take the run to 450.
	code, stdout, stderr := genMain(t, args("400")...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "stopped before attempt 3: it would take the run past --budget-tokens 400 (300 spent)")
	var sum generator.Summary
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Equal(t, 2, sum.Attempts)
	require.True(t, sum.BudgetStop)
	require.Equal(t, generator.Tokens{Prompt: 200, Completion: 100, Total: 300}, sum.Tokens)
	require.Len(t, srv.Requests(), 2, "the model was asked for two attempts only")
	recs := readRecords(t, out)
	require.Len(t, recs, 2)
	for _, r := range recs {
		require.Equal(t, generator.Tokens{Prompt: 100, Completion: 50, Total: 150}, r.Tokens)
	}

	code, stdout, stderr = genMain(t, args("10000")...)
	require.Equal(t, 1, code, stderr) // none accepted
	sum = generator.Summary{}
	require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
	require.Equal(t, 5, sum.Attempts)
	require.Equal(t, 2, sum.Resumed)
	require.False(t, sum.BudgetStop)
	require.Equal(t, 750, sum.Tokens.Total)
	require.Len(t, srv.Requests(), 5)
}

// The README's generate example runs as written, against a scripted model.
func TestReadmeGenerateExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "coworkenv generate ") {
			line = l
			break
		}
	}
	require.NotEmpty(t, line, "README.md shows no generate command")
	script := map[int64][]string{}
	for s := int64(0); s < 100; s++ {
		script[s] = []string{"no file", "no file", "no file", "no file"}
	}
	srv := chattest.New(t, chattest.SeedScript{Answers: script, Missing: "no answer for seed %d round %d",
		Tokens: func(*chattest.Request, string) (int, int) { return 10, 1 }}.Answer)
	dir := t.TempDir()
	args := strings.Fields(line)[1:]
	for k := range args { // the output folder, in the test's folder
		if k > 0 && args[k-1] == "--out" {
			args[k] = filepath.Join(dir, args[k])
		}
	}
	args = append(args, "--base-url", srv.URL+"/v1", "--jobs", "2")
	code, stdout, stderr := genMain(t, args...)
	require.Equal(t, 1, code, "no task accepted: %s", stderr)
	require.Contains(t, stdout, "coverage:")
	require.NotContains(t, stderr, "usage")
	recs := readRecords(t, filepath.Join(dir, "gen"))
	require.NotEmpty(t, recs)
}

// With attempts side by side, those in flight count at the mean of the committed ones: the
// decision depends on the tokens alone, never on timing.
func TestGenerateBudgetWithJobs(t *testing.T) {
	t.Parallel()
	script := map[int64][]string{}
	for s := int64(0); s < 6; s++ {
		script[s] = []string{"no file, sorry"}
	}
	for run := 0; run < 2; run++ {
		srv := chattest.New(t, chattest.SeedScript{Answers: script, Missing: "no answer for seed %d round %d",
			Tokens: func(*chattest.Request, string) (int, int) { return 100, 50 }}.Answer)
		out := t.TempDir()
		code, stdout, stderr := genMain(t, "generate", "--capability", "mail.reply", "--count", "6", "--out", out, "--corpus", genCorpus,
			"--model", "m", "--base-url", srv.URL+"/v1", "--jobs", "2", "--max-rounds", "1", "--budget-tokens", "500", "--json")
		require.Equal(t, 1, code, stderr)
		// attempts 0 and 1 start at once; after 0 (150), 2 may start (150 + 2 × 150 ≤ 500); after
		// 1 (300), 3 may not (300 + 2 × 150 > 500)
		require.Contains(t, stderr, "stopped before attempt 4")
		var sum generator.Summary
		require.NoError(t, json.Unmarshal([]byte(stdout), &sum))
		require.Equal(t, 3, sum.Attempts)
		require.Equal(t, 450, sum.Tokens.Total)
		require.Len(t, srv.Requests(), 3)
	}
}

// --all-of asks every attempt for every capability given, as before the mix; --mix weighs the
// primaries; the mix's flags are checked.
func TestGenerateAllOfAndMixFlags(t *testing.T) {
	t.Parallel()
	script := map[int64][]string{}
	for s := int64(0); s < 4; s++ {
		script[s] = []string{"no file, sorry"}
	}
	run := func(more ...string) ([]generator.Record, *chattest.Server) {
		srv := chattest.New(t, chattest.SeedScript{Answers: script, Missing: "no answer for seed %d round %d"}.Answer)
		out := t.TempDir()
		args := append([]string{"generate", "--capability", "mail.reply,files.extract,calendar.schedule", "--count", "4", "--out", out, "--corpus", genCorpus,
			"--model", "m", "--base-url", srv.URL + "/v1", "--jobs", "1", "--max-rounds", "1"}, more...)
		code, _, stderr := genMain(t, args...)
		require.Equal(t, 1, code, stderr)
		return readRecords(t, out), srv
	}
	recs, srv := run("--all-of")
	for _, r := range recs {
		require.Equal(t, []string{"mail.reply", "files.extract", "calendar.schedule"}, r.Capabilities)
		require.Empty(t, r.Primary)
	}
	prompt, _ := srv.Requests()[0].Messages[1]["content"].(string)
	require.Contains(t, prompt, "- `calendar.schedule`: ")
	require.NotContains(t, prompt, "mainly about")

	recs, _ = run("--mix", "files.extract=3,calendar.schedule=0", "--combine", "0")
	var got []string
	for _, r := range recs {
		require.Equal(t, []string{r.Primary}, r.Capabilities, "--combine 0: the primary alone")
		got = append(got, r.Primary)
	}
	require.Equal(t, []string{"files.extract", "mail.reply", "files.extract", "files.extract"}, got)

	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--all-of", "--mix", "mail.reply=2"}, "--all-of and --mix cannot be used together"},
		{[]string{"--mix", "mail.reply"}, `--mix: "mail.reply" is not name=weight`},
		{[]string{"--mix", "mail.reply=-1"}, `--mix: "mail.reply=-1" is not name=weight`},
		{[]string{"--mix", "calendar.schedule=2"}, `mix: "calendar.schedule" is not one of the capabilities asked for (mail.reply)`},
		{[]string{"--combine", "-1"}, "--combine: -1 is negative"},
		{[]string{"--budget-tokens", "-5"}, "--budget-tokens: -5 is negative"},
	} {
		args := append([]string{"generate", "--capability", "mail.reply", "--out", out, "--corpus", genCorpus, "--model", "m", "--base-url", "http://127.0.0.1:9/v1"}, tc.args...)
		code, _, stderr := genMain(t, args...)
		require.Equal(t, 2, code, tc.args)
		require.Contains(t, stderr, tc.want)
	}
}
