package claims

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func testOptions() Options {
	return Options{Written: time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC), Location: time.FixedZone("", 3600), Region: "NL",
		Names: []KnownName{{Key: "De Kaasmakers B.V.", Class: Company}, {Key: "Tulpen Retail", Class: Company}}}
}

// Every format Formats offers is read back as the same value, with the same stance, in place.
func TestFormatsReadBack(t *testing.T) {
	t.Parallel()
	o := testOptions()
	for text, want := range map[string]int{
		"The cut-off is 14:30.":                         2,
		"The review is on Thursday 8 January.":          2,
		"The total is EUR 1,240.00.":                    2,
		"The surcharge is 13.5%.":                       2,
		"We have 18 pallets.":                           1,
		"Call +31 182 555 0231.":                        2,
		"The invoice is approved.":                      0, // no synonym means "approved" in every use
		"The order is cancelled.":                       1,
		"It takes 90 minutes.":                          2,
		"The Q3 total is 12400.":                        1,
		"The cut-off is probably 14:30, I think.":       2,
		"Is the review on Thursday 8 January at 10:00?": 2,
	} {
		d := Read(text, o)
		c := d.Claims()[0]
		got := Formats(text, c, o, 2)
		assert.Len(t, got, want, "%s: %v", text, got)
		for _, f := range got {
			nt := text[:c.Start] + f + text[c.End:]
			n := Read(nt, o).mentionAt(c.Start, c.Start+len(f))
			if assert.NotNil(t, n, nt) {
				assert.Equal(t, c.Stance, n.Stance, nt)
				assert.NotEqual(t, strings.ToLower(c.Text), strings.ToLower(f), "a format differs from the text")
			}
		}
	}
}

// A rival is another value of the same kind, in the same style, that the reader reads as such.
func TestRival(t *testing.T) {
	t.Parallel()
	o := testOptions()
	for text, want := range map[string]string{
		"at 14:30":           "15:30",
		"at 2:30 pm":         "3:30 pm",
		"on 8 January":       "9 January",
		"EUR 1,240.00":       "EUR 1,364.00",
		"13.5%":              "14.5%",
		"18 pallets":         "19 pallets",
		"it is approved":     "rejected",
		"+31 182 555 0231":   "+31 182 555 0232",
		"Friday 9 January":   "Monday 12 January",
		"€1.240,00 in total": "€1.364,00",
	} {
		c := Read(text, o).Claims()[0]
		r := Rival(c, o)
		assert.Equal(t, want, r, text)
		rc := Read(r, o).Claims()
		if assert.NotEmpty(t, rc, r) {
			assert.Equal(t, c.Kind, rc[0].Kind, r)
			assert.NotEqual(t, c.Value, rc[0].Value, r)
		}
	}
}

func TestRivalOfANumberInWords(t *testing.T) {
	t.Parallel()
	for _, c := range Read("The folder holds two files.", Options{}).Claims() {
		if got := Rival(c, Options{}); got != "3 files" {
			t.Errorf("Rival(%q) = %q, want %q", c.Text, got, "3 files")
		}
	}
}
