package modelagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const simTask = `
def _ann(said, round):
    if "budget" in said:
        return "We can spend 500 euros."
    if said.startswith("Booked"):
        return None
    if said == "crash":
        return [][1]
    return "Please ask me what you need (%d)." % round

def _verify(ws, ep):
    check(ws.fs.exists("/booking.txt"), "booked")

task(name = "sim", tools = ["fs"], verify = _verify, prompt = simulated_user(
    opening = "Book a venue for the team dinner.",
    persona = "Ann, the office manager",
    goal = "a venue booked",
    facts = {"budget": "500 euros"},
    rounds = ROUNDS,
    stand_in = _ann,
))
`

// simSrc is simTask with the user's rounds.
func simSrc(rounds string) string { return strings.Replace(simTask, "ROUNDS", rounds, 1) }

// In a turn with a simulated user, a message without a tool call goes to the user: its answer
// comes back as a user message and the model goes on within the turn, until the user is done
// with a message, which is the reply.
func TestModelAsksTheSimulatedUser(t *testing.T) {
	f := newFake(t,
		say("What budget do we have?"),
		calls("", call("c1", "fs_write", `{"path":"/booking.txt","content":"500"}`)),
		say("Booked the venue for 500 euros."),
	)
	agent, _ := newAgent(t, f, nil)
	r := prepare(t, simSrc("3")).Run(context.Background(), agent, episode.RunOptions{})
	require.Nil(t, r.Err)
	assert.True(t, r.Passed)
	tr := r.Turns[0]
	assert.Equal(t, "Booked the venue for 500 euros.", tr.Reply)
	assert.Equal(t, 1, tr.Rounds)
	require.Len(t, tr.Asks, 2, "the reply the user was done with is not sent again")
	assert.Equal(t, "What budget do we have?", tr.Asks[0].Said)
	assert.Equal(t, "We can spend 500 euros.", tr.Asks[0].Content)
	assert.Equal(t, "Booked the venue for 500 euros.", tr.Asks[1].Said)
	assert.True(t, tr.Asks[1].Done)
	assert.Equal(t, 0, f.left())

	reqs := f.requests()
	require.Len(t, reqs, 3)
	msgs := messages(t, reqs[1])
	require.Len(t, msgs, 4)
	assert.Equal(t, "assistant", msgs[2]["role"])
	assert.Equal(t, "What budget do we have?", msgs[2]["content"])
	assert.Equal(t, "user", msgs[3]["role"])
	assert.Equal(t, "We can spend 500 euros.", msgs[3]["content"], "the user's answer, as it is")
	assert.Len(t, messages(t, reqs[2]), 6, "the tool call and its result follow")
}

// When the user's rounds are spent, the next message ends the turn as the reply; the model is
// not called again.
func TestModelSimulatedUserRoundsSpent(t *testing.T) {
	f := newFake(t, say("First question?"), say("Second question?"))
	agent, _ := newAgent(t, f, nil)
	r := prepare(t, simSrc("1")).Run(context.Background(), agent, episode.RunOptions{})
	require.Nil(t, r.Err)
	tr := r.Turns[0]
	assert.Equal(t, "Second question?", tr.Reply)
	assert.Equal(t, 1, tr.Rounds)
	require.Len(t, tr.Asks, 2)
	assert.Equal(t, "Please ask me what you need (0).", tr.Asks[0].Content)
	assert.Equal(t, episode.UserAsk{Turn: 0, Round: 1, Said: "Second question?", Done: true, Source: "rounds"}, *tr.Asks[1])
	assert.Len(t, f.requests(), 2)
	assert.False(t, r.Passed, "nothing was booked")
}

// A stand-in that fails ends the episode with its script-error; the agent stops there.
func TestModelSimulatedUserStandInFails(t *testing.T) {
	f := newFake(t, say("crash"), say("never asked"))
	agent, _ := newAgent(t, f, nil)
	r := prepare(t, simSrc("3")).Run(context.Background(), agent, episode.RunOptions{})
	require.NotNil(t, r.Err)
	assert.Equal(t, "script-error", r.Err.Code)
	assert.Contains(t, r.Err.Message, "turn 0: simulated user: stand_in: ")
	assert.Equal(t, 8, r.Err.Line, "the line in the stand-in")
	assert.Len(t, f.requests(), 1)
	assert.False(t, r.Turns[0].Answered)
}

// Two runs with the same model answers give the same exchanges and the same requests.
func TestModelSimulatedUserDeterministic(t *testing.T) {
	var asks [2][]*episode.UserAsk
	var bodies [2][]string
	for i := range asks {
		f := newFake(t, say("What budget do we have?"), say("Booked it."))
		agent, _ := newAgent(t, f, nil)
		r := prepare(t, simSrc("3")).Run(context.Background(), agent, episode.RunOptions{})
		require.Nil(t, r.Err)
		asks[i], bodies[i] = r.Turns[0].Asks, f.rawRequests()
	}
	assert.Equal(t, asks[0], asks[1])
	assert.Equal(t, bodies[0], bodies[1])
}
