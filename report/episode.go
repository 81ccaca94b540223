package report

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// WriteEpisodes writes the episode views of the traces at paths to out: one page, with the
// episodes one after the other when there are several. It is also what `run --report FILE`
// calls with the trace it wrote (and TaskLocator of the task it ran).
func WriteEpisodes(ctx context.Context, out string, paths []string, opts Options) error {
	var eps []*episodeView
	for i, p := range paths {
		events, err := readTraceFile(p)
		if err != nil {
			return err
		}
		ev := episodeOf(events)
		ev.TracePath = p
		ev.ID = "e" + strconv.Itoa(i)
		applyChanges(ev, changesOf(ctx, p, events, opts))
		eps = append(eps, ev)
	}
	data, err := renderEpisodes(eps, "", "")
	if err != nil {
		return err
	}
	return writeFile(out, data)
}

// readTraceFile reads a whole trace; the error names the file.
func readTraceFile(path string) ([]trace.Event, error) {
	data, err := trace.ReadFile(path)
	if err != nil {
		return nil, &InputError{Path: path, Err: err}
	}
	events, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		return nil, &InputError{Path: path, Err: err}
	}
	return events, nil
}

// changesOf finds the task of a trace and replays it for the state changes, within the time
// limit; a replay that fails, or panics, is a note, never an error of the report.
func changesOf(ctx context.Context, path string, events []trace.Event, opts Options) (ch *Changes) {
	start := events[0].Body.(*trace.Start) // trace.Read checked it
	if opts.Locate == nil {
		return &Changes{Note: "no task file was looked for, so the state changes are not shown"}
	}
	task, where, err := opts.Locate(ctx, path, start)
	if err != nil {
		return &Changes{Note: "the task file was not found, so the state changes are not shown: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeLimit())
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			ch = &Changes{Note: fmt.Sprintf("the replay of %s failed (%v), so the state changes are not shown", where, r)}
		}
	}()
	ch = Replay(ctx, task, events, opts.Limits)
	if ctx.Err() != nil {
		ch.Note = fmt.Sprintf("the replay was stopped at its time limit of %v, so the changes after that are not shown", opts.timeLimit())
	}
	ch.where = where
	return ch
}

// episodeView is what an episode page shows.
type episodeView struct {
	ID        string // prefix of the page's anchors
	Level     int    // heading level of the episode's sections
	TracePath string
	Task      string
	File      string
	Agent     string
	Engine    string
	Seed      int64
	Now       string
	State     string // after setup
	System    string
	Model     *modelView
	Usage     *usageView
	Tools     []toolView
	Calls     int
	// Where is the task file the changes were replayed against; ChangesNote says why changes
	// are missing ("" when none is).
	Where       string
	ChangesNote string
	Turns       []*turnView
	Final       *verdictView
	End         *endView
}

type modelView struct {
	Name, BaseURL                    string
	Settings                         []keyValue
	Headers                          []string
	ToolCallFormat, ReasoningHistory string
}

type keyValue struct{ Key, Value string }

type usageView struct {
	Prompt, Completion, Total int64
	Messages                  int // assistant messages with a usage
}

type toolView struct{ Name, Description string }

type turnView struct {
	Index, Number int
	User, Now     string
	Before        *StateChange
	BeforeKnown   bool
	Items         []*itemView
	Verdict       *verdictView
}

type itemView struct {
	Assistant *assistantView
	Call      *callView
	NotRun    *notRunView
	Ask       *askView
	Judge     *judgeView
	Reply     *replyView
}

type assistantView struct {
	Content, Reasoning, Raw, FinishReason, CallsFrom, Note string
	Calls                                                  []toolCallView
	Usage                                                  string
}

type toolCallView struct{ ID, Name, Arguments string }

type callView struct {
	Anchor             string
	ID, Name, Args     string
	Result, Error      string
	HasResult, IsError bool
	Fault              bool
	Changes            *StateChange
	ChangesKnown       bool
	StateHash          string
	index              int
}

type notRunView struct{ ID, Content string }

type askView struct {
	Round                int
	Said, Answer, Source string
	Model                string
	Done                 bool
}

type judgeView struct {
	Rubric, Text, Reason, Source, Model string
	Passed                              bool
	Score                               string
}

type replyView struct{ Content string }

type verdictView struct {
	Caption   string
	Score     string // "" for a turn without a verifier
	Truncated bool
	Rounds    int
	Checks    []checkView
	Judges    []*judgeView
	Failed    int
}

type checkView struct {
	Kind, Message, Weight string
	Passed                bool
}

type endView struct {
	Score, Completion, Safety, Robustness string
	Passed                                bool
	Error                                 *errView
	State                                 string
}

type errView struct{ Code, Message, Where string }

// episodeOf builds the view of a trace (trace.Read checked its order).
func episodeOf(events []trace.Event) *episodeView {
	start := events[0].Body.(*trace.Start)
	ev := &episodeView{Level: 2, Task: start.Task, File: start.File, Agent: start.Agent, Engine: start.Engine,
		Seed: start.Seed, Now: start.Now, State: start.State, System: cut(start.System)}
	if m := start.Model; m != nil {
		mv := &modelView{Name: m.Name, BaseURL: m.BaseURL, ToolCallFormat: m.ToolCallFormat, ReasoningHistory: m.ReasoningHistory}
		if m.Request != nil {
			for _, kv := range m.Request.Members {
				mv.Settings = append(mv.Settings, keyValue{kv.Key, cut(jsonv.MustEncode(kv.Value))})
			}
		}
		for _, h := range m.Headers {
			if s, ok := h.(string); ok {
				mv.Headers = append(mv.Headers, s)
			}
		}
		ev.Model = mv
	}
	for _, t := range start.Tools {
		ev.Tools = append(ev.Tools, toolOf(t))
	}
	turn := func(i int) *turnView {
		for len(ev.Turns) <= i {
			n := len(ev.Turns)
			ev.Turns = append(ev.Turns, &turnView{Index: n, Number: n})
		}
		return ev.Turns[i]
	}
	usage := &usageView{}
	pending := map[string]*callView{}
	var judges []*judgeView // of the verifier running now
	for _, e := range events[1:] {
		switch b := e.Body.(type) {
		case *trace.User:
			t := turn(b.Turn)
			t.User, t.Now = cut(b.Content), b.Now
		case *trace.Assistant:
			a := &assistantView{Content: cut(b.Content), Reasoning: cut(b.Reasoning), Raw: cut(b.Raw),
				FinishReason: b.FinishReason, CallsFrom: b.CallsFrom, Note: cut(b.Note)}
			for _, tc := range b.ToolCalls {
				a.Calls = append(a.Calls, toolCallOf(tc))
			}
			if b.Usage != nil {
				p, c := rollout.UsageTokens(b.Usage)
				usage.Prompt += p
				usage.Completion += c
				usage.Messages++
				a.Usage = fmt.Sprintf("%d prompt + %d completion tokens", p, c)
			}
			t := turn(b.Turn)
			t.Items = append(t.Items, &itemView{Assistant: a})
		case *trace.Call:
			c := &callView{Anchor: fmt.Sprintf("call-%d", ev.Calls+1), ID: b.ID, Name: b.Name, Args: prettyValue(b.Args), index: ev.Calls}
			ev.Calls++
			pending[b.ID] = c
			t := turn(b.Turn)
			t.Items = append(t.Items, &itemView{Call: c})
		case *trace.CallResult:
			c := pending[b.ID]
			if c == nil {
				break
			}
			delete(pending, b.ID)
			c.HasResult, c.Fault, c.StateHash = true, b.Fault, b.State
			if b.Error != nil {
				c.IsError, c.Error = true, cut(*b.Error)
			} else {
				c.Result = prettyText(b.Content)
			}
		case *trace.NotRun:
			t := turn(b.Turn)
			t.Items = append(t.Items, &itemView{NotRun: &notRunView{ID: b.ID, Content: prettyText(b.Content)}})
		case *trace.SimUser:
			t := turn(b.Turn)
			t.Items = append(t.Items, &itemView{Ask: &askView{Round: b.Round + 1, Said: cut(b.Said), Answer: cut(b.Content),
				Source: b.Source, Model: b.Model, Done: b.Done}})
		case *trace.Judge:
			judges = append(judges, &judgeView{Rubric: cut(b.Rubric), Text: cut(b.Text), Reason: cut(b.Reason), Source: b.Source,
				Model: b.Model, Passed: b.Passed, Score: fmtNum(b.Score)})
		case *trace.Reply:
			t := turn(b.Turn)
			t.Items = append(t.Items, &itemView{Reply: &replyView{Content: cut(b.Content)}})
		case *trace.TurnEnd:
			v := verdictOf(b.Checks, judges)
			v.Caption = fmt.Sprintf("The checks of turn %d", b.Turn)
			judges = nil
			if b.Score != nil {
				v.Score = fmtNum(*b.Score)
			}
			v.Truncated, v.Rounds = b.Truncated, b.Rounds
			turn(b.Turn).Verdict = v
		case *trace.End:
			// the end's checks are every verifier's: the final verifier's are those without a turn
			var final []trace.Check
			for _, c := range b.Checks {
				if c.Turn == nil {
					final = append(final, c)
				}
			}
			if len(final) > 0 || len(judges) > 0 {
				ev.Final = verdictOf(final, judges)
				ev.Final.Caption = "The checks of the final verifier"
			}
			end := &endView{Score: fmtNum(b.Score), Completion: fmtNum(b.Completion), Safety: fmtNum(b.Safety),
				Robustness: fmtNum(b.Robustness), Passed: b.Passed, State: b.State}
			if f := b.Error; f != nil {
				ev := &errView{Code: f.Code, Message: cut(f.Message)}
				if f.File != nil {
					ev.Where = *f.File
					if f.Line != nil {
						ev.Where += fmt.Sprintf(":%d:%d", *f.Line, *f.Col)
					}
				}
				end.Error = ev
			}
			ev.End = end
		}
	}
	if usage.Messages > 0 {
		usage.Total = usage.Prompt + usage.Completion
		ev.Usage = usage
	}
	return ev
}

// applyChanges puts the replayed changes on the view's turns and calls.
func applyChanges(ev *episodeView, ch *Changes) {
	ev.ChangesNote, ev.Where = ch.Note, ch.where
	for _, t := range ev.Turns {
		if t.Index < len(ch.Turns) {
			t.Before, t.BeforeKnown = ch.Turns[t.Index], true
		}
		for _, it := range t.Items {
			if c := it.Call; c != nil && c.index < len(ch.Calls) {
				c.Changes, c.ChangesKnown = ch.Calls[c.index], true
			}
		}
	}
}

// Shown reports whether a turn's verdict says anything: a turn of a single-turn task whose
// only verifier is the task's has none.
func (v *verdictView) Shown() bool {
	return v.Score != "" || v.Truncated || v.Rounds > 0 || len(v.Checks) > 0 || len(v.Judges) > 0
}

func verdictOf(checks []trace.Check, judges []*judgeView) *verdictView {
	v := &verdictView{Judges: judges}
	for _, c := range checks {
		cv := checkView{Kind: c.Kind, Message: cut(c.Message), Passed: c.Passed, Weight: "–"}
		if c.Weight != nil {
			cv.Weight = fmtNum(*c.Weight)
		}
		if !c.Passed {
			v.Failed++
		}
		v.Checks = append(v.Checks, cv)
	}
	return v
}

// toolOf is a tool schema's name and description.
func toolOf(v jsonv.Value) toolView {
	o, _ := v.(*jsonv.Object)
	if o == nil {
		return toolView{Name: cut(jsonv.MustEncode(v))}
	}
	if f, ok := o.Get("function"); ok {
		if fo, ok := f.(*jsonv.Object); ok {
			o = fo
		}
	}
	name, _ := o.Get("name")
	desc, _ := o.Get("description")
	n, _ := name.(string)
	d, _ := desc.(string)
	return toolView{Name: cut(n), Description: cut(d)}
}

// toolCallOf is a tool call of a model's message (chat-completions shape).
func toolCallOf(v jsonv.Value) toolCallView {
	o, _ := v.(*jsonv.Object)
	if o == nil {
		return toolCallView{Arguments: prettyValue(v)}
	}
	id, _ := o.Get("id")
	tc := toolCallView{}
	tc.ID, _ = id.(string)
	if f, ok := o.Get("function"); ok {
		if fo, ok := f.(*jsonv.Object); ok {
			name, _ := fo.Get("name")
			args, _ := fo.Get("arguments")
			tc.Name, _ = name.(string)
			if s, ok := args.(string); ok {
				tc.Arguments = prettyText(s)
			} else if args != nil {
				tc.Arguments = prettyValue(args)
			}
		}
	}
	return tc
}

// renderEpisodes renders episode views as one page; back links to the page they belong to.
func renderEpisodes(eps []*episodeView, back, backText string) ([]byte, error) {
	p := page{Kind: "episode", Back: back, BackText: backText}
	if len(eps) == 1 {
		e := eps[0]
		p.Title = "Episode: " + e.Task
		e.Level = 2
		p.Nav = episodeNav(e)
	} else {
		p.Title = fmt.Sprintf("%d episodes", len(eps))
		for _, e := range eps {
			e.Level = 3
			p.Nav = append(p.Nav, navLink{e.ID, e.Task + " (" + filepath.Base(e.TracePath) + ")"})
		}
	}
	p.Body = eps
	return render(p)
}

func episodeNav(e *episodeView) []navLink {
	nav := []navLink{{e.ID + "-summary", "Summary"}}
	for _, t := range e.Turns {
		nav = append(nav, navLink{fmt.Sprintf("%s-turn-%d", e.ID, t.Number), fmt.Sprintf("Turn %d", t.Number)})
	}
	nav = append(nav, navLink{e.ID + "-verdict", "Verdict"})
	return nav
}

// describe says in a sentence what an episode's agent was.
func (e *episodeView) AgentText() string {
	if e.Model != nil {
		return fmt.Sprintf("%s (model %s)", e.Agent, e.Model.Name)
	}
	return e.Agent
}

// FailedChecks counts the failed check items of the episode.
func (e *episodeView) FailedChecks() int {
	n := 0
	for _, t := range e.Turns {
		if t.Verdict != nil {
			n += t.Verdict.Failed
		}
	}
	if e.Final != nil {
		n += e.Final.Failed
	}
	return n
}

// Faults counts the calls that met an injected fault, and Errors the other tool errors.
func (e *episodeView) Faults() (faults int) {
	e.eachCall(func(c *callView) {
		if c.Fault {
			faults++
		}
	})
	return faults
}

func (e *episodeView) Errors() (errs int) {
	e.eachCall(func(c *callView) {
		if c.IsError && !c.Fault {
			errs++
		}
	})
	return errs
}

func (e *episodeView) eachCall(fn func(*callView)) {
	for _, t := range e.Turns {
		for _, it := range t.Items {
			if it.Call != nil {
				fn(it.Call)
			}
		}
	}
}

// Heading levels of an episode's sections and of their parts.
func (e *episodeView) H() int  { return e.Level }
func (e *episodeView) H2() int { return e.Level + 1 }
