package trace_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/trace"
)

// endless is a reader of x bytes that never ends and never gives a newline; it counts what was
// read.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A line without an end stops the reader once it passes MaxLine: it does not read (and hold)
// the whole stream.
func TestReadStopsAtAnEndlessLine(t *testing.T) {
	t.Parallel()
	r := &endless{}
	_, err := trace.Read(r)
	if err == nil || err.Error() != "line 1: longer than 67108864 bytes" {
		t.Fatalf("err = %v", err)
	}
	if r.n > 3*trace.MaxLine {
		t.Fatalf("read %d bytes of an endless line", r.n)
	}
}

// Lines of exactly MaxLine bytes (the newline counted) are read; one more byte is too long, and
// a last line without its newline is a truncated trace.
func TestReadLineLimits(t *testing.T) {
	t.Parallel()
	line := func(n int) []byte { // a JSON string of n bytes with its newline
		b := bytes.Repeat([]byte{'a'}, n)
		b[0], b[n-2], b[n-1] = '"', '"', '\n'
		return b
	}
	_, err := trace.Read(bytes.NewReader(line(trace.MaxLine)))
	if err == nil || err.Error() != "not a trace (its first line is not a coworkenv start event): line 1: want a JSON object, got string" {
		t.Fatalf("a line of MaxLine bytes: %v", err)
	}
	_, err = trace.Read(bytes.NewReader(line(trace.MaxLine + 1)))
	if err == nil || err.Error() != "line 1: longer than 67108864 bytes" {
		t.Fatalf("a line of MaxLine+1 bytes: %v", err)
	}
	_, err = trace.Read(bufio.NewReader(strings.NewReader("{}")))
	if err == nil || err.Error() != "line 1: the trace is truncated (the last line has no newline)" {
		t.Fatalf("no newline: %v", err)
	}
}

// A file that is not a trace (text, JSON of another kind) is said to be not a trace, not a trace
// with a bad line; a bad line after a start event is the trace's own.
func TestReadNotATrace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"# coworkenv\n", "not a trace (its first line is not a coworkenv start event): line 1: invalid JSON"},
		{"[1, 2]\n", "not a trace (its first line is not a coworkenv start event): line 1: want a JSON object, got array"},
		{`{"messages": []}` + "\n", "not a trace (its first line is not a coworkenv start event): line 1: missing \"event\""},
		{`{"event": "chat"}` + "\n", "not a trace (its first line is not a coworkenv start event): line 1: unknown event \"chat\""},
		{`{"event": "end", "passed": true}` + "\n", "not a trace (its first line is not a coworkenv start event): line 1:"},
	} {
		_, err := trace.Read(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}
