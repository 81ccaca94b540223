package shown

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEscapes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "tasks/café.star", Name("tasks/café.star"), "printable text is itself")
	assert.Equal(t, `tasks/\u202egnp.star`, Name("tasks/\u202egnp.star"), "a right-to-left override")
	assert.Equal(t, `a\x1b[2Jb`, Name("a\x1b[2Jb"), "an escape sequence")
	assert.Equal(t, `a\x0ab\x09c`, Name("a\nb\tc"), "a name keeps no line break")
	assert.Equal(t, "a\nb\tc \\u2066x\\u2069", Text("a\nb\tc \u2066x\u2069"), "a message keeps its lines")
	assert.Equal(t, `\xff\u200b\u0085\u2028`, Name("\xff\u200b\u0085\u2028"))
	assert.Equal(t, "\ufffd", Name("\ufffd"), "a replacement character as written is printable")
}

func TestCauseDropsThePath(t *testing.T) {
	t.Parallel()
	_, err := os.Open(filepath.Join(t.TempDir(), "missing.star"))
	assert.ErrorIs(t, Cause(err), fs.ErrNotExist)
	assert.NotContains(t, Cause(err).Error(), "missing.star")
	other := errors.New("plain")
	assert.Equal(t, other, Cause(other))
}
