// Package rollout runs many episodes (`coworkenv rollout`): every task of a list, K
// samples each, on N goroutines, one fresh agent per episode, each episode traced to
// OUT/<task>/<sample>.jsonl; and it summarises them (Summarize).
//
// Samples. Every sample of a task runs with the run seed Seed, so that the samples of a task
// start from the same state: a task whose setup draws from ws.rand sets up the same workspace
// for each of them, which is what group-relative RL methods (GRPO, GDPO) compare episodes
// against (export rl groups episodes by their start state). The trace's seed is the seed the
// sample ran with, as for any trace, so replay prepares the task exactly as it was. With
// VarySetup, sample i (0-based) runs with Seed+i instead, as rollouts did before: samples of such
// a task then start from different states, which suits evaluation over many set-ups better than
// training. Each sample prepares its task with its seed (setup runs once per sample; a task is
// loaded once).
//
// Where the samples of a task differ. With one seed, the start state, the random source that
// tools draw from during the episode and the injected faults (drawn from the task's faults
// seed, the run seed, the tool and the attempt number) are the same for every sample: two
// samples that make the same calls meet the same faults and the same results. What differs is
// the agent: a model's own sampling (its temperature; a model at temperature 0 may give K
// identical episodes), never the engine. A model agent's retry jitter (modelagent's JitterSeed)
// changes timing only, never an episode. A deterministic agent (the oracle) gives K identical
// traces.
//
// Traces. A trace is streamed to <sample>.jsonl.partial and renamed to <sample>.jsonl when the
// episode ends, exactly as `run --trace` does. A trace depends only on the task, the seed and
// what the agent does, never on Jobs or on timing, so a deterministic agent (the oracle) gives
// byte-identical folders whatever Jobs is.
//
// Failures that say nothing about the agent leave no .jsonl: a model request that failed for
// good (after the retries; the code model-error), an interruption (the context is cancelled,
// Ctrl-C; the code interrupted), a setup that raises. Their .partial stays for inspection (a
// valid prefix, or a whole trace whose end records the error and its code), the sample is
// reported as interrupted or failed (with the code) and left out of the scores, and the next run
// retries it. Anything else (a wrong tool call, a truncated turn, a verifier that fails) is an
// outcome of the episode and is traced and scored. An episode that ended before the
// interruption keeps its trace.
//
// Isolation. The episodes of a task that comes with Isolated run in workers of Options.Pool
// (package isolate), never in this process; their traces are the same, streamed from the
// worker. A sample whose worker runs out of memory or time, or dies, is failed like a
// model-error one (code memory-limit, timeout or crash): its .partial holds the events so far and
// an end event with the diagnostic, the other samples go on, and the next run tries it again.
//
// Sources. Every trace's start event records the task file and every file it loads, with their
// SHA-256 (trace.Sources): Task.Sources for an episode run here, the worker's own for an
// isolated one.
//
// Resuming. A sample whose .jsonl exists is not run again: it is read back (trace.Read) and
// counts in the results as if it had just run. It must record the same task, the seed the sample
// runs with and the agent; a rollout.json in OUT records the run's configuration (agent, model,
// sampling, seed and vary_setup) and a rollout into the same folder with another configuration
// is refused, so that one folder never mixes two models or two ways of seeding samples. A
// manifest without vary_setup was written before samples shared their seed: it counts as
// vary_setup true. A trace recorded with other versions of the task's files (its file_sha256,
// or any of its sources, differs from the file now) is stale: the sample runs again (Warn says
// which files changed; Sample.Changed names them) and its new trace replaces the old one when
// the episode ends. A trace without sources (an older engine) is compared by its file_sha256
// only. A .jsonl that cannot be read is run again (with a warning); a .partial is never read
// (the sample runs again and overwrites it). A folder where a trace belongs is refused before
// anything runs.
package rollout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/atomicfile"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// ManifestFile is the file in OUT that records the configuration of a rollout.
const ManifestFile = "rollout.json"

// ManifestFormat is the manifest's `format`.
const ManifestFormat = "coworkenv-rollout/1"

// Task is one task to roll out.
type Task struct {
	Task *dsl.Task
	// Source is the task file's bytes (the traces' file_sha256).
	Source []byte
	// Sources are the task file and every file it loads, with their SHA-256 (trace.Sources of
	// the corpus the task was loaded from, taken when it was loaded): the start event of every
	// episode run here records them, and a resumed trace whose sources differ is run again.
	// Required unless Isolated is set; for an isolated task the worker records its own, and a
	// resumed trace's sources are compared with Isolated.Files (the files the worker is given).
	Sources []trace.Source
	// Isolated, when set, runs the task's episodes in workers of Options.Pool: the task was not
	// loaded in this process (Task describes it: isolate.TaskInfo.Stub). Seed and Agent are
	// set per sample.
	Isolated *isolate.Episode
	// Split, when set, is recorded in the start event of every trace of the task.
	Split *trace.Split
}

// NewAgent makes the agent of one episode, for the task prepared with the sample's seed. system
// is the system prompt the agent will send, recorded in the trace's start event ("" for an
// agent that is not a model). It is called once per episode: agents are never shared.
type NewAgent func(p *episode.Prepared) (agent episode.Agent, system string, err error)

// Options of a rollout.
type Options struct {
	// Out is the folder of the traces (created when missing).
	Out string
	// Samples per task (K), at least 1.
	Samples int
	// Jobs is how many episodes run at once; 0 means 1.
	Jobs int
	// Seed is the run seed of every sample (see VarySetup).
	Seed int64
	// VarySetup runs sample i with the seed Seed+i instead of Seed, so that the samples of a task
	// whose setup draws from ws.rand start from different states.
	VarySetup bool
	// Agent is the agent's name, as its traces record it.
	Agent    string
	NewAgent NewAgent
	// Config describes the run for the manifest (OUT/rollout.json): the agent, the model and
	// its sampling settings. "format", "seed" and "vary_setup" are added. A rollout into a folder
	// whose manifest differs is refused.
	Config *jsonv.Object
	// Progress, when set, is told about every finished sample (resumed ones first, at once).
	// Calls never overlap.
	Progress func(Progress)
	// Queue, when set, is told how far the jobs of a queued rollout (RunQueued) have got: those
	// queued, with a worker, done and failed (queue.Produce.Progress; calls never overlap with
	// each other, but may with those of Progress).
	Queue func(queue.Progress)
	// Warn, when set, receives warnings (an unreadable trace that is run again, stale traces of
	// a task whose files changed).
	Warn func(string)
	// Pool runs the episodes of isolated tasks; AgentSpec describes their agent to the workers,
	// and Model is a model agent's configuration here (isolate.Host).
	Pool      *isolate.Pool
	AgentSpec isolate.Agent
	Model     modelagent.Config
}

// Progress is the state of a rollout.
type Progress struct {
	Done, Total int // samples finished (run, resumed, failed or interrupted) and wanted
	Passed      int
	Failed      int // samples without a trace, interrupted ones excepted
	Interrupted int
}

// Sample is the outcome of one sample.
type Sample struct {
	Index int
	Seed  int64  // run seed
	Path  string // the trace, OUT/<task>/<index>.jsonl
	// Resumed: the trace was already there and was read back instead of run.
	Resumed bool
	// Err says why the sample has no trace (a model failure, an interruption, a setup error);
	// the scores below are then zero and the sample is left out of every average.
	Err string
	// Code is the diagnostic code of Err: model-error, interrupted, the code of a setup error;
	// "" for another failure (a file that cannot be written, an agent that cannot be made).
	Code string
	// Interrupted: the context was cancelled before the sample's episode ended (Code
	// interrupted); it is not counted as failed.
	Interrupted bool
	Score       float64
	Completion  float64
	Safety      float64
	Robustness  float64
	Passed      bool
	// TurnScores are the per-turn rewards (nil entries for turns without a verifier).
	TurnScores []*float64
	// Changed names the files of the task that differ from those the sample's earlier trace was
	// recorded with (the task file, a file it loads); that trace was stale and the sample ran
	// again. Nil for a sample without an earlier trace or with a current one.
	Changed []trace.FileChange
	// Token usage reported by a model (0 when unknown).
	PromptTokens, CompletionTokens int64
	// UserRounds is how many answers simulated users gave in the episode, over its turns.
	UserRounds int
}

// OK reports whether the sample has a trace and scores.
func (s *Sample) OK() bool { return s.Err == "" }

// TaskResult is the samples of one task, in sample order.
type TaskResult struct {
	Task    *dsl.Task
	Samples []Sample
}

// Result is a whole rollout, tasks in the order given.
type Result struct {
	Tasks   []TaskResult
	Samples int // K
	Seed    int64
	// VarySetup is Options.VarySetup: sample i ran with Seed+i, not Seed.
	VarySetup bool
	Agent     string
	// Ran, Resumed, Failed and Interrupted count the samples run now, read back, left without a
	// trace by a failure, and left without a trace by the interruption (they run next time).
	Ran, Resumed, Failed, Interrupted int
}

// NotPassed counts the samples that have a trace and did not pass (failed and interrupted
// samples, which have none, are counted by Failed and Interrupted).
func (r *Result) NotPassed() int {
	n := 0
	for _, tr := range r.Tasks {
		for i := range tr.Samples {
			if s := &tr.Samples[i]; s.OK() && !s.Passed {
				n++
			}
		}
	}
	return n
}

// SampleSeed is the run seed of sample i: seed itself, or seed+i with vary (VarySetup).
func SampleSeed(seed int64, i int, vary bool) int64 {
	if vary {
		return seed + int64(i)
	}
	return seed
}

// TracePath is the trace of sample i of a task under out.
func TracePath(out, task string, i int) string {
	return filepath.Join(out, task, strconv.Itoa(i)+".jsonl")
}

// Run rolls out every task. It returns an error, and runs nothing, when the options are wrong,
// two different tasks share a name, the manifest differs, or an existing trace belongs to
// another task, seed or agent. Failed samples are in the result, not errors.
func Run(ctx context.Context, tasks []Task, opts Options) (*Result, error) {
	if opts.Samples < 1 {
		return nil, fmt.Errorf("samples: %d is not a positive number", opts.Samples)
	}
	if opts.Jobs < 1 {
		opts.Jobs = 1
	}
	if opts.NewAgent == nil || opts.Agent == "" {
		return nil, errors.New("rollout: no agent")
	}
	res, todo, err := plan(tasks, opts, func(t Task) error {
		if t.Isolated == nil && len(t.Sources) == 0 {
			return fmt.Errorf("rollout: task %s has no Sources", t.Task.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	report := reporter(res, opts)

	next := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < opts.Jobs && w < len(todo); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				s := &res.Tasks[j.t].Samples[j.i]
				runSample(ctx, tasks[j.t], s, opts)
				report(s)
			}
		}()
	}
	for _, j := range todo {
		next <- j
	}
	close(next)
	wg.Wait()

	res.count()
	return res, nil
}

// reporter tells opts.Progress of every finished sample (calls never overlap), starting with
// the resumed ones, at once.
func reporter(res *Result, opts Options) func(*Sample) {
	prog := Progress{Total: len(res.Tasks) * opts.Samples}
	var mu sync.Mutex
	report := func(s *Sample) {
		mu.Lock()
		defer mu.Unlock()
		prog.Done++
		switch {
		case s.Interrupted:
			prog.Interrupted++
		case !s.OK():
			prog.Failed++
		case s.Passed:
			prog.Passed++
		}
		if opts.Progress != nil {
			opts.Progress(prog)
		}
	}
	for ti := range res.Tasks {
		for i := range res.Tasks[ti].Samples {
			if s := &res.Tasks[ti].Samples[i]; s.Resumed {
				report(s)
			}
		}
	}
	return report
}

// count counts the samples run now, failed and interrupted (the resumed ones are counted as
// they are read back).
func (res *Result) count() {
	for ti := range res.Tasks {
		for i := range res.Tasks[ti].Samples {
			s := &res.Tasks[ti].Samples[i]
			switch {
			case s.Resumed:
			case s.Interrupted:
				res.Interrupted++
			case !s.OK():
				res.Failed++
			default:
				res.Ran++
			}
		}
	}
}

// samples is "the sample" or "those n samples".
func samples(n int) string {
	if n == 1 {
		return "the sample"
	}
	return fmt.Sprintf("those %d samples", n)
}

// resume reads an existing trace into s. ok is false when there is none, when it is unreadable
// (s.Err says why) or when it is stale (s.Changed says why): the sample then runs again; err
// when it records another task, seed or agent.
func resume(s *Sample, agent string, now *current) (ok bool, err error) {
	task := now.task.Task.Name
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %v", s.Path, unwrapPath(err))
	}
	info, err := f.Stat()
	f.Close()
	if err == nil && info.IsDir() {
		return false, fmt.Errorf("%s is a folder where the trace of sample %d belongs; move it away or use another --out", s.Path, s.Index)
	}
	events, rerr := readTrace(s.Path)
	if rerr != nil {
		s.Err = rerr.Error() // cleared by the caller, which runs the sample again
		return false, nil
	}
	start := events[0].Body.(*trace.Start) // trace.Read checked it
	switch {
	case start.Task != task:
		return false, fmt.Errorf("%s records task %s, not %s", s.Path, start.Task, task)
	case start.Seed != s.Seed:
		return false, fmt.Errorf("%s was run with seed %d, not %d (use the same --seed and --vary-setup, or another --out)", s.Path, start.Seed, s.Seed)
	case start.Agent != agent:
		return false, fmt.Errorf("%s was run by agent %s, not %s (use another --out)", s.Path, start.Agent, agent)
	}
	if s.Changed = now.changes(start); len(s.Changed) > 0 {
		return false, nil
	}
	FillSample(s, events)
	s.Resumed = true
	return true, nil
}

// current is what a resumed trace's files are compared with: the task's files now.
type current struct {
	task Task
	sha  string            // the task file's
	by   map[string]string // a file's SHA-256 by root-relative path
	// exact: by holds exactly the task's sources (Task.Sources), not every file a worker is
	// given (Isolated.Files), so a file the task loads now but did not then is named too
	exact bool
}

func currentOf(t Task) *current {
	now := &current{task: t, sha: trace.FileSHA256(t.Source), by: map[string]string{}, exact: t.Sources != nil}
	if now.exact {
		for _, s := range t.Sources {
			now.by[s.Path] = s.SHA256
		}
	} else {
		for p, data := range t.Isolated.Files {
			now.by[p] = trace.FileSHA256(data)
		}
	}
	return now
}

// changes lists the files of the task whose bytes are not those a trace was recorded with: the
// task file by its file_sha256, the files it loads by the trace's sources (nothing more for a
// trace without them). A file the task loaded then and does not now, or the other way round,
// differs too; since which files a task loads follows from the bytes of the files it loads, a
// trace whose recorded files all have their recorded bytes is of the task as it is now.
func (now *current) changes(start *trace.Start) []trace.FileChange {
	var out []trace.FileChange
	if start.FileSHA256 != now.sha {
		out = append(out, trace.FileChange{Path: start.File, Task: true, Recorded: start.FileSHA256, Current: now.sha})
	}
	if len(start.Sources) == 0 {
		return out
	}
	then := map[string]bool{}
	for _, s := range start.Sources[1:] {
		then[s.Path] = true
		if cur := now.by[s.Path]; cur != s.SHA256 {
			out = append(out, trace.FileChange{Path: s.Path, Recorded: s.SHA256, Current: cur})
		}
	}
	if now.exact {
		for _, s := range now.task.Sources[1:] {
			if !then[s.Path] {
				out = append(out, trace.FileChange{Path: s.Path, Current: s.SHA256})
			}
		}
	}
	return out
}

// readTrace reads a whole trace.
func readTrace(path string) ([]trace.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	return trace.Read(f)
}

// FillSample fills the scores of s from its trace (the events of a whole trace, trace.Read):
// the episode's scores and verdict, the per-turn rewards, the simulated users' answers and the
// model's token usage. The sample's index, path and seed are left as they are.
func FillSample(s *Sample, events []trace.Event) {
	for _, e := range events {
		switch b := e.Body.(type) {
		case *trace.TurnEnd:
			for len(s.TurnScores) <= b.Turn {
				s.TurnScores = append(s.TurnScores, nil)
			}
			if b.Score != nil {
				f := *b.Score
				s.TurnScores[b.Turn] = &f
			}
			s.UserRounds += b.Rounds
		case *trace.Assistant:
			p, c := UsageTokens(b.Usage)
			s.PromptTokens += p
			s.CompletionTokens += c
		case *trace.End:
			s.Score, s.Completion, s.Safety, s.Robustness, s.Passed = b.Score, b.Completion, b.Safety, b.Robustness, b.Passed
		}
	}
}

// UsageTokens reads the prompt and completion tokens of a model's usage, as an assistant event
// records it (0 for a count it lacks, or a nil usage).
func UsageTokens(usage *jsonv.Object) (prompt, completion int64) {
	if usage == nil {
		return 0, 0
	}
	return intField(usage, "prompt_tokens"), intField(usage, "completion_tokens")
}

func intField(o *jsonv.Object, k string) int64 {
	v, _ := o.Get(k)
	n, _ := jsonv.Number(v)
	return int64(n)
}

// runSample runs and traces one sample.
func runSample(ctx context.Context, t Task, s *Sample, opts Options) {
	if ctx.Err() != nil {
		s.Err, s.Code, s.Interrupted = "interrupted before it started", episode.Interrupted, true
		return
	}
	if t.Isolated != nil {
		runIsolated(ctx, t, s, opts)
		return
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		s.Err = unwrapPath(err).Error()
		return
	}
	f := &TraceFile{Path: s.Path}
	usage := &usageCounter{}
	r, setup, err := isolate.RunEpisode(ctx, isolate.Run{Task: t.Task, Source: t.Source, Sources: t.Sources, Seed: s.Seed,
		NewAgent: opts.NewAgent, Trace: f, Observer: usage, Split: t.Split})
	inconclusive := r != nil && r.Err != nil && episode.Inconclusive(r.Err.Code)
	if ferr := f.Finish(err != nil || inconclusive); err == nil {
		err = ferr
	}
	switch {
	case setup != nil:
		s.setErr(setup)
		return
	case err != nil:
		s.Err = err.Error()
		return
	case inconclusive:
		s.setErr(r.Err)
		return
	}
	s.Score, s.Completion, s.Safety, s.Robustness, s.Passed = r.Score, r.Completion, r.Safety, r.Robustness, r.Passed
	for _, tr := range r.Turns {
		s.TurnScores = append(s.TurnScores, tr.Score)
		s.UserRounds += tr.Rounds
	}
	s.PromptTokens, s.CompletionTokens = usage.prompt, usage.completion
}

// runIsolated runs and traces one sample in a worker. A sample whose worker stopped
// (memory-limit, timeout, crash) is failed like a model-error one: its .partial ends with the
// diagnostic, and the next run tries it again.
func runIsolated(ctx context.Context, t Task, s *Sample, opts Options) {
	if opts.Pool == nil {
		s.Err = "rollout: no pool for an isolated task"
		return
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		s.Err = unwrapPath(err).Error()
		return
	}
	ep := *t.Isolated
	ep.Seed, ep.Agent, ep.Split = s.Seed, opts.AgentSpec, t.Split
	f := &TraceFile{Path: s.Path}
	res, err := opts.Pool.Episode(ctx, ep, isolate.Host{Trace: f, Model: opts.Model})
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		s.Err, s.Code, s.Interrupted = "interrupted before it started", episode.Interrupted, true
	case err != nil:
		s.Err = err.Error()
	case res.Setup != nil:
		s.setErr(res.Setup)
	case res.Stopped != "" || (res.Err != nil && episode.Inconclusive(res.Err.Code)):
		s.setErr(res.Err)
	}
	if err := f.Finish(s.Err != ""); err != nil && s.Err == "" {
		s.Err = err.Error()
	}
	if s.Err != "" {
		return
	}
	e := res.End
	s.Score, s.Completion, s.Safety, s.Robustness, s.Passed = e.Score, e.Completion, e.Safety, e.Robustness, e.Passed
	s.TurnScores, s.PromptTokens, s.CompletionTokens, s.UserRounds = res.TurnScores, res.PromptTokens, res.CompletionTokens, res.UserRounds
}

// TraceFile is a trace on its way to Path: it is written to Path.partial, created at the first
// write (an episode whose setup fails has no trace), and Finish renames it to Path. A killed
// run leaves a readable prefix and never a half-written Path. `coworkenv run --trace` writes
// its trace the same way.
type TraceFile struct {
	Path string
	f    *os.File
	err  error
}

func (t *TraceFile) Write(b []byte) (int, error) {
	if t.f == nil && t.err == nil {
		t.f, t.err = os.Create(t.Path + ".partial")
	}
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.f.Write(b)
	if err != nil {
		t.err = err
	}
	return n, err
}

// Finish closes the file and renames it to Path; with keep it stays at Path.partial (the trace
// of an episode that was interrupted or failed: complete enough to read, named for what it is).
// It returns the first error of writing, closing or renaming.
func (t *TraceFile) Finish(keep bool) error {
	if t.f == nil {
		return t.err
	}
	if err := t.f.Close(); t.err == nil {
		t.err = err
	}
	switch {
	case t.err != nil:
		return unwrapPath(t.err)
	case keep:
		return nil
	}
	if err := os.Rename(t.Path+".partial", t.Path); err != nil {
		return fmt.Errorf("renaming the finished trace: %v", err)
	}
	return nil
}

// setErr records the diagnostic that left the sample without a trace.
func (s *Sample) setErr(d *dsl.Diagnostic) {
	s.Err, s.Code, s.Interrupted = d.String(), d.Code, d.Code == episode.Interrupted
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// checkManifest compares OUT/rollout.json with this run's configuration, or writes it.
func checkManifest(opts Options) error {
	want := jsonv.NewObject("format", ManifestFormat)
	if opts.Config != nil {
		for _, m := range opts.Config.Members {
			want.Set(m.Key, m.Value)
		}
	}
	want.Set("seed", opts.Seed)
	want.Set("vary_setup", opts.VarySetup)
	enc, err := jsonv.Indent(want)
	if err != nil {
		return err
	}
	enc = append(enc, '\n')
	path := filepath.Join(opts.Out, ManifestFile)
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return writeAtomic(path, enc)
	case err != nil:
		return unwrapPath(err)
	case bytes.Equal(old, enc):
		return nil
	}
	v, err := jsonv.Decode(old)
	have, ok := v.(*jsonv.Object)
	if err != nil || !ok {
		return fmt.Errorf("%s is not a rollout manifest; use another --out", path)
	}
	// the manifest of an older engine, which gave sample i the seed seed+i, does not say so
	vary, recorded := have.Get("vary_setup")
	if !recorded {
		vary = true
		have.Set("vary_setup", vary)
	}
	switch {
	case jsonv.Equal(vary, opts.VarySetup):
	case opts.VarySetup:
		return fmt.Errorf("%s was made without --vary-setup (every sample of a task ran with the same seed); drop --vary-setup to resume, or use another --out", opts.Out)
	case !recorded:
		return fmt.Errorf("%s was made by an older coworkenv, which ran sample i with seed+i; add --vary-setup to resume, or use another --out", opts.Out)
	default:
		return fmt.Errorf("%s was made with --vary-setup (sample i ran with seed+i); add --vary-setup to resume, or use another --out", opts.Out)
	}
	for _, key := range unionKeys(have, want) {
		a, _ := have.Get(key)
		b, _ := want.Get(key)
		if !jsonv.Equal(a, b) {
			return fmt.Errorf("%s was made with %s %s, this run has %s; use the same settings to resume, or another --out",
				opts.Out, key, jsonv.MustEncode(a), jsonv.MustEncode(b))
		}
	}
	return nil
}

func unionKeys(a, b *jsonv.Object) []string {
	keys := a.Keys()
	for _, k := range b.Keys() {
		if _, ok := a.Get(k); !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func writeAtomic(path string, data []byte) error {
	return unwrapPath(atomicfile.WriteFile(path, data))
}

// usageCounter adds up a model's token usage.
type usageCounter struct{ prompt, completion int64 }

func (u *usageCounter) OnUser(int, string, string, string) {}
func (u *usageCounter) OnUserAsk(*episode.UserAsk)         {}
func (u *usageCounter) OnJudge(*episode.JudgeCall)         {}
func (u *usageCounter) OnNotRun(int, string, string)       {}
func (u *usageCounter) OnAssistant(_ int, m *episode.AssistantMessage) {
	p, c := UsageTokens(m.Usage)
	u.prompt += p
	u.completion += c
}
func (u *usageCounter) OnCall(*episode.Call)          {}
func (u *usageCounter) OnResult(*episode.Call)        {}
func (u *usageCounter) OnReply(int, string)           {}
func (u *usageCounter) OnTurnEnd(*episode.TurnResult) {}

// job is a sample to run: task t, sample i.
type job struct{ t, i int }

// plan checks the tasks (check says what a task needs), creates OUT, checks its manifest, reads
// back the samples whose traces are current (Resumed), warns of stale ones, and returns the
// result to fill and the samples still to run, in order: what Run and RunQueued share.
func plan(tasks []Task, opts Options, check func(Task) error) (*Result, []job, error) {
	seen := map[string]*dsl.Task{}
	for _, t := range tasks {
		if err := check(t); err != nil {
			return nil, nil, err
		}
		if prev, ok := seen[t.Task.Name]; ok {
			return nil, nil, fmt.Errorf("two tasks are named %s (%s and %s): their traces would share %s",
				t.Task.Name, prev.File, t.Task.File, filepath.Join(opts.Out, t.Task.Name))
		}
		seen[t.Task.Name] = t.Task
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, nil, fmt.Errorf("--out: %v", unwrapPath(err))
	}
	if err := checkManifest(opts); err != nil {
		return nil, nil, err
	}
	removeStale(opts.Out, tasks)
	res := &Result{Samples: opts.Samples, Seed: opts.Seed, VarySetup: opts.VarySetup, Agent: opts.Agent, Tasks: make([]TaskResult, len(tasks))}
	var todo []job
	for ti, t := range tasks {
		tr := &res.Tasks[ti]
		tr.Task = t.Task
		tr.Samples = make([]Sample, opts.Samples)
		now := currentOf(t)
		stale := 0
		var changes []string
		for i := range tr.Samples {
			s := &tr.Samples[i]
			s.Index, s.Seed, s.Path = i, SampleSeed(opts.Seed, i, opts.VarySetup), TracePath(opts.Out, t.Task.Name, i)
			ok, err := resume(s, opts.Agent, now)
			if err != nil {
				return nil, nil, err
			}
			if !ok && s.Err != "" {
				if opts.Warn != nil {
					opts.Warn(fmt.Sprintf("%s cannot be read (%s); running the sample again", s.Path, s.Err))
				}
				s.Err = ""
			}
			if ok {
				res.Resumed++
				continue
			}
			if len(s.Changed) > 0 {
				stale++
				for _, c := range s.Changed {
					if msg := c.String(); !slices.Contains(changes, msg) {
						changes = append(changes, msg)
					}
				}
			}
			todo = append(todo, job{ti, i})
		}
		if stale > 0 && opts.Warn != nil {
			were := "were"
			if stale == 1 {
				were = "was"
			}
			opts.Warn(fmt.Sprintf("%s: %d of its traces in %s %s recorded with other versions of its files (%s); running %s again",
				t.Task.Name, stale, filepath.Join(opts.Out, t.Task.Name), were, strings.Join(changes, "; "), samples(stale)))
		}
	}
	return res, todo, nil
}
