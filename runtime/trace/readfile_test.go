package trace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A trace over limits.TraceFile is refused before it is read, with an error that says so; one
// at the limit is read.
func TestReadFileRefusesATooLargeTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(limits.TraceFile+1)) // sparse: no disk is used
	require.NoError(t, f.Close())
	_, err = trace.ReadFile(big)
	require.ErrorIs(t, err, trace.ErrTooLarge)
	assert.EqualError(t, err, "the trace is over the 128 MiB limit of a trace that replay, export and report read")

	_, err = trace.ReadFile(filepath.Join(dir, "missing.jsonl"))
	assert.EqualError(t, err, "no such file or directory")
	small := filepath.Join(dir, "small.jsonl")
	require.NoError(t, os.WriteFile(small, []byte("{}\n"), 0o644))
	data, err := trace.ReadFile(small)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(data))
}
