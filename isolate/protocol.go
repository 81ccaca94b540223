package isolate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// The protocol. Every line is one JSON object. The pool writes a request; while the request
// runs, the worker may write messages (the lines of an episode's trace, what it prints, calls
// to the pool: a model's HTTP request, a wait between retries) and the pool may write answers
// to those calls or the cancellation of the request; the worker's last line for the request is
// its answer (a response without msg).

// request is one job the pool gives a worker.
type request struct {
	ID      int64             `json:"id"`
	Display string            `json:"display"`
	Files   map[string][]byte `json:"files"`
	Check   []string          `json:"check"`
	// Validate runs the validator; without it the worker only loads the files (and runs setup
	// when Setup is set) for the task facts.
	Validate bool `json:"validate"`
	Setup    bool `json:"setup"`
	// Models, with Validate, are the settings of the models the validator also runs the tasks
	// against (validate.Options.Models); their requests come back to the pool as calls
	// "user.http" and "judge.http", as an episode's do.
	Models *modelSettings `json:"models,omitempty"`
	// Runs, with Validate, are recorded runs the validator plays (validate.Options.Runs).
	Runs []*recorded.Run `json:"runs,omitempty"`
	// Episode runs one episode of a task of the files instead; Replay replays a trace.
	Episode *episodeRequest `json:"episode,omitempty"`
	// Session runs a served session of a task of the files (session.go).
	Session *sessionRequest `json:"session,omitempty"`
	Replay  *replayRequest  `json:"replay,omitempty"`
	// Steps and CallTimeoutMS are the limits of each call into a script (dsl.Limits).
	Steps         uint64 `json:"steps"`
	CallTimeoutMS int64  `json:"call_timeout_ms"`
	// TimeLimitMS is the pool's wall-clock limit for this request; the worker exits on its own
	// a little after it, in case the pool is gone. Time the pool spends answering the worker's
	// calls does not count.
	TimeLimitMS int64 `json:"time_limit_ms"`
}

// modelSettings are the settings of the models inside a task that a request names: the user
// model and the judge model, nil for one left to the stand-ins. They hold no secret (see
// ModelSettings).
type modelSettings struct {
	User  *ModelSettings `json:"user,omitempty"`
	Judge *ModelSettings `json:"judge,omitempty"`
}

// inbound is any line the pool writes: a request, the answer to a call of the worker, or the
// cancellation of the request running.
type inbound struct {
	request
	// Answer is the number of the worker's call the line answers, with its Result or Failure.
	Answer  int64           `json:"answer,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Failure *callFailure    `json:"failure,omitempty"`
	// Cancel asks the worker to stop the request ID (an episode then ends as interrupted).
	Cancel bool `json:"cancel,omitempty"`
}

// response is the worker's answer to a request, or (with Msg) a message while it runs.
type response struct {
	ID     int64           `json:"id"`
	Report json.RawMessage `json:"report,omitempty"` // validate.Report's JSON
	Tasks  []TaskInfo      `json:"tasks"`
	// Diags are the diagnostics of the checked files that do not load (an InfoOnly job).
	Diags   []dsl.Diagnostic `json:"diags,omitempty"`
	Episode *episodeAnswer   `json:"episode,omitempty"`
	Session *sessionAnswer   `json:"session,omitempty"`
	Replay  *replayAnswer    `json:"replay,omitempty"`
	Error   string           `json:"error,omitempty"`
	Msg     *message         `json:"msg,omitempty"`
}

// outMessage is the line of a message.
type outMessage struct {
	ID  int64    `json:"id"`
	Msg *message `json:"msg"`
}

// message is what a worker says while a request runs: one of its fields is set.
type message struct {
	// Trace is one line of the episode's trace, as the trace writer wrote it.
	Trace json.RawMessage `json:"trace,omitempty"`
	// Task is the task the episode runs, before its setup.
	Task  *TaskInfo `json:"task,omitempty"`
	Print *printed  `json:"print,omitempty"`
	Retry *retried  `json:"retry,omitempty"`
	// Call asks the pool to do something (Method, with Params) and answer; it is the call's
	// number. Abandon says the worker no longer waits for the answer of that call.
	Call    int64           `json:"call,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Abandon int64           `json:"abandon,omitempty"`
}

// printed is one message of print().
type printed struct {
	File string `json:"file"`
	Line int32  `json:"line"`
	Col  int32  `json:"col"`
	Msg  string `json:"msg"`
}

// retried is a model request that is retried.
type retried struct {
	Attempt int           `json:"attempt"`
	Delay   time.Duration `json:"delay"`
	Reason  string        `json:"reason"`
}

// callFailure is a call that failed, with what the worker needs to tell the error's kind as the
// pool's own would be told (see remoteError).
type callFailure struct {
	Message string `json:"message"`
	Timeout bool   `json:"timeout,omitempty"`
	// Errno is the system error number under the error (a refused or reset connection), 0 if none.
	Errno     uintptr `json:"errno,omitempty"`
	EOF       bool    `json:"eof,omitempty"`
	ShortRead bool    `json:"short_read,omitempty"` // io.ErrUnexpectedEOF
	DNS       *dnsErr `json:"dns,omitempty"`
}

type dnsErr struct {
	Err, Name, Server              string
	Timeout, Temporary, IsNotFound bool
}

// maxMessage bounds one line of a worker: a trace line (trace.MaxLine) and its envelope. A
// worker that writes a longer one (a tool result too large for any trace) is stopped.
const maxMessage = trace.MaxLine + 1<<20

var errLongMessage = errors.New("line too long")

// readMessage reads one line of at most maxMessage bytes.
func readMessage(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxMessage {
			return nil, errLongMessage
		}
		if err != bufio.ErrBufferFull {
			if line == nil {
				return bytes.Clone(frag), err
			}
			return append(line, frag...), err
		}
		line = append(line, frag...)
	}
}

// lineWriter writes JSON lines, one at a time: HTML characters are not escaped, so that a trace
// line (json.RawMessage) goes through byte for byte.
type lineWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

func newLineWriter(w io.Writer) *lineWriter {
	lw := &lineWriter{w: bufio.NewWriter(w)}
	lw.enc = json.NewEncoder(lw.w)
	lw.enc.SetEscapeHTML(false)
	return lw
}

// write writes v as one line and flushes it.
func (lw *lineWriter) write(v any) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if err := lw.enc.Encode(v); err != nil {
		return err // v cannot be encoded; the stream is fine
	}
	lw.err = lw.w.Flush()
	return lw.err
}

// broken reports whether the stream failed (a value that cannot be encoded leaves it whole).
func (lw *lineWriter) broken() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.err != nil
}

// traceLine writes a trace message as it is, without re-encoding it: {"id":ID,"msg":{"trace":LINE}}.
func (lw *lineWriter) traceLine(id int64, line []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	lw.w.Write(tracePrefix(id))
	lw.w.Write(line)
	lw.w.WriteString("}}\n")
	lw.err = lw.w.Flush()
	return lw.err
}

func tracePrefix(id int64) []byte { return fmt.Appendf(nil, `{"id":%d,"msg":{"trace":`, id) }

// traceOf is the trace line of a trace message of request id as traceLine writes it, or false
// for any other line.
func traceOf(line []byte, id int64) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, tracePrefix(id))
	if !ok {
		return nil, false
	}
	return bytes.CutSuffix(rest, []byte("}}\n"))
}

// budget is a wall-clock limit that does not count while it is paused (while the pool serves a
// call of the worker: a model's answer or a wait between retries is not the task's time). When
// it is spent, expire runs (on its own goroutine).
type budget struct {
	mu     sync.Mutex
	left   time.Duration
	since  time.Time // when it last resumed; zero while paused
	paused int
	done   bool
	timer  *time.Timer
}

func newBudget(limit time.Duration, expire func()) *budget {
	return &budget{left: limit, since: time.Now(), timer: time.AfterFunc(limit, expire)}
}

// pause stops the clock; calls nest.
func (b *budget) pause() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused++; b.paused == 1 {
		b.timer.Stop()
		b.left -= time.Since(b.since)
	}
}

// resume undoes one pause.
func (b *budget) resume() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused--; b.paused == 0 && !b.done {
		b.since = time.Now()
		b.timer.Reset(max(b.left, 0))
	}
}

// stop ends the budget for good.
func (b *budget) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = true
	b.timer.Stop()
}
