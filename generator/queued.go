package generator

// Queued generation (docs/scaling.md): RunQueued publishes each attempt of a run as a job on a
// queue (package queue) instead of running it here, and workers anywhere (Handler, `coworkenv
// worker --queue URL`) run it: the model's rounds, each candidate validated in a worker process,
// the duplicate checks, exactly as Run's attempt does (the same code, on what the job carries).
// RunQueued does what depends on the order of the attempts as Run does, in attempt order: the
// last duplicate and name checks, the accepted files and the manifest; and it publishes attempt
// i once attempt i-Jobs is committed, as Run starts it, so that attempt i sees the same tasks as
// in a local run with the same Jobs. The outputs are the same as Run's given the same answers of
// the model, and a run stopped anywhere resumes from its manifest as Run does.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
)

// QueueName is the queue of queued generation, and the kind of its jobs.
const QueueName = "generate"

// attemptJob is the body of a generate job: one attempt, with everything Run's attempt reads.
// It holds no secret: a worker sends the model's requests with the key of its own environment.
type attemptJob struct {
	Run     runSpec `json:"run"`
	Attempt int     `json:"attempt"`
	// Examples are the corpus examples the attempt's prompt shows (chooseExamples of the run's
	// for its seed; choosing again among these alone gives them all back, in order).
	Examples []exampleJSON `json:"examples"`
	// Seen are the tasks accepted by attempts up to Attempt-Jobs, which the attempt is told of
	// and compared with; Desc holds their descriptions.
	Seen []entryJSON       `json:"seen"`
	Desc map[string]string `json:"desc"`
}

// runSpec is what every attempt of a run shares.
type runSpec struct {
	Capabilities  []string               `json:"capabilities"`
	Seed          int64                  `json:"seed"` // of attempt 0
	MaxRounds     int                    `json:"max_rounds"`
	NearThreshold float64                `json:"near_threshold"`
	Model         *isolate.ModelSettings `json:"model"`
	StandInsOnly  bool                   `json:"stand_ins_only"`
	System        string                 `json:"system"`
	// Taxonomy lists the corpus's capabilities, in order (null: the corpus has none).
	Taxonomy []capabilityJSON `json:"taxonomy"`
	// Corpus is the corpus's duplicate index; Names its task names and where they are.
	Corpus []entryJSON       `json:"corpus"`
	Names  map[string]string `json:"names"`
	// Support are the files beside a candidate in its worker (the corpus's capabilities.star).
	Support map[string][]byte `json:"support"`
}

type capabilityJSON struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type exampleJSON struct {
	Path string   `json:"path"`
	Caps []string `json:"caps"`
	Src  string   `json:"src"`
}

// entryJSON is an entry of the duplicate index. Shingles are packed: each hash in 8 bytes,
// little-endian, in increasing order (null: none were computed).
type entryJSON struct {
	Name     string `json:"name"`
	Where    string `json:"where"`
	Attempt  int    `json:"attempt"`
	Hash     string `json:"hash,omitempty"`
	Shingles []byte `json:"shingles"`
}

// attemptAnswer is the body of a generate job's result: the attempt's outcome before it is
// committed.
type attemptAnswer struct {
	Record      Record `json:"record"`
	Source      string `json:"source"`
	Hash        string `json:"hash"`
	Shingles    []byte `json:"shingles"` // packed as in entryJSON
	Description string `json:"description"`
}

// RunQueued is Run with the attempts run by workers of the queue q (see the top of this file).
// Options.Pool is still needed, for resuming (it reads back the accepted files); Record and
// Replay are refused, since the model is asked from the workers. Each job's ID is "generate-",
// a hash of what the run's attempts share, "-" and a hash of the job, so publishing an attempt
// again is harmless and a run started again gets the results of the attempts it published
// before. progress, when set, is told how far the jobs have got.
//
// A job that fails (after the queue's deliveries: a model that cannot be reached, the model
// failing while it answers for a candidate's simulated user) stops the run like a failed
// attempt stops Run, after the attempts before it are committed. Its failure stays on the queue
// while the queue remembers the job: starting the run again against the same queue gets the
// same failure back.
func RunQueued(ctx context.Context, opts Options, q *queue.Queue, progress func(queue.Progress)) (*Summary, error) {
	if opts.Record != "" || opts.Replay != "" {
		return nil, usageErr("--record and --replay cannot be used with --queue: the workers ask the model")
	}
	g, start, records, closeFn, err := setup(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	mw, err := openManifest(opts.Out)
	if err != nil {
		return nil, err
	}
	defer mw.Close()

	run := g.runSpec()
	runData, err := json.Marshal(run)
	if err != nil {
		return nil, err
	}
	prefix := QueueName + "-" + hashHex(runData)[:16] + "-"
	attemptOf := map[string]int{}
	job := func(i int) (queue.Job, error) {
		seed := g.opts.Seed + int64(i)
		body := attemptJob{Run: run, Attempt: i, Desc: map[string]string{}, Seen: []entryJSON{}}
		for _, ex := range chooseExamples(g.examples, g.opts.Capabilities, seed) {
			body.Examples = append(body.Examples, exampleJSON{Path: ex.path, Caps: ex.caps, Src: ex.src})
		}
		g.mu.Lock()
		for _, e := range g.accepted {
			if e.attempt <= i-g.opts.Jobs {
				body.Seen = append(body.Seen, packEntry(e))
				body.Desc[e.name] = g.desc[e.name]
			}
		}
		g.mu.Unlock()
		data, err := json.Marshal(body)
		if err != nil {
			return queue.Job{}, err
		}
		id := prefix + hashHex(data)[:32]
		attemptOf[id] = i
		return queue.Job{ID: id, Kind: QueueName, Body: data}, nil
	}

	var first []queue.Job
	for i := start; i < min(start+g.opts.Jobs, opts.Count); i++ {
		j, err := job(i)
		if err != nil {
			return nil, err
		}
		first = append(first, j)
	}
	next := start // the next attempt to commit
	got := map[int]queue.Result{}
	onResult := func(r queue.Result) ([]queue.Job, error) {
		i, ok := attemptOf[r.JobID]
		if !ok {
			return nil, nil
		}
		got[i] = r
		var more []queue.Job
		for {
			r, ok := got[next]
			if !ok {
				return more, nil
			}
			delete(got, next)
			if !r.OK {
				return nil, fmt.Errorf("attempt %d: %s", next, r.Error)
			}
			o, err := readAttemptAnswer(r.Body, next)
			if err != nil {
				return nil, fmt.Errorf("attempt %d: %v", next, err)
			}
			rec, err := g.commit(o, mw)
			if err != nil {
				return nil, err
			}
			records = append(records, *rec)
			g.logRecord(rec)
			if opts.OnRecord != nil {
				opts.OnRecord(*rec)
			}
			next++
			if k := next - 1 + g.opts.Jobs; k < opts.Count {
				j, err := job(k)
				if err != nil {
					return nil, err
				}
				more = append(more, j)
			}
		}
	}
	var runErr error
	if len(first) > 0 {
		runErr = q.Produce(ctx, queue.Produce{Jobs: first, Total: opts.Count - start, OnResult: onResult, Progress: progress,
			Later: func(id string) bool { return strings.HasPrefix(id, prefix) }})
	}
	sum := summarize(records)
	sum.Resumed = start
	sum.Out = opts.Out
	sum.Manifest = filepath.Join(opts.Out, ManifestFile)
	return sum, runErr
}

// runSpec is what the attempts of g's run share.
func (g *gen) runSpec() runSpec {
	r := runSpec{Capabilities: g.opts.Capabilities, Seed: g.opts.Seed, MaxRounds: g.opts.MaxRounds, NearThreshold: g.opts.NearThreshold,
		Model: isolate.SettingsOf(g.opts.Model), StandInsOnly: g.opts.StandInsOnly, System: g.system,
		Corpus: []entryJSON{}, Names: g.names, Support: g.support}
	if g.tax != nil {
		r.Taxonomy = []capabilityJSON{}
		for _, c := range g.tax.Capabilities {
			r.Taxonomy = append(r.Taxonomy, capabilityJSON{c.Name, c.Description})
		}
	}
	for _, e := range g.corpus {
		r.Corpus = append(r.Corpus, packEntry(e))
	}
	return r
}

// Handler runs generate jobs for queue.Work: each job is one attempt, run as Run runs it, with
// its candidates validated in pool and the model's requests (the attempt's, and those of a
// candidate's simulated users and judges unless the run is stand-ins only) sent with the key in
// getenv (OPENAI_API_KEY, and OPENAI_BASE_URL when the run gave no base URL). log, when set, gets
// the attempt's lines about its repair rounds. A job that is not a generate job, or whose model
// fails for good, fails; the queue delivers it again up to its max deliver.
func Handler(pool *isolate.Pool, getenv func(string) string, log io.Writer) queue.Handler {
	return func(ctx context.Context, job queue.Job) ([]byte, error) {
		if job.Kind != QueueName {
			return nil, fmt.Errorf("not a generate job: kind %q", job.Kind)
		}
		var body attemptJob
		if err := json.Unmarshal(job.Body, &body); err != nil {
			return nil, fmt.Errorf("generate job: %v", err)
		}
		g, seen, err := workerGen(&body, pool, getenv, log)
		if err != nil {
			return nil, fmt.Errorf("generate job: %v", err)
		}
		o, err := g.attempt(ctx, body.Attempt, seen)
		if err != nil {
			return nil, err
		}
		return json.Marshal(attemptAnswer{Record: o.rec, Source: o.src, Hash: o.hash, Shingles: packShingles(o.sh), Description: o.desc})
	}
}

// workerGen is the run of a job as its attempt reads it, and the tasks the attempt has seen.
func workerGen(b *attemptJob, pool *isolate.Pool, getenv func(string) string, log io.Writer) (*gen, []*entry, error) {
	r := &b.Run
	switch {
	case len(r.Capabilities) == 0:
		return nil, nil, errors.New("no capability")
	case r.MaxRounds < 1:
		return nil, nil, fmt.Errorf("max rounds: %d is not a positive number", r.MaxRounds)
	case !(r.NearThreshold > 0 && r.NearThreshold <= 1):
		return nil, nil, fmt.Errorf("near threshold: %v is not in (0, 1]", r.NearThreshold)
	case r.Model == nil || r.Model.Model == "":
		return nil, nil, errors.New("no model")
	case b.Attempt < 0:
		return nil, nil, fmt.Errorf("attempt %d", b.Attempt)
	}
	cfg, err := isolate.WorkerModel(r.Model, getenv)
	if err != nil {
		return nil, nil, err
	}
	g := &gen{
		opts: Options{Capabilities: r.Capabilities, Seed: r.Seed, MaxRounds: r.MaxRounds, NearThreshold: r.NearThreshold,
			Model: cfg, StandInsOnly: r.StandInsOnly, Pool: pool, Log: log},
		system: r.System, names: r.Names, support: r.Support, desc: b.Desc,
	}
	if g.names == nil {
		g.names = map[string]string{}
	}
	if g.desc == nil {
		g.desc = map[string]string{}
	}
	if r.Taxonomy != nil {
		g.tax = &dsl.Taxonomy{}
		for _, c := range r.Taxonomy {
			g.tax.Capabilities = append(g.tax.Capabilities, dsl.Capability{Name: c.Name, Description: c.Description})
		}
	}
	for _, ex := range b.Examples {
		g.examples = append(g.examples, example{path: ex.Path, caps: ex.Caps, src: ex.Src})
	}
	if g.corpus, err = unpackEntries(r.Corpus); err != nil {
		return nil, nil, err
	}
	seen, err := unpackEntries(b.Seen)
	if err != nil {
		return nil, nil, err
	}
	if !r.StandInsOnly {
		s := isolate.SettingsOf(cfg)
		g.models = &isolate.TaskModels{User: s, Judge: s, Base: cfg}
	}
	return g, seen, nil
}

// readAttemptAnswer reads the outcome of attempt i from its job's result.
func readAttemptAnswer(data []byte, i int) (*outcome, error) {
	var a attemptAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("the worker's answer is not readable: %v", err)
	}
	if a.Record.Attempt != i {
		return nil, fmt.Errorf("the worker answered for attempt %d", a.Record.Attempt)
	}
	// an accepted task's name becomes a file name in the output folder
	if t := a.Record.Task; a.Record.Status == "accepted" && (t == "" || strings.HasPrefix(t, ".") || strings.ContainsAny(t, `/\`) || strings.ContainsRune(t, 0)) {
		return nil, fmt.Errorf("the worker accepted a task named %q, which is no file name", t)
	}
	sh, err := unpackShingles(a.Shingles)
	if err != nil {
		return nil, fmt.Errorf("the worker's answer: %v", err)
	}
	return &outcome{rec: a.Record, src: a.Source, hash: a.Hash, sh: sh, desc: a.Description}, nil
}

func packEntry(e *entry) entryJSON {
	return entryJSON{Name: e.name, Where: e.where, Attempt: e.attempt, Hash: e.hash, Shingles: packShingles(e.shingles)}
}

func unpackEntries(es []entryJSON) ([]*entry, error) {
	out := make([]*entry, 0, len(es))
	for _, e := range es {
		sh, err := unpackShingles(e.Shingles)
		if err != nil {
			return nil, fmt.Errorf("task %q: %v", e.Name, err)
		}
		out = append(out, &entry{name: e.Name, where: e.Where, attempt: e.Attempt, hash: e.Hash, shingles: sh})
	}
	return out, nil
}

// packShingles packs a set of shingles (nil for nil).
func packShingles(sh map[uint64]struct{}) []byte {
	if sh == nil {
		return nil
	}
	keys := make([]uint64, 0, len(sh))
	for k := range sh {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]byte, 0, 8*len(keys))
	for _, k := range keys {
		out = binary.LittleEndian.AppendUint64(out, k)
	}
	return out
}

// unpackShingles is the inverse of packShingles.
func unpackShingles(b []byte) (map[uint64]struct{}, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("shingles: %d bytes is not a whole number of hashes", len(b))
	}
	sh := make(map[uint64]struct{}, len(b)/8)
	for i := 0; i < len(b); i += 8 {
		sh[binary.LittleEndian.Uint64(b[i:])] = struct{}{}
	}
	return sh, nil
}

func hashHex(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
