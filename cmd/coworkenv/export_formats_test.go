package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readJSONFile decodes a JSON file.
func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v), path)
	return v
}

// folderEntries are the names in a folder, sorted.
func folderEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// oracleRollout runs the oracle over the rollout corpus, two samples a task, and returns the
// corpus and the rollout's folder.
func oracleRollout(t *testing.T) (corpus, out string) {
	t.Helper()
	corpus = rolloutCorpus(t)
	out = filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", corpus, "--samples", "2", "--out", out)
	require.Equal(t, 1, code, "the coin's samples do not pass: %s%s", stdout, errs)
	return corpus, out
}

// modelTrace runs copy-note with a scripted model and returns the trace and the model's URL.
func modelTrace(t *testing.T) (trace, url string) {
	t.Helper()
	modelEnv(t)
	f := newChatFake(t, copyNotePolicy)
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	trace = filepath.Join(dir, "copy.jsonl")
	code, out, errs := cli(t, "run", filepath.Join(dir, "copy.star"), "--agent", "openai", "--model", "fake-model",
		"--base-url", f.url(), "--temperature", "0", "--max-tokens", "500", "--trace", trace)
	require.Equal(t, 0, code, "%s%s", out, errs)
	return trace, f.url()
}

// export atif writes a folder laid out like a Harbor job: one trial folder per episode holding
// agent/trajectory.json, the episode's trajectory with its reward and the oracle's steps marked.
// A second export replaces the folder whole; a folder holding other files is refused.
func TestExportATIF(t *testing.T) {
	t.Parallel()
	corpus, out := oracleRollout(t)
	root := t.TempDir()
	dst := filepath.Join(root, "jobs", "oracle")
	code, stdout, errs := cli(t, "export", "atif", out, "--out", dst, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 6 episodes to "+dst)
	trials := []string{"coin__0", "coin__1", "copy-note__0", "copy-note__1", "two-steps__0", "two-steps__1"}
	require.Equal(t, trials, folderEntries(t, dst))
	for _, trial := range trials {
		assert.Equal(t, []string{"agent"}, folderEntries(t, filepath.Join(dst, trial)))
		path := filepath.Join(dst, trial, "agent", "trajectory.json")
		assert.Equal(t, []string{"trajectory.json"}, folderEntries(t, filepath.Dir(path)))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(b, []byte("{\n  \"schema_version\": \"ATIF-v1.7\",\n")), "indented as Harbor writes it: %.60s", b)
		assert.True(t, bytes.HasSuffix(b, []byte("}\n")))
		tr := readJSONFile(t, path)

		task, sample, _ := strings.Cut(trial, "__")
		source := filepath.Join(out, task, sample+".jsonl")
		assert.Equal(t, filepath.ToSlash(source), tr["session_id"])
		end, turnScores := traceEnd(t, source)
		extra := tr["extra"].(map[string]any)
		assert.Equal(t, task, extra["task"])
		final := tr["final_metrics"].(map[string]any)["extra"].(map[string]any)
		assert.Equal(t, end["score"], final["reward"], trial)
		assert.Equal(t, end["passed"], final["passed"], trial)
		assert.Equal(t, turnScores, final["turn_rewards"], trial)
		assert.Len(t, extra["checks"], len(end["checks"].([]any)), trial)
		assert.Equal(t, "oracle", tr["agent"].(map[string]any)["name"])

		steps := tr["steps"].([]any)
		first := steps[0].(map[string]any)
		assert.Equal(t, "system", first["source"])
		assert.Equal(t, map[string]any{"rebuilt": true}, first["extra"], "the oracle's system prompt is rebuilt from the task")
		users := 0
		for i, s := range steps {
			step := s.(map[string]any)
			assert.EqualValues(t, i+1, step["step_id"])
			switch step["source"] {
			case "user":
				users++
				assert.Equal(t, "2026-01-05T09:00:00Z"[:11], step["timestamp"].(string)[:11])
			case "agent":
				assert.EqualValues(t, 0, step["llm_call_count"], "%s: the oracle made no inference", trial)
				assert.Equal(t, true, step["extra"].(map[string]any)["oracle"], trial)
			}
		}
		if task == "two-steps" {
			assert.Equal(t, 2, users)
		} else {
			assert.Equal(t, 1, users)
		}
	}
	copyNote := readJSONFile(t, filepath.Join(dst, "copy-note__0", "agent", "trajectory.json"))
	steps := copyNote["steps"].([]any)
	assert.Equal(t, modelagent.DefaultSystemPrompt("priya@halden.example", "2026-01-05T09:00:00Z"), steps[0].(map[string]any)["message"])
	call := steps[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"tool_call_id": "call_1", "function_name": "fs_read", "arguments": map[string]any{"path": "/notes/todo.txt"}}, call)
	obs := steps[2].(map[string]any)["observation"].(map[string]any)["results"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"source_call_id": "call_1", "content": "call the bank"}, obs)

	// a second export replaces the folder whole and leaves nothing beside it
	require.NoError(t, os.RemoveAll(filepath.Join(out, "copy-note")))
	code, stdout, errs = cli(t, "export", "atif", out, "--out", dst, "--corpus", corpus)
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Equal(t, []string{"coin__0", "coin__1", "two-steps__0", "two-steps__1"}, folderEntries(t, dst))
	assert.Equal(t, []string{"oracle"}, folderEntries(t, filepath.Dir(dst)), "no temporary folder is left")

	// a folder with other files is never replaced
	other := filepath.Join(root, "mine")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("keep"), 0o644))
	code, stdout, errs = cli(t, "export", "atif", out, "--out", other, "--corpus", corpus)
	usageError(t, code, stdout, errs, "--out")
	assert.Contains(t, errs, "notes.txt")
	assert.Equal(t, []string{"notes.txt"}, folderEntries(t, other))
	// nor the rollout's folder, even when it is not the input itself
	code, stdout, errs = cli(t, "export", "atif", filepath.Join(out, "coin"), "--out", out, "--corpus", corpus)
	usageError(t, code, stdout, errs, "--out")
	assert.FileExists(t, filepath.Join(out, "coin", "0.jsonl"))

	// without the task files the traces cannot be verified; --no-verify exports them as they are,
	// without a system message
	require.NoError(t, os.RemoveAll(filepath.Join(corpus, "tasks")))
	code, stdout, _ = cli(t, "export", "atif", out, "--out", dst, "--corpus", corpus)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "wrote 0 episodes")
	assert.Empty(t, folderEntries(t, dst))
	code, stdout, errs = cli(t, "export", "atif", out, "--out", dst, "--no-verify")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 4 episodes")
	tr := readJSONFile(t, filepath.Join(dst, "two-steps__1", "agent", "trajectory.json"))
	assert.Equal(t, "user", tr["steps"].([]any)[0].(map[string]any)["source"])
}

// A model's episode in ATIF: the model's name, one inference per agent step with its token
// usage.
func TestExportATIFFromModel(t *testing.T) {
	tr, _ := modelTrace(t)
	dst := filepath.Join(t.TempDir(), "job")
	code, stdout, errs := cli(t, "export", "atif", tr, "--out", dst, "--corpus", filepath.Dir(tr))
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	require.Equal(t, []string{"copy-note__copy"}, folderEntries(t, dst))
	traj := readJSONFile(t, filepath.Join(dst, "copy-note__copy", "agent", "trajectory.json"))
	agent := traj["agent"].(map[string]any)
	assert.Equal(t, "openai", agent["name"])
	assert.Equal(t, "fake-model", agent["model_name"])
	var sources []string
	for _, s := range traj["steps"].([]any) {
		step := s.(map[string]any)
		sources = append(sources, step["source"].(string))
		if step["source"] == "agent" {
			assert.EqualValues(t, 1, step["llm_call_count"])
			assert.EqualValues(t, 100, step["metrics"].(map[string]any)["prompt_tokens"])
			assert.NotContains(t, step["extra"], "oracle")
		}
	}
	assert.Equal(t, []string{"system", "user", "agent", "agent", "agent"}, sources)
	final := traj["final_metrics"].(map[string]any)
	assert.EqualValues(t, 300, final["total_prompt_tokens"])
	assert.EqualValues(t, 60, final["total_completion_tokens"])
	assert.Equal(t, 1.0, final["extra"].(map[string]any)["reward"])
}

// export inspect writes one Inspect eval log: a sample per episode (the task's id, the sample's
// epoch) scored with the trace's reward, the model's messages in Inspect's shapes, and the
// eval's model and settings from the traces.
func TestExportInspect(t *testing.T) {
	corpus, out := oracleRollout(t)
	tr, url := modelTrace(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "2026-01-05T09-00-00_coworkenv.json")
	require.NoError(t, os.WriteFile(dst, []byte("old"), 0o644))

	// the model's trace alone: the eval is the model's
	code, stdout, errs := cli(t, "export", "inspect", tr, "--out", dst, "--corpus", filepath.Dir(tr))
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	log := readJSONFile(t, dst)
	spec := log["eval"].(map[string]any)
	assert.Equal(t, "copy-note", spec["task"])
	assert.Equal(t, "fake-model", spec["model"])
	assert.Equal(t, url, spec["model_base_url"])
	assert.Equal(t, map[string]any{"temperature": 0.0, "max_tokens": 500.0}, spec["model_generate_config"])
	assert.Equal(t, "2026-01-05T09:00:00Z", spec["created"])
	samples := log["samples"].([]any)
	require.Len(t, samples, 1)
	msgs := samples[0].(map[string]any)["messages"].([]any)
	a1 := msgs[2].(map[string]any)
	assert.Equal(t, "fake-model", a1["model"])
	assert.Equal(t, []any{map[string]any{"id": "c1", "function": "fs_read", "arguments": map[string]any{"path": "/notes/todo.txt"}, "type": "function"}}, a1["tool_calls"])
	assert.Equal(t, map[string]any{"role": "tool", "content": "call the bank", "tool_call_id": "c1", "function": "fs_read"}, msgs[3])
	assert.Equal(t, map[string]any{"fake-model": map[string]any{"input_tokens": 300.0, "output_tokens": 60.0, "total_tokens": 360.0}},
		log["stats"].(map[string]any)["model_usage"])

	// the rollout and the model's trace: one log of every episode
	code, stdout, errs = cli(t, "export", "inspect", out, tr, "--out", dst, "--corpus", corpus)
	// the model's task file is not in the rollout's corpus: it is found beside its trace
	assert.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 7 episodes")
	code, stdout, errs = cli(t, "export", "inspect", out, tr, "--out", dst, "--no-verify")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	assert.Contains(t, stdout, "wrote 7 episodes")
	log = readJSONFile(t, dst)
	assert.Equal(t, 2.0, log["version"])
	assert.Equal(t, "success", log["status"])
	spec = log["eval"].(map[string]any)
	assert.Equal(t, "coworkenv", spec["task"])
	assert.Equal(t, "coworkenv/mixed", spec["model"])
	samples = log["samples"].([]any)
	require.Len(t, samples, 7)
	seen := map[string]bool{}
	sum := 0.0
	for _, s := range samples {
		sample := s.(map[string]any)
		key := fmt.Sprintf("%v#%v", sample["id"], sample["epoch"])
		assert.False(t, seen[key], "sample %s twice", key)
		seen[key] = true
		path := sample["metadata"].(map[string]any)["trace"].(string)
		end, _ := traceEnd(t, filepath.FromSlash(path))
		score := sample["scores"].(map[string]any)["coworkenv"].(map[string]any)
		assert.Equal(t, end["score"], score["value"], path)
		assert.Equal(t, end["passed"], score["metadata"].(map[string]any)["passed"], path)
		sum += end["score"].(float64)
		if end["passed"] == false {
			assert.Contains(t, score["explanation"], "failed ", path)
		}
	}
	for _, key := range []string{"coin#1", "coin#2", "copy-note#1", "copy-note#2", "copy-note#3", "two-steps#1", "two-steps#2"} {
		assert.True(t, seen[key], key)
	}
	metrics := log["results"].(map[string]any)["scores"].([]any)[0].(map[string]any)["metrics"].(map[string]any)
	assert.InDelta(t, sum/7, metrics["mean"].(map[string]any)["value"].(float64), 1e-9)
	assert.Equal(t, []string{filepath.Base(dst)}, folderEntries(t, dir), "replaced atomically, no temporary file left")

	// the log must be a .json file, the format Inspect reads by that name
	code, stdout, errs = cli(t, "export", "inspect", out, "--out", filepath.Join(dir, "log.eval"), "--no-verify")
	usageError(t, code, stdout, errs, "--out")
	assert.Equal(t, []string{filepath.Base(dst)}, folderEntries(t, dir))
}
