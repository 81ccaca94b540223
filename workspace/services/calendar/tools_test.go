package calendar_test

import (
	"encoding/json"
	"testing"

	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services/calendar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCalendarTools(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	assert.Equal(t, `{"id":"e1"}`, servicetest.OK(t, ws, "calendar_create", `{"title":"Standup","start":"2026-01-06T09:00:00Z","end":"2026-01-06T09:15:00Z"}`))
	assert.Equal(t, `{"id":"e2"}`, servicetest.OK(t, ws, "calendar_create", `{"title":"Review","start":"2026-01-06T10:00:00+01:00","end":"2026-01-06T11:00:00+01:00","attendees":["a@x.example"],"location":"Tejo","description":"Q3"}`))
	assert.Equal(t, `{"id":"e3"}`, servicetest.OK(t, ws, "calendar_create", `{"title":"Late","start":"2026-01-06T17:00:00Z","end":"2026-01-06T18:00:00Z"}`))

	assert.Equal(t,
		`[{"id":"e1","title":"Standup","start":"2026-01-06T09:00:00Z","end":"2026-01-06T09:15:00Z","attendees":[],"location":"","description":"","calendar":"yours"},`+
			`{"id":"e2","title":"Review","start":"2026-01-06T10:00:00+01:00","end":"2026-01-06T11:00:00+01:00","attendees":["a@x.example"],"location":"Tejo","description":"Q3","calendar":"a@x.example"}]`,
		servicetest.OK(t, ws, "calendar_list", `{"start":"2026-01-06T00:00:00Z","end":"2026-01-06T17:00:00Z"}`), "touching the end is not overlapping")
	assert.Equal(t, `[]`, servicetest.OK(t, ws, "calendar_list", `{"start":"2026-01-07T00:00:00Z","end":"2026-01-08T00:00:00Z"}`))

	// whose calendar: a colleague's event names its attendees; one the user is on (the mailbox's
	// address, ignoring case) or one with no attendees is "yours"
	require.NoError(t, ws.Mail().SetAddress("me@x.example"))
	_, err := ws.Calendar().Add(workspace.Event{Title: "Noor's hearing", Start: "2026-01-09T09:00:00Z", End: "2026-01-09T10:00:00Z", Attendees: []string{"noor@x.example"}})
	require.NoError(t, err)
	_, err = ws.Calendar().Add(workspace.Event{Title: "Bank", Start: "2026-01-09T11:00:00Z", End: "2026-01-09T12:00:00Z", Attendees: []string{"ava@x.example", "chloe@x.example"}})
	require.NoError(t, err)
	_, err = ws.Calendar().Add(workspace.Event{Title: "1:1", Start: "2026-01-09T13:00:00Z", End: "2026-01-09T14:00:00Z", Attendees: []string{"ava@x.example", "Me@X.example"}})
	require.NoError(t, err)
	assert.Equal(t, `[["Noor's hearing","noor@x.example"],["Bank","ava@x.example, chloe@x.example"],["1:1","yours"]]`,
		whose(t, ws, `{"start":"2026-01-09T00:00:00Z","end":"2026-01-10T00:00:00Z"}`))
	assert.Contains(t, calendar.Service.Tools[0].Description, `calendar says whose calendar an event is on: "yours" when your address is among its attendees or it has none, otherwise its attendees' addresses`)

	assert.Equal(t,
		`{"id":"e2","title":"Review","start":"2026-01-06T12:00:00Z","end":"2026-01-06T13:00:00Z","attendees":["b@x.example"],"location":"Tejo","description":"Q3"}`,
		servicetest.OK(t, ws, "calendar_update", `{"id":"e2","start":"2026-01-06T12:00:00Z","end":"2026-01-06T13:00:00Z","attendees":["b@x.example"],"title":null}`))
	assert.Equal(t, `{"ok":true}`, servicetest.OK(t, ws, "calendar_delete", `{"id":"e1"}`))
	_, found := ws.Calendar().Get("e1")
	assert.False(t, found)

	servicetest.Fails(t, ws, "calendar_create", `{"title":"x","start":"2026-01-06T10:00:00Z","end":"2026-01-06T09:00:00Z"}`, "end 2026-01-06T09:00:00Z is not after start 2026-01-06T10:00:00Z")
	servicetest.Fails(t, ws, "calendar_create", `{"title":"x","start":"tomorrow","end":"2026-01-06T09:00:00Z"}`, `start: invalid time "tomorrow": want RFC 3339, like 2026-01-05T09:00:00Z`)
	servicetest.Fails(t, ws, "calendar_create", `{"title":"x","start":"2026-01-06T10:00:00Z"}`, `missing required argument "end"`)
	servicetest.Fails(t, ws, "calendar_list", `{"start":"2026-01-06"}`, `missing required argument "end"`)
	servicetest.Fails(t, ws, "calendar_list", `{"start":"x","end":"2026-01-06T00:00:00Z"}`, `start: invalid time "x": want RFC 3339, like 2026-01-05T09:00:00Z`)
	servicetest.Fails(t, ws, "calendar_update", `{"id":"e9","title":"x"}`, "no event e9")
	servicetest.Fails(t, ws, "calendar_update", `{"id":"e2","end":"2026-01-06T11:00:00Z"}`, "end 2026-01-06T11:00:00Z is not after start 2026-01-06T12:00:00Z")
	servicetest.Fails(t, ws, "calendar_update", `{"id":"e2","attendees":"a@b"}`, `argument "attendees": got string, want array`)
	servicetest.Fails(t, ws, "calendar_delete", `{"id":"e1"}`, "no event e1")
}

// whose lists the title and calendar of each event calendar_list gives for args.
func whose(t *testing.T, ws *workspace.State, args string) string {
	t.Helper()
	var evs []struct{ Title, Calendar string }
	require.NoError(t, json.Unmarshal([]byte(servicetest.OK(t, ws, "calendar_list", args)), &evs))
	out := make([][2]string, len(evs))
	for i, e := range evs {
		out[i] = [2]string{e.Title, e.Calendar}
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	return string(b)
}
