package workspace

import (
	"fmt"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
	"time"
)

// Clock is the virtual clock of a state. It moves only when a script moves it.
type Clock State

// Now returns the clock's time, in UTC.
func (c *Clock) Now() time.Time { return c.clock }

// NowString returns the clock's time as RFC 3339 in UTC with seconds ("2026-01-05T09:00:00Z").
func (c *Clock) NowString() string { return c.clock.Format(timefmt.Layout) }

// Set moves the clock to ts (any time ParseTime reads), forwards or backwards.
func (c *Clock) Set(ts string) error {
	s := (*State)(c)
	if s.frozen {
		return ErrFrozen
	}
	t, err := timefmt.Parse(ts)
	if err != nil {
		return err
	}
	_ = s.begin()
	s.clock = t.UTC()
	return nil
}

// Advance moves the clock forward by d (see ParseDuration). A negative duration is an error.
func (c *Clock) Advance(d string) error {
	s := (*State)(c)
	if s.frozen {
		return ErrFrozen
	}
	dur, err := timefmt.ParseDuration(d)
	if err != nil {
		return err
	}
	if dur < 0 {
		return fmt.Errorf("cannot advance the clock by a negative duration %q", d)
	}
	_ = s.begin()
	s.clock = s.clock.Add(dur)
	return nil
}
