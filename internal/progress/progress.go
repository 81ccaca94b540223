// Package progress shows how far long work has got: a bar on a terminal, plain lines otherwise.
//
// On a terminal the bar (drawn with github.com/schollz/progressbar) is redrawn in place as the
// work goes on and erased by Close, so what the command prints afterwards starts on a clean line.
// When the output is not a terminal (a log file, a pipe, CI), the display is a few plain lines
// instead: one each time another tenth of the work is done and one at Close, so a log shows how
// the work went without a line per unit. The plain lines depend only on the counts given to Set,
// never on the time. Work of fewer than PlainMin units writes no plain lines at all: a short run's
// log stays as it was.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// PlainMin is the least work (in units) for which plain lines are written when the output is not
// a terminal.
const PlainMin = 20

// throttle is the least time between two drawings of a bar (the last one is always drawn).
var throttle = 100 * time.Millisecond

// A Bar shows the progress of total units of work. A nil *Bar does nothing, so callers need not
// check whether progress is shown. Its methods may be called from several goroutines.
type Bar struct {
	mu     sync.Mutex
	w      io.Writer
	label  string
	total  int
	closed bool

	// on a terminal
	pb *progressbar.ProgressBar

	// in plain mode
	done   int
	detail string
	tenth  int // the last tenth of the work a line was written for
}

// New starts a display of total units of work, labelled label ("rollout", "validate"), on w.
// It is a bar when w is a terminal and plain lines otherwise (none for fewer than PlainMin
// units); nil when w is nil or there is no work.
func New(w io.Writer, label string, total int) *Bar {
	return newBar(w, label, total, IsTerminal(w))
}

func newBar(w io.Writer, label string, total int, tty bool) *Bar {
	if w == nil || total <= 0 {
		return nil
	}
	b := &Bar{w: w, label: label, total: total}
	if tty {
		b.pb = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(throttle),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
	} else if total < PlainMin {
		return nil
	}
	return b
}

// IsTerminal reports whether w is a terminal (a bar can be drawn on it).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// Set shows that done units are finished, with a short detail ("10 passed · 1 failed",
// "3 queued · 2 running").
func (b *Bar) Set(done int, detail string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	done = max(0, min(done, b.total))
	if b.pb != nil {
		if detail != b.detail {
			b.pb.Describe(join(b.label, detail))
		}
		b.detail = detail
		_ = b.pb.Set(done)
		return
	}
	b.done, b.detail = done, detail
	// one line at each tenth of the work passed; the line for all of it is Close's
	if t := done * 10 / b.total; t > b.tenth && done < b.total {
		b.tenth = t
		fmt.Fprintln(b.w, b.line())
	}
}

// Close ends the display: the terminal line is cleared; in plain mode a last line is written.
// Later calls of Set and Close do nothing.
func (b *Bar) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	if b.pb != nil {
		if !b.pb.IsFinished() {
			_ = b.pb.Clear()
		}
		_ = b.pb.Exit()
		return
	}
	fmt.Fprintln(b.w, b.line())
}

// Writer returns a writer for messages shown while the work goes on (warnings, a line per
// attempt): on a terminal, what is written through it goes above the bar, which is erased first
// and drawn again after. Write whole lines. Otherwise (and for a nil Bar) it is w itself.
func (b *Bar) Writer(w io.Writer) io.Writer {
	if b == nil || b.pb == nil {
		return w
	}
	return aboveBar{b, w}
}

type aboveBar struct {
	b *Bar
	w io.Writer
}

func (a aboveBar) Write(p []byte) (int, error) {
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.pb.IsFinished() {
		return a.w.Write(p)
	}
	_ = b.pb.Clear()
	n, err := a.w.Write(p)
	_ = b.pb.RenderBlank()
	return n, err
}

// line is the plain line for the progress so far: "validate: 12/40 (30%) · 2 invalid".
func (b *Bar) line() string {
	return join(fmt.Sprintf("%s: %d/%d (%d%%)", b.label, b.done, b.total, b.done*100/b.total), b.detail)
}

func join(s, detail string) string {
	if detail == "" {
		return s
	}
	return s + " · " + detail
}
