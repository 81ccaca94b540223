package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
