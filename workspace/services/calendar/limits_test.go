package calendar_test

import (
	"fmt"
	"testing"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calendar_list shows at most ListItems events and says how many overlap the range.
func TestCalendarListIsCapped(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	for i := range limits.ListItems + 1 {
		_, err := ws.Calendar().Add(workspace.Event{Title: fmt.Sprintf("e%d", i),
			Start: fmt.Sprintf("2026-01-06T%02d:%02d:00Z", i/60, i%60), End: "2026-01-07T00:00:00Z"})
		require.NoError(t, err)
	}
	got := servicetest.Object(t, servicetest.OK(t, ws, "calendar_list", `{"start":"2026-01-06T00:00:00Z","end":"2026-01-07T00:00:00Z"}`))
	items, _ := got.Get("items")
	assert.Len(t, items, limits.ListItems)
	total, _ := got.Get("total")
	assert.Equal(t, int64(limits.ListItems+1), total)
	note, _ := got.Get("note")
	assert.Contains(t, note, "give a shorter time range")
	assert.Equal(t, "[", servicetest.OK(t, ws, "calendar_list", `{"start":"2026-01-06T00:00:00Z","end":"2026-01-06T00:01:00Z"}`)[:1])
}
