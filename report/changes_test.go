package report

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readEvents(t *testing.T, path string) []trace.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	return events
}

// summary is a state change in one line per service: "calendar +e2 ~ -".
func summary(c *StateChange) string {
	var parts []string
	for _, s := range c.Services {
		parts = append(parts, s.Service+" +"+strings.Join(s.Added, ",")+" ~"+strings.Join(s.Changed, ",")+" -"+strings.Join(s.Removed, ","))
	}
	return strings.Join(parts, "; ")
}

// The replay finds what each call and each turn's `before` changed, service by service, with
// the entries before and after.
func TestReplayChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	events := readEvents(t, f.oracleTrace(t))
	ch := Replay(context.Background(), f.tasks["standup-room-move"], events, dsl.Limits{})
	require.Empty(t, ch.Note)
	require.Len(t, ch.Turns, 2)
	assert.True(t, ch.Turns[0].Empty(), "nothing runs before the first turn: %s", summary(ch.Turns[0]))
	assert.Equal(t, "files + ~/notes/rooms.md -", summary(ch.Turns[1]), "turn 2's before rewrites the notes")
	var got []string
	for _, c := range ch.Calls {
		got = append(got, summary(c))
	}
	// turn 1: calendar_list, calendar_create; turn 2: fs_read, calendar_list, calendar_update
	assert.Equal(t, []string{"", "calendar +e2 ~ -", "", "", "calendar + ~e2 -"}, got)
	upd := ch.Calls[4].Services[0].Actions
	require.Len(t, upd, 1)
	assert.Equal(t, "update", upd[0].Op)
	assert.Contains(t, upd[0].Before, `"location": "Elm"`)
	assert.Contains(t, upd[0].After, `"location": "Oak"`)

	// a model's episode: the fault and the tool error change nothing, the task's own tool
	// changes a record, fs_write adds a file
	events = readEvents(t, f.modelTrace(t))
	ch = Replay(context.Background(), f.tasks["stock-delivery-record"], events, dsl.Limits{})
	require.Empty(t, ch.Note)
	got = nil
	for _, c := range ch.Calls {
		got = append(got, summary(c))
	}
	assert.Equal(t, []string{"", "", "records + ~stock/sku-7 -", "", "files +/inbox/booked.md ~ -"}, got)
}

// Where the replay no longer matches the trace, the changes stop there and the note says where
// and why; a task whose setup changed shows none.
func TestReplayStopsWhereTheTraceDiffers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	events := readEvents(t, f.oracleTrace(t))
	// the trace says calendar_create (call_2) left another state
	n := 0
	for _, e := range events {
		if r, ok := e.Body.(*trace.CallResult); ok {
			if n++; n == 2 {
				r.State = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
			}
		}
	}
	ch := Replay(context.Background(), f.tasks["standup-room-move"], events, dsl.Limits{})
	assert.Len(t, ch.Calls, 1)
	assert.Contains(t, ch.Note, "after call call_2 (turn 0)")

	// another task under the same name: its setup makes another state
	other := *f.tasks["q3-total-reply"]
	other.Name = "standup-room-move"
	ch = Replay(context.Background(), &other, readEvents(t, f.oracleTrace(t)), dsl.Limits{})
	assert.Empty(t, ch.Calls)
	assert.Contains(t, ch.Note, "the state after setup is not the one the trace records")

	// the view says it too, and shows the conversation
	ev := episodeOf(events)
	applyChanges(ev, ch)
	assert.Equal(t, ch.Note, ev.ChangesNote)
	assert.False(t, ev.Turns[0].Items[0].Call.ChangesKnown)
}

// A task whose tool is named like the replay's probe still replays: the probe takes another name.
func TestProbeName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	task := *f.tasks["stock-delivery-record"]
	assert.Equal(t, "report_state_probe", probeName(&task))
	spec := *task.Tools[0]
	tool := *spec.Tool
	tool.Name = "report_state_probe"
	spec.Tool = &tool
	task.Tools = append([]*dsl.ToolSpec{&spec}, task.Tools...)
	assert.Equal(t, "report_state_probe_2", probeName(&task))
}

// A replay that runs past its time limit shows what it reached, and says why the rest is missing.
func TestReplayTimeLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := f.oracleTrace(t)
	opts := f.options()
	opts.TimeLimit = 1 // a nanosecond: over before setup ends
	ch := changesOf(context.Background(), path, readEvents(t, path), opts)
	assert.Equal(t, "the replay was stopped at its time limit of 1ns, so the changes after that are not shown", ch.Note)
	assert.Empty(t, ch.Calls)
}
