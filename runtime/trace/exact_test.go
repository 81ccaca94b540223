package trace_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resultText is the content of the result event on line i (0-based) of a trace.
func resultText(t *testing.T, ls []string, i int) string {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(join(ls)))
	require.NoError(t, err)
	r, ok := events[i].Body.(*trace.CallResult)
	require.True(t, ok, "line %d is not a result", i+1)
	return r.Content
}

// A result's content is the text the model was given, so replay compares it byte for byte: a
// letter changed in a value, and the same value encoded anew (other whitespace, key order or
// escape), are each a divergence at the result's line, saying where the texts first differ.
func TestResultTextIsComparedByteForByte(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	orig := lines(record(t, f.task(t), f.src, 0))
	require.True(t, replay(t, f, join(orig)).Matched())
	i := find(t, orig, 0, `"event":"result"`, `Ship o1`)
	replayed := resultText(t, orig, i)

	t.Run("a letter", func(t *testing.T) {
		ls := edit(t, orig, i, `order o1.`, `order o2.`)
		d := tamper(t, f, ls, i+1, "result", "mail_read")
		recorded := resultText(t, ls, i)
		at := strings.Index(recorded, "order o2.") + len("order o")
		want := fmt.Sprintf("content: differs at byte %d (of %d bytes recorded, %d replayed): recorded …%s…, replayed …%s…",
			at+1, len(recorded), len(replayed), strconv.Quote(recorded[at-30:at+50]), strconv.Quote(replayed[at-30:at+50]))
		require.NotEmpty(t, d.Diffs)
		assert.Equal(t, want, d.Diffs[0])
		assert.Contains(t, d.Diffs, `content.body: recorded "Please ship order o2.", replayed "Please ship order o1."`)
		assert.Contains(t, d.String(), "event "+strconv.Itoa(i+1)+" (result, turn 0, mail_read ")
	})
	for _, tc := range []struct{ name, from, to string }{
		{"whitespace", `\"subject\":\"Ship o1\"`, `\"subject\": \"Ship o1\"`},
		{"key order", `\"subject\":\"Ship o1\",\"body\":\"Please ship order o1.\"`, `\"body\":\"Please ship order o1.\",\"subject\":\"Ship o1\"`},
		{"escape", `Ship o1`, `Ship \\u006f1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := edit(t, orig, i, tc.from, tc.to)
			d := tamper(t, f, ls, i+1, "result", "mail_read")
			recorded := resultText(t, ls, i)
			require.NotEqual(t, replayed, recorded)
			at := 0
			for recorded[at] == replayed[at] {
				at++
			}
			require.Len(t, d.Diffs, 2, d.String())
			assert.True(t, strings.HasPrefix(d.Diffs[0], fmt.Sprintf("content: differs at byte %d (of %d bytes recorded, %d replayed): recorded …",
				at+1, len(recorded), len(replayed))), d.Diffs[0])
			assert.Less(t, len(d.Diffs[0]), 300, "the excerpts are short")
			assert.Equal(t, "content: the same JSON value, encoded differently (whitespace, key order, escapes or number form); the model was given the recorded text", d.Diffs[1])
		})
	}
}

// The other texts of a trace are compared byte for byte too: a user message or a reply with a
// space added diverges at its line.
func TestUserAndReplyTextsAreComparedByteForByte(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	orig := lines(record(t, f.task(t), f.src, 0))
	i := find(t, orig, 0, `"event":"user"`)
	d := tamper(t, f, edit(t, orig, i, `"Handle the boss's mail."`, `"Handle the boss's mail. "`), i+1, "user", "")
	assert.Equal(t, []string{`content: recorded "Handle the boss's mail. ", replayed "Handle the boss's mail."`}, d.Diffs)
	i = find(t, orig, 0, `"event":"reply"`)
	d = tamper(t, f, edit(t, orig, i, `"Shipped."`, `"Shipped.\n"`), i+1, "reply", "")
	assert.Equal(t, []string{`content: recorded "Shipped.\n", replayed "Shipped."`}, d.Diffs)
}
