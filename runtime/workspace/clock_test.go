package workspace

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
		got, _, err := NormalizeTime(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "tomorrow", "2026-13-01T00:00:00Z", "05/01/2026", "2026-01-05T25:00:00Z"} {
		_, err := ParseTime(bad)
		assert.Error(t, err, bad)
	}
	_, err := ParseTime("nope")
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

func TestClock(t *testing.T) {
	ws := New(time.Date(2026, 1, 5, 10, 0, 0, 0, time.FixedZone("x", 3600)), 0)
	c := ws.Clock()
	assert.Equal(t, "2026-01-05T09:00:00Z", c.NowString(), "the clock shows UTC")
	require.NoError(t, c.Advance("1d2h"))
	assert.Equal(t, "2026-01-06T11:00:00Z", c.NowString())
	assert.Equal(t, time.Date(2026, 1, 6, 11, 0, 0, 0, time.UTC), c.Now())
	require.NoError(t, c.Advance("0"))
	assert.EqualError(t, c.Advance("-1h"), `cannot advance the clock by a negative duration "-1h"`)
	assert.Error(t, c.Advance("x"))
	require.NoError(t, c.Set("2026-02-01T08:00:00+02:00"))
	assert.Equal(t, "2026-02-01T06:00:00Z", c.NowString())
	require.NoError(t, c.Set("2025-12-31"))
	assert.Equal(t, "2025-12-31T00:00:00Z", c.NowString(), "the clock may be set backwards")
	assert.Error(t, c.Set("later"))

	// delivered and sent mail take the clock's now
	id, err := ws.Mail().Deliver(Delivery{Sender: "a@b"})
	require.NoError(t, err)
	m, _ := ws.Mail().Get(id)
	assert.Equal(t, "2025-12-31T00:00:00Z", m.Date)
}
