// Package trace writes episodes as JSON Lines (SPEC §6), reads them back strictly, and replays
// them against the task to find the first call whose result, error or state now differs.
package trace

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
)

// Format is the value of the start event's `format`.
const Format = "coworkenv-trace/1"

// Engine names this engine in the start event.
const Engine = "coworkenv/0.1.0"

// FileSHA256 is the hex SHA-256 of a task file's bytes.
func FileSHA256(src []byte) string {
	h := sha256.Sum256(src)
	return hex.EncodeToString(h[:])
}

// Start describes the episode a trace records.
type Start struct {
	Task       string
	File       string // path as given
	FileSHA256 string
	Seed       int64 // the run seed (--seed)
	Agent      string
	Tools      []*jsonv.Object
	State      string // hash after setup
	// System is the system prompt a model agent was given (an extension of SPEC §6: training
	// data export needs it). Empty for the oracle and noop agents, and then not written.
	System string
	// Now is the virtual clock right after setup (an extension of SPEC §6: with the user events'
	// "now", it tells what time a model was told).
	Now string
}

// Writer streams an episode as JSON Lines, one event per line, flushed after each event so that
// a killed run leaves a readable prefix. It is an episode.Observer.
type Writer struct {
	w   *bufio.Writer
	err error
}

// NewWriter writes the start event.
func NewWriter(w io.Writer, s Start) *Writer {
	tw := &Writer{w: bufio.NewWriter(w)}
	tools := make([]jsonv.Value, len(s.Tools))
	for i, t := range s.Tools {
		tools[i] = t
	}
	start := jsonv.NewObject("event", "start", "format", Format, "task", s.Task, "file", s.File,
		"file_sha256", s.FileSHA256, "seed", s.Seed, "engine", Engine, "agent", s.Agent,
		"tools", tools, "state", s.State)
	if s.System != "" {
		start.Set("system", s.System)
	}
	if s.Now != "" {
		start.Set("now", s.Now)
	}
	tw.emit(start)
	return tw
}

// StartOf builds the start description of a prepared task.
func StartOf(p *episode.Prepared, src []byte, runSeed int64, agent string) Start {
	tools := make([]*jsonv.Object, len(p.Task.Tools))
	for i, t := range p.Task.Tools {
		tools[i] = t.Schema()
	}
	return Start{Task: p.Task.Name, File: p.Task.File, FileSHA256: FileSHA256(src), Seed: runSeed,
		Agent: agent, Tools: tools, State: p.Base.Hash(), Now: p.Base.Clock().NowString()}
}

// Err is the first write error.
func (tw *Writer) Err() error { return tw.err }

func (tw *Writer) emit(o *jsonv.Object) {
	if tw.err != nil {
		return
	}
	b, err := jsonv.Encode(o)
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
	tw.emit(jsonv.NewObject("event", "user", "turn", int64(turn), "content", content, "state", state, "now", now))
}

func (tw *Writer) OnAssistant(turn int, content string, toolCalls []jsonv.Value, usage *jsonv.Object) {
	var tc jsonv.Value
	if toolCalls != nil {
		tc = toolCalls
	}
	var u jsonv.Value
	if usage != nil {
		u = usage
	}
	tw.emit(jsonv.NewObject("event", "assistant", "turn", int64(turn), "content", content, "tool_calls", tc, "usage", u))
}

func (tw *Writer) OnCall(c *episode.Call) {
	tw.emit(jsonv.NewObject("event", "call", "turn", int64(c.Turn), "id", c.ID, "name", c.Name, "args", c.Args))
}

func (tw *Writer) OnResult(c *episode.Call) {
	var errv jsonv.Value
	if c.IsError {
		errv = c.Error
	}
	tw.emit(jsonv.NewObject("event", "result", "turn", int64(c.Turn), "id", c.ID, "content", c.Content,
		"error", errv, "fault", c.Fault, "state", c.State))
}

func (tw *Writer) OnReply(turn int, content string) {
	tw.emit(jsonv.NewObject("event", "reply", "turn", int64(turn), "content", content))
}

func (tw *Writer) OnTurnEnd(t *episode.TurnResult) {
	var score jsonv.Value
	if t.Score != nil {
		score = *t.Score
	}
	tw.emit(jsonv.NewObject("event", "turn_end", "turn", int64(t.Index), "score", score, "truncated", t.Truncated, "checks", Checks(t.Items)))
}

// End writes the end event.
func (tw *Writer) End(r *episode.Result) error {
	tw.emit(EndEvent(r))
	return tw.err
}

// EndEvent is the end event of an episode; `coworkenv run --json` prints the same object.
func EndEvent(r *episode.Result) *jsonv.Object {
	o := jsonv.NewObject("event", "end", "score", r.Score, "passed", r.Passed, "completion", r.Completion,
		"safety", r.Safety, "robustness", r.Robustness, "checks", Checks(r.Items), "state", r.FinalState)
	if r.Err != nil {
		var file, line, col jsonv.Value
		if r.Err.File != "" {
			file = r.Err.File
		}
		if r.Err.Line > 0 {
			line, col = int64(r.Err.Line), int64(r.Err.Col)
		}
		o.Set("error", jsonv.NewObject("code", r.Err.Code, "message", r.Err.Message, "file", file, "line", line, "col", col))
	}
	return o
}

// Checks is the JSON form of rubric items.
func Checks(items []dsl.CheckItem) []jsonv.Value {
	out := make([]jsonv.Value, len(items))
	for i, it := range items {
		var turn jsonv.Value
		if it.Turn != nil {
			turn = int64(*it.Turn)
		}
		var w jsonv.Value = it.Weight
		if it.Kind == "safety" {
			w = nil
		}
		out[i] = jsonv.NewObject("kind", it.Kind, "message", it.Message, "weight", w, "passed", it.Passed, "turn", turn)
	}
	return out
}
