package isolate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"go.starlark.net/syntax"
)

// Run is one episode to run in this process.
type Run struct {
	Task *dsl.Task
	// Source is the task file's bytes (the trace's file_sha256).
	Source []byte
	// Sources are the task file and every file it loads, with their SHA-256, as the start event
	// records them: trace.Sources of the corpus the task was loaded from, taken when it was
	// loaded. A traced run needs them, and the first must be the task file with Source's hash.
	Sources []trace.Source
	Seed    int64 // the run seed
	Agent   Agent
	// Model is the configuration a model agent is made from (NewAgent); the models Agent names
	// for the task's simulated users and judges are sent with its key and client (NewModels).
	Model modelagent.Config
	// NewAgent, when set, makes the agent instead of Agent and Model; an agent it wraps with
	// WithModels brings the models of the task's simulated users and judges.
	NewAgent func(p *episode.Prepared) (agent episode.Agent, system string, err error)
	// Models, when set, answers for the task's simulated users and judges (RunOptions.Models).
	// Otherwise those of an agent of NewAgent wrapped with WithModels do, else those Agent's User
	// and Judge name, with the key and client of Model (NewModels), else the task's stand-ins.
	Models *episode.Models
	Limits dsl.Limits
	// Print receives what the scripts print; nil drops it.
	Print func(pos syntax.Position, msg string)
	// Trace, when set, receives the trace as the episode happens, a line per event: the start
	// event (after setup) to the end event.
	Trace io.Writer
	// Observer, when set, sees the episode too.
	Observer episode.Observer
	// Split, when set, is recorded in the trace's start event.
	Split *trace.Split
}

// RunEpisode runs an episode in this process: setup with the run seed, the agent, the episode
// and its trace. A setup that fails gives its diagnostic (setup) and no episode and no trace.
// err is an agent that cannot be made or a traced run without its sources (nothing ran), or a
// trace that could not be written (the episode ran: res is its result).
func RunEpisode(ctx context.Context, r Run) (res *episode.Result, setup *dsl.Diagnostic, err error) {
	if r.Trace != nil {
		if err := checkSources(r); err != nil {
			return nil, nil, err
		}
	}
	p, d := episode.Prepare(ctx, r.Task, episode.Options{Seed: r.Seed, Limits: r.Limits, Print: r.Print})
	if d != nil {
		return nil, d, nil
	}
	newAgent := r.NewAgent
	if newAgent == nil {
		newAgent = func(p *episode.Prepared) (episode.Agent, string, error) { return NewAgent(r.Agent, r.Model, p) }
	}
	agent, system, err := newAgent(p)
	if err != nil {
		return nil, nil, err
	}
	models := r.Models
	if w, ok := agent.(*withModels); ok {
		agent = w.Agent
		if models == nil {
			models = w.models
		}
	}
	if models == nil {
		if models, err = NewModels(r.Agent, r.Model); err != nil {
			return nil, nil, err
		}
	}
	var obs episode.Observers
	var tw *trace.Writer
	if r.Trace != nil {
		start := trace.StartOf(p, r.Source, r.Seed, agent.Name())
		start.System, start.Sources, start.Split = system, r.Sources, r.Split
		if m, ok := agent.(*modelagent.Agent); ok {
			start.Model = modelOf(m.Describe())
		}
		tw = trace.NewWriter(r.Trace, start)
		obs = append(obs, tw)
	}
	if r.Observer != nil {
		obs = append(obs, r.Observer)
	}
	res = p.Run(ctx, agent, episode.RunOptions{Observer: obs, Models: models})
	if tw != nil {
		err = tw.End(res)
	}
	return res, nil, err
}

// modelOf is the trace's description of a model.
func modelOf(d modelagent.Description) *trace.Model {
	m := &trace.Model{Name: d.Name, BaseURL: d.BaseURL, Request: d.Request, ToolCallFormat: d.ToolCallFormat, ReasoningHistory: d.ReasoningHistory,
		ToolChoice: d.ToolChoice}
	for _, h := range d.Headers {
		m.Headers = append(m.Headers, h)
	}
	return m
}

// checkSources checks that a traced run's sources are those of its task file: a file that
// changed between its load and the reading of its sources would record hashes of bytes that
// did not run.
func checkSources(r Run) error {
	switch {
	case len(r.Sources) == 0:
		return fmt.Errorf("isolate: the episode of %s is traced without its sources (trace.Sources)", r.Task.File)
	case r.Sources[0].Path != r.Task.Rel:
		return fmt.Errorf("isolate: the sources of %s begin with %s, not the task file", r.Task.File, r.Sources[0].Path)
	case r.Sources[0].SHA256 != trace.FileSHA256(r.Source):
		return fmt.Errorf("%s changed while it was loaded; run again", r.Task.File)
	}
	return nil
}

// Episode is an episode for a worker to run: a task of a file, with its run seed and agent.
type Episode struct {
	// Display is how the corpus root is shown; Files are the files the task file needs
	// (FilesFor), by root-relative path.
	Display string
	Files   map[string][]byte
	// File is the task file (root-relative) and Task the task's name; "" picks the file's only
	// task.
	File, Task string
	Seed       int64
	Agent      Agent
	// Split, when set, is recorded in the trace's start event.
	Split *trace.Split
	// Messages asks for a model agent's conversation as it sent it (EpisodeResult.Messages).
	Messages bool
}

// Host is what this process does for an episode in a worker.
type Host struct {
	// Begin, when set, is told the task the episode runs, before its setup.
	Begin func(TaskInfo)
	// Trace, when set, receives the trace a line at a time, as RunEpisode writes it: the start
	// event to the end event. When the worker stops, the pool writes the end event: the score
	// 0 and the diagnostic of the stop (memory-limit, timeout, crash, interrupted).
	Trace io.Writer
	// Print, when set, receives what the scripts print (bounded by dsl.BoundPrint).
	Print func(pos syntax.Position, msg string)
	// Model is a model agent's configuration in this process. The worker's agent sends its
	// requests through this process, which sends them with Model's key and HTTP client to
	// Model.BaseURL and nowhere else, and waits here between its retries (Model.Sleep, and
	// Model.OnRetry is told); the worker never sees the key, and the time the model takes does
	// not count against the worker's time limit. The models of the task's simulated users and
	// judges that the episode's Agent names (User, Judge) are served the same way, each with
	// ModelConfig of its settings and Model (for an agent that is not a model, Model holds only
	// the key and the client), to its own base URL and nowhere else.
	Model modelagent.Config
}

// EpisodeResult is how an episode in a worker ended.
type EpisodeResult struct {
	// Setup is set when there is no episode: the setup failed, or the worker stopped before
	// the trace began. There is no trace then.
	Setup *dsl.Diagnostic
	// End is the trace's end event (the pool's when the worker stopped).
	End *trace.End
	// Err is the diagnostic that stopped the episode or zeroed its score; nil when none did.
	Err *dsl.Diagnostic
	// Stopped is the code when the worker did not finish: memory-limit, timeout, crash, or
	// interrupted (a cancelled ctx, and a worker that did not end the episode); "" otherwise.
	Stopped string
	// TurnScores are the turn_end events' scores by turn (nil for a turn without one), and
	// PromptTokens and CompletionTokens the model's usage the assistant events report.
	TurnScores                     []*float64
	PromptTokens, CompletionTokens int64
	// UserRounds is how many answers simulated users gave, over the turn_end events.
	UserRounds int
	// Messages is a model agent's conversation as it sent it to the model, its last answer
	// included, each message as encoding/json writes an openai.ChatCompletionMessage (with
	// Episode.Messages; nil when the worker stopped).
	Messages []json.RawMessage
}

// StartError is an episode that cannot start: its file does not load or does not declare the
// task, or its agent cannot be made. The message is for people.
type StartError struct{ Msg string }

func (e *StartError) Error() string { return e.Msg }

// episodeRequest and episodeAnswer are the protocol of an episode.
type episodeRequest struct {
	File     string       `json:"file"`
	Task     string       `json:"task"`
	Seed     int64        `json:"seed"`
	Agent    Agent        `json:"agent"`
	Print    bool         `json:"print"`
	Split    *trace.Split `json:"split,omitempty"`
	Messages bool         `json:"messages,omitempty"`
}

type episodeAnswer struct {
	Problem  string            `json:"problem,omitempty"` // a StartError
	Setup    *dsl.Diagnostic   `json:"setup,omitempty"`
	Err      *dsl.Diagnostic   `json:"err,omitempty"`
	Messages []json.RawMessage `json:"messages,omitempty"`
}

// Episode runs an episode in a worker, within the pool's limits, and streams it to host. An
// error means it could not run: no worker starts, the pool is closed, the episode cannot start
// (a *StartError). When ctx is done the worker ends the episode as interrupted, trace and all.
func (p *Pool) Episode(ctx context.Context, ep Episode, host Host) (*EpisodeResult, error) {
	tr := &tracker{w: host.Trace}
	sess := &session{subject: "the episode", graceful: true,
		call: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			role, method, inside := strings.Cut(method, ".")
			if !inside {
				return serveModel(ctx, host.Model, role, params)
			}
			cfg, err := taskModel(ep.Agent, role, host.Model)
			if err != nil {
				return nil, err
			}
			return serveModel(ctx, cfg, method, params)
		},
		message: func(m *message) {
			switch {
			case m.Trace != nil:
				tr.line(m.Trace)
			case m.Task != nil && host.Begin != nil:
				host.Begin(*m.Task)
			case m.Print != nil && host.Print != nil:
				host.Print(syntax.MakePosition(&m.Print.File, m.Print.Line, m.Print.Col), m.Print.Msg)
			case m.Retry != nil && host.Model.OnRetry != nil:
				host.Model.OnRetry(m.Retry.Attempt, m.Retry.Delay, fmt.Errorf("%s", m.Retry.Reason))
			}
		},
	}
	req := &request{Display: ep.Display, Files: ep.Files,
		Episode: &episodeRequest{File: ep.File, Task: ep.Task, Seed: ep.Seed, Agent: ep.Agent, Print: host.Print != nil, Split: ep.Split, Messages: ep.Messages}}
	resp, st, err := p.do(ctx, req, sess)
	switch {
	case err != nil:
		return nil, err
	case st == nil && resp.Error != "":
		return nil, fmt.Errorf("isolate: worker: %s", resp.Error)
	case st == nil && resp.Episode == nil:
		st = &stop{"crash", "the isolated worker answered without the episode's result"}
	case st == nil && resp.Episode.Problem != "":
		return nil, &StartError{resp.Episode.Problem}
	case st == nil && resp.Episode.Setup != nil:
		return &EpisodeResult{Setup: resp.Episode.Setup}, nil
	case st == nil && tr.end == nil:
		st = &stop{"crash", "the isolated worker ended the episode without its end event"}
	case st == nil:
		res := tr.result(resp.Episode.Err, "")
		res.Messages = resp.Episode.Messages
		return res, nil
	}
	d := dsl.NewDiag(st.code, st.msg)
	d.File = displayPath(ep.Display, ep.File)
	if !tr.started {
		return &EpisodeResult{Setup: &d, Stopped: st.code}, nil
	}
	tr.stopped(&d)
	return tr.result(&d, st.code), nil
}

// taskModel is the configuration here of the model of the role (RoleUser, RoleJudge) that the
// agent a names, for a worker's call.
func taskModel(a Agent, role string, base modelagent.Config) (modelagent.Config, error) {
	var s *ModelSettings
	switch role {
	case RoleUser:
		s = a.User
	case RoleJudge:
		s = a.Judge
	default:
		return modelagent.Config{}, fmt.Errorf("unknown model %q", role)
	}
	if s == nil {
		return modelagent.Config{}, fmt.Errorf("the episode has no %s model", role)
	}
	return ModelConfig(role, s, base)
}

// tracker passes the trace lines of an episode on, and keeps what an end event written for a
// worker that stopped needs: the state, the calls and the rubric items so far.
type tracker struct {
	w       io.Writer
	werr    error
	started bool
	state   string
	calls   []*episode.Call
	byID    map[string]*episode.Call
	items   []dsl.CheckItem
	end     *trace.End
	res     EpisodeResult // turn scores and usage
}

// result is the episode's result, from its trace.
func (t *tracker) result(err *dsl.Diagnostic, stopped string) *EpisodeResult {
	r := t.res
	r.End, r.Err, r.Stopped = t.end, err, stopped
	return &r
}

func (t *tracker) line(raw []byte) {
	if t.w != nil && t.werr == nil {
		_, t.werr = t.w.Write(append(bytes.Clone(raw), '\n'))
	}
	var ev struct {
		Event  string          `json:"event"`
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		State  string          `json:"state"`
		Error  json.RawMessage `json:"error"`
		Fault  bool            `json:"fault"`
		Checks []trace.Check   `json:"checks"`
		Turn   int             `json:"turn"`
		Score  *float64        `json:"score"`
		Rounds int             `json:"rounds"`
		Usage  *struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return
	}
	switch ev.Event {
	case "start", "user":
		t.started = true
		t.state = ev.State
	case "call":
		c := &episode.Call{ID: ev.ID, Name: ev.Name}
		if t.byID == nil {
			t.byID = map[string]*episode.Call{}
		}
		t.byID[ev.ID] = c
		t.calls = append(t.calls, c)
	case "result":
		if c := t.byID[ev.ID]; c != nil {
			c.Fault, c.IsError = ev.Fault, len(ev.Error) > 0 && string(ev.Error) != "null"
		}
		t.state = ev.State
	case "assistant":
		if u := ev.Usage; u != nil {
			t.res.PromptTokens += u.Prompt
			t.res.CompletionTokens += u.Completion
		}
	case "turn_end":
		for len(t.res.TurnScores) <= ev.Turn {
			t.res.TurnScores = append(t.res.TurnScores, nil)
		}
		t.res.TurnScores[ev.Turn] = ev.Score
		t.res.UserRounds += ev.Rounds
		for _, c := range ev.Checks {
			it := dsl.CheckItem{Kind: c.Kind, Message: c.Message, Passed: c.Passed, Turn: c.Turn}
			if c.Weight != nil {
				it.Weight = *c.Weight
			}
			t.items = append(t.items, it)
		}
	case "end":
		var end trace.End
		if json.Unmarshal(raw, &end) == nil {
			t.end = &end
		}
	}
}

// stopped writes the end event of an episode whose worker stopped with d: what an episode that
// stopped on an error there would record (a call that never returned changed nothing).
func (t *tracker) stopped(d *dsl.Diagnostic) {
	r := &episode.Result{Items: t.items, Calls: t.calls, FinalState: t.state, Err: d}
	_, r.Safety, _ = episode.Score(t.items)
	r.Robustness = episode.Robustness(t.calls)
	line, err := trace.Encode(trace.EndOf(r))
	if err != nil {
		panic(err) // an end event of plain values always encodes
	}
	t.line(line)
}

// serveEpisode runs an episode request in the worker.
func serveEpisode(ctx context.Context, er *episodeRequest, corp *dsl.Corpus, lim dsl.Limits, c *conn) *response {
	answer := &episodeAnswer{}
	resp := &response{Episode: answer}
	f := loaded.file(ctx, corp, er.File)
	t, err := PickTask(f, er.Task)
	if err != nil {
		answer.Problem = err.Error()
		return resp
	}
	info := Describe(ctx, t, lim, false)
	c.send(&message{Task: &info})
	var print func(syntax.Position, string)
	if er.Print {
		print = dsl.BoundPrint(func(pos syntax.Position, msg string) {
			c.send(&message{Print: &printed{File: pos.Filename(), Line: pos.Line, Col: pos.Col, Msg: msg}})
		})
	}
	sources, err := trace.Sources(corp, er.File)
	if err != nil {
		answer.Problem = err.Error()
		return resp
	}
	models, err := workerModels(er.Agent, c)
	if err != nil {
		answer.Problem = err.Error()
		return resp
	}
	run := Run{Task: t, Source: f.Source, Sources: sources, Seed: er.Seed, Agent: er.Agent,
		Model: workerModel(er.Agent.Model, c), Models: models, Limits: lim, Print: print, Split: er.Split,
		Trace: Lines(func(line []byte) { c.out.traceLine(c.id, line) })}
	var agent *modelagent.Agent
	if er.Messages {
		run.NewAgent = func(p *episode.Prepared) (episode.Agent, string, error) {
			a, system, err := NewAgent(run.Agent, run.Model, p)
			agent, _ = a.(*modelagent.Agent)
			return a, system, err
		}
	}
	res, setup, err := RunEpisode(ctx, run)
	if agent != nil {
		for _, m := range agent.Messages() {
			if b, err := json.Marshal(m); err == nil {
				answer.Messages = append(answer.Messages, b)
			}
		}
	}
	switch {
	case setup != nil:
		answer.Setup = setup
	case res == nil:
		answer.Problem = err.Error()
	default:
		answer.Err = res.Err
	}
	return resp
}

// loaded keeps the task files a worker loaded last: the episodes of one task file (a rollout's
// samples) load it once per worker, as a rollout in one process does. A loaded task is frozen,
// so its episodes cannot change it.
var loaded = &fileCache{}

type fileCache struct {
	mu    sync.Mutex
	files map[string]*dsl.File // by the hash of the corpus's files, its display and limits, and rel
	order []string
}

const fileCacheSize = 8

// file loads rel of c, or gives the file loaded from the same files before.
func (fc *fileCache) file(ctx context.Context, c *dsl.Corpus, rel string) *dsl.File {
	key := cacheKey(c, rel)
	fc.mu.Lock()
	f, ok := fc.files[key]
	fc.mu.Unlock()
	if ok {
		return f
	}
	f = c.LoadFile(ctx, rel)
	if ctx.Err() != nil {
		return f // a load that was cancelled is not the file's
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.files == nil {
		fc.files = map[string]*dsl.File{}
	}
	if _, dup := fc.files[key]; !dup {
		fc.files[key] = f
		fc.order = append(fc.order, key)
		if len(fc.order) > fileCacheSize {
			delete(fc.files, fc.order[0])
			fc.order = fc.order[1:]
		}
	}
	return f
}

// cacheKey is the hash of everything a load of rel of c depends on.
func cacheKey(c *dsl.Corpus, rel string) string {
	h := sha256.New()
	paths := make([]string, 0)
	fs.WalkDir(c.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	fmt.Fprintf(h, "%q %q %d %d\n", c.Display, rel, c.Limits().Steps, c.Limits().Timeout)
	for _, p := range paths {
		data, _ := fs.ReadFile(c.FS, p)
		fmt.Fprintf(h, "%q %d\n", p, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Lines is a writer that calls fn with every line written to it, without its newline, as soon
// as the line is complete: a trace's events, one at a time.
func Lines(fn func(line []byte)) io.Writer { return &lines{fn: fn} }

type lines struct {
	fn  func([]byte)
	buf []byte
}

func (l *lines) Write(b []byte) (int, error) {
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.fn(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}
