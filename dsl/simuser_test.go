package dsl_test

import (
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const simSrc = `
def _stand_in(said, round):
    return None

def _opening(ws, ep):
    return "later"

ann = simulated_user(opening = "Book a room.", persona = "Ann", goal = "a room", stand_in = _stand_in,
                     facts = {"z budget": "500", "a date": "May 3"}, rounds = 2, done_when = "booked")

task(name = "single", prompt = ann, tools = ["fs"])
task(name = "turns", tools = ["fs"], turns = [
    turn(user = "plain"),
    turn(user = simulated_user(opening = _opening, persona = "Bo", goal = "g", stand_in = _stand_in)),
])
`

// A simulated user declares a turn's user: its opening is the turn's message (or function), the
// rest is kept as declared, the facts in their order.
func TestLoadSimulatedUser(t *testing.T) {
	t.Parallel()
	f := load(t, map[string]string{"a.star": simSrc}, "a.star")
	require.Empty(t, f.Diags)
	require.Len(t, f.Tasks, 2)

	single := f.Tasks[0]
	assert.True(t, single.SingleTurn)
	assert.Equal(t, "Book a room.", single.Prompt)
	require.Len(t, single.Turns, 1)
	turn := single.Turns[0]
	assert.Equal(t, "Book a room.", turn.User)
	require.NotNil(t, turn.Sim)
	s := turn.Sim
	assert.Equal(t, "Ann", s.Persona)
	assert.Equal(t, "a room", s.Goal)
	assert.Equal(t, "booked", s.DoneWhen)
	assert.Equal(t, 2, s.Rounds)
	assert.Equal(t, []dsl.Fact{{Key: "z budget", Value: "500"}, {Key: "a date", Value: "May 3"}}, s.Facts)
	assert.Equal(t, 8, int(s.Pos.Line))
	assert.Equal(t, 2, int(s.StandInPos().Line), "the stand-in's def")

	turns := f.Tasks[1].Turns
	assert.Nil(t, turns[0].Sim)
	require.NotNil(t, turns[1].Sim)
	assert.NotNil(t, turns[1].UserFn)
	assert.Equal(t, "", turns[1].User)
	assert.Equal(t, 3, turns[1].Sim.Rounds, "the default")
	assert.Empty(t, turns[1].Sim.Facts)

	// a task whose one turn has a simulated user is multi-turn: the user speaks more than once
	assert.True(t, single.MultiTurn())
	plain := load(t, map[string]string{"b.star": `task(name = "p", prompt = "hi", tools = ["fs"])`}, "b.star")
	require.Empty(t, plain.Diags)
	assert.False(t, plain.Tasks[0].MultiTurn())
}

// Every argument of simulated_user is checked when the file loads, and judge() is only allowed
// inside a verifier.
func TestSimulatedUserErrors(t *testing.T) {
	t.Parallel()
	fn := "def f(said, round):\n    pass\ndef one(x):\n    pass\n"
	cases := []struct{ name, src, code, msg string }{
		{"missing stand-in", `simulated_user(opening = "o", persona = "p", goal = "g")`, "schema", "simulated_user: missing required argument stand_in"},
		{"stand-in arity", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = one)`, "schema", "simulated_user: stand_in: one must take (said, round)"},
		{"stand-in type", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = "x")`, "schema", "simulated_user: stand_in: got string, want function (said, round)"},
		{"opening empty", `simulated_user(opening = " ", persona = "p", goal = "g", stand_in = f)`, "schema", "simulated_user: opening: is empty"},
		{"opening type", `simulated_user(opening = 3, persona = "p", goal = "g", stand_in = f)`, "schema", "simulated_user: opening: got int, want string or function (ws, ep)"},
		{"opening arity", `simulated_user(opening = one, persona = "p", goal = "g", stand_in = f)`, "schema", "simulated_user: opening: one must take (ws, ep)"},
		{"persona empty", `simulated_user(opening = "o", persona = "", goal = "g", stand_in = f)`, "schema", "simulated_user: persona: is empty; say who the user is"},
		{"goal type", `simulated_user(opening = "o", persona = "p", goal = ["g"], stand_in = f)`, "schema", "simulated_user: goal: got list, want string"},
		{"done_when type", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, done_when = 1)`, "schema", "simulated_user: done_when: got int, want string"},
		{"facts type", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, facts = ["a"])`, "schema", "simulated_user: facts: got list, want dict of str -> str"},
		{"facts key", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, facts = {1: "a"})`, "schema", "simulated_user: facts: key 1: got int, want string"},
		{"facts empty key", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, facts = {"": "a"})`, "schema", "simulated_user: facts: a key is empty"},
		{"facts value", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, facts = {"budget": 500})`, "schema", `simulated_user: facts: "budget": got int, want string`},
		{"rounds zero", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, rounds = 0)`, "schema", "simulated_user: rounds: 0 is not between 1 and 100"},
		{"rounds type", `simulated_user(opening = "o", persona = "p", goal = "g", stand_in = f, rounds = "3")`, "schema", "simulated_user: rounds: got string, want int"},
		{"prompt type", `task(name = "a", prompt = 3, tools = [])`, "schema", "task: prompt: got int, want string or simulated_user(...)"},
		{"judge at top level", `judge("t", "r", stand_in = one)`, "script-error", "judge: only allowed inside a verifier"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := load(t, map[string]string{"a.star": fn + c.src + "\n"}, "a.star")
			require.Len(t, f.Diags, 1, "diags: %v", f.Diags)
			d := f.Diags[0]
			assert.Equal(t, c.code, d.Code)
			assert.Contains(t, d.Message, c.msg)
			assert.Equal(t, "c/a.star", d.File)
			assert.Equal(t, 5, d.Line, d.String())
		})
	}
}

// The item message of a judge() call: the rubric's first line, cut at 80 characters, and the
// reason on one line.
func TestJudgeMessage(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "judge: Names the budget.: says 500 euros", dsl.JudgeMessage("\n  Names the budget.\nDetails.", "says 500\n  euros "))
	assert.Equal(t, "judge: Names the budget.", dsl.JudgeMessage("Names the budget.", " "))
	long := "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé"
	assert.Equal(t, "judge: "+string([]rune(long)[:80])+"…", dsl.JudgeMessage(long, ""))
}
