package report

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// A long label is cut short in the chart, and its count is still drawn whole, in the wide and
// the narrow layout; the table has the label whole.
func TestLongLabelKeepsItsCount(t *testing.T) {
	t.Parallel()
	long := "documents.reconcile_supplier_statements_against_ledger"
	c := &barChart{ID: "c", Title: "Pass rate by capability", Max: 1,
		Bars: []bar{{Label: long, Suffix: " (12)", Value: 0.5, Text: "50%"}, {Label: "mail.reply", Suffix: " (3)", Value: 1, Text: "100%"}}}
	svg := string(c.svg())
	labels := regexp.MustCompile(`<text class="label"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	assert.Len(t, labels, 4, "two bars, drawn wide and narrow")
	for _, l := range labels {
		text := l[1]
		if strings.HasPrefix(text, "mail.reply") {
			assert.Equal(t, "mail.reply (3)", text)
			continue
		}
		assert.True(t, strings.HasSuffix(text, "… (12)"), "the count of a long label is drawn: %q", text)
		assert.LessOrEqual(t, utf8.RuneCountInString(text), narrowLabel)
	}
	assert.Contains(t, svg, "<th scope=\"row\">"+long+" (12)</th>", "the table has it whole")

	assert.Equal(t, "abc (1)", fitLabel("abc", " (1)", 10))
	assert.Equal(t, "abcdefghij", fitLabel("abcdefghij", "", 10))
	assert.Equal(t, "abcdefghi…", fitLabel("abcdefghijk", "", 10))
	assert.Equal(t, "abcde… (1)", fitLabel("abcdefghijk", " (1)", 10))
}
