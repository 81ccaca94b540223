package episode_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

const simTasks = `
def _ann(said, round):
    if "budget" in said:
        return "We can spend 500 euros."
    if said.startswith("Booked"):
        return None
    return "Please just ask me what you need."

ann = simulated_user(
    opening = "Book a venue for the team dinner.",
    persona = "Ann, the office manager",
    goal = "a venue booked for the team dinner",
    facts = {"budget": "five hundred euros", "date": "the third of May"},
    done_when = "a venue is booked within the budget",
    stand_in = _ann,
)

def _solve(agent):
    answer = agent.ask("What budget do we have?")
    agent.call("fs_write", path = "/booking.txt", content = answer)
    agent.reply("Booked within: " + answer)

def _verify(ws, ep):
    check(ws.fs.exists("/booking.txt") and ws.fs.read("/booking.txt") == "We can spend 500 euros.", "SECRET-CHECK the budget from the user")

task(name = "clarify", prompt = ann, tools = ["fs"], solution = _solve, verify = _verify)

def _never(said, round):
    return "Tell me more (%d)." % round

chatty = simulated_user(opening = "Help me.", persona = "Bo", goal = "help", rounds = 2, stand_in = _never)

def _ask3(agent):
    for i in range(3):
        agent.ask("Question %d?" % i)
    agent.reply("Bye.")

task(name = "rounds", prompt = chatty, tools = ["fs"], solution = _ask3)
task(name = "chatty-noop", turns = [turn(user = chatty, solution = _ask3)], tools = ["fs"])

def _ask_plain(agent):
    agent.ask("Anything?")

task(name = "not-simulated", prompt = "Do it.", tools = ["fs"], solution = _ask_plain)

def _opening(ws, ep):
    return "Second turn, after: " + ep.reply

def _one(agent):
    agent.reply("First done.")

task(name = "opening-fn", tools = ["fs"], turns = [
    turn(user = "First.", solution = _one),
    turn(user = simulated_user(opening = _opening, persona = "Cy", goal = "g", stand_in = _ann), solution = _solve),
])

def _crash(said, round):
    return [][round]

def _bad_type(said, round):
    return 42

task(name = "stand-in-crash", prompt = simulated_user(opening = "Hi.", persona = "P", goal = "G", stand_in = _crash), tools = ["fs"], solution = _solve)
task(name = "stand-in-type", prompt = simulated_user(opening = "Hi.", persona = "P", goal = "G", stand_in = _bad_type), tools = ["fs"], solution = _solve)
`

// recorder records the models' exchanges, and the order of the events by kind.
type recorder struct {
	events []string
	asks   []*episode.UserAsk
	judges []*episode.JudgeCall
}

func (r *recorder) OnUser(turn int, content, state, now string) { r.events = append(r.events, "user") }
func (r *recorder) OnAssistant(int, *episode.AssistantMessage)  {}
func (r *recorder) OnNotRun(int, string, string)                {}
func (r *recorder) OnUserAsk(x *episode.UserAsk) {
	r.events = append(r.events, "ask")
	r.asks = append(r.asks, x)
}
func (r *recorder) OnJudge(j *episode.JudgeCall) {
	r.events = append(r.events, "judge")
	r.judges = append(r.judges, j)
}
func (r *recorder) OnCall(*episode.Call)   { r.events = append(r.events, "call") }
func (r *recorder) OnResult(*episode.Call) {}
func (r *recorder) OnReply(int, string)    { r.events = append(r.events, "reply") }
func (r *recorder) OnTurnEnd(*episode.TurnResult) {
	r.events = append(r.events, "turn_end")
}

func runWith(t *testing.T, src, name string, agent episode.Agent, models *episode.Models) (*episode.Result, *recorder) {
	t.Helper()
	p, d := episode.Prepare(context.Background(), load(t, src)[name], episode.Options{})
	require.Nil(t, d)
	rec := &recorder{}
	return p.Run(context.Background(), agent, episode.RunOptions{Observer: rec, Models: models}), rec
}

// roles and contents of a request's messages.
func messagesOf(t *testing.T, req []jsonv.Value) (roles, contents []string) {
	t.Helper()
	for _, m := range req {
		o, ok := m.(*jsonv.Object)
		require.True(t, ok)
		role, _ := o.Get("role")
		content, _ := o.Get("content")
		roles = append(roles, role.(string))
		contents = append(contents, content.(string))
	}
	return roles, contents
}

// The oracle asks a clarifying question within the turn and the stand-in answers it; the final
// reply reaches the user, who is then done. The request a user model would get is the persona's
// view of the turn: the facts only in the system message, the opening first, the agent's
// messages as "user" ones, and nothing of the verifier or the solution.
func TestSimulatedUserAnswersWithinTheTurn(t *testing.T) {
	r, rec := runWith(t, simTasks, "clarify", episode.Oracle{}, nil)
	require.Nil(t, r.Err)
	assert.True(t, r.Passed, "the reference used the stand-in's answer")
	tr := r.Turns[0]
	assert.Equal(t, 1, tr.Rounds, "one answer; the done does not count")
	assert.Equal(t, "Book a venue for the team dinner.", tr.User)
	require.Len(t, tr.Asks, 2)
	a0, a1 := tr.Asks[0], tr.Asks[1]
	assert.Equal(t, episode.UserAsk{Turn: 0, Round: 0, Said: "What budget do we have?", Content: "We can spend 500 euros.", Source: "stand-in",
		Request: a0.Request, RequestSHA256: a0.RequestSHA256}, *a0)
	assert.Equal(t, episode.UserAsk{Turn: 0, Round: 1, Said: "Booked within: We can spend 500 euros.", Calls: 1, Done: true, Source: "stand-in",
		Request: a1.Request, RequestSHA256: a1.RequestSHA256}, *a1, "the final reply came after the booking call")
	assert.Equal(t, tr.Asks, rec.asks, "each exchange is reported")
	assert.Equal(t, []string{"user", "ask", "call", "reply", "ask", "turn_end"}, rec.events, "the final reply goes to the user after it is given")

	roles, contents := messagesOf(t, a0.Request)
	assert.Equal(t, []string{"system", "assistant", "user"}, roles)
	assert.Equal(t, []string{"Book a venue for the team dinner.", "What budget do we have?"}, contents[1:])
	sys := contents[0]
	for _, want := range []string{"Ann, the office manager", "a venue booked for the team dinner", "a venue is booked within the budget",
		"- budget: five hundred euros\n- date: the third of May\n", "reveal a fact only when the assistant asks for it", "answer exactly DONE"} {
		assert.Contains(t, sys, want)
	}
	for _, hidden := range []string{"SECRET-CHECK", "booking.txt", "Please just ask"} {
		assert.NotContains(t, jsonv.MustEncode(a0.Request), hidden, "the user model is told only what the persona knows")
	}
	for _, c := range contents[1:] {
		assert.NotContains(t, c, "five hundred euros", "the facts are only in the system message")
	}
	sum := sha256.Sum256([]byte(jsonv.MustEncode(a0.Request)))
	assert.Equal(t, hex.EncodeToString(sum[:]), a0.RequestSHA256)

	roles, contents = messagesOf(t, a1.Request)
	assert.Equal(t, []string{"system", "assistant", "user", "assistant", "user"}, roles)
	assert.Equal(t, []string{"Book a venue for the team dinner.", "What budget do we have?", "We can spend 500 euros.",
		"Booked within: We can spend 500 euros."}, contents[1:])
	assert.Equal(t, episode.UserRequest(load(t, simTasks)["clarify"].Turns[0].Sim, tr.User, tr.Asks[:1], a1.Said), a1.Request)
	assert.NotEqual(t, a0.RequestSHA256, a1.RequestSHA256)
}

// The user answers at most `rounds` times in a turn; an ask after that is recorded as a
// "rounds" exchange that asks nobody. The final reply of an agent whose user is not done yet is
// an exchange too, answered or not.
func TestSimulatedUserRounds(t *testing.T) {
	r, rec := runWith(t, simTasks, "rounds", episode.Oracle{}, nil)
	require.Nil(t, r.Err)
	tr := r.Turns[0]
	assert.Equal(t, 2, tr.Rounds)
	require.Len(t, tr.Asks, 3, "the user was done after its rounds: the reply is not sent")
	assert.Equal(t, []string{"Tell me more (0).", "Tell me more (1).", ""}, []string{tr.Asks[0].Content, tr.Asks[1].Content, tr.Asks[2].Content})
	x := tr.Asks[2]
	assert.Equal(t, episode.UserAsk{Turn: 0, Round: 2, Said: "Question 2?", Done: true, Source: "rounds"}, *x, "nobody asked: no request")
	assert.Equal(t, []string{"user", "ask", "ask", "ask", "reply", "turn_end"}, rec.events)

	// The noop agent only replies: the user sees the reply and answers it, and the turn ends.
	r, _ = runWith(t, simTasks, "chatty-noop", episode.Noop{}, nil)
	require.Nil(t, r.Err)
	tr = r.Turns[0]
	assert.Equal(t, "Done.", tr.Reply)
	assert.Equal(t, 1, tr.Rounds)
	require.Len(t, tr.Asks, 1)
	assert.Equal(t, "Done.", tr.Asks[0].Said)
	assert.Equal(t, "Tell me more (0).", tr.Asks[0].Content)
	assert.False(t, tr.Asks[0].Done, "an answer to the final reply is recorded, and the turn ends anyway")

	// An agent that spends the rounds and then replies: the reply is a "rounds" exchange.
	ag := &asker{said: []string{"a?", "b?"}, reply: "Final."}
	r, _ = runWith(t, simTasks, "chatty-noop", ag, nil)
	require.Nil(t, r.Err)
	tr = r.Turns[0]
	assert.Equal(t, 2, tr.Rounds)
	require.Len(t, tr.Asks, 3)
	assert.Equal(t, episode.UserAsk{Turn: 0, Round: 2, Said: "Final.", Done: true, Source: "rounds"}, *tr.Asks[2])
	assert.Equal(t, []askResult{{"Tell me more (0).", false}, {"Tell me more (1).", false}}, ag.got)
	assert.True(t, ag.simulated)
}

// asker is a Go agent that sends its messages to the simulated user, then replies.
type asker struct {
	said      []string
	reply     string
	got       []askResult
	simulated bool
	err       error
}

type askResult struct {
	Answer string
	Done   bool
}

func (a *asker) Name() string { return "asker" }

func (a *asker) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	a.simulated = tc.Simulated()
	for _, s := range a.said {
		answer, done, err := tc.Ask(s)
		if err != nil {
			a.err = err
			return "", err
		}
		a.got = append(a.got, askResult{answer, done})
	}
	return a.reply, nil
}

// Asking where there is no simulated user is an error: agent.ask in a solution is a
// solution-error at the call, TurnContext.Ask an error.
func TestAskWithoutSimulatedUser(t *testing.T) {
	r, _ := runWith(t, simTasks, "not-simulated", episode.Oracle{}, nil)
	require.NotNil(t, r.Err)
	assert.Equal(t, "solution-error", r.Err.Code)
	assert.Contains(t, r.Err.Message, "agent.ask: turn 0 has no simulated user to ask")
	assert.Equal(t, lineOf(simTasks, `agent.ask("Anything?")`), r.Err.Line, r.Err.String())

	ag := &asker{said: []string{"hello?"}}
	r, rec := runWith(t, simTasks, "not-simulated", ag, nil)
	require.NotNil(t, r.Err)
	assert.False(t, ag.simulated)
	assert.ErrorContains(t, ag.err, "turn 0 has no simulated user")
	assert.Empty(t, rec.asks)
}

// An opening given as a function is computed when the turn starts, like any user function, and
// starts the user model's side of the conversation.
func TestSimulatedUserOpeningFunction(t *testing.T) {
	r, _ := runWith(t, simTasks, "opening-fn", episode.Oracle{}, nil)
	require.Nil(t, r.Err)
	tr := r.Turns[1]
	assert.Equal(t, "Second turn, after: First done.", tr.User)
	assert.Nil(t, r.Turns[0].Asks, "the first turn's user is not simulated")
	require.NotEmpty(t, tr.Asks)
	assert.Equal(t, 1, tr.Asks[0].Turn)
	_, contents := messagesOf(t, tr.Asks[0].Request)
	assert.Equal(t, "Second turn, after: First done.", contents[1])
	assert.Contains(t, contents[0], "You know nothing more than what your first message says.")
}

// A stand-in that fails, or answers something other than a string or None, ends the episode
// with a script-error at the stand-in, whoever asked.
func TestStandInErrors(t *testing.T) {
	for _, agent := range []episode.Agent{episode.Oracle{}, episode.Noop{}, &asker{said: []string{"x"}}} {
		r, _ := runWith(t, simTasks, "stand-in-crash", agent, nil)
		require.NotNil(t, r.Err, agent.Name())
		assert.Equal(t, "script-error", r.Err.Code)
		assert.Contains(t, r.Err.Message, "turn 0: simulated user: stand_in: ")
		assert.Contains(t, r.Err.Message, "index 0 out of range")
		assert.Equal(t, lineOf(simTasks, "return [][round]"), r.Err.Line, "the line in the stand-in")
		assert.False(t, r.Passed)

		r, _ = runWith(t, simTasks, "stand-in-type", agent, nil)
		require.NotNil(t, r.Err, agent.Name())
		assert.Equal(t, "script-error", r.Err.Code)
		assert.Equal(t, "turn 0: simulated user: stand_in returned int, want string or None", r.Err.Message)
		assert.Equal(t, lineOf(simTasks, "def _bad_type"), r.Err.Line, "the stand-in's def")
	}
}

// An agent that goes on after a failed exchange cannot save the episode.
func TestFailedExchangeEndsTheEpisode(t *testing.T) {
	ag := &ignoring{}
	r, _ := runWith(t, simTasks, "stand-in-type", ag, nil)
	require.NotNil(t, r.Err)
	assert.Equal(t, "script-error", r.Err.Code)
	assert.Equal(t, 2, ag.errs, "a later Ask fails the same way")
	assert.False(t, r.Turns[0].Answered)
}

type ignoring struct{ errs int }

func (*ignoring) Name() string { return "ignoring" }

func (a *ignoring) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	for i := 0; i < 2; i++ {
		if _, _, err := tc.Ask("hi"); err != nil {
			a.errs++
		}
	}
	return "fine", nil
}

// A Scripted agent re-issues recorded messages to the user among its calls: the oracle's
// exchanges come out the same.
func TestScriptedAsks(t *testing.T) {
	r, _ := runWith(t, simTasks, "clarify", episode.Oracle{}, nil)
	require.Nil(t, r.Err)
	s := &episode.Scripted{Label: "replay", Replies: []string{r.Turns[0].Reply}, Calls: [][]episode.ScriptedCall{{
		{Ask: true, Said: r.Turns[0].Asks[0].Said},
		{Name: r.Calls[0].Name, Args: r.Calls[0].Args},
	}}}
	again, _ := runWith(t, simTasks, "clarify", s, nil)
	require.Nil(t, again.Err)
	assert.Equal(t, r.Turns[0].Asks, again.Turns[0].Asks)
	assert.True(t, again.Passed)
}

const judgeTasks = `
def _solve(agent):
    agent.reply("We can spend 500 euros on the venue.")

def _names_budget(text):
    return ("500" in text, "it says 500")

def _names_date(text):
    return "May" in text

def _verify(ws, ep):
    v = judge(ep.reply, "The reply names the budget.\nIt may say more.", stand_in = _names_budget, weight = 2)
    judge(ep.reply, "The reply names the date.", stand_in = _names_date)
    judge(ep.reply, "` + long + `", stand_in = _names_budget, weight = 0.5)
    print("verdict %s %s %s" % (v.passed, v.score, v.reason))

task(name = "judged", prompt = "Plan the dinner.", tools = ["fs"], solution = _solve, verify = _verify)

def _turn_verify(ws, ep):
    judge(ep.reply, "Polite.", stand_in = lambda text: True)

task(name = "judged-turn", turns = [turn(user = "Hi.", solution = _solve, verify = _turn_verify)], tools = ["fs"])

def _judge_in_solution(agent):
    judge("x", "r", stand_in = _names_date)

task(name = "judge-in-solution", prompt = "p", tools = ["fs"], solution = _judge_in_solution)

def _crash(text):
    return {}["x"]

def _verify_crash(ws, ep):
    judge(ep.reply, "r", stand_in = _crash)

def _three(text):
    return (True, "a", "b")

def _verify_type(ws, ep):
    judge(ep.reply, "r", stand_in = _three)

def _verify_rubric(ws, ep):
    judge(ep.reply, "  ", stand_in = _three)

task(name = "judge-crash", prompt = "p", tools = ["fs"], solution = _solve, verify = _verify_crash)
task(name = "judge-type", prompt = "p", tools = ["fs"], solution = _solve, verify = _verify_type)
task(name = "judge-rubric", prompt = "p", tools = ["fs"], solution = _solve, verify = _verify_rubric)
`

const long = "A rubric whose first line is far too long to be shown in full in the message of the item that the judge records for it"

// The stand-in's verdicts become check items with their weight and a message naming the rubric
// and the reason; a failing judge lowers the score; each verdict is reported before the
// verifier's items are.
func TestJudgeStandIn(t *testing.T) {
	var printed []string
	task := load(t, judgeTasks)["judged"]
	p, d := episode.Prepare(context.Background(), task, episode.Options{Print: func(_ syntax.Position, msg string) { printed = append(printed, msg) }})
	require.Nil(t, d)
	rec := &recorder{}
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{Observer: rec})
	require.Nil(t, r.Err)
	require.Len(t, r.Items, 3)
	type item struct {
		Kind, Message string
		Weight        float64
		Passed        bool
	}
	var items []item
	for _, it := range r.Items {
		items = append(items, item{it.Kind, it.Message, it.Weight, it.Passed})
		assert.Nil(t, it.Turn)
	}
	assert.Equal(t, []item{
		{"check", "judge: The reply names the budget.: it says 500", 2, true},
		{"check", "judge: The reply names the date.", 1, false},
		{"check", "judge: " + strings.TrimSpace(long[:80]) + "…: it says 500", 0.5, true},
	}, items)
	assert.InDelta(t, 2.5/3.5, r.Score, 1e-9, "the failed verdict lowers the score")
	assert.False(t, r.Passed)
	assert.Equal(t, []string{"verdict True 1.0 it says 500"}, printed, "judge returns the verdict")
	assert.Equal(t, lineOf(judgeTasks, "v = judge("), int(r.Items[0].Pos.Line), "the item is at the judge() call")

	require.Len(t, rec.judges, 3)
	j := rec.judges[1]
	assert.Equal(t, episode.JudgeCall{Rubric: "The reply names the date.", Text: "We can spend 500 euros on the venue.",
		Request: j.Request, RequestSHA256: j.RequestSHA256, Passed: false, Score: 0, Source: "stand-in"}, *j)
	assert.Equal(t, 1.0, rec.judges[0].Score)
	roles, contents := messagesOf(t, j.Request)
	assert.Equal(t, []string{"system", "user"}, roles)
	assert.Contains(t, contents[0], "strict grader")
	assert.Contains(t, contents[0], `{"passed": true or false, "score": a number from 0 to 1, "reason": "one line"}`)
	assert.Equal(t, "Rubric:\nThe reply names the date.\n\nText:\nWe can spend 500 euros on the venue.", contents[1])
	sum := sha256.Sum256([]byte(jsonv.MustEncode(j.Request)))
	assert.Equal(t, hex.EncodeToString(sum[:]), j.RequestSHA256)
	assert.Equal(t, []string{"user", "reply", "turn_end", "judge", "judge", "judge"}, rec.events)

	r, rec = runWith(t, judgeTasks, "judged-turn", episode.Oracle{}, nil)
	require.Nil(t, r.Err)
	require.Len(t, rec.judges, 1)
	require.NotNil(t, rec.judges[0].Turn)
	assert.Equal(t, 0, *rec.judges[0].Turn)
	assert.Equal(t, 0, *r.Items[0].Turn)
	assert.Equal(t, []string{"user", "reply", "judge", "turn_end"}, rec.events, "the verdict comes before the turn's end")
}

// judge() is only allowed in a verifier; a stand-in that fails or answers the wrong type is a
// verify-error at the stand-in; a blank rubric is an error at the call.
func TestJudgeErrors(t *testing.T) {
	cases := []struct {
		task, code, msg string
		line            int
	}{
		{"judge-in-solution", "solution-error", "judge: only allowed inside a verifier", lineOf(judgeTasks, `judge("x"`)},
		{"judge-crash", "verify-error", "verifier: judge: stand_in: key \"x\" not in dict", lineOf(judgeTasks, `return {}["x"]`)},
		{"judge-type", "verify-error", "verifier: judge: stand_in returned a tuple (bool, string, string), want bool or (bool, str)", lineOf(judgeTasks, "def _three")},
		{"judge-rubric", "verify-error", "verifier: judge: rubric: is empty", lineOf(judgeTasks, `judge(ep.reply, "  "`)},
	}
	for _, c := range cases {
		r, _ := runWith(t, judgeTasks, c.task, episode.Oracle{}, nil)
		require.NotNil(t, r.Err, c.task)
		assert.Equal(t, c.code, r.Err.Code, c.task)
		assert.Contains(t, r.Err.Message, c.msg, c.task)
		assert.Equal(t, c.line, r.Err.Line, "%s: %s", c.task, r.Err)
		assert.Equal(t, 0.0, r.Score)
	}
}

// codedErr is a model failure that names its diagnostic code.
type codedErr struct{}

func (codedErr) Error() string    { return "the endpoint is down" }
func (codedErr) DiagCode() string { return episode.ModelError }

// With RunOptions.Models, the user model and the judge model answer instead of the stand-ins,
// are given the requests the engine built, and what they answer is recorded; a score out of
// [0, 1] is clamped.
func TestModelsReplaceStandIns(t *testing.T) {
	var userAsked []episode.UserAsk
	var judgeAsked []episode.JudgeCall
	models := &episode.Models{
		User: func(ctx context.Context, x *episode.UserAsk) error {
			userAsked = append(userAsked, *x)
			x.Content, x.Model = "model: "+x.Said, "user-model"
			if x.Round == 1 {
				x.Content = " DONE\n"
			}
			return nil
		},
		Judge: func(ctx context.Context, j *episode.JudgeCall) error {
			judgeAsked = append(judgeAsked, *j)
			j.Passed, j.Score, j.Reason, j.Model = strings.Contains(j.Rubric, "budget"), 7, "judged\nby the model", "judge-model"
			return nil
		},
	}
	r, rec := runWith(t, simTasks, "clarify", episode.Oracle{}, models)
	require.Nil(t, r.Err)
	assert.False(t, r.Passed, "the reference wrote the model's answer, not the stand-in's")
	tr := r.Turns[0]
	require.Len(t, tr.Asks, 2)
	assert.Equal(t, "model: What budget do we have?", tr.Asks[0].Content)
	assert.Equal(t, "model", tr.Asks[0].Source)
	assert.Equal(t, "user-model", tr.Asks[0].Model)
	assert.True(t, tr.Asks[1].Done, "DONE is done")
	assert.Equal(t, "", tr.Asks[1].Content)
	assert.Equal(t, 1, tr.Rounds)
	assert.Equal(t, tr.Asks, rec.asks)
	require.Len(t, userAsked, 2)
	assert.Equal(t, tr.Asks[0].Request, userAsked[0].Request, "the model got the engine's request")
	assert.Equal(t, tr.Asks[1].RequestSHA256, userAsked[1].RequestSHA256)
	assert.Equal(t, 1, userAsked[1].Round)

	r, rec = runWith(t, judgeTasks, "judged", episode.Oracle{}, models)
	require.Nil(t, r.Err)
	require.Len(t, rec.judges, 3)
	require.Len(t, judgeAsked, 3)
	assert.Equal(t, rec.judges[0].RequestSHA256, judgeAsked[0].RequestSHA256)
	assert.Equal(t, episode.JudgeRequest("The reply names the date.", "We can spend 500 euros on the venue."), judgeAsked[1].Request)
	for _, j := range rec.judges {
		assert.Equal(t, 1.0, j.Score, "clamped")
		assert.Equal(t, "model", j.Source)
		assert.Equal(t, "judge-model", j.Model)
	}
	assert.Equal(t, "judge: The reply names the budget.: judged by the model", r.Items[0].Message)
	assert.Equal(t, []bool{true, false, false}, []bool{r.Items[0].Passed, r.Items[1].Passed, r.Items[2].Passed})
	assert.InDelta(t, 2/3.5, r.Score, 1e-9)
}

// A model inside the task that fails ends the episode: model-error when its error says so,
// else the code of the place it failed in.
func TestModelsFail(t *testing.T) {
	for _, c := range []struct {
		err  error
		code string
	}{{codedErr{}, "model-error"}, {errors.New("bad answer"), ""}} {
		models := &episode.Models{
			User:  func(context.Context, *episode.UserAsk) error { return c.err },
			Judge: func(context.Context, *episode.JudgeCall) error { return c.err },
		}
		r, _ := runWith(t, simTasks, "clarify", episode.Oracle{}, models)
		require.NotNil(t, r.Err)
		assert.Equal(t, or(c.code, "script-error"), r.Err.Code)
		assert.Equal(t, "turn 0: simulated user: "+c.err.Error(), r.Err.Message)

		r, rec := runWith(t, judgeTasks, "judged", episode.Oracle{}, models)
		require.NotNil(t, r.Err)
		assert.Equal(t, or(c.code, "verify-error"), r.Err.Code)
		assert.Equal(t, "verifier: judge: "+c.err.Error(), r.Err.Message)
		assert.Equal(t, lineOf(judgeTasks, "v = judge("), r.Err.Line)
		assert.Empty(t, rec.judges, "no verdict")
		assert.Equal(t, episode.Inconclusive(r.Err.Code), c.code == "model-error")
	}
}

// lineOf is the line of src (1-based) where needle is; the needle must be there.
func lineOf(src, needle string) int {
	i := strings.Index(src, needle)
	if i < 0 {
		panic("no " + needle)
	}
	return strings.Count(src[:i], "\n") + 1
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Two runs give the same results and the same exchanges.
func TestSimulatedUserDeterministic(t *testing.T) {
	for _, name := range []string{"clarify", "rounds"} {
		r1, rec1 := runWith(t, simTasks, name, episode.Oracle{}, nil)
		r2, rec2 := runWith(t, simTasks, name, episode.Oracle{}, nil)
		assert.Equal(t, r1.Turns[0].Asks, r2.Turns[0].Asks, name)
		assert.Equal(t, rec1.asks, rec2.asks, name)
		assert.Equal(t, rec1.events, rec2.events, name)
		assert.Equal(t, r1.FinalState, r2.FinalState, name)
		assert.Equal(t, r1.Score, r2.Score, name)
	}
	r1, rec1 := runWith(t, judgeTasks, "judged", episode.Oracle{}, nil)
	r2, rec2 := runWith(t, judgeTasks, "judged", episode.Oracle{}, nil)
	assert.Equal(t, rec1.judges, rec2.judges)
	assert.Equal(t, r1.Items, r2.Items)
	assert.Equal(t, fmt.Sprint(r1.Score), fmt.Sprint(r2.Score))
}

// Asks placed by call index are sent before that call, the rest after the last call; a verifier
// reads them in ep.asks.
func TestScriptedAsksPlacedAndEpAsks(t *testing.T) {
	src := strings.Replace(simTasks, `task(name = "clarify", prompt = ann, tools = ["fs"], solution = _solve, verify = _verify)`,
		`task(name = "clarify", prompt = ann, tools = ["fs"], solution = _solve, verify = _verify)

def _asked(ws, ep):
    budget = [a for a in ep.asks if "budget" in a.said and a.answer]
    check(len(budget) == 1 and budget[0].round == 0 and budget[0].source == "stand-in" and not budget[0].done, "the budget was asked for: %s" % ep.asks)
    check(ep.asks[-1].done and ep.asks[-1].said == ep.reply, "the reply went to the user last")

task(name = "asked", prompt = ann, tools = ["fs"], solution = _solve, verify = _asked)`, 1)
	r, _ := runWith(t, src, "asked", episode.Oracle{}, nil)
	require.Nil(t, r.Err)
	assert.True(t, r.Passed, "%v", r.Items)

	list := &episode.Call{Name: "fs_list", Args: jsonv.NewObject("path", "/")}
	s := &episode.Scripted{Label: "placed", Replies: []string{r.Turns[0].Reply},
		Calls: [][]episode.ScriptedCall{{{Name: list.Name, Args: list.Args}, {Name: r.Calls[0].Name, Args: r.Calls[0].Args}}},
		Asks:  [][]episode.ScriptedAsk{{{Before: 1, Said: "What budget do we have?"}, {Before: 9, Said: "Is that all?"}}}}
	again, rec := runWith(t, src, "asked", s, nil)
	require.Nil(t, again.Err)
	assert.Equal(t, []string{"user", "call", "ask", "call", "ask", "reply", "ask", "turn_end"}, rec.events)
	assert.Equal(t, 1, again.Turns[0].Asks[0].Calls, "asked after the first call")
	assert.Equal(t, 2, again.Turns[0].Asks[1].Calls, "the trailing ask comes after every call")
	assert.True(t, again.Passed, "%v", again.Items)

	none := &episode.Scripted{Label: "guess", Replies: []string{r.Turns[0].Reply},
		Calls: [][]episode.ScriptedCall{{{Name: r.Calls[0].Name, Args: r.Calls[0].Args}}}}
	guessed, _ := runWith(t, src, "asked", none, nil)
	require.Nil(t, guessed.Err)
	assert.False(t, guessed.Passed, "an agent that never asked fails the verifier that reads ep.asks")
}
