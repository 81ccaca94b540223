package isolate

import (
	"bytes"
	"context"
	"errors"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// ReplayTrace replays a trace against the task file rel of c, in this process
// (trace.ReplayCorpus): the task is the one the trace names in that file, and the task file and
// every file it loads are read from c and compared with the sources the trace records.
func ReplayTrace(ctx context.Context, events []trace.Event, c *dsl.Corpus, rel string) (*trace.Result, error) {
	return trace.ReplayCorpus(ctx, events, func(_, name string) (*dsl.Task, *dsl.Corpus, error) {
		task, _, err := FindTask(ctx, c, rel, name)
		return task, c, err
	})
}

// Replay is a trace for a worker to replay against a task file.
type Replay struct {
	// Display is how the corpus root is shown; Files are the files the task file needs
	// (FilesFor), by root-relative path; File is the task file.
	Display string
	Files   map[string][]byte
	File    string
	// Trace is the trace file's bytes.
	Trace []byte
}

// ReplayResult is how a replay in a worker ended: its result, or the diagnostic of a worker that
// stopped (memory-limit, timeout, crash, interrupted).
type ReplayResult struct {
	Result  *trace.Result
	Stopped *dsl.Diagnostic
}

type replayRequest struct {
	File  string `json:"file"`
	Trace []byte `json:"trace"`
}

type replayAnswer struct {
	Result  *trace.Result `json:"result,omitempty"`
	Problem string        `json:"problem,omitempty"`
}

// Replay replays a trace in a worker, within the pool's limits. An error is a replay that could
// not run: the trace cannot be read, its task not found (as ReplayTrace says), no worker starts.
func (p *Pool) Replay(ctx context.Context, r Replay) (*ReplayResult, error) {
	req := &request{Display: r.Display, Files: r.Files, Replay: &replayRequest{File: r.File, Trace: r.Trace}}
	resp, st, err := p.do(ctx, req, &session{subject: "the replay"})
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		d := dsl.NewDiag(st.code, st.msg)
		d.File = displayPath(r.Display, r.File)
		return &ReplayResult{Stopped: &d}, nil
	case resp.Error != "":
		return nil, errors.New("isolate: worker: " + resp.Error)
	case resp.Replay == nil:
		return nil, errors.New("isolate: the worker answered without the replay's result")
	case resp.Replay.Problem != "":
		return nil, errors.New(resp.Replay.Problem)
	}
	return &ReplayResult{Result: resp.Replay.Result}, nil
}

// serveReplay runs a replay request in the worker.
func serveReplay(ctx context.Context, rr *replayRequest, corp *dsl.Corpus) *response {
	answer := &replayAnswer{}
	events, err := trace.Read(bytes.NewReader(rr.Trace))
	if err == nil {
		answer.Result, err = ReplayTrace(ctx, events, corp, rr.File)
	}
	if err != nil {
		answer.Problem = err.Error()
	}
	return &response{Replay: answer}
}
