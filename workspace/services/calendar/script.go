package calendar

import (
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
)

// What scripts see: ws.calendar.

var wsMethods = []service.Method{
	{Name: "add", Write: true, Ret: "string",
		Params: []service.Param{{Name: "title"}, {Name: "start"}, {Name: "end"}, {Name: "attendees", Default: "[]"}, {Name: "location", Default: `""`}, {Name: "description", Default: `""`}},
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			e := workspace.Event{
				Title:       a.Str(0),
				Start:       a.Str(1),
				End:         a.Str(2),
				Attendees:   a.StrList(3, false),
				Location:    a.OptStr(4, ""),
				Description: a.OptStr(5, ""),
			}
			if err := a.Done(); err != nil {
				return nil, err
			}
			id, err := st.Calendar().Add(e)
			if err != nil {
				return nil, err
			}
			return starlark.String(id), nil
		},
		Doc: "Adds an event and returns its id (\"e1\", \"e2\", …). start and end are RFC 3339 times (stored with seconds, in the offset given, UTC when none is given); end must be after start and the title must not be empty."},
	{Name: "get", Params: []service.Param{{Name: "id"}}, Ret: "struct | None",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			id := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			e, ok := st.Calendar().Get(id)
			if !ok {
				return starlark.None, nil
			}
			return EventValue(e), nil
		},
		Doc: "Returns event id as a struct with id, title, start, end, attendees, location and description, or None when there is no such event."},
	{Name: "events", Params: []service.Param{{Name: "start", Default: "None"}, {Name: "end", Default: "None"}, {Name: "attendee", Default: "None"}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			start, end, who := a.OptStr(0, ""), a.OptStr(1, ""), a.OptStr(2, "")
			if err := a.Done(); err != nil {
				return nil, err
			}
			es, err := st.Calendar().Events(start, end, who)
			if err != nil {
				return nil, err
			}
			out := make([]starlark.Value, len(es))
			for i, e := range es {
				out[i] = EventValue(e)
			}
			return starlark.NewList(out), nil
		},
		Doc: "Returns the events (structs, as ws.calendar.get) that overlap the half-open range [start, end) and have attendee (exact, ignoring case), sorted by start then by id number. An event overlaps when it starts before end and ends after start, so touching events do not; a bound left out does not restrict."},
	{Name: "update", Params: []service.Param{{Name: "id"}, {Name: "**fields"}}, Ret: "struct", Write: true, Call: update,
		Doc: "Changes the given fields of event id (title, start, end, attendees, location, description; a field given as None is left as it is) and returns the updated event. Another field name, a missing event or an end not after the start is an error, and then nothing changes."},
	{Name: "remove", Params: []service.Param{{Name: "id"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			id := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return nil, st.Calendar().Remove(id)
		},
		Doc: "Deletes event id. A missing event is an error."},
}

func update(st *workspace.State, a service.Args) (starlark.Value, error) {
	id := a.Str(0)
	var p workspace.EventPatch
	for _, kv := range a.Kwargs() {
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
				l := a.StrListOf(name, v, false)
				p.Attendees = &l
			}
			continue
		default:
			a.Fail("unknown field %s (an event has title, start, end, attendees, location, description)", name)
			continue
		}
		if v == starlark.None {
			continue
		}
		s, ok := v.(starlark.String)
		if !ok {
			a.Fail("for parameter %s: got %s, want string", name, v.Type())
			continue
		}
		sv := string(s)
		*dst = &sv
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	e, err := st.Calendar().Update(id, p)
	if err != nil {
		return nil, err
	}
	return EventValue(e), nil
}
