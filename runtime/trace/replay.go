package trace

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

// Loader finds the task a trace names: its file as recorded, and its name. It returns the task
// and the file's current bytes (for the file_sha256 comparison).
type Loader func(file, task string) (*dsl.Task, []byte, error)

// CorpusLoader finds the task a trace names, like Loader, and the corpus it was loaded from:
// ReplayCorpus reads the task file and every file it loads from there.
type CorpusLoader func(file, task string) (*dsl.Task, *dsl.Corpus, error)

// Divergence is the first place where a replay differs from its trace.
type Divergence struct {
	Line  int    // the trace line (event number) that differs
	Event string // its kind
	Turn  int    // -1 when not in a turn
	Tool  string // for calls and results: the call's tool and arguments
	Args  string
	// Diffs lists what differs, one "field: recorded X, replayed Y" per line.
	Diffs []string
}

// FileChange is a file of the task whose bytes are not those the trace was recorded with.
type FileChange struct {
	Path string // the task file as the start event names it; a loaded file relative to the corpus root
	Task bool   // the task file, not a file it loads
	// Recorded and Current are the SHA-256 then and now: Recorded is "" for a file the task
	// loads now but did not then, Current "" for one it no longer loads.
	Recorded, Current string
}

func (c FileChange) String() string {
	what := "helper file " + c.Path
	if c.Task {
		what = "task file " + c.Path
	}
	switch {
	case c.Recorded == "":
		return what + " is loaded now, but was not when the trace was recorded"
	case c.Current == "":
		return what + " was loaded when the trace was recorded, but is not now"
	}
	return fmt.Sprintf("%s changed since the trace was recorded (sha256 %.12s… now %.12s…)", what, c.Recorded, c.Current)
}

// TaskPath is the task file's path inside its corpus as the start event records it: the first
// source's (relative to the corpus root), or, in a trace without sources (an older engine), the
// file as given. It comes from the trace: a reader checks it like any path it did not make.
func (s *Start) TaskPath() string {
	if len(s.Sources) > 0 {
		return s.Sources[0].Path
	}
	return s.File
}

// SameFiles reports whether the task file rel of c has the bytes the start event records
// (file_sha256, and the first source's SHA-256 when there are sources) and every other file it
// records as loaded is at its recorded path in c with its recorded bytes: then the task is the
// one the trace was recorded with. Everything is read through c.ReadSource, behind the corpus
// root's wall: a recorded path that leaves the root is not read, and is no match.
func SameFiles(c *dsl.Corpus, rel string, s *Start) bool {
	data, err := c.ReadSource(rel)
	if err != nil || FileSHA256(data) != s.FileSHA256 {
		return false
	}
	if len(s.Sources) == 0 {
		return true
	}
	if s.Sources[0].SHA256 != s.FileSHA256 {
		return false
	}
	read := map[string]string{rel: s.FileSHA256} // each file is read once
	for _, src := range s.Sources[1:] {
		sha, ok := read[src.Path]
		if !ok {
			data, err := c.ReadSource(src.Path)
			if err != nil {
				return false
			}
			sha = FileSHA256(data)
			read[src.Path] = sha
		}
		if sha != src.SHA256 {
			return false
		}
	}
	return true
}

// Result of a replay.
type Result struct {
	Task string
	File string
	// TaskChanged: the task file, or a file it loads, is not the one the trace was recorded with
	// (Changed names each).
	TaskChanged bool
	RecordedSHA string // the task file's
	CurrentSHA  string
	Changed     []FileChange
	// Found is where the task file was found, as shown to the user, when that is not the path the
	// trace names (the trace or its corpus moved): "" when it is. Replay leaves it to its caller,
	// which does the finding.
	Found string
	// Interrupted: the trace records an episode that was interrupted (its end's error is
	// interrupted: Ctrl-C, a served session deleted). Its replay runs what was recorded and stops
	// where the recording stops; a replay that matched up to there is no divergence.
	Interrupted bool
	// Notes say what this replay could not check, and why.
	Notes      []string
	Divergence *Divergence
	// Messages is the conversation the replay of a model's trace made (runtime/conversation),
	// system message first; nil for other agents.
	Messages []conversation.Message
}

// Matched reports whether the replay reproduced the trace.
func (r *Result) Matched() bool { return r.Divergence == nil }

// Warnings are the lines to show before the verdict: each changed file, then the notes.
func (r *Result) Warnings() []string {
	var out []string
	for _, c := range r.Changed {
		out = append(out, c.String())
	}
	return append(out, r.Notes...)
}

// Replay runs the episode a trace records again and compares every event with the recorded one,
// in order; the first that differs is the Divergence. What it checks:
//
//   - start: the setup runs with the recorded seed, and the state after it, the first draw of
//     its random source (rand, so a changed seed shows even in a task that never draws), the
//     clock and the tools shown to the agent must be the recorded ones. The task file's SHA-256
//     is compared too (TaskChanged), and, by ReplayCorpus, those of every file it loads.
//   - the agent's side. An oracle or noop trace is replayed by running that agent again, so its
//     calls (ids, tools, arguments) and replies must be the recorded ones. A model trace (one
//     with assistant events, or of the openai agent or a served session) is replayed from the
//     model's messages by the conversation machine the model agent and a session run
//     (runtime/conversation): each message is reported, with the ids its calls run under, its
//     tool calls run (those with arguments that are not a JSON object do not), and the turn's
//     reply is its last text, so the recorded messages' ids, calls and reply must be the ones the
//     messages make. Result.Messages is the conversation the replay made. Any other agent cannot
//     be run again: its recorded calls and replies are re-issued, and a note says so. A turn
//     that the agent's error ended is replayed from its recorded calls and error (an
//     interruption or an unreachable model cannot be repeated).
//   - every result (content, error, fault, state hash), user message (content, state, clock),
//     turn verdict and the end. Texts are compared byte for byte: a result's content is the text
//     the model was given, so the same JSON value encoded anew differs too.
//   - the models inside the task (sim_user and judge events). A simulated user's stand-in and a
//     judge's stand-in run again, so their answers and verdicts must be the recorded ones. The
//     answers of a user model and the verdicts of a judge model are given back from the trace
//     instead (no model is asked; see recordedModels), each to the exchange or judge() call that
//     asks what the recorded one asked: the agent's message (said) and the request's SHA-256, or
//     the turn, rubric, text and request's SHA-256; anything else asked is the divergence. An
//     exchange the rounds ended (nobody was asked) is recomputed by the engine. Every field of
//     every such event is compared too.
//
// What nothing can check: the text of a model's message other than each turn's last and its
// token usage (nothing the episode runs depends on them), the system prompt, and the engine name.
// An answer of a user model or a verdict of a judge model shows only through what depends on it:
// the requests of the exchanges after it (they hold the answers before them), what the agent does
// with it (an oracle's agent.ask), and the verifiers' checks. Load gives only the task file: the
// files it loads are not checked (Notes say so).
func Replay(ctx context.Context, events []Event, load Loader) (*Result, error) {
	return replay(ctx, events, func(start *Start) (*dsl.Task, []byte, []Source, error) {
		task, src, err := load(start.File, start.Task)
		return task, src, nil, err
	})
}

// ReplayCorpus is Replay with the task's files read from its corpus: the task file and every
// file it loads are compared with the sources the start event records.
func ReplayCorpus(ctx context.Context, events []Event, load CorpusLoader) (*Result, error) {
	return replay(ctx, events, func(start *Start) (*dsl.Task, []byte, []Source, error) {
		task, c, err := load(start.File, start.Task)
		if err != nil {
			return nil, nil, nil, err
		}
		files, err := c.SourceFiles(task.Rel)
		if err != nil {
			return nil, nil, nil, err
		}
		return task, files[0].Data, sourcesOf(files), nil
	})
}

// replay replays events against the task load finds for their start event, with the task
// file's bytes and the sources of it and the files it loads (nil when unknown).
func replay(ctx context.Context, events []Event, load func(*Start) (task *dsl.Task, src []byte, sources []Source, err error)) (*Result, error) {
	var start *Start
	if len(events) > 0 {
		start, _ = events[0].Body.(*Start)
	}
	if start == nil {
		return nil, fmt.Errorf("the trace has no start event")
	}
	task, src, sources, err := load(start)
	if err != nil {
		return nil, err
	}
	res := &Result{Task: start.Task, File: start.File, RecordedSHA: start.FileSHA256, CurrentSHA: FileSHA256(src)}
	res.compareFiles(start, sources)
	if start.Rand == "" {
		res.Notes = append(res.Notes, "the trace records no rand (an older engine): the seed was checked only through what it "+
			"changed (ws.rand draws, injected faults), so a changed seed of a task that draws nothing and injects no faults cannot show")
	}

	startEv := events[0]
	p, d := episode.Prepare(ctx, task, episode.Options{Seed: start.Seed})
	if d != nil {
		res.Divergence = &Divergence{Line: startEv.Line, Event: startEv.Kind, Turn: -1, Diffs: []string{"setup now fails: " + d.String()}}
		return res, nil
	}
	start.HashStates(p)
	// the file's hash is compared above, as a change and not a divergence
	if diffs := diffStart(start, StartOf(p, nil, start.Seed, start.Agent)); len(diffs) > 0 {
		res.Divergence = &Divergence{Line: startEv.Line, Event: startEv.Kind, Turn: -1, Diffs: diffs}
		return res, nil
	}

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	cmp := &comparer{expect: events[1:], events: events}
	if end, ok := events[len(events)-1].Body.(*End); ok && end.Error != nil && end.Error.Code == episode.Interrupted {
		res.Interrupted, cmp.stop = true, stop
	}
	agent, note := planOf(events).agent(start, cmp)
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	r := p.Run(ctx, agent, episode.RunOptions{Observer: cmp, Models: cmp.recordedModels()})
	cmp.end(r)
	res.Divergence = cmp.div
	if m, ok := agent.(*modelReplay); ok {
		res.Messages = m.history()
	}
	return res, nil
}

// compareFiles fills Changed, TaskChanged and the notes on files: the task file by its
// file_sha256, the files it loads by the recorded sources (current is nil when unknown).
func (r *Result) compareFiles(start *Start, current []Source) {
	if r.CurrentSHA != r.RecordedSHA {
		r.Changed = append(r.Changed, FileChange{Path: start.File, Task: true, Recorded: r.RecordedSHA, Current: r.CurrentSHA})
	}
	rec := start.Sources
	switch {
	case len(rec) == 0:
		if len(current) == 1 && len(r.Changed) == 0 {
			break // the task file is the recorded one and loads nothing
		}
		r.Notes = append(r.Notes, "the trace records no sources (an older engine, or a writer without the corpus): "+
			"the files the task file loads were not checked")
	case current == nil:
		if len(rec) > 1 {
			r.Notes = append(r.Notes, fmt.Sprintf("the replay was not given the task's corpus: the %d files the task file loads were not checked", len(rec)-1))
		}
	default:
		// the task file comes first; its change is the one above unless only the sources say so
		if rec[0].SHA256 != current[0].SHA256 && len(r.Changed) == 0 {
			r.Changed = append(r.Changed, FileChange{Path: start.File, Task: true, Recorded: rec[0].SHA256, Current: current[0].SHA256})
		}
		now := map[string]string{}
		for _, s := range current[1:] {
			now[s.Path] = s.SHA256
		}
		then := map[string]bool{}
		for _, s := range rec[1:] {
			then[s.Path] = true
			if now[s.Path] != s.SHA256 {
				r.Changed = append(r.Changed, FileChange{Path: s.Path, Recorded: s.SHA256, Current: now[s.Path]})
			}
		}
		for _, s := range current[1:] {
			if !then[s.Path] {
				r.Changed = append(r.Changed, FileChange{Path: s.Path, Current: s.SHA256})
			}
		}
	}
	r.TaskChanged = len(r.Changed) > 0
}

// diffStart compares what the replay recomputes of a start event: the state after setup, the
// random source (when recorded), the clock (when recorded) and the tools.
func diffStart(rec *Start, got Start) []string {
	var diffs []string
	if rec.State != got.State {
		diffs = append(diffs, fmt.Sprintf("state after setup: recorded %s, replayed %s", rec.State, got.State))
	}
	if rec.Rand != "" && rec.Rand != got.Rand {
		diffs = append(diffs, fmt.Sprintf("random source after setup (rand): recorded %s, replayed %s: the seed is not the one the trace was recorded with, or setup draws differently",
			rec.Rand, got.Rand))
	}
	if rec.Now != "" {
		diffs = append(diffs, diffString("clock after setup (now)", rec.Now, got.Now)...)
	}
	diffs = append(diffs, diffString("time zone (timezone)", rec.TimeZone, got.TimeZone)...)
	return append(diffs, diffJSON("tools", rec.Tools, got.Tools)...)
}

// plan is what the recorded events say the agent did, turn by turn.
type plan struct {
	script *episode.Scripted // the recorded calls and replies, the truncated turns and the agent's error
	msgs   [][]Event         // the model's messages (assistant events) by turn
	runs   [][]int           // by turn and message: the calls recorded after it, before the next
	notRun [][]*NotRun       // by turn: the tool messages of calls the model agent did not run
	hasNot bool              // the trace has not_run events (older engines wrote none)
	failed int               // the turn the agent's error ended, -1 when none
}

// planOf reads the plan of a whole trace (Read).
func planOf(events []Event) *plan {
	p := &plan{script: &episode.Scripted{}, failed: -1}
	s := p.script
	replied := map[int]bool{}
	for _, ev := range events[1:] {
		turn := ev.Turn()
		for len(s.Calls) <= turn {
			s.Calls = append(s.Calls, nil)
			s.Replies = append(s.Replies, "")
			s.Truncated = append(s.Truncated, false)
			s.Errors = append(s.Errors, nil)
			p.msgs = append(p.msgs, nil)
			p.runs = append(p.runs, nil)
			p.notRun = append(p.notRun, nil)
		}
		switch b := ev.Body.(type) {
		case *Assistant:
			p.msgs[turn] = append(p.msgs[turn], ev)
			p.runs[turn] = append(p.runs[turn], 0)
		case *Call:
			id := b.ID
			if engineID.MatchString(id) {
				id = "" // the engine numbers its own calls: a missing or moved call shows in the ids
			}
			s.Calls[turn] = append(s.Calls[turn], episode.ScriptedCall{ID: id, Name: b.Name, Args: b.Args})
			if n := len(p.runs[turn]); n > 0 {
				p.runs[turn][n-1]++
			}
		case *NotRun:
			p.notRun[turn] = append(p.notRun[turn], b)
			p.hasNot = true
		case *SimUser:
			// the agent's messages to the simulated user; the one after the reply is the engine's
			if !replied[turn] {
				s.Calls[turn] = append(s.Calls[turn], episode.ScriptedCall{Ask: true, Said: b.Said})
			}
		case *Reply:
			s.Replies[turn] = b.Content
			replied[turn] = true
		case *TurnEnd:
			s.Truncated[turn] = b.Truncated
		}
	}
	// An agent that failed (a solution error, a model that could not be reached, an interruption)
	// left a turn without a reply and an error in the end event: fail the same way at that turn.
	if end, ok := events[len(events)-1].Body.(*End); ok && end.Error != nil {
		for turn := range s.Calls {
			if !replied[turn] {
				s.Errors[turn] = &episode.DiagError{Diag: end.Error.Diagnostic()}
				p.failed = turn
				break
			}
		}
	}
	return p
}

// Script is the agent that re-issues what a whole trace (Read) records its agent did, turn by
// turn, as Replay re-issues it for an agent it cannot run again: the calls (a call numbered by
// the engine, call_N, is left for the engine to number again), the messages to a simulated user,
// the replies, the turns truncated at max_calls_per_turn, and the agent's error at the turn it
// ended. Its label is the trace's agent.
func Script(events []Event) *episode.Scripted {
	s := planOf(events).script
	if start, ok := events[0].Body.(*Start); ok {
		s.Label = start.Agent
	}
	return s
}

// modelAgent is the name of runtime/modelagent's agent in traces.
var modelAgent = (*modelagent.Agent)(nil).Name()

// rerunnable are the agents a replay runs again.
var rerunnable = map[string]episode.Agent{episode.Oracle{}.Name(): episode.Oracle{}, episode.Noop{}.Name(): episode.Noop{}}

// agent is the agent that replays the plan for a trace with the start event start, and a note
// when it can only re-issue what was recorded.
func (p *plan) agent(start *Start, cmp *comparer) (episode.Agent, string) {
	label := start.Agent
	p.script.Label = label
	model := label == modelAgent || label == episode.RemoteAgent
	for _, m := range p.msgs {
		model = model || len(m) > 0
	}
	if model {
		return &modelReplay{plan: p, cmp: cmp, system: start.System}, ""
	}
	if a, ok := rerunnable[label]; ok {
		return &rerun{plan: p, agent: a}, ""
	}
	return p.script, fmt.Sprintf("the agent %q cannot be run again: its recorded calls and replies were re-issued and checked only through what they did", label)
}

// rerun runs the agent that made the trace again; the turn its error ended is re-issued as
// recorded.
type rerun struct {
	plan  *plan
	agent episode.Agent
}

func (r *rerun) Name() string { return r.plan.script.Label }

func (r *rerun) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	if tc.Index == r.plan.failed {
		return r.plan.script.Turn(ctx, tc)
	}
	return r.agent.Turn(ctx, tc)
}

// errStop ends a replay that already diverged.
var errStop = errors.New("the replay diverged")

// engineID matches the call ids the engine assigns (agents without ids of their own).
var engineID = regexp.MustCompile(`^call_[0-9]+$`)

// comparer is an episode.Observer that checks each replayed event against the next recorded one:
// it builds the replayed event as the Writer would and compares the two field by field.
type comparer struct {
	expect []Event
	events []Event
	next   int
	div    *Divergence
	// stop, for a trace of an interrupted episode, ends the replay where the recording ends:
	// when the replay would go on past the events before the end (cut).
	stop context.CancelFunc
	cut  bool
}

// atCut reports whether the replay stands at the end of an interrupted trace and does something
// the episode had not done when it was interrupted (kind, not the end); it then stops the
// replay there.
func (c *comparer) atCut(kind string) bool {
	if c.cut {
		return true
	}
	if c.stop == nil || kind == "end" || c.next != len(c.expect)-1 {
		return false
	}
	c.cut = true
	c.stop()
	return true
}

// take is the next recorded event, which must be a T.
func take[T Body](c *comparer, turn int) (Event, T, bool) {
	var rec T
	if c.div != nil || c.atCut(rec.Kind()) {
		return Event{}, rec, false
	}
	kind := rec.Kind()
	if c.next >= len(c.expect) {
		c.div = &Divergence{Line: c.events[len(c.events)-1].Line, Event: kind, Turn: turn,
			Diffs: []string{fmt.Sprintf("the replay has a %s event (turn %d) that the trace does not", kind, turn)}}
		return Event{}, rec, false
	}
	ev := c.expect[c.next]
	c.next++
	rec, ok := ev.Body.(T)
	if !ok {
		c.div = &Divergence{Line: ev.Line, Event: ev.Kind, Turn: ev.Turn(),
			Diffs: []string{fmt.Sprintf("event: recorded %s, replayed %s (turn %d)", ev.Kind, kind, turn)}}
		return Event{}, rec, false
	}
	return ev, rec, true
}

// here is the next recorded event, where the replay stands (the last one when none is left).
func (c *comparer) here() Event {
	if c.next < len(c.expect) {
		return c.expect[c.next]
	}
	return c.events[len(c.events)-1]
}

func (c *comparer) diverge(ev Event, turn int, diffs []string) {
	if len(diffs) == 0 || c.div != nil {
		return
	}
	d := &Divergence{Line: ev.Line, Event: ev.Kind, Turn: turn, Diffs: diffs}
	var call *Call
	switch b := ev.Body.(type) {
	case *Call:
		call = b
	case *CallResult:
		for _, e := range c.events {
			if cl, ok := e.Body.(*Call); ok && cl.ID == b.ID && e.Line < ev.Line {
				call = cl
			}
		}
	}
	if call != nil {
		d.Tool, d.Args = call.Name, jsonv.MustEncode(call.Args)
	}
	c.div = d
}

func (c *comparer) OnUser(turn int, content, state, now string) {
	if ev, rec, ok := take[*User](c, turn); ok {
		if rec.Now == "" {
			now = "" // older traces lack it
		}
		c.diverge(ev, turn, diffEvents(rec, &User{Turn: turn, Content: content, State: state, Now: now}))
	}
}

func (c *comparer) OnAssistant(turn int, m *episode.AssistantMessage) {
	if ev, rec, ok := take[*Assistant](c, turn); ok {
		c.diverge(ev, turn, diffEvents(rec, assistantOf(turn, m)))
	}
}

func (c *comparer) OnUserAsk(x *episode.UserAsk) {
	if ev, rec, ok := take[*SimUser](c, x.Turn); ok {
		c.diverge(ev, x.Turn, diffEvents(rec, simUserOf(x)))
	}
}

func (c *comparer) OnJudge(j *episode.JudgeCall) {
	if ev, rec, ok := take[*Judge](c, turnOf(j.Turn)); ok {
		c.diverge(ev, turnOf(j.Turn), diffEvents(rec, judgeOf(j)))
	}
}

// turnOf is a verifier's turn, -1 for the task's final verifier.
func turnOf(turn *int) int {
	if turn == nil {
		return -1
	}
	return *turn
}

func (c *comparer) OnNotRun(turn int, id, content string) {
	if ev, rec, ok := take[*NotRun](c, turn); ok {
		c.diverge(ev, turn, diffEvents(rec, &NotRun{Turn: turn, ID: id, Content: content}))
	}
}

func (c *comparer) OnCall(call *episode.Call) {
	ev, rec, ok := take[*Call](c, call.Turn)
	if !ok {
		return
	}
	var diffs []string
	if rec.ID != call.ID {
		why := ""
		if engineID.MatchString(rec.ID) && engineID.MatchString(call.ID) {
			why = " (a call before it is missing, extra or moved)"
		}
		diffs = append(diffs, fmt.Sprintf("id: recorded %s, replayed %s%s", rec.ID, call.ID, why))
	}
	got := &Call{Turn: call.Turn, ID: rec.ID, Name: call.Name, Args: call.Args}
	c.diverge(ev, call.Turn, append(diffs, diffEvents(rec, got)...))
}

func (c *comparer) OnResult(call *episode.Call) {
	ev, rec, ok := take[*CallResult](c, call.Turn)
	if !ok {
		return
	}
	got := resultOf(call)
	diffs := diffResultText("content", rec.Content, got.Content)
	got.Content = rec.Content // compared above
	c.diverge(ev, call.Turn, append(diffs, diffEvents(rec, got)...))
}

func (c *comparer) OnReply(turn int, content string) {
	if ev, rec, ok := take[*Reply](c, turn); ok {
		c.diverge(ev, turn, diffEvents(rec, &Reply{Turn: turn, Content: content}))
	}
}

func (c *comparer) OnTurnEnd(t *episode.TurnResult) {
	if ev, rec, ok := take[*TurnEnd](c, t.Index); ok {
		c.diverge(ev, t.Index, diffEvents(rec, turnEndOf(t)))
	}
}

func (c *comparer) end(r *episode.Result) {
	if c.cut {
		return // the replay stopped where the interrupted episode did
	}
	if ev, rec, ok := take[*End](c, -1); ok {
		c.diverge(ev, -1, diffEvents(rec, EndOf(r)))
	}
}

// diffEvents lists the fields where two events of one kind differ, in the fields' order:
// strings as text, other values path by path.
func diffEvents(rec, got Body) []string {
	if reflect.DeepEqual(rec, got) {
		return nil // the usual case, without building JSON values
	}
	s, rv := schemaOf(rec)
	_, gv := schemaOf(got)
	var diffs []string
	for _, f := range s.fields {
		a, b := f.get(rv.Field(f.index)), f.get(gv.Field(f.index))
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok {
			diffs = append(diffs, diffString(f.name, as, bs)...)
		} else {
			diffs = append(diffs, diffJSON(f.name, a, b)...)
		}
	}
	return diffs
}

// diffString compares two texts byte for byte: a short pair is shown whole, a longer one from
// where it first differs (diffAt).
func diffString(field, rec, got string) []string {
	if rec == got {
		return nil
	}
	if len(strconv.Quote(rec)) <= maxShown && len(strconv.Quote(got)) <= maxShown {
		return []string{fmt.Sprintf("%s: recorded %s, replayed %s", field, quote(rec), quote(got))}
	}
	return []string{diffAt(field, rec, got)}
}

// diffResultText compares a result's content byte for byte: it is the text the model was given,
// so a result encoded anew (other whitespace, key order or escapes) differs as much as one with
// another value. The first line says where the texts first differ; when both are JSON, the
// lines after it name the paths whose values differ, or say that the values are the same.
func diffResultText(field, rec, got string) []string {
	if rec == got {
		return nil
	}
	diffs := []string{diffAt(field, rec, got)}
	a, err1 := jsonv.DecodeString(rec)
	b, err2 := jsonv.DecodeString(got)
	switch {
	case err1 != nil || err2 != nil:
	case jsonv.Equal(a, b):
		diffs = append(diffs, field+": the same JSON value, encoded differently (whitespace, key order, escapes or number form); the model was given the recorded text")
	default:
		diffs = append(diffs, diffJSON(field, a, b)...)
	}
	return diffs
}

// maxShown bounds a value a diff shows (in bytes, quoted); excerptBefore and excerptAfter are
// the bytes of context diffAt shows before and from the first difference.
const (
	maxShown      = 200
	excerptBefore = 30
	excerptAfter  = 50
)

// diffAt says where two texts first differ, with an excerpt of each from a little before it:
// "field: differs at byte N (of R recorded, G replayed): recorded …"x"…, replayed …"y"…". Bytes
// count from 1; in a text of several lines, the line and column are given too.
func diffAt(field, rec, got string) string {
	i := 0
	for i < len(rec) && i < len(got) && rec[i] == got[i] {
		i++
	}
	where := fmt.Sprintf("byte %d", i+1)
	if line := strings.Count(rec[:i], "\n") + 1; line > 1 {
		where += fmt.Sprintf(", line %d column %d", line, i-strings.LastIndexByte(rec[:i], '\n'))
	}
	return fmt.Sprintf("%s: differs at %s (of %d bytes recorded, %d replayed): recorded %s, replayed %s",
		field, where, len(rec), len(got), excerpt(rec, i), excerpt(got, i))
}

// excerpt is the part of s around byte i, quoted: a few bytes before it and more from it, cut at
// the start of a character, with "…" where s goes on and "(end)" where it ends at i.
func excerpt(s string, i int) string {
	from := max(0, i-excerptBefore)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	to := min(len(s), i+excerptAfter)
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	out := strconv.Quote(s[from:to])
	if from > 0 {
		out = "…" + out
	}
	switch {
	case to < len(s):
		out += "…"
	case i >= len(s):
		out += " (end)"
	}
	return out
}

// diffJSON lists the paths where two JSON values differ, as "path: recorded X, replayed Y".
func diffJSON(path string, a, b jsonv.Value) []string {
	if jsonv.Equal(a, b) {
		return nil
	}
	var out []string
	walkDiff(path, a, b, &out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… and %d more differences", len(out)-20))
	}
	return out
}

func walkDiff(path string, a, b jsonv.Value, out *[]string) {
	if jsonv.Equal(a, b) {
		return
	}
	switch x := a.(type) {
	case *jsonv.Object:
		y, ok := b.(*jsonv.Object)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for _, k := range x.Keys() {
			keys[k] = true
		}
		for _, k := range y.Keys() {
			keys[k] = true
		}
		var names []string
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			av, aok := x.Get(k)
			bv, bok := y.Get(k)
			switch {
			case !aok:
				*out = append(*out, fmt.Sprintf("%s.%s: recorded (absent), replayed %s", path, k, show(bv)))
			case !bok:
				*out = append(*out, fmt.Sprintf("%s.%s: recorded %s, replayed (absent)", path, k, show(av)))
			default:
				walkDiff(path+"."+k, av, bv, out)
			}
		}
		return
	case []jsonv.Value:
		y, ok := b.([]jsonv.Value)
		if !ok {
			break
		}
		n := len(x)
		if len(y) > n {
			n = len(y)
		}
		for i := 0; i < n; i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(x):
				*out = append(*out, fmt.Sprintf("%s: recorded (absent), replayed %s", p, show(y[i])))
			case i >= len(y):
				*out = append(*out, fmt.Sprintf("%s: recorded %s, replayed (absent)", p, show(x[i])))
			default:
				walkDiff(p, x[i], y[i], out)
			}
		}
		return
	}
	*out = append(*out, fmt.Sprintf("%s: recorded %s, replayed %s", path, show(a), show(b)))
}

func show(v jsonv.Value) string {
	s, err := jsonv.Encode(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return shorten(string(s), 200)
}

func quote(s string) string { return shorten(fmt.Sprintf("%q", s), maxShown) }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// String describes the divergence in a few lines.
func (d *Divergence) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "event %d (%s", d.Line, d.Event)
	if d.Turn >= 0 {
		fmt.Fprintf(&b, ", turn %d", d.Turn)
	}
	if d.Tool != "" {
		fmt.Fprintf(&b, ", %s %s", d.Tool, shorten(d.Args, 200))
	}
	b.WriteString(") differs:\n")
	for _, l := range d.Diffs {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	return b.String()
}

// recordedModels are the models inside the task for a replay: the user model and the judge model
// whose answers the trace records (or whose failure ended it), given back from it, so that the
// replay asks no model. A kind the trace records only stand-ins for (or nothing: a trace of an
// older engine) is left to the stand-ins, which run again: nil.
//
// An exchange with the user model gets the answer (content, done, source, model) of the next
// recorded event when that is a sim_user event that asked what the replay asks: the same turn,
// said and request (its SHA-256). A judge() call gets the verdict (passed, score, reason, source,
// model) of the next recorded event when that is a judge event of the same turn, rubric, text and
// request. Anything else makes the replay diverge at that event, and the exchange fails. Where the
// trace ends instead with the error that stopped the episode (a model that failed for good), the
// exchange fails with that error, as it did.
func (c *comparer) recordedModels() *episode.Models {
	var user, judge bool
	for _, ev := range c.expect {
		switch b := ev.Body.(type) {
		case *SimUser:
			user = user || (b.Source != "stand-in" && b.Source != "rounds")
		case *Judge:
			judge = judge || b.Source != "stand-in"
		case *End:
			if b.Error == nil {
				break
			}
			if m := modelFailed.FindStringSubmatch(b.Error.Message); m != nil && !strings.HasPrefix(m[3], "stand_in") {
				user, judge = user || m[1] != "", judge || m[2] != ""
			}
		}
	}
	if !user && !judge {
		return nil
	}
	m := &episode.Models{}
	if user {
		m.User = c.recordedAnswer
	}
	if judge {
		m.Judge = c.recordedVerdict
	}
	return m
}

// modelFailed matches the message of an error that a model inside the task (or its stand-in,
// when the rest starts with "stand_in") ended the episode with: the user's (1) or a judge's (2),
// and the rest (3).
var modelFailed = regexp.MustCompile(`^(?:(turn [0-9]+: simulated user: )|((?:turn [0-9]+ )?verifier: judge: ))(?s:(.*))`)

// recordedAnswer answers an exchange with a simulated user from the trace (recordedModels).
func (c *comparer) recordedAnswer(_ context.Context, x *episode.UserAsk) error {
	what := fmt.Sprintf("the simulated user (turn %d)", x.Turn)
	ev, ok := c.recorded("sim_user", x.Turn, what)
	if !ok {
		return c.failure(ev, fmt.Sprintf("turn %d: simulated user: ", x.Turn))
	}
	rec, ok := ev.Body.(*SimUser)
	if !ok {
		c.diverge(ev, ev.Turn(), []string{fmt.Sprintf("event: recorded %s, replayed sim_user: %s is asked %s", ev.Kind, what, quote(x.Said))})
		return errStop
	}
	var diffs []string
	switch {
	case rec.Turn != x.Turn:
		diffs = append(diffs, fmt.Sprintf("turn: recorded %d, replayed %d", rec.Turn, x.Turn))
	case rec.Source == "rounds":
		diffs = append(diffs, fmt.Sprintf("source: recorded rounds (nobody was asked: the user was done or its rounds spent), replayed: the user model is asked %s", quote(x.Said)))
	case rec.Said != x.Said:
		diffs = append(diffs, "the simulated user was asked something else:")
		diffs = append(diffs, diffString("said", rec.Said, x.Said)...)
	case rec.RequestSHA256 != x.RequestSHA256:
		diffs = append(diffs, fmt.Sprintf("request_sha256: recorded %s, replayed %s: the request to the user model differs (its declaration, or the turn before this exchange)",
			rec.RequestSHA256, x.RequestSHA256))
		if rec.Request != nil {
			diffs = append(diffs, diffJSON("request", rec.Request, x.Request)...)
		}
	}
	if len(diffs) > 0 {
		c.diverge(ev, rec.Turn, diffs)
		return errStop
	}
	x.Content, x.Done, x.Source, x.Model = rec.Content, rec.Done, rec.Source, rec.Model
	return nil
}

// recordedVerdict judges a judge() call from the trace (recordedModels).
func (c *comparer) recordedVerdict(_ context.Context, j *episode.JudgeCall) error {
	turn := turnOf(j.Turn)
	what, prefix := "the judge of the final verifier", "verifier: judge: "
	if j.Turn != nil {
		what, prefix = fmt.Sprintf("the judge of turn %d", turn), fmt.Sprintf("turn %d verifier: judge: ", turn)
	}
	ev, ok := c.recorded("judge", turn, what)
	if !ok {
		return c.failure(ev, prefix)
	}
	rec, ok := ev.Body.(*Judge)
	if !ok {
		c.diverge(ev, ev.Turn(), []string{fmt.Sprintf("event: recorded %s, replayed judge: %s is asked about the rubric %s", ev.Kind, what, quote(j.Rubric))})
		return errStop
	}
	var diffs []string
	switch {
	case turnOf(rec.Turn) != turn:
		diffs = append(diffs, fmt.Sprintf("turn: recorded %s, replayed %s", verifierName(rec.Turn), verifierName(j.Turn)))
	case rec.Rubric != j.Rubric || rec.Text != j.Text:
		diffs = append(diffs, "the judge was asked something else:")
		diffs = append(diffs, diffString("rubric", rec.Rubric, j.Rubric)...)
		diffs = append(diffs, diffString("text", rec.Text, j.Text)...)
	case rec.RequestSHA256 != j.RequestSHA256:
		diffs = append(diffs, fmt.Sprintf("request_sha256: recorded %s, replayed %s: the request to the judge model differs", rec.RequestSHA256, j.RequestSHA256))
		if rec.Request != nil {
			diffs = append(diffs, diffJSON("request", rec.Request, j.Request)...)
		}
	}
	if len(diffs) > 0 {
		c.diverge(ev, turn, diffs)
		return errStop
	}
	j.Passed, j.Score, j.Reason, j.Source, j.Model = rec.Passed, rec.Score, rec.Reason, rec.Source, rec.Model
	return nil
}

// verifierName names the verifier of a turn for people.
func verifierName(turn *int) string {
	if turn == nil {
		return "the final verifier"
	}
	return fmt.Sprintf("turn %d", *turn)
}

// recorded is the next recorded event, for a replayed exchange of the kind with the model what
// names; ok is false when there is none to answer from: the replay already diverged, the trace
// is over (the replay diverges), or its next event is the end that records the episode's error
// (ev).
func (c *comparer) recorded(kind string, turn int, what string) (ev Event, ok bool) {
	switch {
	case c.div != nil:
		return Event{}, false
	case c.atCut(kind):
		return c.expect[len(c.expect)-1], false
	case c.next >= len(c.expect):
		c.diverge(c.events[len(c.events)-1], turn, []string{fmt.Sprintf("the replay has a %s event (%s) that the trace does not", kind, what)})
		return Event{}, false
	}
	ev = c.expect[c.next]
	if end, isEnd := ev.Body.(*End); isEnd && end.Error != nil {
		return ev, false
	}
	return ev, true
}

// failure is the error of an exchange that recorded cannot answer: the recorded error that ended
// the episode at ev (an end event), with prefix, which the engine puts before it, taken off; or
// errStop.
func (c *comparer) failure(ev Event, prefix string) error {
	end, ok := ev.Body.(*End)
	if !ok || end.Error == nil {
		return errStop
	}
	return &recordedError{code: end.Error.Code, msg: strings.TrimPrefix(end.Error.Message, prefix)}
}

// recordedError is the recorded failure of a model inside the task, with its diagnostic code.
type recordedError struct{ code, msg string }

func (e *recordedError) Error() string    { return e.msg }
func (e *recordedError) DiagCode() string { return e.code }
