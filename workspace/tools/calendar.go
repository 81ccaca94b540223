package tools

import (
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
)

const timeDesc = "RFC 3339, like \"2026-01-05T09:00:00Z\" or \"2026-01-05T10:00:00+01:00\"."

func calendarTools() []*Tool {
	const g = "calendar"
	return []*Tool{
		{
			Name:  "calendar_list",
			Group: g,
			Description: "List the calendar events that overlap a time range (an event that ends exactly at start or " +
				"begins exactly at end is not included), sorted by start time. Each event is {id, title, start, " +
				"end, attendees, location, description}.",
			Params: []Param{
				req("start", TypeString, "Start of the range, "+timeDesc),
				req("end", TypeString, "End of the range, "+timeDesc),
			},
			Run: calendarList,
		},
		{
			Name:        "calendar_create",
			Group:       g,
			Description: "Create a calendar event. Returns {\"id\"} of the new event.",
			Params: []Param{
				req("title", TypeString, "Title of the event."),
				req("start", TypeString, "Start time, "+timeDesc),
				req("end", TypeString, "End time, after start, "+timeDesc),
				withItems(opt("attendees", TypeArray, "Email addresses of the people invited.", []jsonv.Value{}), TypeString),
				opt("location", TypeString, "Where it takes place.", ""),
				opt("description", TypeString, "Notes or agenda.", ""),
			},
			Run: calendarCreate,
		},
		{
			Name:  "calendar_update",
			Group: g,
			Description: "Change an event: only the fields given change (attendees, when given, replaces the whole " +
				"list). Returns the updated event.",
			Params: []Param{
				req("id", TypeString, "Event id, like \"e2\", as given by calendar_list."),
				opt("title", TypeString, "New title.", nil),
				opt("start", TypeString, "New start time, "+timeDesc, nil),
				opt("end", TypeString, "New end time, "+timeDesc, nil),
				withItems(opt("attendees", TypeArray, "New list of attendee email addresses.", nil), TypeString),
				opt("location", TypeString, "New location.", nil),
				opt("description", TypeString, "New description.", nil),
			},
			Run: calendarUpdate,
		},
		{
			Name:        "calendar_delete",
			Group:       g,
			Description: "Delete a calendar event. Returns {\"ok\": true}.",
			Params: []Param{
				req("id", TypeString, "Event id, like \"e2\", as given by calendar_list."),
			},
			Run: calendarDelete,
		},
	}
}

func calendarList(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	evs, err := ws.Calendar().Events(argStr(args, "start"), argStr(args, "end"), "")
	if err != nil {
		return nil, err
	}
	out := make([]jsonv.Value, len(evs))
	for i, e := range evs {
		out[i] = EventJSON(e)
	}
	return out, nil
}

func calendarCreate(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	id, err := ws.Calendar().Add(workspace.Event{
		Title:       argStr(args, "title"),
		Start:       argStr(args, "start"),
		End:         argStr(args, "end"),
		Attendees:   argStrs(args, "attendees"),
		Location:    argStr(args, "location"),
		Description: argStr(args, "description"),
	})
	if err != nil {
		return nil, err
	}
	return idResult(id), nil
}

func calendarUpdate(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	var p workspace.EventPatch
	field := func(name string) *string {
		if s, ok := argStrOK(args, name); ok {
			return &s
		}
		return nil
	}
	p.Title, p.Start, p.End = field("title"), field("start"), field("end")
	p.Location, p.Description = field("location"), field("description")
	if _, ok := args.Get("attendees"); ok {
		a := argStrs(args, "attendees")
		p.Attendees = &a
	}
	e, err := ws.Calendar().Update(argStr(args, "id"), p)
	if err != nil {
		return nil, err
	}
	return EventJSON(e), nil
}

func calendarDelete(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	id := argStr(args, "id")
	if err := ws.Calendar().Remove(id); err != nil {
		return nil, err
	}
	return okResult(), nil
}
