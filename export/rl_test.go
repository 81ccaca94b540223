package export

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The episodes of these tests are made of trace events directly, so that their rewards are the
// ones chosen here. Two versions of the task "t" (two file hashes) and two start states.
const (
	shaV1   = "1111111111111111111111111111111111111111111111111111111111111111"
	shaV2   = "2222222222222222222222222222222222222222222222222222222222222222"
	stateS0 = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	stateS1 = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// synthetic is an episode of the task t: a start event (the task file's hash sha, the start
// state), the events given, and the end.
func synthetic(path, sha, state string, end *trace.End, body ...trace.Body) *Episode {
	start := &trace.Start{Format: trace.Format, Task: "t", File: "t.star", FileSHA256: sha, Engine: "test",
		Agent: "oracle", Tools: []jsonv.Value{}, State: state}
	events := []trace.Event{{Kind: start.Kind(), Body: start}}
	for _, b := range append(body, end) {
		events = append(events, trace.Event{Kind: b.Kind(), Body: b})
	}
	return &Episode{Path: path, Events: events}
}

// oneTurn is a single-turn episode whose only verifier is the task's (its turn has no score),
// with the end's values.
func oneTurn(path, sha, state string, score, completion, safety, robustness float64, passed bool) *Episode {
	end := &trace.End{Score: score, Passed: passed, Completion: completion, Safety: safety, Robustness: robustness,
		Checks: []trace.Check{}, State: state}
	return synthetic(path, sha, state, end,
		&trace.User{Turn: 0, Content: "Do it.", State: state},
		&trace.Reply{Turn: 0, Content: "Done."},
		&trace.TurnEnd{Turn: 0, Checks: []trace.Check{}})
}

func ptr[T any](v T) *T { return &v }

// rlLines writes the episodes with the options through an RLWriter and reads the lines back.
func rlLines(t *testing.T, o RLOptions, eps ...*Episode) []*jsonv.Object {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rl.jsonl")
	f, err := CreateAtomic(path)
	require.NoError(t, err)
	w, err := NewRLWriter(f, o)
	require.NoError(t, err)
	for _, e := range eps {
		require.NoError(t, w.Add(e, "S"))
	}
	require.NoError(t, w.Commit())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []*jsonv.Object
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		v, err := jsonv.Decode(sc.Bytes())
		require.NoError(t, err)
		out = append(out, v.(*jsonv.Object))
	}
	require.Len(t, out, len(eps))
	for i, line := range out {
		assert.Equal(t, eps[i].Path, field(line, "trace"), "line %d is the episode added %d", i, i)
	}
	return out
}

func num(t *testing.T, v jsonv.Value) float64 {
	t.Helper()
	f, ok := jsonv.Number(v)
	require.True(t, ok, "%v is not a number", v)
	return f
}

func nums(t *testing.T, v jsonv.Value) []float64 {
	t.Helper()
	list, ok := v.([]jsonv.Value)
	require.True(t, ok, "%v is not a list", v)
	out := make([]float64, len(list))
	for i, x := range list {
		out[i] = num(t, x)
	}
	return out
}

func TestNormalizeHandComputed(t *testing.T) {
	// 1, 0, 0.5, 0.5: mean 0.5; deviations 0.5, -0.5, 0, 0; population variance
	// (0.25 + 0.25 + 0 + 0) / 4 = 0.125, std sqrt(0.125) = 0.35355339059327373;
	// A = ±0.5 / (0.35355339059327373 + 1e-6) = ±1.4142095623844086, and 0 for the two at the mean
	a := Normalize([]float64{1, 0, 0.5, 0.5})
	assert.InDeltaSlice(t, []float64{1.4142095623844086, -1.4142095623844086, 0, 0}, a, 1e-9)
	// 1, 0: mean 0.5, std 0.5; A = ±0.5 / 0.500001 = ±0.999998000004
	assert.InDeltaSlice(t, []float64{0.999998000004, -0.999998000004}, Normalize([]float64{1, 0}), 1e-9)
	// a group of one, and equal values (0.1 three times has a mean that is not exactly 0.1): 0
	assert.Equal(t, []float64{0}, Normalize([]float64{0.7}))
	assert.Equal(t, []float64{0, 0, 0}, Normalize([]float64{0.1, 0.1, 0.1}))
	assert.Equal(t, []float64{}, Normalize(nil))
}

// The groups of rl: the task's version and the start state, so that neither two versions nor two
// start states are ever normalised together.
func TestRLGroup(t *testing.T) {
	a := oneTurn("o/t/0.jsonl", shaV1, stateS0, 1, 1, 1, 1, true)
	b := oneTurn("o/t/1.jsonl", shaV1, stateS1, 1, 1, 1, 1, true)
	c := oneTurn("o/t/2.jsonl", shaV2, stateS0, 1, 1, 1, 1, true)
	assert.Equal(t, "t@111111111111/s:aaaaaaaaaaaa", a.RLGroup())
	assert.Equal(t, "t@111111111111", a.Group(), "Group is the version alone")
	assert.Equal(t, stateS0, a.StartState())
	assert.NotEqual(t, a.RLGroup(), b.RLGroup(), "two start states")
	assert.NotEqual(t, a.RLGroup(), c.RLGroup(), "two versions")
	line := RL(a, "S")
	assert.Equal(t, a.RLGroup(), field(line, "group"))
	assert.Equal(t, stateS0, field(line, "start_state"))
	_, has := line.Get("advantage")
	assert.False(t, has, "no advantage unless asked")
	_, has = line.Get("message_turns")
	assert.False(t, has, "no per-turn fields unless asked")

	// a recorded episode: its group holds its start state's hash
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, modelLike{}, "S", "x/0.jsonl")
	state := strings.TrimPrefix(e.StartState(), "sha256:")
	require.Len(t, state, 64)
	assert.Equal(t, e.Group()+"/s:"+state[:12], e.RLGroup())
	assert.Regexp(t, `^flaky@[0-9a-f]{12}/s:[0-9a-f]{12}$`, e.RLGroup())
}

// --reward chooses the scalar; --advantage grpo normalises it within each group of the export:
// the four episodes of one version from one start state, apart from the episode of another start
// state (alone: 0) and the two of another version, whatever the order the episodes come in.
func TestRLGRPOAdvantages(t *testing.T) {
	eps := []*Episode{
		oneTurn("o/t/0.jsonl", shaV1, stateS0, 1, 1, 1, 1, true),
		oneTurn("o/t/1.jsonl", shaV2, stateS0, 1, 1, 1, 1, true),
		oneTurn("o/t/2.jsonl", shaV1, stateS0, 0, 0, 1, 1, false),
		oneTurn("o/t/3.jsonl", shaV1, stateS1, 0.8, 0.8, 1, 1, false),
		oneTurn("o/t/4.jsonl", shaV1, stateS0, 0.5, 0.5, 1, 1, false),
		oneTurn("o/t/5.jsonl", shaV2, stateS0, 0, 0, 1, 1, false),
		oneTurn("o/t/6.jsonl", shaV1, stateS0, 0.5, 1, 0, 1, false), // completion 1 but a safety item failed
	}
	lines := rlLines(t, RLOptions{Advantage: AdvantageGRPO}, eps...)
	adv := make([]float64, len(lines))
	for i, line := range lines {
		adv[i] = num(t, field(line, "advantage"))
		assert.Equal(t, eps[i].Score(), num(t, field(line, "reward")))
	}
	// version 1, state s0 (lines 0, 2, 4, 6): scores 1, 0, 0.5, 0.5: mean 0.5, population std
	// sqrt((0.25 + 0.25 + 0 + 0) / 4) = sqrt(0.125) = 0.35355339059327373, so
	// ±0.5 / (0.35355339059327373 + 1e-6) = ±1.4142095623844086 and 0.
	// version 2 (lines 1, 5): scores 1, 0: mean 0.5, std 0.5: ±0.5 / 0.500001 = ±0.999998000004.
	// version 1, state s1 (line 3): alone, 0.
	assert.InDeltaSlice(t, []float64{1.4142095623844086, 0.999998000004, -1.4142095623844086, 0, 0, -0.999998000004, 0}, adv, 1e-9)

	// --reward passed: version 1, state s0 has rewards 1, 0, 0, 0: mean 0.25, variance
	// (0.5625 + 3 * 0.0625) / 4 = 0.1875, std 0.4330127018922193: 0.75 / 0.4330137018922193 =
	// 1.732046807578115 and -0.25 / 0.4330137018922193 = -0.5773489358593717
	lines = rlLines(t, RLOptions{Reward: RewardPassed, Advantage: AdvantageGRPO}, eps...)
	assert.Equal(t, 1.0, num(t, field(lines[0], "reward")))
	assert.Equal(t, 0.0, num(t, field(lines[4], "reward")))
	for i, want := range map[int]float64{0: 1.732046807578115, 2: -0.5773489358593717, 4: -0.5773489358593717, 6: -0.5773489358593717} {
		assert.InDelta(t, want, num(t, field(lines[i], "advantage")), 1e-9, "line %d", i)
	}

	// --reward completion: 1, 0, 0.5, 1: mean 0.625, variance (0.140625 + 0.390625 + 0.015625 +
	// 0.140625) / 4 = 0.171875, std 0.4145780987944249: 0.375 / 0.4145790987944249 =
	// 0.9045318519203719, -0.625 / ... = -1.507553086533953, -0.125 / ... = -0.30151061730679063
	lines = rlLines(t, RLOptions{Reward: RewardCompletion, Advantage: AdvantageGRPO}, eps...)
	assert.Equal(t, 1.0, num(t, field(lines[6], "reward")))
	for i, want := range map[int]float64{0: 0.9045318519203719, 2: -1.507553086533953, 4: -0.30151061730679063, 6: 0.9045318519203719} {
		assert.InDelta(t, want, num(t, field(lines[i], "advantage")), 1e-9, "line %d", i)
	}

	// without --advantage the lines are those of RL, with the reward chosen
	lines = rlLines(t, RLOptions{Reward: RewardCompletion}, eps...)
	_, has := lines[0].Get("advantage")
	assert.False(t, has)
	assert.Equal(t, 1.0, num(t, field(lines[6], "reward")))
}

// --advantage gdpo normalises completion, safety and robustness each within the group, sums them
// (weights 1) and normalises the sums over every episode of the export.
func TestRLGDPOAdvantages(t *testing.T) {
	eps := []*Episode{
		// group G (version 1, s0): (completion, safety, robustness)
		oneTurn("o/t/0.jsonl", shaV1, stateS0, 1, 1, 1, 1, true),        // (1, 1, 1)
		oneTurn("o/t/1.jsonl", shaV1, stateS0, 0, 0, 1, 1, false),       // (0, 1, 1)
		oneTurn("o/t/2.jsonl", shaV1, stateS0, 0, 1, 0, 1, false),       // (1, 0, 1)
		oneTurn("o/t/3.jsonl", shaV1, stateS0, 0.5, 0.5, 1, 0.5, false), // (0.5, 1, 0.5)
		// group H (version 2)
		oneTurn("o/t/4.jsonl", shaV2, stateS0, 1, 1, 1, 1, true),  // (1, 1, 1)
		oneTurn("o/t/5.jsonl", shaV2, stateS0, 0, 0, 1, 1, false), // (0, 1, 1)
	}
	// G, completion 1, 0, 1, 0.5: mean 0.625, std sqrt(0.171875) = 0.4145780987944249:
	//   0.9045318519203719, -1.507553086533953, 0.9045318519203719, -0.30151061730679063
	// G, safety 1, 1, 0, 1: mean 0.75, std sqrt(0.1875) = 0.4330127018922193:
	//   0.25 / 0.4330137018922193 = 0.5773489358593717 (three times), -0.75 / ... = -1.732046807578115
	// G, robustness 1, 1, 1, 0.5: mean 0.875, std sqrt(0.046875) = 0.21650635094610965:
	//   0.125 / 0.21650735094610965 = 0.5773476025352758 (three times), -1.7320428076058276
	// G sums: 2.0592283903150195, -0.35285654813930545, -0.2501673531224673, -1.4562044890532464
	// H, completion 1, 0: ±0.999998000004; safety and robustness equal: 0. Sums ±0.999998000004.
	// The six sums have mean 0 (each normalised component sums to 0 within its group) and
	// population std 1.1935965626050329, so A = sum / (1.1935965626050329 + 1e-6).
	want := []float64{1.725228380846173, -0.29562438730956714, -0.20959103885607458, -1.2200129546805312, 0.837801643814938, -0.837801643814938}
	lines := rlLines(t, RLOptions{Advantage: AdvantageGDPO}, eps...)
	for i, line := range lines {
		assert.InDelta(t, want[i], num(t, field(line, "advantage")), 1e-9, "line %d", i)
	}
	// the reward is still the chosen scalar
	assert.Equal(t, 0.5, num(t, field(lines[3], "reward")))
	assert.Equal(t, []string{"completion", "safety", "robustness"}, []string{GDPOComponents[0].Name, GDPOComponents[1].Name, GDPOComponents[2].Name})
}

// turn is one turn of a multi-turn synthetic episode: a call, its result, the reply and the
// turn_end with score (nil: no verifier) and checks.
func turn(i int, id string, fault bool, score *float64, checks ...trace.Check) []trace.Body {
	var errp *string
	if fault {
		errp = ptr("503 unavailable")
	}
	if checks == nil {
		checks = []trace.Check{}
	}
	return []trace.Body{
		&trace.User{Turn: i, Content: fmt.Sprintf("turn %d", i+1), State: stateS0},
		&trace.Call{Turn: i, ID: id, Name: "fs_write", Args: jsonv.NewObject()},
		&trace.CallResult{Turn: i, ID: id, Content: "null", Error: errp, Fault: fault, State: stateS0},
		&trace.Reply{Turn: i, Content: "ok"},
		&trace.TurnEnd{Turn: i, Score: score, Checks: checks},
	}
}

func multiTurn(path string, end *trace.End, turns ...[]trace.Body) *Episode {
	var body []trace.Body
	for _, tb := range turns {
		body = append(body, tb...)
	}
	end.Checks, end.State = []trace.Check{}, stateS0
	return synthetic(path, shaV1, stateS0, end, body...)
}

// --credit turn: each turn's own reward (its turn_end score, or completion; the episode's reward
// for a turn without a verifier), the turn of every message, and with an advantage, advantages
// normalised per turn index within the group.
func TestRLCreditTurn(t *testing.T) {
	check := func(passed bool) trace.Check {
		return trace.Check{Kind: "check", Message: "c", Weight: ptr(1.0), Passed: passed, Turn: ptr(1)}
	}
	unsafe := trace.Check{Kind: "safety", Message: "s", Passed: false, Turn: ptr(1)}
	eps := []*Episode{
		multiTurn("o/t/0.jsonl", &trace.End{Score: 1, Passed: true, Completion: 1, Safety: 1, Robustness: 1},
			turn(0, "a", false, ptr(1.0)), turn(1, "b", false, ptr(1.0))),
		// turn 2 has no verifier: it gets the episode's reward, 0.25 (completion 0.5)
		multiTurn("o/t/1.jsonl", &trace.End{Score: 0.25, Completion: 0.5, Safety: 1, Robustness: 1},
			turn(0, "a", false, ptr(0.5)), turn(1, "b", false, nil)),
		// turn 2 did its work (completion 1) but crossed a red line: score 0
		multiTurn("o/t/2.jsonl", &trace.End{Score: 0, Completion: 1, Safety: 0, Robustness: 1},
			turn(0, "a", false, ptr(0.0)), turn(1, "b", false, ptr(0.0), check(true), unsafe)),
		// stopped in turn 1, which has no turn_end: it reached one turn only
		multiTurn("o/t/3.jsonl", &trace.End{Score: 0, Completion: 0, Safety: 1, Robustness: 1},
			turn(0, "a", false, nil)[:4]),
	}

	lines := rlLines(t, RLOptions{Credit: CreditTurn}, eps...)
	assert.Equal(t, []float64{1, 1}, nums(t, field(lines[0], "turn_credit")))
	assert.Equal(t, []float64{0.5, 0.25}, nums(t, field(lines[1], "turn_credit")))
	assert.Equal(t, []float64{0, 0}, nums(t, field(lines[2], "turn_credit")))
	assert.Equal(t, []float64{0}, nums(t, field(lines[3], "turn_credit")), "the episode's reward")
	assert.Equal(t, []jsonv.Value{0.5, nil}, field(lines[1], "turn_rewards"), "turn_rewards stay the raw scores, null included")
	_, has := lines[0].Get("turn_advantages")
	assert.False(t, has, "no advantages unless asked")
	// system, then per turn: user, assistant (the call), tool, assistant (the reply)
	assert.Equal(t, []string{"system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"}, roles(field(lines[0], "messages").([]jsonv.Value)))
	assert.Equal(t, []jsonv.Value{nil, int64(0), int64(0), int64(0), int64(0), int64(1), int64(1), int64(1), int64(1)}, field(lines[0], "message_turns"))

	// completion per turn: the score when no safety item failed, the checks' share when one did
	lines = rlLines(t, RLOptions{Credit: CreditTurn, Reward: RewardCompletion}, eps...)
	assert.Equal(t, []float64{0.5, 0.5}, nums(t, field(lines[1], "turn_credit")), "turn 2: the episode's completion")
	assert.Equal(t, []float64{0, 1}, nums(t, field(lines[2], "turn_credit")))

	// grpo per turn index:
	// turn 1: 1, 0.5, 0, 0: mean 0.375, variance (0.390625 + 0.015625 + 0.140625 + 0.140625) / 4 =
	//   0.171875, std 0.4145780987944249: 0.625 / 0.4145790987944249 = 1.507553086533953,
	//   0.125 / ... = 0.30151061730679063, -0.375 / ... = -0.9045318519203719 (twice)
	// turn 2 (three episodes reached it): 1, 0.25, 0: mean 0.4166..., variance
	//   (0.3402777... + 0.0277777... + 0.1736111...) / 3 = 0.1805555..., std 0.42491829279939874:
	//   1.3728097152056606, -0.3922313472016174, -0.9805783680040434
	lines = rlLines(t, RLOptions{Credit: CreditTurn, Advantage: AdvantageGRPO}, eps...)
	_, has = lines[0].Get("advantage")
	assert.False(t, has, "per turn, not per episode")
	assert.InDeltaSlice(t, []float64{1.507553086533953, 1.3728097152056606}, nums(t, field(lines[0], "turn_advantages")), 1e-9)
	assert.InDeltaSlice(t, []float64{0.30151061730679063, -0.3922313472016174}, nums(t, field(lines[1], "turn_advantages")), 1e-9)
	assert.InDeltaSlice(t, []float64{-0.9045318519203719, -0.9805783680040434}, nums(t, field(lines[2], "turn_advantages")), 1e-9)
	assert.InDeltaSlice(t, []float64{-0.9045318519203719}, nums(t, field(lines[3], "turn_advantages")), 1e-9)
}

// --credit turn with gdpo: the components of a turn are its own, robustness included (a fault in
// a turn that no later call of the tool recovered).
func TestRLCreditTurnGDPO(t *testing.T) {
	// e0: turn 1 completes (score 1), turn 2 completes but meets a fault it never recovers from
	// e1: turn 1 fails (score 0), turn 2 completes without a fault
	e0 := multiTurn("o/t/0.jsonl", &trace.End{Score: 1, Passed: true, Completion: 1, Safety: 1, Robustness: 0},
		turn(0, "a", false, ptr(1.0)), turn(1, "b", true, ptr(1.0)))
	e1 := multiTurn("o/t/1.jsonl", &trace.End{Score: 0.5, Completion: 0.5, Safety: 1, Robustness: 1},
		turn(0, "a", false, ptr(0.0)), turn(1, "b", false, ptr(1.0)))
	tv := e0.turnValues()
	assert.Equal(t, []float64{1, 0}, []float64{tv[0].robustness, tv[1].robustness})

	// turn 1: completion 1, 0: ±0.999998000004; safety and robustness equal: 0.
	// turn 2: robustness 0, 1: ∓0.999998000004; completion and safety equal: 0.
	// The sums 0.999998000004, -0.999998000004 (e0), -0.999998000004, 0.999998000004 (e1) have
	// mean 0 and std 0.999998000004: A = ±0.999998000004 / 0.999999000004 = ±0.999998999999
	lines := rlLines(t, RLOptions{Credit: CreditTurn, Advantage: AdvantageGDPO}, e0, e1)
	assert.InDeltaSlice(t, []float64{0.999998999999, -0.999998999999}, nums(t, field(lines[0], "turn_advantages")), 1e-9)
	assert.InDeltaSlice(t, []float64{-0.999998999999, 0.999998999999}, nums(t, field(lines[1], "turn_advantages")), 1e-9)

	// a fault recovered by a call of the same tool in a later turn counts for the turn it met
	recovered := multiTurn("o/t/2.jsonl", &trace.End{Score: 1, Passed: true, Completion: 1, Safety: 1, Robustness: 1},
		turn(0, "a", true, ptr(1.0)), turn(1, "b", false, ptr(1.0)))
	tv = recovered.turnValues()
	assert.Equal(t, []float64{1, 1}, []float64{tv[0].robustness, tv[1].robustness})
}

func TestRLOptionsCheck(t *testing.T) {
	assert.NoError(t, RLOptions{}.Check())
	assert.NoError(t, RLOptions{Reward: RewardPassed, Advantage: AdvantageGDPO, Credit: CreditEpisode}.Check())
	for o, msg := range map[RLOptions]string{
		{Reward: "lots"}:                               `--reward: "lots" is not one of score, completion, passed`,
		{Advantage: "ppo"}:                             `--advantage: "ppo" is not one of none, grpo, gdpo`,
		{Credit: "token"}:                              `--credit: "token" is not one of episode, turn`,
		{Reward: RewardPassed, Credit: CreditTurn}:     "--reward passed has no value per turn",
		{Reward: "Score", Advantage: AdvantageGRPO}:    `--reward: "Score"`,
		{Advantage: AdvantageGRPO, Credit: "episodes"}: `--credit: "episodes"`,
	} {
		err := o.Check()
		require.Error(t, err, "%+v", o)
		assert.Contains(t, err.Error(), msg)
		_, err = NewRLWriter(nil, o)
		assert.Error(t, err)
	}
}

// tokensModel reports messages with the token ids and logprobs a vLLM server returns, the
// second message without any.
type tokensModel struct{}

func (tokensModel) Name() string { return "openai" }

func (tokensModel) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	tc.Assistant(episode.AssistantMessage{Content: "", ToolCalls: []jsonv.Value{call("a", "fs_read", `{"path":"/a.txt"}`)},
		FinishReason: "tool_calls", PromptTokenIDs: []jsonv.Value{int64(1), int64(2)}, CompletionTokenIDs: []jsonv.Value{int64(7)},
		Logprobs: jsonv.NewObject("content", []jsonv.Value{jsonv.NewObject("token", "x", "logprob", -0.25)})})
	if _, err := tc.Call("a", "fs_read", jsonv.NewObject("path", "/a.txt")); err != nil {
		return "", err
	}
	tc.Assistant(episode.AssistantMessage{Content: "Read it.", FinishReason: "stop"})
	return "Read it.", nil
}

// export rl carries the token ids and logprobs a model's messages record, each pointing at its
// message; a trace without any has no model_outputs.
func TestRLModelOutputs(t *testing.T) {
	task, src := loadTask(t, flakyTask)
	e := record(t, task, src, 0, tokensModel{}, "S", "x/run.jsonl")
	line := RL(e, "S")
	msgs := field(line, "messages").([]jsonv.Value)
	outs, ok := field(line, "model_outputs").([]jsonv.Value)
	require.True(t, ok, "model_outputs: %s", jsonv.MustEncode(line))
	require.Len(t, outs, len(field(line, "turn_rewards").([]jsonv.Value)), "one message with tokens per turn")
	for _, out := range outs {
		i := field(out, "message").(int64)
		assert.Equal(t, "assistant", field(msgs[i], "role"))
		assert.NotNil(t, field(msgs[i], "tool_calls"), "the message with the tokens is the one with the call")
		assert.Equal(t, "tool_calls", field(out, "finish_reason"))
		assert.Equal(t, `[1,2]`, jsonv.MustEncode(field(out, "prompt_token_ids")))
		assert.Equal(t, `[7]`, jsonv.MustEncode(field(out, "completion_token_ids")))
		assert.Equal(t, `{"content":[{"token":"x","logprob":-0.25}]}`, jsonv.MustEncode(field(out, "logprobs")))
	}

	plain := record(t, task, src, 0, modelLike{}, "S", "y/run.jsonl")
	_, has := RL(plain, "S").Get("model_outputs")
	assert.False(t, has)
}

// Each line carries the answers of a simulated user per turn and every judge's verdict.
func TestRLTurnRoundsAndJudges(t *testing.T) {
	end := &trace.End{Score: 0.5, Completion: 0.5, Safety: 1, Robustness: 1, Checks: []trace.Check{}, State: stateS0}
	sim := synthetic("sim.jsonl", shaV1, stateS0, end,
		&trace.User{Turn: 0, Content: "Summarise the report.", State: stateS0},
		&trace.SimUser{Turn: 0, Round: 0, Said: "Which one?", RequestSHA256: shaV1, Content: "March.", Source: "model", Model: "u"},
		&trace.Reply{Turn: 0, Content: "March had 12 orders."},
		&trace.SimUser{Turn: 0, Round: 1, Said: "March had 12 orders.", RequestSHA256: shaV2, Content: "And April?", Source: "model", Model: "u"},
		&trace.Judge{Turn: ptr(0), Rubric: "Names the count.", Text: "March had 12 orders.", RequestSHA256: shaV1, Passed: true, Score: 0.9, Reason: "It does.", Source: "model", Model: "j"},
		&trace.TurnEnd{Turn: 0, Score: ptr(1.0), Checks: []trace.Check{}, Rounds: 2},
		&trace.User{Turn: 1, Content: "Thanks. Now archive it.", State: stateS0},
		&trace.Reply{Turn: 1, Content: "Archived."},
		&trace.TurnEnd{Turn: 1, Checks: []trace.Check{}},
		&trace.Judge{Rubric: "Polite.", Text: "Archived.", RequestSHA256: shaV2, Passed: false, Score: 0, Reason: "Curt.", Source: "stand-in"})
	plain := oneTurn("plain.jsonl", shaV1, stateS0, 1, 1, 1, 1, true)
	lines := rlLines(t, RLOptions{}, sim, plain)

	assert.Equal(t, []jsonv.Value{int64(2), int64(0)}, field(lines[0], "turn_rounds"))
	judges := field(lines[0], "judges").([]jsonv.Value)
	require.Len(t, judges, 2)
	assert.Equal(t, `{"turn":0,"rubric":"Names the count.","passed":true,"score":0.9,"reason":"It does."}`, jsonv.MustEncode(judges[0]))
	assert.Equal(t, []string{"turn", "rubric", "passed", "score", "reason"}, judges[1].(*jsonv.Object).Keys())
	assert.Nil(t, field(judges[1], "turn"), "the final verifier's judge")
	assert.Equal(t, false, field(judges[1], "passed"))
	assert.Equal(t, 0.0, num(t, field(judges[1], "score")))
	assert.Equal(t, "Curt.", field(judges[1], "reason"))

	assert.Equal(t, []jsonv.Value{int64(0)}, field(lines[1], "turn_rounds"), "a user who is not simulated gives no answers")
	assert.Equal(t, []jsonv.Value{}, field(lines[1], "judges"))
	keys := lines[1].Keys()
	assert.Equal(t, []string{"turn_rewards", "turn_rounds", "judges"}, keys[10:13], "beside the turn rewards")
}

// message_turns follow the turns through a simulated user's answers: the answer belongs to the
// turn it answers in, and so do the messages after it.
func TestMessageTurnsWithSimulatedUser(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, `
def _user(said, round):
    if "which" in said.lower():
        return "The blue one."
    return None

def _ask(agent):
    colour = agent.ask("Which folder colour?")
    agent.call("fs_write", path = "/colour.txt", content = colour)
    agent.reply("Noted.")

def _write(agent):
    agent.call("fs_write", path = "/c.txt", content = "blue")
    agent.reply("Written.")

task(name = "asking", tools = ["fs"], turns = [
    turn(user = simulated_user(opening = "Note my colour.", persona = "Ann", goal = "noted", stand_in = _user), solution = _ask),
    turn(user = "Write it down.", solution = _write, verify = lambda ws, ep: check(ws.fs.exists("/c.txt"), "written")),
])
`)
	e := record(t, task, src, 0, episode.Oracle{}, "", "runs/asking/0.jsonl")
	line := RLLine(e, "S", RLOptions{Credit: CreditTurn})
	msgs := field(line, "messages").([]jsonv.Value)
	assert.Equal(t, []string{"system", "user", "assistant", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"}, roles(msgs))
	assert.Equal(t, "The blue one.", field(msgs[3], "content"), "the simulated user's answer")
	assert.Equal(t, []jsonv.Value{nil, int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(1), int64(1), int64(1), int64(1)}, field(line, "message_turns"))
}
