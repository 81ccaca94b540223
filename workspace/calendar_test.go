package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

func eventIDs(es []Event) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func seedCalendar(t *testing.T) *State {
	t.Helper()
	ws := newWS()
	c := ws.Calendar()
	for _, e := range []Event{
		{Title: "standup", Start: "2026-01-06T09:00:00Z", End: "2026-01-06T09:15:00Z", Attendees: []string{"Ana@x"}},
		{Title: "1:1", Start: "2026-01-06T10:00:00+01:00", End: "2026-01-06T10:30:00+01:00"}, // 09:00Z
		{Title: "review", Start: "2026-01-06T14:00", End: "2026-01-06T15:00", Location: "Tejo", Description: "Q3"},
	} {
		_, err := c.Add(e)
		require.NoError(t, err)
	}
	return ws
}

func TestCalendarAddGet(t *testing.T) {
	ws := seedCalendar(t)
	c := ws.Calendar()
	e, ok := c.Get("e2")
	require.True(t, ok)
	assert.Equal(t, Event{ID: "e2", Title: "1:1", Start: "2026-01-06T10:00:00+01:00", End: "2026-01-06T10:30:00+01:00", Attendees: []string{}}, e)
	e, _ = c.Get("e3")
	assert.Equal(t, "2026-01-06T14:00:00Z", e.Start)
	assert.Equal(t, "Tejo", e.Location)
	_, ok = c.Get("e9")
	assert.False(t, ok)

	_, err := c.Add(Event{Title: "x", Start: "2026-01-06T10:00:00Z", End: "2026-01-06T10:00:00Z"})
	assert.EqualError(t, err, "end 2026-01-06T10:00:00Z is not after start 2026-01-06T10:00:00Z")
	_, err = c.Add(Event{Title: "x", Start: "soon", End: "2026-01-06T10:00:00Z"})
	assert.EqualError(t, err, `start: invalid time "soon": want RFC 3339, like 2026-01-05T09:00:00Z`)
	_, err = c.Add(Event{Title: "x", Start: "2026-01-06T10:00:00Z", End: "later"})
	assert.EqualError(t, err, `end: invalid time "later": want RFC 3339, like 2026-01-05T09:00:00Z`)
	_, err = c.Add(Event{Title: " ", Start: "2026-01-06T10:00:00Z", End: "2026-01-06T11:00:00Z"})
	assert.EqualError(t, err, "title: empty")
	id, err := c.Add(Event{Title: "ok", Start: "2026-01-06T10:00:00Z", End: "2026-01-06T11:00:00Z"})
	require.NoError(t, err)
	assert.Equal(t, "e4", id, "failed adds take no id")
}

func TestCalendarEvents(t *testing.T) {
	ws := seedCalendar(t)
	c := ws.Calendar()
	all, err := c.Events("", "", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2", "e3"}, eventIDs(all), "same start instant: by id number")

	got, err := c.Events("2026-01-06T09:15:00Z", "2026-01-06T14:00:00Z", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"e2"}, eventIDs(got), "touching intervals do not overlap")
	got, err = c.Events("2026-01-06T09:14:00Z", "2026-01-06T14:01:00Z", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"e1", "e2", "e3"}, eventIDs(got))
	got, err = c.Events("2026-01-06T12:00:00Z", "", "")
	require.NoError(t, err)
	assert.Equal(t, []string{"e3"}, eventIDs(got))
	got, err = c.Events("", "2026-01-06T09:00:01Z", "ana@X")
	require.NoError(t, err)
	assert.Equal(t, []string{"e1"}, eventIDs(got))
	got, err = c.Events("2026-01-07", "2026-01-08", "")
	require.NoError(t, err)
	assert.Equal(t, []string{}, eventIDs(got))

	_, err = c.Events("x", "", "")
	assert.EqualError(t, err, `start: invalid time "x": want RFC 3339, like 2026-01-05T09:00:00Z`)
	_, err = c.Events("", "y", "")
	assert.EqualError(t, err, `end: invalid time "y": want RFC 3339, like 2026-01-05T09:00:00Z`)
	_, err = c.Events("2026-01-07T00:00:00Z", "2026-01-06T00:00:00Z", "")
	assert.EqualError(t, err, "end 2026-01-06T00:00:00Z is before start 2026-01-07T00:00:00Z")
}

func TestCalendarUpdateRemove(t *testing.T) {
	ws := seedCalendar(t)
	c := ws.Calendar()
	att := []string{"a@x", "b@x"}
	e, err := c.Update("e2", EventPatch{Start: strp("2026-01-06T11:00:00Z"), End: strp("2026-01-06T11:30:00Z"), Attendees: &att, Location: strp("Room 1")})
	require.NoError(t, err)
	assert.Equal(t, Event{ID: "e2", Title: "1:1", Start: "2026-01-06T11:00:00Z", End: "2026-01-06T11:30:00Z", Attendees: []string{"a@x", "b@x"}, Location: "Room 1"}, e)
	att[0] = "changed"
	e, _ = c.Get("e2")
	assert.Equal(t, []string{"a@x", "b@x"}, e.Attendees)

	_, err = c.Update("e2", EventPatch{End: strp("2026-01-06T10:00:00Z")})
	assert.EqualError(t, err, "end 2026-01-06T10:00:00Z is not after start 2026-01-06T11:00:00Z")
	e, _ = c.Get("e2")
	assert.Equal(t, "2026-01-06T11:30:00Z", e.End, "a failed update changes nothing")
	_, err = c.Update("e9", EventPatch{})
	assert.EqualError(t, err, "no event e9")

	h := ws.Hash()
	_, err = c.Update("e2", EventPatch{Title: strp("1:1")})
	require.NoError(t, err)
	assert.Equal(t, h, ws.Hash())

	require.NoError(t, c.Remove("e1"))
	_, ok := c.Get("e1")
	assert.False(t, ok)
	assert.EqualError(t, c.Remove("e1"), "no event e1")
	id, err := c.Add(Event{Title: "n", Start: "2026-01-06T10:00:00Z", End: "2026-01-06T11:00:00Z"})
	require.NoError(t, err)
	assert.Equal(t, "e4", id, "ids are not reused")
}
