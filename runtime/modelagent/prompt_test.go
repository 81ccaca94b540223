package modelagent_test

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/stdlib/timemod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The system prompt states the user's time zone and the time there: UTC by default, and for a
// task's timezone the local time (its own weekday) beside the time in UTC.
func TestSystemPromptTimeZone(t *testing.T) {
	t.Parallel()
	utc := modelagent.DefaultSystemPrompt("me@acme.example", "2026-01-05T03:00:00Z")
	assert.Contains(t, utc, "It is now Monday, 2026-01-05T03:00:00Z. The user's time zone is UTC. ")

	ny, err := timemod.Location("-05:00")
	require.NoError(t, err)
	local := modelagent.DefaultSystemPromptIn("me@acme.example", "2026-01-05T03:00:00Z", ny)
	assert.Contains(t, local, "It is now Sunday, 2026-01-04T22:00:00-05:00 in the user's time zone, UTC-05:00 (2026-01-05T03:00:00Z in UTC)")
	assert.NotContains(t, local, "Monday", "the weekday is the user's")

	// a template gets the zone and the local time too
	got := modelagent.FillSystem("{address} {now} {timezone} {local_now}", "me@acme.example", "2026-01-05T03:00:00Z", ny)
	assert.Equal(t, "me@acme.example 2026-01-05T03:00:00Z -05:00 Sunday, 2026-01-04T22:00:00-05:00", got)
	assert.Equal(t, "x UTC Monday, 2026-01-05T03:00:00Z", modelagent.FillSystem("x {timezone} {local_now}", "", "2026-01-05T03:00:00Z", nil))
}

// A model agent of a task with a time zone is told it, in its first request.
func TestSystemPromptOfTaskTimeZone(t *testing.T) {
	t.Parallel()
	f := newFake(t, say("Hi."))
	a, _ := newAgent(t, f, nil)
	src := strings.Replace(copyNote, "max_calls_per_turn = 6,", `max_calls_per_turn = 6, timezone = "+01:00",`, 1)
	p := prepare(t, src)
	res, _ := run(t, p, a)
	require.Nil(t, res.AgentErr)
	content := messages(t, f.requests()[0])[0]["content"].(string)
	assert.Contains(t, content, "It is now Monday, 2026-01-05T10:00:00+01:00 in the user's time zone, UTC+01:00 (2026-01-05T09:00:00Z in UTC)")
	assert.Equal(t, modelagent.SystemPromptOf("", p), content)
}
