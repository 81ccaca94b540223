package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mistyped flag or command is answered with the nearest one; a word near none gets none.
func TestFlagTypoSuggestsTheNearest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rollout", "--sample", "2"}, "coworkenv rollout: flag provided but not defined: -sample (did you mean --samples?)"},
		{[]string{"export", "sft", "runs", "--out", "x.jsonl", "--inclde-oracle"}, "coworkenv export: flag provided but not defined: -inclde-oracle (did you mean --include-oracle?)"},
		{[]string{"export", "sft", "runs", "--out", "x.jsonl", "--include"}, "(did you mean --include-oracle?)"},
		{[]string{"validate", "--jsno"}, "flag provided but not defined: -jsno (did you mean --json?)"},
		{[]string{"serve", "--adr", "127.0.0.1:0"}, "(did you mean --addr?)"},
		{[]string{"validat"}, `unknown command "validat" (did you mean validate?)`},
	} {
		code, stdout, stderr := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s%s", c.args, stdout, stderr)
		assert.Contains(t, stderr, c.want, c.args)
	}
	code, _, stderr := cli(t, "validate", "--frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "flag provided but not defined: -frobnicate\n", "no flag is near: no suggestion")
	code, _, stderr = cli(t, "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unknown command "frobnicate" (commands: `)
}

func TestNearest(t *testing.T) {
	t.Parallel()
	words := []string{"report", "replay", "retries", "samples", "seed"}
	for s, want := range map[string]string{
		"sampels": "samples",
		"sed":     "seed",
		"rep":     "", // the start of three words
		"rpelay":  "replay",
		"xyz":     "",
		"REPORT":  "report",
	} {
		assert.Equal(t, want, nearest(s, words), s)
	}
	assert.Equal(t, 3, editDistance("kitten", "sitting"))
	assert.Equal(t, 0, editDistance("", ""))
}

// replay of a file that is not a trace says so, rather than that its JSON is invalid.
func TestReplayNotATrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.md")
	require.NoError(t, os.WriteFile(p, []byte("# notes\n"), 0o644))
	code, stdout, stderr := cli(t, "replay", p)
	assert.Equal(t, 1, code, stdout+stderr)
	assert.Contains(t, stdout, p+": error: not a trace (its first line is not a coworkenv start event): line 1: invalid JSON")
}

// serve on a port in use could not run as asked: exit status 2, the address named (it was 1).
func TestServeBusyPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	addr := ln.Addr().String()
	code, stdout, stderr := cli(t, "serve", "--addr", addr)
	assert.Equal(t, 2, code, stdout+stderr)
	assert.Equal(t, "coworkenv serve: --addr "+addr+": bind: address already in use\n", stderr)
	assert.Empty(t, stdout)
}

// An export of traces that are all unreadable keeps no episode: said with the reason, exit 1.
func TestExportNothingReadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("# notes\n"), 0o644))
	out := filepath.Join(dir, "out", "rl.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	code, stdout, stderr := cli(t, "export", "rl", p, "--out", out)
	assert.Equal(t, 1, code, stdout+stderr)
	assert.Contains(t, stderr, "skipping "+p+": not a trace")
	assert.Contains(t, stderr, "no episode written to "+out+": every trace was left out (1 unreadable)")
}
