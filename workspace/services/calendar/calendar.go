// Package calendar is the calendar service: the user's events.
//
// Its state is the kernel's own section (workspace.State.Calendar, written out by hand for
// speed); this package declares everything else about it: ws.calendar, the calendar_* tools,
// the setup summary, the history values and the words of ws.unexpected(events = [...]).
package calendar

import (
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Service declares the service (registered in package services).
var Service = &service.Service{
	Name: "calendar", Entry: "event",
	Doc:     "The user's calendar: events with a title, start and end, attendees, location and description.",
	WSDoc:   "The calendar. Events reach scripts as structs with id, title, start, end (RFC 3339), attendees, location and description; ids are \"e1\", \"e2\", ….",
	Kinds:   []string{workspace.KindEvent},
	Section: func(ch workspace.Changes) workspace.Section { return ch.Calendar },
	WS:      wsMethods,
	Tools:   agentTools,
	Setup:   setupText,
	Value:   service.ValueOf(EventValue),
	Keywords: []service.Keyword{
		{Name: "events", Doc: "allows changing or removing those event ids, and \"new\" adding events"},
	},
	Judge: judge,
	Probe: func(st *workspace.State) error {
		_, err := st.Calendar().Add(workspace.Event{Title: "probe", Start: "2026-01-05T10:00:00Z", End: "2026-01-05T11:00:00Z"})
		return err
	},
}

// setupText is every event.
func setupText(st *workspace.State) string {
	var b strings.Builder
	if evs, err := st.Calendar().Events("", "", ""); err == nil {
		for _, e := range evs {
			b.WriteString("event " + e.Title + " " + e.Start + " " + e.End + " " + e.Location + " " + strings.Join(e.Attendees, ", ") + "\n")
			b.WriteString(e.Description + "\n")
		}
	}
	return b.String()
}

// EventValue converts an event to the struct scripts see: id, title, start, end, attendees,
// location and description. Its list is fresh.
func EventValue(e workspace.Event) starlark.Value {
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"id":          starlark.String(e.ID),
		"title":       starlark.String(e.Title),
		"start":       starlark.String(e.Start),
		"end":         starlark.String(e.End),
		"attendees":   starconv.Strings(e.Attendees),
		"location":    starlark.String(e.Location),
		"description": starlark.String(e.Description),
	})
}

// judge says what the agent did to an event that ws.unexpected(events = [...]) does not allow.
func judge(keys [][]string, act workspace.Action) string {
	events := keys[0]
	if slices.Contains(events, "*") || act.Op == "add" && slices.Contains(events, "new") ||
		act.Op != "add" && slices.Contains(events, act.Key) {
		return ""
	}
	return map[string]string{"add": "added", "update": "changed", "remove": "removed"}[act.Op] + " event " + act.Key
}
