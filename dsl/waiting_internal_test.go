package dsl

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeWall is a clock for the wall-clock limit that moves only when the test says so.
type fakeWall struct {
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
	fired   bool
}

func (t *fakeTimer) Stop() bool {
	was := !t.stopped && !t.fired
	t.stopped = true
	return was
}

// fire runs the timer's function, as time.AfterFunc would when its time came.
func (t *fakeTimer) fire() {
	if !t.stopped && !t.fired {
		t.fired = true
		t.f()
	}
}

func useFakeWall(t *testing.T) *fakeWall {
	fw := &fakeWall{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	oldNow, oldAfter := wallNow, wallAfter
	wallNow = func() time.Time { return fw.now }
	wallAfter = func(d time.Duration, f func()) wallTimer {
		ft := &fakeTimer{d: d, f: f}
		fw.timers = append(fw.timers, ft)
		return ft
	}
	t.Cleanup(func() { wallNow, wallAfter = oldNow, oldAfter })
	return fw
}

// The time a script spends in Waiting does not count towards its wall-clock limit: the limit
// starts again with what was left when the wait began, and still stops the script after it.
func TestWaitingPausesTheWallClock(t *testing.T) {
	fw := useFakeWall(t)
	th := NewThread("t", Limits{Timeout: 10 * time.Second}, nil)
	stop := Guard(context.Background(), th, Limits{Timeout: 10 * time.Second})
	defer stop()
	require.Len(t, fw.timers, 1)
	assert.Equal(t, 10*time.Second, fw.timers[0].d)

	fw.now = fw.now.Add(4 * time.Second)
	resume := Waiting(th)
	inner := Waiting(th) // waits nest: only the outer one restarts the clock
	assert.True(t, fw.timers[0].stopped, "the limit is paused")
	fw.now = fw.now.Add(time.Hour)
	inner()
	assert.Len(t, fw.timers, 1, "still waiting")
	resume()
	resume() // a second call does nothing
	require.Len(t, fw.timers, 2)
	assert.Equal(t, 6*time.Second, fw.timers[1].d, "what was left of the limit")
	assert.NoError(t, Charge(th, 0))

	fw.timers[1].fire()
	err := Charge(th, 0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), reasonTimeout)
}

// A limit that ran out before the wait began has stopped the script for good; a wait outside
// any limit, or after the call into the script returned, changes nothing.
func TestWaitingAfterTheLimit(t *testing.T) {
	fw := useFakeWall(t)
	th := NewThread("t", Limits{}, nil)
	stop := Guard(context.Background(), th, Limits{Timeout: time.Second})
	fw.timers[0].fire()
	resume := Waiting(th)
	resume()
	assert.Len(t, fw.timers, 1, "nothing restarted")
	assert.Error(t, Charge(th, 0))
	stop()

	th = NewThread("t", Limits{}, nil)
	stop = Guard(context.Background(), th, Limits{Timeout: time.Second})
	resume = Waiting(th)
	stop()
	resume()
	assert.Len(t, fw.timers, 2, "a wait that outlives the call restarts nothing")
	assert.NoError(t, Charge(th, 0))

	th = NewThread("t", Limits{}, nil)
	Waiting(th)() // no limit at all
	assert.Len(t, fw.timers, 2)
}
