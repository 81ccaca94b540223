package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// `export rl` (docs/rewards.md describes the lines, the rewards and the advantages).
//
// Groups. Group-relative methods (GRPO, GDPO) compare episodes that faced the same problem: the
// same version of a task, from the same start state. RLGroup names that: the task, a hash of
// its files (Group) and a hash of the state right after setup (StartState). A rollout gives
// every sample of a task the same seed, so its K samples are one group; with --vary-setup, a
// task whose setup draws from ws.rand has a group per start state. The random source that
// tools draw from during the episode, and the injected faults, follow the seed but are not
// part of the start state hash: episodes of two seeds with the same start state are one group.
//
// Memory. Advantages need every episode of a group, and a group's episodes may come anywhere
// among the traces: with --advantage the lines are kept until Commit (about the size of the
// output), then written in the order they were added. Without it each line is written when
// added.

// Group is a stable id of the task's version: the task's name and the first 12 hex digits of a
// SHA-256 of its source, so that episodes of two versions of the task, or of two tasks of the
// same name in different corpora, are never normalised together. The source is every file the
// start event's sources name (the task file and the files it loads): the SHA-256 of their
// paths and hashes, a line each; for a task file that loads nothing, or a trace without
// sources (an older engine), the task file's own SHA-256 (file_sha256). RLGroup adds the start
// state.
func (e *Episode) Group() string {
	start := e.start()
	sha := start.FileSHA256
	if len(start.Sources) > 1 {
		h := sha256.New()
		for _, s := range start.Sources {
			fmt.Fprintf(h, "%s\x00%s\n", s.Path, s.SHA256)
		}
		sha = hex.EncodeToString(h.Sum(nil))
	}
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return e.Task() + "@" + sha
}

// StartState is the hash of the workspace right after setup, as the start event records it.
func (e *Episode) StartState() string { return e.start().State }

// RLGroup is the group of `export rl`: Group, then "/s:" and the first 12 hex digits of the
// start state's hash (task@0123456789ab/s:cdef01234567), so that episodes of two versions of a
// task, or from two start states, are never normalised together.
func (e *Episode) RLGroup() string {
	s := strings.TrimPrefix(e.StartState(), "sha256:")
	if len(s) > 12 {
		s = s[:12]
	}
	return e.Group() + "/s:" + s
}

// Components are the end's completion, safety and robustness.
func (e *Episode) Components() *jsonv.Object {
	end := e.end()
	return jsonv.NewObject("completion", end.Completion, "safety", end.Safety, "robustness", end.Robustness)
}

// TurnRewards are the turn_end scores by turn: one entry per turn the episode reached, null
// for a turn without a verifier (or without a turn_end, when the episode stopped in it).
func (e *Episode) TurnRewards() []jsonv.Value {
	var out []jsonv.Value
	grow := func(turn int) {
		for len(out) <= turn {
			out = append(out, nil)
		}
	}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.User:
			grow(b.Turn)
		case *trace.TurnEnd:
			grow(b.Turn)
			if b.Score != nil {
				out[b.Turn] = *b.Score
			}
		}
	}
	if out == nil {
		out = []jsonv.Value{}
	}
	return out
}

// TurnRounds are how many answers a simulated user gave in each turn the episode reached (the
// turns of TurnRewards): the turn_end's rounds, 0 for a turn whose user is not simulated or that
// ended without its turn_end.
func (e *Episode) TurnRounds() []jsonv.Value {
	out := make([]jsonv.Value, len(e.TurnRewards()))
	for i := range out {
		out[i] = int64(0)
	}
	for _, ev := range e.Events {
		if b, ok := ev.Body.(*trace.TurnEnd); ok && b.Turn < len(out) {
			out[b.Turn] = int64(b.Rounds)
		}
	}
	return out
}

// Judges are the verdicts of the judges that the verifiers asked (judge events), in order: each
// {turn, rubric, passed, score, reason}, turn null for the task's final verifier.
func (e *Episode) Judges() []jsonv.Value {
	out := []jsonv.Value{}
	for _, ev := range e.Events {
		if b, ok := ev.Body.(*trace.Judge); ok {
			var turn jsonv.Value
			if b.Turn != nil {
				turn = int64(*b.Turn)
			}
			out = append(out, jsonv.NewObject("turn", turn, "rubric", b.Rubric, "passed", b.Passed, "score", b.Score, "reason", b.Reason))
		}
	}
	return out
}

// RLSkip says why `export rl` (and `export sft`) leaves an episode out, "" when it keeps it:
// an episode that says nothing about its agent (episode.Inconclusive), because the model's
// endpoint failed for good (model-error) or it was interrupted.
func RLSkip(e *Episode) string {
	if code := e.ErrorCode(); episode.Inconclusive(code) {
		return "inconclusive (" + code + ")"
	}
	return ""
}

// The values of RLOptions.
const (
	RewardScore      = "score"      // the end score
	RewardCompletion = "completion" // the end completion
	RewardPassed     = "passed"     // 1 for a passed episode, 0 otherwise

	AdvantageNone = "none"
	AdvantageGRPO = "grpo" // the reward normalised within its group
	AdvantageGDPO = "gdpo" // each component normalised within its group, summed, normalised over the export

	CreditEpisode = "episode" // one reward (and advantage) per episode
	CreditTurn    = "turn"    // one per turn, for the turn's messages
)

// The choices of each option, the default first.
var (
	RLRewards    = []string{RewardScore, RewardCompletion, RewardPassed}
	RLAdvantages = []string{AdvantageNone, AdvantageGRPO, AdvantageGDPO}
	RLCredits    = []string{CreditEpisode, CreditTurn}
)

// RLOptions choose what the reward of `export rl` is, whether lines carry advantages, and
// whether they are per episode or per turn. "" means the default (the first of RLRewards,
// RLAdvantages, RLCredits).
type RLOptions struct {
	Reward    string
	Advantage string
	Credit    string
}

func (o RLOptions) withDefaults() RLOptions {
	if o.Reward == "" {
		o.Reward = RewardScore
	}
	if o.Advantage == "" {
		o.Advantage = AdvantageNone
	}
	if o.Credit == "" {
		o.Credit = CreditEpisode
	}
	return o
}

// Check says what is wrong with the options, nil when nothing is. Its messages name the
// options as `export rl` flags.
func (o RLOptions) Check() error {
	o = o.withDefaults()
	for _, opt := range []struct {
		name, v string
		valid   []string
	}{{"reward", o.Reward, RLRewards}, {"advantage", o.Advantage, RLAdvantages}, {"credit", o.Credit, RLCredits}} {
		if !slices.Contains(opt.valid, opt.v) {
			return fmt.Errorf("--%s: %q is not one of %s", opt.name, opt.v, strings.Join(opt.valid, ", "))
		}
	}
	if o.Credit == CreditTurn && o.Reward == RewardPassed {
		return fmt.Errorf("--reward passed has no value per turn (a task passes or fails, its turns do not); use --reward score or completion with --credit turn")
	}
	return nil
}

// Reward is the episode's reward of the kind (RLRewards): its end score, its completion, or 1.0
// for a passed episode and 0.0 for another.
func (e *Episode) Reward(kind string) float64 {
	end := e.end()
	switch kind {
	case RewardCompletion:
		return end.Completion
	case RewardPassed:
		if end.Passed {
			return 1
		}
		return 0
	}
	return end.Score
}

// components are the end's values of GDPOComponents, in their order.
func (e *Episode) components() []float64 {
	end := e.end()
	return []float64{end.Completion, end.Safety, end.Robustness}
}

// turnValue is what one turn of an episode earned.
type turnValue struct {
	// verified: the turn has a turn_end with a score (its verifier ran, or failed: score 0)
	verified bool
	// score, completion and safety are the turn's own when verified (the turn_end's score; the
	// weight of its passed checks over the weight of its checks; 0 when one of its safety items
	// failed, 1 otherwise), the episode's (its end's) when not
	score, completion, safety float64
	// robustness is always the turn's own: the share of its faulted attempts that a later call of
	// the same tool (in that turn or a later one) recovered, 1 when none faulted
	robustness float64
}

// turnValues are the values of every turn the episode reached (the turns of TurnRewards).
func (e *Episode) turnValues() []turnValue {
	n := len(e.TurnRewards())
	end := e.end()
	out := make([]turnValue, n)
	for t := range out {
		out[t] = turnValue{score: end.Score, completion: end.Completion, safety: end.Safety}
	}
	// robustness: the tool of each result (by the latest call of its id), in order
	type attempt struct {
		turn      int
		tool      string
		fault, ok bool
	}
	var attempts []attempt
	tool := map[string]string{}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.Call:
			tool[b.ID] = b.Name
		case *trace.CallResult:
			attempts = append(attempts, attempt{b.Turn, tool[b.ID], b.Fault, b.Error == nil})
		case *trace.TurnEnd:
			if b.Score == nil || b.Turn >= n {
				continue
			}
			tv := &out[b.Turn]
			tv.verified, tv.score, tv.safety = true, *b.Score, 1
			var total, passed float64
			for _, c := range b.Checks {
				switch {
				case c.Kind == "safety" && !c.Passed:
					tv.safety = 0
				case c.Kind == "check" && c.Weight != nil:
					total += *c.Weight
					if c.Passed {
						passed += *c.Weight
					}
				}
			}
			// score = safety * completion: with no safety item failed the score is the completion
			// (0 for a verifier that raised, which records no checks)
			tv.completion = tv.score
			if tv.safety == 0 {
				tv.completion = 1
				if total > 0 {
					tv.completion = passed / total
				}
			}
		}
	}
	faults, recovered := make([]int, n), make([]int, n)
	for i, a := range attempts {
		if !a.fault || a.turn < 0 || a.turn >= n {
			continue
		}
		faults[a.turn]++
		for _, later := range attempts[i+1:] {
			if later.tool == a.tool && later.ok {
				recovered[a.turn]++
				break
			}
		}
	}
	for t := range out {
		out[t].robustness = 1
		if faults[t] > 0 {
			out[t].robustness = float64(recovered[t]) / float64(faults[t])
		}
	}
	return out
}

// TurnCredit is the reward of each turn the episode reached, of the kind (RLRewards): the turn's
// score (RewardScore) or completion (RewardCompletion) for a turn with a verifier, and the
// episode's reward for a turn without one (or that ended without its turn_end): such a turn is
// judged by how the episode ended, so a single-turn task whose only verifier is the task's gets
// the episode's reward. RewardPassed has no per-turn value: every turn gets the episode's.
func (e *Episode) TurnCredit(kind string) []float64 {
	tvs := e.turnValues()
	out := make([]float64, len(tvs))
	for t, tv := range tvs {
		switch {
		case !tv.verified || kind == RewardPassed:
			out[t] = e.Reward(kind)
		case kind == RewardCompletion:
			out[t] = tv.completion
		default:
			out[t] = tv.score
		}
	}
	return out
}

// messageTurns are the turns of the messages of a history as render writes it (with the system
// message when system is set): null for the system message, then the turn each message belongs
// to.
func messageTurns(hist []conversation.Message, system string) []jsonv.Value {
	var out []jsonv.Value
	if system != "" {
		out = append(out, nil)
	}
	for _, m := range hist[min(1, len(hist)):] {
		out = append(out, int64(m.Turn))
	}
	return out
}

// RL is one line of `export rl` with the default options (RLLine).
func RL(e *Episode, system string) *jsonv.Object {
	return RLLine(e, system, RLOptions{})
}

// RLLine is one line of `export rl`: the task, its group (RLGroup) and start state, where the
// episode comes from, the reward of the kind the options choose, its components, the per-turn
// rewards (turn_end scores, null for a turn without a verifier), the answers of a simulated user
// per turn (TurnRounds), the judges' verdicts (Judges), the verdict, the conversation and the
// tools. With CreditTurn it adds turn_credit (TurnCredit) and message_turns
// (MessageTurns). With an advantage it holds an "advantage" (CreditEpisode) or
// "turn_advantages" (CreditTurn) field of zero value that RLWriter fills in: the advantages
// need the whole group.
func RLLine(e *Episode, system string, o RLOptions) *jsonv.Object {
	o = o.withDefaults()
	var sample, errv jsonv.Value
	if n := e.Sample(); n >= 0 {
		sample = int64(n)
	}
	if msg := e.Error(); msg != "" {
		errv = msg
	}
	line := jsonv.NewObject(
		"task", e.Task(),
		"group", e.RLGroup(),
		"start_state", e.StartState(),
		"file", e.OutFile(),
		"trace", e.Path,
		"sample", sample,
		"seed", e.Seed(),
		"agent", e.Agent(),
		"reward", e.Reward(o.Reward),
	)
	if sp := e.Start().Split; sp != nil {
		line.Set("split", sp.Name)
	}
	if o.Advantage != AdvantageNone && o.Credit == CreditEpisode {
		line.Set("advantage", 0.0)
	}
	line.Set("components", e.Components())
	line.Set("turn_rewards", e.TurnRewards())
	line.Set("turn_rounds", e.TurnRounds())
	line.Set("judges", e.Judges())
	if o.Credit == CreditTurn {
		line.Set("turn_credit", values(e.TurnCredit(o.Reward)))
		if o.Advantage != AdvantageNone {
			line.Set("turn_advantages", []jsonv.Value{})
		}
	}
	line.Set("passed", e.Passed())
	line.Set("error", errv)
	hist := e.History(true)
	msgs := MessageOptions{Reasoning: true, RecordedNotRun: true}.render(system, hist)
	if o.Credit == CreditTurn {
		line.Set("message_turns", messageTurns(hist, system))
	}
	line.Set("messages", msgs)
	line.Set("tools", e.Tools())
	if outs := modelOutputs(hist, system); outs != nil {
		line.Set("model_outputs", outs)
	}
	return line
}

// modelOutputs are what the server returned beside each model message, for token-faithful RL:
// one object per assistant message of the history (as render writes it, with the system message
// when system is set) whose assistant event records token ids or logprobs, with "message" (its
// index in the messages), "finish_reason", "prompt_token_ids", "completion_token_ids" and
// "logprobs" (null when not recorded). Nil when no message records any (a server that returns
// none, the oracle).
func modelOutputs(hist []conversation.Message, system string) []jsonv.Value {
	var out []jsonv.Value
	i := 0
	if system != "" {
		i++
	}
	for _, m := range hist[min(1, len(hist)):] {
		i++
		a, ok := m.From.(*trace.Assistant)
		if !ok || a.PromptTokenIDs == nil && a.CompletionTokenIDs == nil && a.Logprobs == nil {
			continue
		}
		var prompt, completion, logprobs jsonv.Value
		if a.PromptTokenIDs != nil {
			prompt = a.PromptTokenIDs
		}
		if a.CompletionTokenIDs != nil {
			completion = a.CompletionTokenIDs
		}
		if a.Logprobs != nil {
			logprobs = a.Logprobs
		}
		out = append(out, jsonv.NewObject("message", int64(i-1), "finish_reason", a.FinishReason,
			"prompt_token_ids", prompt, "completion_token_ids", completion, "logprobs", logprobs))
	}
	return out
}

func values(fs []float64) []jsonv.Value {
	out := make([]jsonv.Value, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// RLWriter writes the lines of `export rl` to a file. Without advantages it writes each line
// as it is added; with them it keeps the lines and the rewards, and Commit computes the
// advantages over the groups of every episode added, fills them in and writes the lines in the
// order they were added.
type RLWriter struct {
	f     *AtomicFile
	o     RLOptions
	lines []*jsonv.Object
	units []advUnit
	// per kept line, how many units it has (1 per episode, or its number of turns)
	counts []int
}

// NewRLWriter writes to f with the options (checked: RLOptions.Check).
func NewRLWriter(f *AtomicFile, o RLOptions) (*RLWriter, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	return &RLWriter{f: f, o: o.withDefaults()}, nil
}

// Add writes, or keeps, the line of an episode; system is its system message ("" when none).
func (w *RLWriter) Add(e *Episode, system string) error {
	line := RLLine(e, system, w.o)
	if w.o.Advantage == AdvantageNone {
		return w.f.WriteLine(line)
	}
	w.lines = append(w.lines, line)
	group := e.RLGroup()
	if w.o.Credit == CreditEpisode {
		w.units = append(w.units, advUnit{key: group, reward: e.Reward(w.o.Reward), components: e.components()})
		w.counts = append(w.counts, 1)
		return nil
	}
	credit := e.TurnCredit(w.o.Reward)
	for t, tv := range e.turnValues() {
		w.units = append(w.units, advUnit{key: group + "\x00turn " + strconv.Itoa(t), reward: credit[t],
			components: []float64{tv.completion, tv.safety, tv.robustness}})
	}
	w.counts = append(w.counts, len(credit))
	return nil
}

// Commit computes the advantages, writes the kept lines and finishes the file (atomically).
func (w *RLWriter) Commit() error {
	if len(w.lines) > 0 {
		adv := advantages(w.o.Advantage, w.units)
		next := 0
		for i, line := range w.lines {
			mine := adv[next : next+w.counts[i]]
			next += w.counts[i]
			if w.o.Credit == CreditEpisode {
				line.Set("advantage", mine[0])
			} else {
				line.Set("turn_advantages", values(mine))
			}
			if w.f.WriteLine(line) != nil {
				break // Commit reports the error
			}
		}
		w.lines, w.units, w.counts = nil, nil, nil
	}
	return w.f.Commit()
}

// Abort drops what was written.
func (w *RLWriter) Abort() { w.f.Abort() }
