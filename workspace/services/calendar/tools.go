package calendar

import (
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// The agent's tools, group "calendar".

const group = "calendar"

const timeDesc = "RFC 3339, like \"2026-01-05T09:00:00Z\" or \"2026-01-05T10:00:00+01:00\"."

var agentTools = []*tools.Tool{
	{
		Name:  "calendar_list",
		Group: group,
		Description: "List the calendar events that overlap a time range (an event that ends exactly at start or " +
			"begins exactly at end is not included), sorted by start time. Each event is {id, title, start, " +
			"end, attendees, location, description, calendar}. The calendar may hold colleagues' events too: calendar says " +
			"whose calendar an event is on: \"yours\" when your address is among its attendees or it has none, " +
			"otherwise its attendees' addresses (a colleague's event, which you are not on). " + tools.ListingDoc,
		Params: []tools.Param{
			tools.Req("start", tools.TypeString, "Start of the range, "+timeDesc),
			tools.Req("end", tools.TypeString, "End of the range, "+timeDesc),
		},
		Run: calendarList,
	},
	{
		Name:        "calendar_create",
		Group:       group,
		Description: "Create a calendar event. Returns {\"id\"} of the new event.",
		Params: []tools.Param{
			tools.Req("title", tools.TypeString, "Title of the event."),
			tools.Req("start", tools.TypeString, "Start time, "+timeDesc),
			tools.Req("end", tools.TypeString, "End time, after start, "+timeDesc),
			tools.WithItems(tools.Opt("attendees", tools.TypeArray, "Email addresses of the people invited.", []jsonv.Value{}), tools.TypeString),
			tools.Opt("location", tools.TypeString, "Where it takes place.", ""),
			tools.Opt("description", tools.TypeString, "Notes or agenda.", ""),
		},
		Run: calendarCreate,
	},
	{
		Name:  "calendar_update",
		Group: group,
		Description: "Change an event: only the fields given change (attendees, when given, replaces the whole " +
			"list). Returns the updated event.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, "Event id, like \"e2\", as given by calendar_list."),
			tools.Opt("title", tools.TypeString, "New title.", nil),
			tools.Opt("start", tools.TypeString, "New start time, "+timeDesc, nil),
			tools.Opt("end", tools.TypeString, "New end time, "+timeDesc, nil),
			tools.WithItems(tools.Opt("attendees", tools.TypeArray, "New list of attendee email addresses.", nil), tools.TypeString),
			tools.Opt("location", tools.TypeString, "New location.", nil),
			tools.Opt("description", tools.TypeString, "New description.", nil),
		},
		Run: calendarUpdate,
	},
	{
		Name:        "calendar_delete",
		Group:       group,
		Description: "Delete a calendar event. Returns {\"ok\": true}.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, "Event id, like \"e2\", as given by calendar_list."),
		},
		Run: calendarDelete,
	},
}

func calendarList(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	evs, err := ws.Calendar().Events(tools.ArgStr(args, "start"), tools.ArgStr(args, "end"), "")
	if err != nil {
		return nil, err
	}
	me := ws.Mail().Address()
	out := make([]jsonv.Value, 0, min(len(evs), limits.ListItems))
	for _, e := range evs[:cap(out)] {
		j := EventJSON(e)
		j.Set("calendar", whose(e, me)) // a shared calendar: the listing says whose each event is
		out = append(out, j)
	}
	return tools.Listing(out, len(evs), false, "events", "give a shorter time range"), nil
}

func calendarCreate(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	id, err := ws.Calendar().Add(workspace.Event{
		Title:       tools.ArgStr(args, "title"),
		Start:       tools.ArgStr(args, "start"),
		End:         tools.ArgStr(args, "end"),
		Attendees:   tools.ArgStrs(args, "attendees"),
		Location:    tools.ArgStr(args, "location"),
		Description: tools.ArgStr(args, "description"),
	})
	if err != nil {
		return nil, err
	}
	return tools.IDResult(id), nil
}

func calendarUpdate(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	var p workspace.EventPatch
	field := func(name string) *string {
		if s, ok := tools.ArgStrOK(args, name); ok {
			return &s
		}
		return nil
	}
	p.Title, p.Start, p.End = field("title"), field("start"), field("end")
	p.Location, p.Description = field("location"), field("description")
	if _, ok := args.Get("attendees"); ok {
		a := tools.ArgStrs(args, "attendees")
		p.Attendees = &a
	}
	e, err := ws.Calendar().Update(tools.ArgStr(args, "id"), p)
	if err != nil {
		return nil, err
	}
	return EventJSON(e), nil
}

func calendarDelete(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	id := tools.ArgStr(args, "id")
	if err := ws.Calendar().Remove(id); err != nil {
		return nil, err
	}
	return tools.OKResult(), nil
}

// whose says whose calendar event e is on, for the user whose address is me: "yours" when me is
// among its attendees (ignoring case) or it has none, otherwise its attendees' addresses joined
// by ", " (a colleague's event the user is not on).
func whose(e workspace.Event, me string) string {
	if len(e.Attendees) == 0 || slices.ContainsFunc(e.Attendees, func(a string) bool { return strings.EqualFold(a, me) }) {
		return "yours"
	}
	return strings.Join(e.Attendees, ", ")
}

// EventJSON is an event as the calendar tools show it: id, title, start, end, attendees,
// location, description.
func EventJSON(e workspace.Event) *jsonv.Object {
	return jsonv.NewObject(
		"id", e.ID,
		"title", e.Title,
		"start", e.Start,
		"end", e.End,
		"attendees", tools.Strings(e.Attendees),
		"location", e.Location,
		"description", e.Description,
	)
}
