package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A model rollout of copy-note, one sample at a time, in which every second episode refuses:
// scores 1, 0, 1, 0 from one start state. export rl keeps the lines in the order of the traces
// and adds the advantages of the group the four form.
func TestExportRLAdvantages(t *testing.T) {
	modelEnv(t)
	var episodes atomic.Int64
	f := newChatFake(t, func(msgs []map[string]any) string {
		if len(toolMessages(msgs)) == 0 && episodes.Add(1)%2 == 0 {
			return chatSay("I would rather not.")
		}
		return copyNotePolicy(msgs)
	})
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", corpus, "--model", "fake-model", "--base-url", f.url(),
		"--samples", "4", "--jobs", "1", "--out", out)
	require.Equal(t, 1, code, "two samples do not pass: %s%s", stdout, errs)

	export := func(args ...string) []map[string]any {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "rl.jsonl")
		code, stdout, errs := cli(t, append([]string{"export", "rl", out, "--out", dst, "--corpus", corpus}, args...)...)
		require.Equal(t, 0, code, "%s%s", stdout, errs)
		assert.Contains(t, stdout, "wrote 4 episodes")
		return readLines(t, dst)
	}
	plain := export()
	require.Len(t, plain, 4)
	for i, line := range plain {
		assert.Equal(t, filepath.Join(out, "copy-note", []string{"0", "1", "2", "3"}[i]+".jsonl"), line["trace"])
		assert.Equal(t, []any{1.0, 0.0, 1.0, 0.0}[i], line["reward"], "sample %d", i)
		assert.Equal(t, plain[0]["group"], line["group"], "one seed, one start state: one group")
		start := readLines(t, line["trace"].(string))[0]
		assert.Equal(t, start["state"], line["start_state"])
		assert.True(t, strings.HasSuffix(line["group"].(string), "/s:"+strings.TrimPrefix(start["state"].(string), "sha256:")[:12]), line["group"])
		assert.NotContains(t, line, "advantage")
	}

	// scores 1, 0, 1, 0: mean 0.5, population std 0.5: ±0.5 / (0.5 + 1e-6) = ±0.999998000004
	for i, line := range export("--advantage", "grpo") {
		assert.Equal(t, plain[i]["trace"], line["trace"], "the order of the traces")
		assert.InDelta(t, []float64{1, -1, 1, -1}[i]*0.999998000004, line["advantage"], 1e-9, "line %d", i)
	}
	// gdpo: only completion differs (1, 0, 1, 0): sums ±0.999998000004, then over the export (mean
	// 0, std 0.999998000004): ±0.999998000004 / 0.999999000004 = ±0.999998999999
	for i, line := range export("--advantage", "gdpo") {
		assert.InDelta(t, []float64{1, -1, 1, -1}[i]*0.999998999999, line["advantage"], 1e-9, "line %d", i)
	}
	// passed as the reward: 1.0 or 0.0
	for i, line := range export("--reward", "passed") {
		assert.Equal(t, []any{1.0, 0.0, 1.0, 0.0}[i], line["reward"])
	}
	// per turn: the single turn has no verifier of its own, so it gets the episode's reward, and
	// every message but the system one is in turn 0
	for i, line := range export("--credit", "turn", "--advantage", "grpo") {
		assert.Equal(t, []any{nil}, line["turn_rewards"])
		assert.Equal(t, []any{line["reward"]}, line["turn_credit"])
		require.Len(t, line["turn_advantages"], 1)
		assert.InDelta(t, []float64{1, -1, 1, -1}[i]*0.999998000004, line["turn_advantages"].([]any)[0], 1e-9)
		turns := line["message_turns"].([]any)
		msgs := line["messages"].([]any)
		require.Len(t, turns, len(msgs))
		assert.Nil(t, turns[0])
		assert.Equal(t, "system", msgs[0].(map[string]any)["role"])
		for j := 1; j < len(turns); j++ {
			assert.Equal(t, 0.0, turns[j], "message %d", j)
		}
		assert.NotContains(t, line, "advantage")
	}
}

// The oracle over the coin with --vary-setup: samples whose coin differs start from different
// states and are in different groups; samples with the same coin share one.
func TestExportRLGroupsByStartState(t *testing.T) {
	t.Parallel()
	corpus := writeFiles(t, map[string]string{"capabilities.star": rolloutCaps, "coin.star": coinTask})
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, errs := cli(t, "rollout", corpus, "--samples", "6", "--vary-setup", "--out", out)
	require.Equal(t, 1, code, "some coins fall wrong: %s%s", stdout, errs)
	dst := filepath.Join(t.TempDir(), "rl.jsonl")
	code, stdout, errs = cli(t, "export", "rl", out, "--out", dst, "--corpus", corpus, "--advantage", "grpo")
	require.Equal(t, 0, code, "%s%s", stdout, errs)
	lines := readLines(t, dst)
	require.Len(t, lines, 6)
	groupOf := map[string]string{}
	states := map[string]bool{}
	for _, line := range lines {
		state := line["start_state"].(string)
		states[state] = true
		if g, ok := groupOf[state]; ok {
			assert.Equal(t, g, line["group"], "one start state, one group")
		}
		groupOf[state] = line["group"].(string)
		// the oracle does the same from the same state: nothing to tell apart within a group
		assert.Equal(t, 0.0, line["advantage"])
	}
	require.Greater(t, len(states), 1, "the coin differs between set-ups")
	groups := map[string]bool{}
	for _, g := range groupOf {
		groups[g] = true
	}
	assert.Len(t, groups, len(states), "two start states are two groups")
}

// Values that mean nothing are usage errors (exit 2, one line), before anything is written, and
// so are the flags of rl given to sft.
func TestExportRLUsage(t *testing.T) {
	t.Parallel()
	corpus := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	out := filepath.Join(t.TempDir(), "o")
	code, _, errs := cli(t, "rollout", corpus, "--out", out)
	require.Equal(t, 0, code, errs)
	dst := filepath.Join(t.TempDir(), "rl.jsonl")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"rl", "--reward", "lots"}, `--reward: "lots" is not one of score, completion, passed`},
		{[]string{"rl", "--advantage", "ppo"}, `--advantage: "ppo" is not one of none, grpo, gdpo`},
		{[]string{"rl", "--credit", "token"}, `--credit: "token" is not one of episode, turn`},
		{[]string{"rl", "--credit", "turn", "--reward", "passed"}, "--reward passed has no value per turn"},
		{[]string{"sft", "--advantage", "grpo"}, "--advantage: only for export rl"},
		{[]string{"sft", "--credit", "turn"}, "--credit: only for export rl"},
	} {
		args := append([]string{"export", c.args[0], out, "--out", dst, "--corpus", corpus}, c.args[1:]...)
		code, _, errs := cli(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, errs, c.msg, "%v", args)
		assert.Equal(t, 1, strings.Count(errs, "\n"), "%v: %q", args, errs)
	}
	entries, err := os.ReadDir(filepath.Dir(dst))
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written, no temporary file left")
}
