package progress

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlainLinesAtEachTenthAndAtClose(t *testing.T) {
	var buf bytes.Buffer
	b := newBar(&buf, "validate", 40, false)
	require.NotNil(t, b)
	for i := 1; i <= 40; i++ {
		detail := ""
		if i >= 13 {
			detail = "1 invalid"
		}
		b.Set(i, detail)
	}
	b.Close()
	b.Close()         // a second Close writes nothing
	b.Set(40, "late") // nor does a Set after Close
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 10, buf.String())
	assert.Equal(t, "validate: 4/40 (10%)", lines[0])
	assert.Equal(t, "validate: 16/40 (40%) · 1 invalid", lines[3])
	assert.Equal(t, "validate: 36/40 (90%) · 1 invalid", lines[8])
	assert.Equal(t, "validate: 40/40 (100%) · 1 invalid", lines[9])
}

func TestPlainLinesSkipJumps(t *testing.T) {
	// a jump over several tenths writes one line, and a step back writes none
	var buf bytes.Buffer
	b := newBar(&buf, "rollout", 100, false)
	b.Set(35, "a")
	b.Set(20, "b")
	b.Set(39, "c")
	b.Set(41, "d")
	b.Close()
	assert.Equal(t, "rollout: 35/100 (35%) · a\nrollout: 41/100 (41%) · d\nrollout: 41/100 (41%) · d\n", buf.String())
}

func TestSmallWorkIsQuiet(t *testing.T) {
	var buf bytes.Buffer
	b := newBar(&buf, "export", PlainMin-1, false)
	b.Set(PlainMin-1, "x")
	b.Close()
	assert.Empty(t, buf.String())
	assert.Nil(t, newBar(&buf, "export", 0, true))
	assert.Nil(t, New(nil, "export", 100))
}

func TestNilBar(t *testing.T) {
	var b *Bar
	b.Set(1, "x")
	b.Close()
}

func noThrottle(t *testing.T) {
	old := throttle
	throttle = 0
	t.Cleanup(func() { throttle = old })
}

func TestTerminalBarIsDrawnAndCleared(t *testing.T) {
	noThrottle(t)
	var buf bytes.Buffer
	b := newBar(&buf, "rollout", 4, true)
	require.NotNil(t, b)
	b.Set(1, "1 passed")
	out := buf.String()
	assert.Contains(t, out, "rollout · 1 passed")
	assert.Contains(t, out, "1/4")
	assert.NotContains(t, out, "\n", "a bar stays on one line")
	b.Close()
	rest := buf.String()[len(out):]
	assert.True(t, strings.HasPrefix(rest, "\r") && strings.HasSuffix(rest, "\r") && strings.TrimSpace(rest) == "", "Close erases the line: %q", rest)
	n := buf.Len()
	b.Set(2, "late")
	assert.Equal(t, n, buf.Len(), "nothing is drawn after Close")
}

func TestTerminalBarFinishedIsCleared(t *testing.T) {
	noThrottle(t)
	var buf bytes.Buffer
	b := newBar(&buf, "validate", 2, true)
	b.Set(2, "")
	b.Close()
	out := buf.String()
	assert.True(t, strings.HasSuffix(out, "\r"), "the finished bar is erased: %q", out)
	assert.NotContains(t, out, "\n")
}

func TestWriterGoesAboveTheBar(t *testing.T) {
	noThrottle(t)
	var buf bytes.Buffer
	b := newBar(&buf, "generate", 4, true)
	b.Set(1, "")
	fmt.Fprintln(b.Writer(&buf), "attempt 1/4: accepted")
	out := buf.String()
	i := strings.Index(out, "attempt 1/4")
	require.Positive(t, i)
	assert.True(t, strings.HasSuffix(strings.TrimRight(out[:i], " "), "\r"), "the bar is erased before the line: %q", out)
	assert.Contains(t, out[i:], "1/4)", "and drawn again after it")
	b.Close()

	var plain bytes.Buffer
	pb := newBar(&plain, "generate", 40, false)
	assert.Equal(t, io.Writer(&plain), pb.Writer(&plain))
	var nilBar *Bar
	assert.Equal(t, io.Writer(&plain), nilBar.Writer(&plain))
}

func TestConcurrentSets(t *testing.T) {
	var buf bytes.Buffer
	for _, tty := range []bool{false, true} {
		b := newBar(&syncWriter{w: &buf}, "rollout", 200, tty)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 25 {
					b.Set(g*25+i+1, "x")
				}
			}()
		}
		wg.Wait()
		b.Close()
	}
}

func TestIsTerminal(t *testing.T) {
	assert.False(t, IsTerminal(&bytes.Buffer{}))
	assert.False(t, IsTerminal(nil))
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
