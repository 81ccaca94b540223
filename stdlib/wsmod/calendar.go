package wsmod

import (
	"github.com/coworkenv/coworkenv/workspace"
	"go.starlark.net/starlark"
)

var calendarMembers = []*member{
	{name: "add", write: true, ret: "string",
		params: []param{{"title", ""}, {"start", ""}, {"end", ""}, {"attendees", "[]"}, {"location", `""`}, {"description", `""`}},
		call: func(c *call) (starlark.Value, error) {
			e := workspace.Event{
				Title:       c.str(0),
				Start:       c.str(1),
				End:         c.str(2),
				Attendees:   c.strList(3, false),
				Location:    c.optStr(4, ""),
				Description: c.optStr(5, ""),
			}
			if err := c.done(); err != nil {
				return nil, err
			}
			id, err := c.w.st.Calendar().Add(e)
			if err != nil {
				return nil, c.wrap(err)
			}
			return str(id), nil
		},
		doc: "Adds an event and returns its id (\"e1\", \"e2\", …). start and end are RFC 3339 times (stored with seconds, in the offset given, UTC when none is given); end must be after start and the title must not be empty."},
	{name: "get", params: []param{{"id", ""}}, ret: "struct | None",
		call: func(c *call) (starlark.Value, error) {
			id := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			e, ok := c.w.st.Calendar().Get(id)
			if !ok {
				return starlark.None, nil
			}
			return EventValue(e), nil
		},
		doc: "Returns event id as a struct with id, title, start, end, attendees, location and description, or None when there is no such event."},
	{name: "events", params: []param{{"start", "None"}, {"end", "None"}, {"attendee", "None"}}, ret: "list",
		call: func(c *call) (starlark.Value, error) {
			start, end, who := c.optStr(0, ""), c.optStr(1, ""), c.optStr(2, "")
			if err := c.done(); err != nil {
				return nil, err
			}
			es, err := c.w.st.Calendar().Events(start, end, who)
			if err != nil {
				return nil, c.wrap(err)
			}
			out := make([]starlark.Value, len(es))
			for i, e := range es {
				out[i] = EventValue(e)
			}
			return starlark.NewList(out), nil
		},
		doc: "Returns the events (structs, as ws.calendar.get) that overlap the half-open range [start, end) and have attendee (exact, ignoring case), sorted by start then by id number. An event overlaps when it starts before end and ends after start, so touching events do not; a bound left out does not restrict."},
	{name: "update", params: []param{{"id", ""}, {"**fields", ""}}, ret: "struct", write: true, call: calendarUpdate,
		doc: "Changes the given fields of event id (title, start, end, attendees, location, description; a field given as None is left as it is) and returns the updated event. Another field name, a missing event or an end not after the start is an error, and then nothing changes."},
	{name: "remove", params: []param{{"id", ""}}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			id := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Calendar().Remove(id))
		},
		doc: "Deletes event id. A missing event is an error."},
}

func calendarUpdate(c *call) (starlark.Value, error) {
	id := c.str(0)
	var p workspace.EventPatch
	for _, kv := range c.kw {
		name := string(kv[0].(starlark.String))
		v := kv[1]
		var dst **string
		switch name {
		case "title":
			dst = &p.Title
		case "start":
			dst = &p.Start
		case "end":
			dst = &p.End
		case "location":
			dst = &p.Location
		case "description":
			dst = &p.Description
		case "attendees":
			if v != starlark.None {
				l := c.strListOf(name, v, false)
				p.Attendees = &l
			}
			continue
		default:
			c.fail("unknown field %s (an event has title, start, end, attendees, location, description)", name)
			continue
		}
		if v == starlark.None {
			continue
		}
		s, ok := v.(starlark.String)
		if !ok {
			c.fail("for parameter %s: got %s, want string", name, v.Type())
			continue
		}
		sv := string(s)
		*dst = &sv
	}
	if err := c.done(); err != nil {
		return nil, err
	}
	e, err := c.w.st.Calendar().Update(id, p)
	if err != nil {
		return nil, c.wrap(err)
	}
	return EventValue(e), nil
}
