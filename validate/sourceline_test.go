package validate_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
)

// The source line under a diagnostic is shown as a person sees it: no byte-order mark, no raw
// bytes that are not UTF-8, and the caret under the column's character.
func TestSourceLineShowsCharacters(t *testing.T) {
	t.Parallel()
	show := func(src string, line, col int) []string {
		var b bytes.Buffer
		validate.WriteDiag(&b, dsl.Diagnostic{Code: "syntax", Severity: dsl.Error, Message: "m", File: "a.star", Line: line, Col: col}, "", []byte(src))
		out := b.String()
		assert.True(t, utf8.ValidString(out), "%q", out)
		return strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]
	}
	assert.Equal(t, []string{" 1 | def f(:", "   |        ^"}, show("\xef\xbb\xbfdef f(:\n", 1, 8), "no mark")
	assert.Equal(t, []string{` 2 | Y = "caf` + "\uFFFD" + `"`, `   |         ^`}, show("X = 1\nY = \"caf\xe9\"\n", 2, 9), "a bad byte is one U+FFFD")
	assert.Equal(t, []string{` 1 | s = "né"; def f(:`, "   | " + strings.Repeat(" ", 16) + "^"}, show("s = \"né\"; def f(:\n", 1, 17), "columns count characters")
	assert.Equal(t, []string{" 1 | \tx = (", "   | \t    ^"}, show("\tx = (\n", 1, 6), "tabs are kept")
}
