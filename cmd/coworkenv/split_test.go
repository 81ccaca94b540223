package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/split"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noFamilyCrosses checks, from the files' own declarations (not from the split's names), that
// files that share a declared family, a scenario or a narrow helper are in one split; it returns
// the number of files per split.
func noFamilyCrosses(t *testing.T, c *dsl.Corpus, ratio [3]float64) map[string]int {
	t.Helper()
	files, err := splitFiles(c)
	require.NoError(t, err)
	got := split.Assign(files, split.Config{Ratio: ratio})
	loaders := map[string]int{}
	for _, f := range files {
		for _, h := range f.Helpers {
			loaders[h]++
		}
	}
	limit := max(2, split.DefaultCommonShare*float64(len(files)))
	for i, a := range files {
		for _, b := range files[i+1:] {
			why := ""
			switch {
			case a.Family != "" && a.Family == b.Family:
				why = "family " + a.Family
			case a.Scenario != "" && a.Scenario == b.Scenario:
				why = "scenario " + a.Scenario
			}
			for _, h := range a.Helpers {
				for _, g := range b.Helpers {
					if h == g && float64(loaders[h]) <= limit {
						why = "helper " + h
					}
				}
			}
			if why != "" {
				assert.Equal(t, got[a.Rel].Split, got[b.Rel].Split, "%s and %s share %s", a.Rel, b.Rel, why)
			}
		}
	}
	count := map[string]int{}
	for _, f := range files {
		count[got[f.Rel].Split]++
	}
	return count
}

// The built-in corpus splits with no family across splits, and every split gets files.
func TestBuiltinCorpusSplit(t *testing.T) {
	t.Parallel()
	count := noFamilyCrosses(t, corpus.Open(), split.DefaultRatio)
	for _, s := range split.Names {
		assert.Positive(t, count[s], "%s: %v", s, count)
	}
}

// A corpus of generated files: two files drawn from one scenario (the same seed in their
// headers, from two generation runs) are of one family, and stay in one split.
func TestGeneratedCorpusSplit(t *testing.T) {
	t.Parallel()
	golden := filepath.Join("..", "..", "generator", "testdata", "cassette", "golden")
	files := map[string]string{}
	for _, name := range []string{"loan-return-date.star", "rabies-vaccine-stock.star"} {
		data, err := os.ReadFile(filepath.Join(golden, name))
		require.NoError(t, err)
		files[name] = string(data)
		// the same scenario again, from a second run: another task name, the same header seed
		files["again-"+name] = strings.Replace(string(data), "# coworkenv generate · attempt", "# coworkenv generate · attempt 1\n# was attempt", 1)
	}
	dir := writeFiles(t, files)
	c, err := dsl.OpenStandalone(dir, dir, corpus.Taxonomy())
	require.NoError(t, err)
	fs, err := splitFiles(c)
	require.NoError(t, err)
	scen := map[string]string{}
	for _, f := range fs {
		scen[f.Rel] = f.Scenario
	}
	require.NotEmpty(t, scen["loan-return-date.star"])
	assert.Equal(t, scen["loan-return-date.star"], scen["again-loan-return-date.star"])
	assert.NotEqual(t, scen["loan-return-date.star"], scen["rabies-vaccine-stock.star"])
	count := noFamilyCrosses(t, c, [3]float64{0.5, 0, 0.5})
	assert.Equal(t, map[string]int{"train": 2, "test": 2}, count)
}

// splitTask is copy-note under another name, declaring a family when family is not "".
func splitTask(name, family string) string {
	src := strings.Replace(copyNoteTask, `name = "copy-note"`, `name = "`+name+`"`, 1)
	if family != "" {
		src = "# family: " + family + "\n" + src
	}
	return src
}

// The split flags: list shows and keeps a split, rollout records it in every trace, validate
// checks only its files, export tasks records it in extra_info, and export sft and rl refuse the
// test split unless --allow-test.
func TestSplitFlags(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.star": splitTask("alpha", "pair"), "b.star": splitTask("beta", "pair"), "c.star": splitTask("gamma", ""),
	})
	ratio := []string{"--split-ratio", "0.5,0,0.5"}
	code, stdout, errs := cli(t, append([]string{"list", dir}, ratio...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "[train: family pair]")
	assert.Contains(t, stdout, "[test: file c.star]")
	code, stdout, _ = cli(t, append([]string{"list", dir, "--split", "train"}, ratio...)...)
	require.Equal(t, 0, code)
	assert.Equal(t, 2, strings.Count(stdout, "\n"), stdout)
	assert.NotContains(t, stdout, "gamma")

	code, stdout, errs = cli(t, append([]string{"validate", dir, "--split", "test", "--verbose"}, ratio...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "c.star")
	assert.NotContains(t, stdout, "a.star")

	runs := filepath.Join(t.TempDir(), "runs")
	code, stdout, errs = cli(t, append([]string{"rollout", dir, "--agent", "oracle", "--out", runs}, ratio...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	for task, want := range map[string]string{"alpha": "train", "beta": "train", "gamma": "test"} {
		data, err := os.ReadFile(filepath.Join(runs, task, "0.jsonl"))
		require.NoError(t, err)
		var start map[string]any
		require.NoError(t, json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &start))
		sp, _ := start["split"].(map[string]any)
		require.NotNil(t, sp, task)
		assert.Equal(t, want, sp["name"], task)
		assert.Equal(t, "0.5,0,0.5", sp["ratio"])
	}
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	code, _, errs = cli(t, "export", "sft", runs, "--include-oracle", "--corpus", dir, "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "task gamma is in the test split")
	assert.NoFileExists(t, out)
	code, _, errs = cli(t, "export", "rl", runs, "--corpus", dir, "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "test split")
	code, stdout, errs = cli(t, "export", "sft", runs, "--include-oracle", "--corpus", dir, "--out", out, "--allow-test")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 3 episodes")
	assert.Contains(t, stdout, "by split: 2 train, 1 test")
	for _, row := range readLines(t, out) {
		assert.NotContains(t, row, "split", "an sft row keeps the shape trainers load")
	}
	rl := filepath.Join(t.TempDir(), "rl.jsonl")
	code, stdout, errs = cli(t, "export", "rl", runs, "--corpus", dir, "--out", rl, "--allow-test")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	splits := map[any]int{}
	for _, row := range readLines(t, rl) {
		splits[row["split"]]++
	}
	assert.Equal(t, map[any]int{"train": 2, "test": 1}, splits)
	code, stdout, errs = cli(t, "export", "sft", filepath.Join(runs, "alpha"), filepath.Join(runs, "beta"), "--include-oracle", "--corpus", dir, "--out", out)
	require.Equal(t, 0, code, "%s%s", stdout, errs)

	// in this process (the worker's path is the one above) the traces record the same
	here := filepath.Join(t.TempDir(), "here")
	code, stdout, errs = cli(t, append([]string{"rollout", dir, "--agent", "oracle", "--out", here, "--in-process"}, ratio...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	for task, want := range map[string]string{"alpha": "train", "gamma": "test"} {
		sp := traceStart(t, filepath.Join(here, task, "0.jsonl")).Split
		require.NotNil(t, sp, task)
		assert.Equal(t, want, sp.Name, task)
	}

	test := filepath.Join(t.TempDir(), "test")
	code, stdout, errs = cli(t, append([]string{"rollout", dir, "--agent", "oracle", "--out", test, "--split", "test"}, ratio...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	entries, err := os.ReadDir(test)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"gamma", "rollout.json"}, names)

	tasks := filepath.Join(t.TempDir(), "tasks.jsonl")
	code, stdout, errs = cli(t, append([]string{"export", "tasks", dir, "--out", tasks, "--split", "train"}, ratio...)...)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	rows := readLines(t, tasks)
	require.Len(t, rows, 2)
	for _, row := range rows {
		extra := row["extra_info"].(map[string]any)
		assert.Equal(t, "train", extra["split"])
		assert.Equal(t, "family pair", extra["family"])
	}

	code, _, errs = cli(t, "list", dir, "--split", "holdout")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "want train, dev or test")
	code, _, errs = cli(t, "list", dir, "--split-ratio", "1,1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "TRAIN,DEV,TEST")
}

// A family is declared by a header line or in a task's metadata, read without running the file.
func TestDeclaredFamilies(t *testing.T) {
	t.Parallel()
	withMeta := strings.Replace(splitTask("delta", ""), `max_calls_per_turn = 6,`, `max_calls_per_turn = 6,
    metadata = {"traits": ["x"], "family": "pair"},`, 1)
	require.Contains(t, withMeta, `"family": "pair"`)
	assert.Equal(t, "pair", metadataFamily("d.star", []byte(withMeta)))
	assert.Equal(t, "", metadataFamily("c.star", []byte(splitTask("gamma", ""))))
	assert.Equal(t, "", metadataFamily("bad.star", []byte("task(")))
	dir := writeFiles(t, map[string]string{"a.star": splitTask("alpha", "pair"), "d.star": withMeta, "c.star": splitTask("gamma", "")})
	c, err := dsl.OpenStandalone(dir, dir, corpus.Taxonomy())
	require.NoError(t, err)
	files, err := splitFiles(c)
	require.NoError(t, err)
	got := split.Assign(files, split.Config{Ratio: [3]float64{1, 0, 1}})
	assert.Equal(t, got["a.star"], got["d.star"])
	assert.Equal(t, "family pair", got["d.star"].Family)
}

// The evaluation exports record the split of each episode whose trace records one.
func TestSplitInEvaluationExports(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.star": splitTask("alpha", ""), "c.star": splitTask("gamma", "")})
	runs := filepath.Join(t.TempDir(), "runs")
	code, stdout, errs := cli(t, "rollout", dir, "--agent", "oracle", "--out", runs, "--split-ratio", "0.5,0,0.5")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	atif := filepath.Join(t.TempDir(), "atif")
	code, stdout, errs = cli(t, "export", "atif", runs, "--corpus", dir, "--out", atif)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "by split: 1 train, 1 test")
	entries, err := os.ReadDir(atif)
	require.NoError(t, err)
	splits := map[string]int{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(atif, e.Name(), "agent", "trajectory.json"))
		require.NoError(t, err)
		var traj map[string]any
		require.NoError(t, json.Unmarshal(data, &traj))
		if extra, ok := traj["extra"].(map[string]any); ok {
			s, _ := extra["split"].(string)
			splits[s]++
		}
	}
	assert.Equal(t, map[string]int{"train": 1, "test": 1}, splits)

	log := filepath.Join(t.TempDir(), "log.json")
	code, stdout, errs = cli(t, "export", "inspect", runs, "--corpus", dir, "--out", log)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	var eval struct {
		Samples []struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"samples"`
	}
	require.NoError(t, json.Unmarshal(data, &eval))
	splits = map[string]int{}
	for _, s := range eval.Samples {
		sp, _ := s.Metadata["split"].(string)
		splits[sp]++
	}
	assert.Equal(t, map[string]int{"train": 1, "test": 1}, splits)
}

// report --compare wants two rollout folders.
func TestReportCompareUsage(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"a.star": splitTask("alpha", "")})
	out := filepath.Join(t.TempDir(), "cmp.html")
	code, _, errs := cli(t, "report", "--compare", dir, "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "want two rollout folders")
	code, _, errs = cli(t, "report", "--compare", filepath.Join(dir, "a.star"), dir, "--out", out)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--compare:")
	assert.NoFileExists(t, out)
}
