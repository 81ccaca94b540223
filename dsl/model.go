package dsl

import (
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Task is one declared task: the typed model a run of a task file produces.
type Task struct {
	Name        string
	Description string
	File        string // the file's path as shown in diagnostics
	Rel         string // the file's path relative to the corpus root
	Pos         syntax.Position
	// Prompt is set for a single-turn task; Turns then holds one turn with that prompt and the
	// task-level solution, so that episodes treat both kinds alike. A prompt given as a
	// simulated_user() is its opening ("" when the opening is a function).
	Prompt          string
	SingleTurn      bool
	Turns           []*Turn
	Tools           []*ToolSpec
	Setup           starlark.Callable // (ws) or nil
	Verify          starlark.Callable // (ws, ep) or nil
	Solution        starlark.Callable // (agent) or nil; task level, single-turn tasks only
	Capabilities    []string
	Seed            int64
	PassThreshold   float64
	MaxCallsPerTurn int
	StartTime       time.Time
	Faults          *Faults
	Metadata        *jsonv.Object
	// Location is the user's time zone (UTC by default) and Region the user's country ("" when
	// none is declared): what the claims module reads times, days and phone numbers against.
	Location *time.Location
	Region   string
}

// Tool returns the task's tool of that name.
// MultiTurn reports whether the user speaks more than once: the task has several turns, or a
// turn's user is simulated (it answers the agent within the turn). Summaries split tasks by it.
func (t *Task) MultiTurn() bool {
	return len(t.Turns) > 1 || t.Simulated()
}

// Simulated reports whether a turn's user is a simulated user.
func (t *Task) Simulated() bool {
	for _, turn := range t.Turns {
		if turn != nil && turn.Sim != nil {
			return true
		}
	}
	return false
}

func (t *Task) Tool(name string) (*ToolSpec, bool) {
	for _, s := range t.Tools {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Turn is one user turn.
type Turn struct {
	Pos    syntax.Position
	User   string            // the message, when it is a string
	UserFn starlark.Callable // (ws, ep) -> string, when it depends on state or replies
	// Sim is the simulated user that answers the agent within the turn, nil for a user who only
	// speaks once. Its opening message is User or UserFn.
	Sim      *SimUser
	Before   starlark.Callable // (ws) or nil
	Verify   starlark.Callable // (ws, ep) or nil
	Solution starlark.Callable // (agent) or nil
	Advance  time.Duration
	// AdvanceText is the advance as written ("1d").
	AdvanceText string
}

// SimUser is a user declared with simulated_user(): a model, or its stand-in, answers the agent
// within the turn. The opening message is the turn's User or UserFn.
type SimUser struct {
	Persona string // who the user is
	Goal    string // what they want from the turn
	// DoneWhen says when they are satisfied, "" when the declaration does not say.
	DoneWhen string
	// Facts are what the user knows and reveals only when asked, in declaration order.
	Facts []Fact
	// Rounds is the most answers the user gives within the turn (at least 1).
	Rounds int
	// StandIn is the deterministic user, (said, round) -> str or None, that answers when no
	// model is given.
	StandIn starlark.Callable
	Pos     syntax.Position // where simulated_user() was called
}

// Fact is one thing a simulated user knows.
type Fact struct{ Key, Value string }

// StandInPos is where the stand-in is defined (the simulated_user() call when it is a builtin).
func (s *SimUser) StandInPos() syntax.Position { return FuncPos(s.StandIn, s.Pos) }

// FuncPos is where a Starlark function is defined, or else fallback.
func FuncPos(c starlark.Callable, fallback syntax.Position) syntax.Position {
	if fn, ok := c.(*starlark.Function); ok {
		return fn.Position()
	}
	return fallback
}

// ToolSpec is one tool a task exposes: a built-in tool or a task-defined one.
type ToolSpec struct {
	*tools.Tool
	Builtin bool              // a built-in tool (Tool.Run is set)
	Named   bool              // a built-in tool named one by one in `tools` (not only through a group)
	Impl    starlark.Callable // task-defined: impl(ws, **args)
	Pos     syntax.Position
	// ParamPos are where the param() of each of Params was called (task-defined tools).
	ParamPos []syntax.Position
}

// Faults configures transient tool errors.
type Faults struct {
	Rate  float64
	Tools []string
	Seed  int64
	// Nth lists, per tool, the attempts (1-based, counted per tool over the episode) that fail
	// for sure, whatever Rate says.
	Nth map[string][]int
}

// Fires reports whether attempt n (1-based) of tool is one of the Nth faults.
func (f *Faults) Fires(tool string, n int) bool {
	for _, k := range f.Nth[tool] {
		if k == n {
			return true
		}
	}
	return false
}

// Capability is one entry of a corpus's taxonomy.
type Capability struct {
	Name        string
	Description string
	Examples    []string
	Pos         syntax.Position
}

// Taxonomy is the capability list of a corpus, in declaration order.
type Taxonomy struct {
	Capabilities []Capability
	// Name is how diagnostics name it: its file as shown, or BuiltinTaxonomyName.
	Name string
}

// where names the taxonomy in a diagnostic.
func (t *Taxonomy) where() string {
	if t.Name == "" {
		return CapabilitiesFile
	}
	return t.Name
}

// Has reports whether name is declared.
func (t *Taxonomy) Has(name string) bool {
	_, ok := t.Get(name)
	return ok
}

// Get returns the capability of that name.
func (t *Taxonomy) Get(name string) (Capability, bool) {
	for _, c := range t.Capabilities {
		if c.Name == name {
			return c, true
		}
	}
	return Capability{}, false
}

// CheckItem is one rubric item recorded by check() or safety() while a verifier runs.
type CheckItem struct {
	Kind    string  `json:"kind"` // "check" or "safety"
	Message string  `json:"message"`
	Weight  float64 `json:"weight"`
	Passed  bool    `json:"passed"`
	Turn    *int    `json:"turn"` // nil for the task's final verifier
	// Pos is where check() or safety() was called.
	Pos syntax.Position `json:"-"`
}

// Collector receives the items of one verifier run; set it on the thread with SetCollector.
type Collector struct {
	Turn  *int
	Items []CheckItem
	// Judge gives the verdict of a judge() call of the verifier; judge() is refused where it is
	// nil. The engine's asks a judge model, or calls the stand-in.
	Judge func(thread *starlark.Thread, q JudgeQuery) (Verdict, error)
}

// JudgeQuery is what a judge() call asks.
type JudgeQuery struct {
	Text, Rubric string
	// StandIn is the verifier's deterministic judge, (text) -> bool or (bool, str); StandInVerdict
	// reads what it returns.
	StandIn starlark.Callable
	// Claims are the statements the text must make (judge(claims = [...])): told to a judge
	// model after the rubric (RubricWithClaims), checked by the stand-in.
	Claims []*claims.Statement
	Pos    syntax.Position // where judge() was called
}

// RubricWithClaims is the rubric a judge model is told: the rubric, then the statements in words.
func (q JudgeQuery) RubricWithClaims() string {
	if len(q.Claims) == 0 {
		return q.Rubric
	}
	var b strings.Builder
	b.WriteString(q.Rubric)
	b.WriteString("\n\nThe text must also meet each of these:")
	for _, c := range q.Claims {
		b.WriteString("\n- ")
		b.WriteString(c.String())
	}
	return b.String()
}

// Verdict is a judge's answer: passed, a score in [0, 1], a one-line reason.
type Verdict struct {
	Passed bool
	Score  float64
	Reason string
}

const collectorKey = "coworkenv.collector"

// SetCollector makes check() and safety() on thread record into c.
func SetCollector(thread *starlark.Thread, c *Collector) { thread.SetLocal(collectorKey, c) }

func collectorOf(thread *starlark.Thread) *Collector {
	c, _ := thread.Local(collectorKey).(*Collector)
	return c
}
