package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Ctrl-C in the middle of a model episode leaves a valid partial trace: the events so far and
// an end event with the error, at FILE.partial (FILE itself is never half-written).
func TestRunInterruptLeavesPartialTrace(t *testing.T) {
	modelEnv(t)
	release := make(chan struct{})
	calls := 0
	f := newChatFake(t, func(msgs []map[string]any) string {
		calls++
		if calls == 1 {
			return chatCalls("", chatCall("c1", "fs_list", `{"path":"/"}`))
		}
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
		<-release // hold the request until the agent has given up on it
		return chatSay("too late")
	})
	t.Cleanup(func() { close(release) })
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	tr := filepath.Join(dir, "copy.jsonl")
	code, _, errs := cli(t, "run", filepath.Join(dir, "copy.star"), "--agent", "openai", "--model", "m",
		"--base-url", f.url(), "--retries", "0", "--trace", tr)
	assert.Equal(t, 1, code, errs)
	assert.Contains(t, errs, "interrupted")
	_, err := os.Stat(tr)
	assert.True(t, os.IsNotExist(err), "the trace is not renamed into place")
	fh, err := os.Open(tr + ".partial")
	require.NoError(t, err)
	defer fh.Close()
	events, err := trace.Read(fh)
	require.NoError(t, err, "the partial trace is complete enough to read")
	end := events[len(events)-1]
	assert.Equal(t, "end", end.Kind)
	assert.False(t, end.Bool("passed"))
	require.NotNil(t, end.Value("error"))
	assert.Contains(t, jsonv.MustEncode(end.Value("error")), `"code":"interrupted"`, "interrupted, not failed")
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, e.Kind)
	}
	assert.Contains(t, kinds, "result", "the call before the interrupt is kept")
}
