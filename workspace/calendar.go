package workspace

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
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

// calSec holds the events by id (in natural order) and by start (the index of Events), each
// event in both.
type calSec struct {
	byID  pmap.Map[string, *eventEntry]
	index pmap.Map[evKey, *eventEntry]
	sum   digestSum // the events; next is hashed by State.Hash
	next  int
	// longest bounds the length of every event: where Events starts looking. It only grows, so
	// forks that removed a long event still agree on what they hold; it is not content.
	longest time.Duration
}

// evKey orders the index: by start (an instant), then by the number in the id.
type evKey struct {
	sec  int64
	nsec int
	num  int
}

func (e *eventEntry) key() evKey {
	return evKey{sec: e.start.Unix(), nsec: e.start.Nanosecond(), num: e.num}
}

func compareEvKeys(a, b evKey) int {
	return cmp.Or(cmp.Compare(a.sec, b.sec), cmp.Compare(a.nsec, b.nsec), cmp.Compare(a.num, b.num))
}

func newCalSec() calSec {
	return calSec{byID: pmap.New[string, *eventEntry](NaturalCompare), index: pmap.New[evKey, *eventEntry](compareEvKeys)}
}

func (e *eventEntry) digest() entryDigest { return digestOf('e', e.e.ID, &e.sum, "") }

// put stores e, new or in place of the event of the same id; o is the writing state's owner of
// nodes.
func (cs *calSec) put(o *pmap.Owner, e *eventEntry) {
	if old, had := cs.byID.Set(o, e.e.ID, e); had {
		cs.drop(o, old)
	}
	cs.index.Set(o, e.key(), e)
	cs.sum.add(e.digest())
	cs.longest = max(cs.longest, e.end.Sub(e.start))
}

// drop takes out of the index and the sum an event no longer stored under its id.
func (cs *calSec) drop(o *pmap.Owner, old *eventEntry) {
	cs.index.Delete(o, old.key())
	cs.sum.sub(old.digest())
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
	cal := s.calw()
	cal.next++
	e.ID = "e" + strconv.Itoa(cal.next)
	ne := newEventEntry(e, start, end, cal.next)
	cal.put(s.owner(), ne)
	s.record(Action{Kind: KindEvent, Op: "add", Key: e.ID, after: ne})
	return e.ID, nil
}

// Get returns a copy of event id.
func (c *Calendar) Get(id string) (Event, bool) {
	e, ok := c.cal.byID.Get(id)
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
	// The index is by start: an event that ends after from starts after from minus the longest
	// event, so the walk starts there and stops at the first event that starts at or after to.
	events := c.cal.index.All()
	if start != "" {
		first := from.Add(-c.cal.longest)
		events = c.cal.index.From(evKey{sec: first.Unix(), nsec: first.Nanosecond()})
	}
	out := []Event{}
	for _, e := range events {
		if end != "" && !e.start.Before(to) {
			break
		}
		if start != "" && !e.end.After(from) {
			continue
		}
		if attendee != "" && !containsFold(e.e.Attendees, attendee) {
			continue
		}
		out = append(out, e.e.clone())
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
	old, ok := s.cal.byID.Get(id)
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
		s.calw().put(s.owner(), ne)
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
	old, ok := s.cal.byID.Get(id)
	if !ok {
		return fmt.Errorf("no event %s", id)
	}
	_ = s.begin()
	cal, o := s.calw(), s.owner()
	cal.byID.Delete(o, id)
	cal.drop(o, old)
	s.record(Action{Kind: KindEvent, Op: "remove", Key: id, before: old})
	return nil
}
