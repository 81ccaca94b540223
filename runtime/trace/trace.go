// Package trace writes episodes as JSON Lines (docs/interchange.md), reads them back strictly, and replays
// them against the task to find the first event that now differs: the state after setup and the
// seed, every call the agent makes and every result, each reply, turn verdict and the end; it
// also says which of the task's files changed since the trace was recorded.
package trace

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/workspace"
)

// Format is the value of the start event's `format`. Format 2 records the state hashes of
// workspace.HashFormat2; format 1 (still read, and replayed) those of workspace.HashFormat1.
const Format = "coworkenv-trace/2"

// hashFormats maps each trace format this engine reads to the hash format of the states it
// records.
var hashFormats = map[string]int{"coworkenv-trace/1": workspace.HashFormat1, Format: workspace.HashFormat2}

// HashStates makes the states of p hash as the trace that s starts recorded them: a trace of
// format 1 holds hashes of workspace.HashFormat1, so its replay checks them the old way. Call it
// after episode.Prepare and before p runs.
func (s *Start) HashStates(p *episode.Prepared) {
	if f := hashFormats[s.Format]; f != 0 && f != p.Base.HashFormat() {
		p.Base = p.Base.WithHashFormat(f)
	}
}

// Version is this engine's version, the one every place that says a version says: the start
// event's engine, the MCP server's serverInfo, OpenEnv's /metadata, exports and reports.
const Version = "0.1.0"

// Engine names this engine in the start event.
const Engine = "coworkenv/" + Version

// FileSHA256 is the hex SHA-256 of a task file's bytes.
func FileSHA256(src []byte) string {
	h := sha256.Sum256(src)
	return hex.EncodeToString(h[:])
}

// Writer streams an episode as JSON Lines, one event per line, flushed after each event so that
// a killed run leaves a readable prefix. It is an episode.Observer.
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter writes the start event, with this engine's Format and Engine.
func NewWriter(w io.Writer, s Start) *Writer {
	tw := &Writer{w: bufio.NewWriter(w)}
	s.Format, s.Engine = Format, Engine
	tw.emit(&s)
	return tw
}

// StartOf builds the start event of a prepared task; src is the task file's bytes. It leaves
// Sources empty: set them from Sources when the corpus is at hand.
func StartOf(p *episode.Prepared, src []byte, runSeed int64, agent string) Start {
	tools := make([]jsonv.Value, len(p.Task.Tools))
	for i, t := range p.Task.Tools {
		tools[i] = t.Schema()
	}
	return Start{Format: Format, Task: p.Task.Name, File: p.Task.File, FileSHA256: FileSHA256(src),
		Seed: runSeed, Engine: Engine, Agent: agent, Tools: tools, State: p.Base.Hash(),
		Now: p.Base.Clock().NowString(), TimeZone: timeZoneOf(p.Task.Location), Rand: randOf(p.Base)}
}

// timeZoneOf is the start event's timezone: "" for UTC.
func timeZoneOf(loc *time.Location) string {
	if name := conversation.ZoneName(loc); name != "UTC" {
		return name
	}
	return ""
}

// randOf is the start event's rand: the first draw of the random source of a state (a fork's,
// so the state itself does not move).
func randOf(st *workspace.State) string {
	v, err := st.Fork().Rand().Int(math.MinInt64, math.MaxInt64)
	if err != nil {
		panic(err) // a fork is writable and the range is not empty
	}
	return fmt.Sprintf("%016x", uint64(v))
}

// Sources are the start event's sources of the task file rel of the corpus c: rel and every
// file it loads (dsl.Corpus.SourceFiles).
func Sources(c *dsl.Corpus, rel string) ([]Source, error) {
	files, err := c.SourceFiles(rel)
	if err != nil {
		return nil, err
	}
	return sourcesOf(files), nil
}

func sourcesOf(files []dsl.SourceFile) []Source {
	out := make([]Source, len(files))
	for i, f := range files {
		out[i] = Source{Path: f.Rel, SHA256: FileSHA256(f.Data)}
	}
	return out
}

// Err is the first write error.
func (tw *Writer) Err() error { return tw.err }

func (tw *Writer) emit(ev Body) {
	if tw.err != nil {
		return
	}
	b, err := Encode(ev)
	if err == nil && len(b)+1 > MaxLine {
		// never a line the reader refuses: the episode's limits keep results and arguments
		// below this, so only what they do not bound (a user message, a reply) gets here
		err = fmt.Errorf("the %s event is %d bytes, over the %s limit of a trace line", ev.Kind(), len(b)+1, limits.Bytes(MaxLine))
	}
	if err == nil {
		b = append(b, '\n')
		_, err = tw.w.Write(b)
	}
	if err == nil {
		err = tw.w.Flush()
	}
	if err != nil {
		tw.err = fmt.Errorf("writing trace: %w", err)
	}
}

func (tw *Writer) OnUser(turn int, content, state, now string) {
	tw.emit(&User{Turn: turn, Content: content, State: state, Now: now})
}

func (tw *Writer) OnAssistant(turn int, m *episode.AssistantMessage) {
	tw.emit(assistantOf(turn, m))
}

func (tw *Writer) OnUserAsk(x *episode.UserAsk) { tw.emit(simUserOf(x)) }
func (tw *Writer) OnJudge(j *episode.JudgeCall) { tw.emit(judgeOf(j)) }

func (tw *Writer) OnNotRun(turn int, id, content string) {
	tw.emit(&NotRun{Turn: turn, ID: id, Content: content})
}

func (tw *Writer) OnCall(c *episode.Call) {
	tw.emit(&Call{Turn: c.Turn, ID: c.ID, Name: c.Name, Args: c.Args})
}

func (tw *Writer) OnResult(c *episode.Call) {
	tw.emit(resultOf(c))
}

func (tw *Writer) OnReply(turn int, content string) {
	tw.emit(&Reply{Turn: turn, Content: content})
}

func (tw *Writer) OnTurnEnd(t *episode.TurnResult) {
	tw.emit(turnEndOf(t))
}

// End writes the end event.
func (tw *Writer) End(r *episode.Result) error {
	tw.emit(EndOf(r))
	return tw.err
}

// resultOf is the result event of a call that ran.
func resultOf(c *episode.Call) *CallResult {
	r := &CallResult{Turn: c.Turn, ID: c.ID, Content: c.Content, Fault: c.Fault, State: c.State}
	if c.IsError {
		r.Error = &c.Error
	}
	return r
}

// turnEndOf is the turn_end event of a turn.
func turnEndOf(t *episode.TurnResult) *TurnEnd {
	return &TurnEnd{Turn: t.Index, Score: t.Score, Truncated: t.Truncated, Checks: Checks(t.Items), Rounds: t.Rounds}
}

// EndOf is the end event of an episode; `coworkenv run --json` prints the same object.
func EndOf(r *episode.Result) *End {
	return &End{Score: r.Score, Passed: r.Passed, Completion: r.Completion, Safety: r.Safety,
		Robustness: r.Robustness, Checks: Checks(r.Items), State: r.FinalState, Error: failureOf(r.Err)}
}
