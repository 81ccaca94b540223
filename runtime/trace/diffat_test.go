package trace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// diffAt says where two texts first differ, with excerpts of bounded length cut at the start of
// a character, the line and column in a text of several lines, and "(end)" where one text stops.
func TestDiffAt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("abcdefghij", 100)
	got := diffAt("content", long[:500]+"X"+long[501:], long)
	assert.Equal(t, `content: differs at byte 501 (of 1000 bytes recorded, 1000 replayed): recorded …"abcdefghijabcdefghijabcdefghijXbcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"…, replayed …"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"…`, got)

	// a change inside a character of several bytes: the excerpts start and end on whole ones
	rec, rep := strings.Repeat("é", 40)+"a", strings.Repeat("é", 40)+"b"
	got = diffAt("content", rec, rep)
	assert.Contains(t, got, "differs at byte 81 (of 81 bytes recorded, 81 replayed)")
	assert.Contains(t, got, `recorded …"`+strings.Repeat("é", 15)+`a", replayed …"`+strings.Repeat("é", 15)+`b"`)

	// one text is the start of the other
	assert.Equal(t, `reply: differs at byte 5 (of 4 bytes recorded, 6 replayed): recorded "Done" (end), replayed "Done.."`,
		diffAt("reply", "Done", "Done.."))

	// several lines
	assert.Equal(t, `content: differs at byte 7, line 2 column 3: recorded "one\ntwo\nthree", replayed "one\ntwX\nthree"`,
		strings.Replace(diffAt("content", "one\ntwo\nthree", "one\ntwX\nthree"), " (of 13 bytes recorded, 13 replayed)", "", 1))

	// a short pair of other texts is shown whole, a long one from where it differs
	assert.Equal(t, []string{`content: recorded "a b", replayed "a  b"`}, diffString("content", "a b", "a  b"))
	assert.Equal(t, []string{diffAt("content", long+"!", long+"?")}, diffString("content", long+"!", long+"?"))
	assert.Nil(t, diffString("content", long, long))
	assert.Nil(t, diffResultText("content", long, long))
}
