package conversation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threeWaysTask has a first turn whose user is simulated and a second an hour later (a time
// note, in the user's time zone), at most three calls per turn.
const threeWaysTask = `
def _setup(ws):
    ws.mail.address = "me@acme.example"
    ws.fs.write("/a.txt", "alpha")

def _user(said, round):
    if "which" in said.lower():
        return "The blue one."
    return None

def _solve1(agent):
    agent.ask("Which folder colour?")
    agent.reply("Noted: blue.")

def _solve2(agent):
    agent.call("fs_read", path = "/a.txt")
    agent.reply("Read.")

task(
    name = "three-ways",
    turns = [
        turn(user = simulated_user(opening = "Note my folder colour.", persona = "Ann", goal = "the colour noted", stand_in = _user),
             solution = _solve1, verify = lambda ws, ep: check(True, "ok")),
        turn(user = "Now read /a.txt and list /.", advance = "1h", solution = _solve2,
             verify = lambda ws, ep: check(True, "ok")),
    ],
    tools = ["fs"],
    setup = _setup,
    max_calls_per_turn = 3,
    timezone = "+01:00",
)
`

// step is one message of the scripted conversation: a tool call (name set) or a text.
type step struct{ id, name, args, text string }

// threeWays is the conversation, one tool call per message as a served session sends them: a
// call that runs, a tool error (a number for a path) under an id the machine gives, a question
// the simulated user answers, arguments that are not JSON, a reply the user is satisfied with;
// then, an hour later, an id used before, and a call past the turn's limit.
var threeWays = []step{
	{id: "r1", name: "fs_read", args: `{"path":"/a.txt"}`},
	{name: "fs_read", args: `{"path": 7}`},
	{text: "Which folder colour?"},
	{name: "fs_write", args: `{"path": /x}`},
	{text: "Noted: blue."},
	{id: "r1", name: "fs_read", args: `{"path":"/a.txt"}`},
	{name: "fs_list", args: `{"path":"/"}`},
	{name: "fs_read", args: ``},
	{name: "fs_list", args: `{"path":"/"}`},
}

func threeWaysTaskOf(t *testing.T) *dsl.Task {
	t.Helper()
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(threeWaysTask)}}, ".", "c")
	f := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	return f.Tasks[0]
}

// byModelAgent runs the conversation with runtime/modelagent against a chat-completions server
// that answers with its messages; it returns the agent's history and the trace.
func byModelAgent(t *testing.T, task *dsl.Task) ([]conversation.Message, []byte) {
	var answers []chattest.Answer
	for _, s := range threeWays {
		if s.name == "" {
			answers = append(answers, chattest.Answer{Body: chattest.Say(s.text)})
		} else {
			answers = append(answers, chattest.Answer{Body: chattest.Calls("", chattest.Call(s.id, s.name, s.args))})
		}
	}
	srv := chattest.New(t, chattest.InOrder(answers...))
	agent, err := modelagent.New(modelagent.Config{Model: "fake-model", BaseURL: srv.BaseURL(), MaxRetries: -1})
	require.NoError(t, err)
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	var buf bytes.Buffer
	start := trace.StartOf(p, []byte(threeWaysTask), 0, agent.Name())
	start.System = modelagent.SystemPromptOf("", p)
	w := trace.NewWriter(&buf, start)
	r := p.Run(context.Background(), agent, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(r))
	require.Nil(t, r.Err)
	require.Len(t, srv.Requests(), len(threeWays), "the model was asked for every message")
	return agent.History(), buf.Bytes()
}

// bySession runs the conversation as a client of runtime/session; it returns the session's
// history and the trace.
func bySession(t *testing.T, task *dsl.Task) ([]conversation.Message, []byte) {
	var buf bytes.Buffer
	s, err := session.Create(context.Background(), task, 0, session.Options{Trace: &buf, Source: []byte(threeWaysTask)})
	require.NoError(t, err)
	var st session.Step
	for _, step := range threeWays {
		if step.name == "" {
			st, err = s.Reply(step.text)
		} else {
			st, err = s.Call(step.id, step.name, step.args)
		}
		require.NoError(t, err)
	}
	require.True(t, st.Done, "the last call ends the episode")
	s.Close()
	return s.History(), buf.Bytes()
}

// byReplay replays a trace; it returns the replay's history and the history the trace alone
// gives (trace.History, what export writes).
func byReplay(t *testing.T, task *dsl.Task, data []byte) (replayed, read []conversation.Message) {
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	res, err := trace.Replay(context.Background(), events, func(string, string) (*dsl.Task, []byte, error) {
		return task, []byte(threeWaysTask), nil
	})
	require.NoError(t, err)
	require.True(t, res.Matched(), "%v", res.Divergence)
	return res.Messages, trace.History(events, true)
}

// One scripted conversation run through the model agent, a served session and replay (of each
// one's trace), and read from each trace as export reads it, gives one history, byte for byte.
func TestOneConversationThreeWays(t *testing.T) {
	t.Parallel()
	task := threeWaysTaskOf(t)
	model, modelTrace := byModelAgent(t, task)
	served, servedTrace := bySession(t, task)
	replayedModel, readModel := byReplay(t, task, modelTrace)
	replayedServed, readServed := byReplay(t, task, servedTrace)

	want := encode(t, model)
	for name, got := range map[string][]conversation.Message{
		"session": served, "replay of the model agent's trace": replayedModel, "replay of the session's trace": replayedServed,
		"the model agent's trace": readModel, "the session's trace": readServed,
	} {
		assert.Equal(t, want, encode(t, got), name)
	}

	// and the history is the conversation the script is about
	var tools []string
	for _, m := range model {
		if m.Role == conversation.Tool {
			tools = append(tools, m.ToolCallID+" "+m.Content)
		}
	}
	_, problem := conversation.ParseArguments(`{"path": /x}`)
	assert.Equal(t, []string{
		"r1 " + "alpha",
		"call_1_2 " + conversation.ToolErrorContent(`argument "path": got integer, want string`, false),
		"call_1_3 " + conversation.BadArgumentsContent("fs_write", problem, `{"path": /x}`),
		"call_2_1 " + "alpha",
		"call_2_2 " + `["a.txt"]`,
		"call_2_3 " + conversation.ToolErrorContent(`missing required argument "path"`, false),
		"call_2_4 " + conversation.ToolErrorContent(conversation.NotRunLimit, false),
	}, tools)
	assert.Contains(t, model[0].Content, "It is now Monday, 2026-01-05T10:00:00+01:00 in the user's time zone, UTC+01:00", "the system prompt")
	assert.Contains(t, model[len(model)-9].Content, "(It is now Monday, 2026-01-05T11:00:00+01:00.)\n\nNow read", "the second turn's user message")
	assert.Equal(t, conversation.Message{Role: "user", Content: "The blue one."}, model[7], "the simulated user's answer")
}

func encode(t *testing.T, msgs []conversation.Message) string {
	b, err := json.MarshalIndent(msgs, "", " ")
	require.NoError(t, err)
	return fmt.Sprintf("%d messages\n%s", len(msgs), b)
}
