// Package progress shows how far long work has got: a bar on a terminal, plain lines otherwise.
//
// (A first version: the API is fixed; the drawing is being built.)
package progress

import (
	"fmt"
	"io"
	"sync"
)

// A Bar shows the progress of total units of work. A nil *Bar does nothing, so callers need not
// check whether progress is shown. Its methods may be called from several goroutines.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	total int
}

// New starts a display of total units of work, labelled label ("rollout", "validate"), on w.
func New(w io.Writer, label string, total int) *Bar {
	return &Bar{w: w, label: label, total: total}
}

// Set shows that done units are finished, with a short detail ("10 passed · 1 failed",
// "3 queued · 2 running").
func (b *Bar) Set(done int, detail string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, _ = done, detail
}

// Close ends the display: the terminal line is cleared; in plain mode a last line is written.
func (b *Bar) Close() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_ = fmt.Sprint(b.label)
}
