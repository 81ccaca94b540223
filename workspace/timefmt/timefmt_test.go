package timefmt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTime(t *testing.T) {
	cases := map[string]string{
		"2026-01-05T09:00:00Z":          "2026-01-05T09:00:00Z",
		"2026-01-05T09:00:00+01:00":     "2026-01-05T09:00:00+01:00",
		"2026-01-05T09:00:00.75-03:30":  "2026-01-05T09:00:00-03:30",
		"2026-01-05T09:00:00":           "2026-01-05T09:00:00Z",
		"2026-01-05T09:00":              "2026-01-05T09:00:00Z",
		"2026-01-05T09:00+02:00":        "2026-01-05T09:00:00+02:00",
		"2026-01-05 09:00:00Z":          "2026-01-05T09:00:00Z",
		"2026-01-05":                    "2026-01-05T00:00:00Z",
		" 2026-01-05T09:00:00+00:00 ":   "2026-01-05T09:00:00Z",
		"2026-01-05T09:00:00.123456789": "2026-01-05T09:00:00Z",
	}
	for in, want := range cases {
		got, _, err := Normalize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "tomorrow", "2026-13-01T00:00:00Z", "05/01/2026", "2026-01-05T25:00:00Z"} {
		_, err := Parse(bad)
		assert.Error(t, err, bad)
	}
	_, err := Parse("nope")
	assert.EqualError(t, err, `invalid time "nope": want RFC 3339, like 2026-01-05T09:00:00Z`)
}

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{
		"1d":       24 * time.Hour,
		"2h30m":    2*time.Hour + 30*time.Minute,
		"1d12h":    36 * time.Hour,
		"90m":      90 * time.Minute,
		"0.5d":     12 * time.Hour,
		"1.5h":     90 * time.Minute,
		"45s":      45 * time.Second,
		"0":        0,
		"-1h":      -time.Hour,
		"2d3h4m5s": 2*24*time.Hour + 3*time.Hour + 4*time.Minute + 5*time.Second,
		"250ms":    250 * time.Millisecond,
	}
	for in, want := range cases {
		got, err := ParseDuration(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "d", "1", "1w", "1d-2h", "h1", "1..5h", "-", "1 d"} {
		_, err := ParseDuration(bad)
		assert.Error(t, err, bad)
	}
	_, err := ParseDuration("soon")
	assert.EqualError(t, err, `invalid duration "soon": want something like "1d", "2h30m" or "90m"`)
}
