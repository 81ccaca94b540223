package cassette

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A mismatch report points at the real difference, not at how each side escaped "->".
func TestFirstDifference(t *testing.T) {
	recorded := []byte(`{"messages":[{"content":"(ws, ep) -\u003e string"},{"content":"error[trivial]: noop passes"}]}`)
	now := []byte(`{"messages": [{"content": "(ws, ep) -> string"}, {"content": "error[crash]: the worker died"}]}`)
	got := firstDifference(recorded, now)
	assert.Contains(t, got, "recorded …")
	assert.Contains(t, got, "error[trivial]")
	assert.Contains(t, got, "error[crash]")
	assert.Equal(t, "the bodies differ only in layout", firstDifference(recorded[:len(recorded)], []byte(`{"messages":[{"content":"(ws, ep) -> string"},{"content":"error[trivial]: noop passes"}]}`)))
}
