package trace_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/format1 holds traces the engine recorded before the state hash changed (trace format
// 1, workspace.HashFormat1), with their task files: they still replay, their hashes checked the
// old way. These tests are about the format: the tool schemas the start event records are made
// the current ones first (withCurrentTools), so that a built-in tool's schema changed since (a
// parameter added) does not count against them; a replay compares the schemas (trace_test.go).
func format1(t *testing.T, name string) (*fixture, []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "format1", name+".star"))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join("testdata", "format1", name+".jsonl"))
	require.NoError(t, err)
	f := newFixture(string(src))
	return f, withCurrentTools(t, f, data)
}

// withCurrentTools replaces the tool schemas of a trace's start event with the task's current ones.
func withCurrentTools(t *testing.T, f *fixture, data []byte) []byte {
	t.Helper()
	var schemas []jsonv.Value
	for _, s := range f.task(t).Tools {
		schemas = append(schemas, s.Schema())
	}
	from := bytes.Index(data, []byte(`"tools":`))
	to := bytes.Index(data, []byte(`,"state":"`))
	require.True(t, from > 0 && to > from && to < bytes.IndexByte(data, '\n'), "the start event has its tools before its state")
	out := append(bytes.Clone(data[:from]), `"tools":`+jsonv.MustEncode(schemas)...)
	return append(out, data[to:]...)
}

func TestFormat1TracesReplay(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ship", "typical"} {
		f, data := format1(t, name)
		require.Contains(t, string(data), `"format":"coworkenv-trace/1"`)
		r := replay(t, f, data)
		assert.True(t, r.Matched(), "%s: %v", name, r.Divergence)
		assert.False(t, r.TaskChanged, name)

		// the hashes are checked: a changed state hash of a call is the divergence
		states := regexp.MustCompile(`"state":"sha256:[0-9a-f]+"`).FindAllIndex(data, -1)
		require.Greater(t, len(states), 2)
		at := states[len(states)/2]
		bad := bytes.Clone(data)
		copy(bad[at[1]-5:at[1]-1], "0000")
		r = replay(t, f, bad)
		require.False(t, r.Matched(), name)
		assert.Contains(t, r.Divergence.String(), "state", name)
	}
}

// A trace of this engine records hashes of the current format, and replays.
func TestTracesRecordTheCurrentFormat(t *testing.T) {
	t.Parallel()
	f, old := format1(t, "typical")
	data := record(t, f.task(t), f.src, 3)
	assert.Contains(t, string(data), `"format":"`+trace.Format+`"`)
	assert.NotEqual(t, trace.Format, "coworkenv-trace/1")
	assert.True(t, replay(t, f, data).Matched())
	// the same episode: the events differ in their format and state hashes only
	hashes := regexp.MustCompile(`"(format|state)":"[^"]*"`)
	assert.Equal(t, string(hashes.ReplaceAll(old, nil)), string(hashes.ReplaceAll(data, nil)))
}

// A trace of a format this engine does not know is refused by the reader, which names it.
func TestUnknownFormatIsRefused(t *testing.T) {
	t.Parallel()
	_, data := format1(t, "ship")
	future := strings.Replace(string(data), `"format":"coworkenv-trace/1"`, `"format":"coworkenv-trace/9"`, 1)
	_, err := trace.Read(strings.NewReader(future))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `line 1: format "coworkenv-trace/9" is not one this engine reads`)
}
