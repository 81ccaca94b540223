package calendar

import (
	"testing"

	"github.com/coworkenv/coworkenv/workspace"
)

func TestEventValue(t *testing.T) {
	e := workspace.Event{ID: "e1", Title: "T", Start: "2026-01-05T09:00:00Z", End: "2026-01-05T10:00:00Z"}
	got := EventValue(e).String()
	want := `struct(attendees = [], description = "", end = "2026-01-05T10:00:00Z", id = "e1", location = "", start = "2026-01-05T09:00:00Z", title = "T")`
	if got != want {
		t.Errorf("EventValue:\n got %s\nwant %s", got, want)
	}
}
