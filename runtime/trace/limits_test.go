package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The writer writes a line of MaxLine bytes (its newline included), which the reader reads, and
// refuses one byte more: it never writes a trace its reader rejects. (Tool results and
// arguments never get there: the episode keeps them within their limits, which fit a line.)
func TestWriterKeepsTheLineLimit(t *testing.T) {
	t.Parallel()
	assert.Equal(t, limits.TraceLine, trace.MaxLine)
	frame := len(`{"event":"reply","turn":0,"content":""}` + "\n")
	write := func(size int) ([]byte, error) {
		var buf bytes.Buffer
		w := trace.NewWriter(&buf, trace.Start{Task: "t", File: "t.star", Agent: "x", State: "s"})
		w.OnUser(0, "hi", "s", "")
		w.OnReply(0, strings.Repeat("r", size-frame))
		err := w.End(&episode.Result{FinalState: "s"})
		return buf.Bytes(), err
	}
	data, err := write(trace.MaxLine)
	require.NoError(t, err)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Len(t, events[2].Body.(*trace.Reply).Content, trace.MaxLine-frame)

	data, err = write(trace.MaxLine + 1)
	assert.EqualError(t, err, "writing trace: the reply event is 67108865 bytes, over the 64 MiB limit of a trace line")
	assert.Less(t, len(data), 1<<10, "the line is not written, nor anything after it")
}
