package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Event is one calendar event. Values returned by Calendar are copies.
type Event struct {
	ID          string
	Title       string
	Start, End  string // RFC 3339, timefmt.Layout
	Attendees   []string
	Location    string
	Description string
}

func (e Event) clone() Event {
	e.Attendees = slices.Clone(e.Attendees)
	return e
}

// Calendar holds the events of a state. Ids are "e1", "e2", ….
type Calendar State

type eventEntry struct {
	e          Event
	start, end time.Time
	num        int
	sum        [32]byte
}

func newEventEntry(e Event, start, end time.Time, num int) *eventEntry {
	b := make([]byte, 0, 128)
	b = appendStr(b, e.ID)
	b = appendStr(b, e.Title)
	b = appendStr(b, e.Start)
	b = appendStr(b, e.End)
	b = appendStrs(b, e.Attendees)
	b = appendStr(b, e.Location)
	b = appendStr(b, e.Description)
	return &eventEntry{e: e, start: start, end: end, num: num, sum: sha256.Sum256(b)}
}

type calSec struct {
	entrySet[*eventEntry] // covers events only; next is hashed by State.Hash
	next                  int
}

// checkEvent normalises the times of e and checks it.
func checkEvent(e *Event) (start, end time.Time, err error) {
	if strings.TrimSpace(e.Title) == "" {
		return start, end, errors.New("title: empty")
	}
	if e.Start, start, err = timefmt.Normalize(e.Start); err != nil {
		return start, end, fmt.Errorf("start: %v", err)
	}
	if e.End, end, err = timefmt.Normalize(e.End); err != nil {
		return start, end, fmt.Errorf("end: %v", err)
	}
	if !end.After(start) {
		return start, end, fmt.Errorf("end %s is not after start %s", e.End, e.Start)
	}
	for _, a := range e.Attendees {
		if strings.TrimSpace(a) == "" {
			return start, end, errors.New("attendees: empty attendee")
		}
	}
	e.Attendees = slices.Clone(e.Attendees)
	if e.Attendees == nil {
		e.Attendees = []string{}
	}
	return start, end, nil
}

// Add stores e with the next id and returns the id. The title must not be empty, the times are
// normalised (see ParseTime) and the end must be after the start.
func (c *Calendar) Add(e Event) (string, error) {
	s := (*State)(c)
	if s.frozen {
		return "", ErrFrozen
	}
	start, end, err := checkEvent(&e)
	if err != nil {
		return "", err
	}
	_ = s.begin()
	s.cal.own(true)
	s.cal.next++
	e.ID = "e" + strconv.Itoa(s.cal.next)
	ne := newEventEntry(e, start, end, s.cal.next)
	s.cal.items[e.ID] = ne
	s.record(Action{Kind: KindEvent, Op: "add", Key: e.ID, after: ne})
	return e.ID, nil
}

// Get returns a copy of event id.
func (c *Calendar) Get(id string) (Event, bool) {
	e, ok := c.cal.items[id]
	if !ok {
		return Event{}, false
	}
	return e.e.clone(), true
}

// Events returns the events that overlap [start, end) and have attendee (exact, ignoring case),
// sorted by start (as instants) then by the number in the id. An empty start, end or attendee
// does not restrict. Overlap is half-open: an event overlaps when it starts before end and ends
// after start, so touching intervals do not overlap.
func (c *Calendar) Events(start, end, attendee string) ([]Event, error) {
	var from, to time.Time
	var err error
	if start != "" {
		if from, err = timefmt.Parse(start); err != nil {
			return nil, fmt.Errorf("start: %v", err)
		}
	}
	if end != "" {
		if to, err = timefmt.Parse(end); err != nil {
			return nil, fmt.Errorf("end: %v", err)
		}
	}
	if start != "" && end != "" && to.Before(from) {
		return nil, fmt.Errorf("end %s is before start %s", end, start)
	}
	es := make([]*eventEntry, 0, len(c.cal.items))
	for _, e := range c.cal.items {
		if end != "" && !e.start.Before(to) {
			continue
		}
		if start != "" && !e.end.After(from) {
			continue
		}
		if attendee != "" && !containsFold(e.e.Attendees, attendee) {
			continue
		}
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *eventEntry) int {
		if c := a.start.Compare(b.start); c != 0 {
			return c
		}
		return a.num - b.num
	})
	out := make([]Event, len(es))
	for i, e := range es {
		out[i] = e.e.clone()
	}
	return out, nil
}

// EventPatch lists the fields Update changes; nil fields stay as they are.
type EventPatch struct {
	Title, Start, End, Location, Description *string
	Attendees                                *[]string
}

// Update changes the given fields of event id and returns the event.
func (c *Calendar) Update(id string, p EventPatch) (Event, error) {
	s := (*State)(c)
	if s.frozen {
		return Event{}, ErrFrozen
	}
	old, ok := s.cal.items[id]
	if !ok {
		return Event{}, fmt.Errorf("no event %s", id)
	}
	e := old.e.clone()
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&e.Title, p.Title)
	set(&e.Start, p.Start)
	set(&e.End, p.End)
	set(&e.Location, p.Location)
	set(&e.Description, p.Description)
	if p.Attendees != nil {
		e.Attendees = *p.Attendees
	}
	start, end, err := checkEvent(&e)
	if err != nil {
		return Event{}, err
	}
	ne := newEventEntry(e, start, end, old.num)
	if ne.sum != old.sum {
		_ = s.begin()
		s.cal.own(false)
		s.cal.items[id] = ne
		s.record(Action{Kind: KindEvent, Op: "update", Key: id, before: old, after: ne})
	}
	return e.clone(), nil
}

// Remove deletes event id.
func (c *Calendar) Remove(id string) error {
	s := (*State)(c)
	if s.frozen {
		return ErrFrozen
	}
	old, ok := s.cal.items[id]
	if !ok {
		return fmt.Errorf("no event %s", id)
	}
	_ = s.begin()
	s.cal.own(true)
	delete(s.cal.items, id)
	s.record(Action{Kind: KindEvent, Op: "remove", Key: id, before: old})
	return nil
}
