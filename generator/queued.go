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
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate/redteam"
)

// QueueName is the queue of queued generation, and the kind of its jobs.
const QueueName = "generate"

// attemptJob is the body of a generate job: one attempt, with refs of the queue's blob store for
// everything Run's attempt reads, so that its size does not depend on the corpus or on how many
// tasks the run has accepted. It holds no secret: a worker sends the model's requests with the
// key of its own environment.
type attemptJob struct {
	Run     string `json:"run"` // the ref of the run's runSpec (JSON)
	Attempt int    `json:"attempt"`
	// Seen is the ref of the last link of the chain of the tasks accepted by attempts up to
	// Attempt-Jobs, which the attempt is told of and compared with ("": none).
	Seen string `json:"seen"`
}

// seenLink is a link of the chain of a run's accepted tasks: the n-th accepted task (in attempt
// order) with its description, and the ref of the link of the n-1 before it. The chain of the
// first n tasks depends on those tasks alone, so the same attempt seeing the same tasks is the
// same job, and a worker reads only the links it has not read before.
type seenLink struct {
	Prev  string    `json:"prev"` // "" for the first
	N     int       `json:"n"`
	Entry entryJSON `json:"entry"`
	Desc  string    `json:"desc"`
}

// runSpec is what every attempt of a run shares.
type runSpec struct {
	Capabilities  []string               `json:"capabilities"`
	Mix           *mixPlan               `json:"mix"`  // what each attempt draws
	Seed          int64                  `json:"seed"` // of attempt 0
	MaxRounds     int                    `json:"max_rounds"`
	NearThreshold float64                `json:"near_threshold"`
	SkeletonDedup bool                   `json:"skeleton_dedup,omitempty"`
	Model         *isolate.ModelSettings `json:"model"`
	StandInsOnly  bool                   `json:"stand_ins_only"`
	RedTeam       *redteam.Options       `json:"red_team,omitempty"`
	System        string                 `json:"system"`
	Reference     string                 `json:"reference"` // the whole reference, cut into parts by the worker
	// Taxonomy lists the corpus's capabilities, in order (null: the corpus has none).
	Taxonomy []capabilityJSON `json:"taxonomy"`
	// Corpus is the corpus's duplicate index; Names its task names and where they are.
	Corpus []entryJSON       `json:"corpus"`
	Names  map[string]string `json:"names"`
	// Support are the files beside a candidate in its worker (the corpus's capabilities.star).
	Support map[string][]byte `json:"support"`
	// Examples are the corpus examples an attempt's prompt may show (chooseExamples picks them
	// for the attempt's seed).
	Examples []exampleJSON `json:"examples"`
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
	Skel     string `json:"skel,omitempty"`
}

// attemptAnswer is the body of a generate job's result: the attempt's outcome before it is
// committed.
type attemptAnswer struct {
	Record      Record `json:"record"`
	Source      string `json:"source"`
	Hash        string `json:"hash"`
	Shingles    []byte `json:"shingles"` // packed as in entryJSON
	Description string `json:"description"`
	// Runs are the red team's runs, kept beside an accepted task.
	Runs []*recorded.Run `json:"runs,omitempty"`
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
// attempt stops Run, after the attempts before it are committed. Its failure stays on the queue:
// starting the run again against the same queue gets the same failure back, unless the queue
// was opened WithRetryFailed.
func RunQueued(ctx context.Context, opts Options, q *queue.Queue, progress func(queue.Progress)) (*Summary, error) {
	if opts.Record != "" || opts.Replay != "" {
		return nil, fieldErr(true, []string{"Record", "Replay"}, "%[1]s and %[2]s cannot be used on a queue: the workers ask the model")
	}
	if opts.BudgetTokens > 0 {
		return nil, fieldErr(true, []string{"BudgetTokens"}, "%[1]s cannot be used on a queue yet")
	}
	g, start, records, mw, closeFn, err := begin(ctx, &opts)
	if err != nil {
		return nil, err
	}
	defer closeFn()

	jobs, err := newAttemptJobs(ctx, g, q)
	if err != nil {
		return nil, err
	}
	prefix := jobs.prefix
	attemptOf := map[string]int{}
	job := func(i int) (queue.Job, error) {
		j, err := jobs.job(ctx, i)
		attemptOf[j.ID] = i
		return j, err
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
	sum.Coverage = Coverage(records, g.mix.Pool)
	sum.Resumed = start
	sum.Out = opts.Out
	sum.Manifest = filepath.Join(opts.Out, ManifestFile)
	return sum, runErr
}

// runSpec is what the attempts of g's run share.
func (g *gen) runSpec() runSpec {
	r := runSpec{Capabilities: g.opts.Capabilities, Mix: g.mix, Reference: g.opts.Reference, Seed: g.opts.Seed, MaxRounds: g.opts.MaxRounds, NearThreshold: g.opts.NearThreshold, SkeletonDedup: g.opts.SkeletonDedup,
		Model: isolate.SettingsOf(g.opts.Model), StandInsOnly: g.opts.StandInsOnly, RedTeam: g.opts.RedTeam, System: g.system,
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
	for _, ex := range g.examples {
		r.Examples = append(r.Examples, exampleJSON{Path: ex.path, Caps: ex.caps, Src: ex.src})
	}
	return r
}

// attemptJobs makes the jobs of the attempts of a run on a queue: it stores the run's shared part
// and the links of the chain of accepted tasks in the queue's blob store as they are needed.
type attemptJobs struct {
	g      *gen
	q      *queue.Queue
	run    string   // the ref of the run's runSpec
	prefix string   // of the jobs' IDs: "generate-", a hash of the runSpec, "-"
	chain  []string // chain[k] is the ref of the link of the first k+1 accepted tasks
}

func newAttemptJobs(ctx context.Context, g *gen, q *queue.Queue) (*attemptJobs, error) {
	data, err := json.Marshal(g.runSpec())
	if err != nil {
		return nil, err
	}
	ref, err := q.Put(ctx, data)
	if err != nil {
		return nil, fmt.Errorf("store the run's shared part: %w", err)
	}
	return &attemptJobs{g: g, q: q, run: ref, prefix: QueueName + "-" + hashHex(data)[:16] + "-"}, nil
}

// job is the job of attempt i: it sees the tasks accepted by attempts up to i-Jobs, the first
// ones of g.accepted (which is in attempt order). Its ID is the prefix and a hash of its body,
// whose refs are hashes of what they name.
func (a *attemptJobs) job(ctx context.Context, i int) (queue.Job, error) {
	a.g.mu.Lock()
	n := 0
	for n < len(a.g.accepted) && a.g.accepted[n].attempt <= i-a.g.opts.Jobs {
		n++
	}
	a.g.mu.Unlock()
	seen, err := a.seen(ctx, n)
	if err != nil {
		return queue.Job{}, err
	}
	data, err := json.Marshal(attemptJob{Run: a.run, Attempt: i, Seen: seen})
	if err != nil {
		return queue.Job{}, err
	}
	return queue.Job{ID: a.prefix + hashHex(data)[:32], Kind: QueueName, Body: data}, nil
}

// seen is the ref of the chain of the first n accepted tasks ("" for none); it stores the links
// not stored yet.
func (a *attemptJobs) seen(ctx context.Context, n int) (string, error) {
	for len(a.chain) < n {
		k := len(a.chain)
		a.g.mu.Lock()
		e := a.g.accepted[k]
		link := seenLink{N: k + 1, Entry: packEntry(e), Desc: a.g.desc[e.name]}
		a.g.mu.Unlock()
		if k > 0 {
			link.Prev = a.chain[k-1]
		}
		data, err := json.Marshal(link)
		if err != nil {
			return "", err
		}
		ref, err := a.q.Put(ctx, data)
		if err != nil {
			return "", fmt.Errorf("store the tasks accepted: %w", err)
		}
		a.chain = append(a.chain, ref)
	}
	if n == 0 {
		return "", nil
	}
	return a.chain[n-1], nil
}

// Handler runs generate jobs for queue.Work: each job is one attempt, run as Run runs it, with
// its candidates validated in pool and the model's requests (the attempt's, and those of a
// candidate's simulated users and judges unless the run is stand-ins only) sent with the key in
// getenv (OPENAI_API_KEY, and OPENAI_BASE_URL when the run gave no base URL). log, when set, gets
// the attempt's lines about its repair rounds. A job that is not a generate job, whose blobs
// cannot be read, or whose model fails for good, fails; the queue delivers it again up to its
// max deliver. The handler keeps the runs and chains of seen tasks it read, decoded, for the
// next jobs (a few of each), so a job of a run it knows reads only the links that are new.
func Handler(pool *isolate.Pool, getenv func(string) string, log io.Writer) queue.Handler {
	var w workerState
	return func(ctx context.Context, job queue.Job) ([]byte, error) {
		body, err := queue.Decode[attemptJob](job, QueueName)
		if err != nil {
			return nil, err
		}
		if job.Blobs == nil {
			return nil, errors.New("generate job: it comes without its queue's blobs (run it with Work)")
		}
		if body.Attempt < 0 {
			return nil, fmt.Errorf("generate job: attempt %d", body.Attempt)
		}
		run, err := w.run(ctx, job.Blobs, body.Run)
		if err != nil {
			return nil, fmt.Errorf("generate job: the run: %v", err)
		}
		seen, err := w.seen(ctx, job.Blobs, body.Seen)
		if err != nil {
			return nil, fmt.Errorf("generate job: the tasks seen: %v", err)
		}
		g, err := run.gen(seen.desc, pool, getenv, log)
		if err != nil {
			return nil, fmt.Errorf("generate job: %v", err)
		}
		o, err := g.attempt(ctx, body.Attempt, seen.entries)
		if err != nil {
			return nil, err
		}
		return json.Marshal(attemptAnswer{Record: o.rec, Source: o.src, Hash: o.hash, Shingles: packShingles(o.sh), Description: o.desc, Runs: o.runs})
	}
}

// workerState is what a worker's handler keeps between jobs: the last runs and chains of seen
// tasks it decoded, by ref. An attempt only reads them.
type workerState struct {
	mu    sync.Mutex
	runs  recent[*workerRun]
	heads recent[*seenTasks]
}

// keptRuns and keptHeads bound what a worker keeps: the jobs it runs at once are of one run or a
// few, and see the same chain or one of the last few.
const keptRuns, keptHeads = 4, 16

// workerRun is a run's shared part, decoded.
type workerRun struct {
	spec     *runSpec
	tax      *dsl.Taxonomy
	examples []example
	corpus   []*entry
}

// seenTasks are the tasks of a chain, in order, and their descriptions by name.
type seenTasks struct {
	entries []*entry
	desc    map[string]string
}

// recent keeps the last values put, up to a bound.
type recent[T any] struct {
	keys   []string
	values map[string]T
}

func (r *recent[T]) get(key string) (T, bool) {
	v, ok := r.values[key]
	return v, ok
}

func (r *recent[T]) put(key string, v T, bound int) {
	if r.values == nil {
		r.values = map[string]T{}
	}
	if _, ok := r.values[key]; ok {
		return
	}
	r.keys = append(r.keys, key)
	r.values[key] = v
	if len(r.keys) > bound {
		delete(r.values, r.keys[0])
		r.keys = r.keys[1:]
	}
}

// run reads and decodes the run ref, or takes it from those kept.
func (w *workerState) run(ctx context.Context, blobs queue.Blobs, ref string) (*workerRun, error) {
	w.mu.Lock()
	r, ok := w.runs.get(ref)
	w.mu.Unlock()
	if ok {
		return r, nil
	}
	data, err := blobs.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	r = &workerRun{spec: &runSpec{}}
	if err := json.Unmarshal(data, r.spec); err != nil {
		return nil, err
	}
	spec := r.spec
	switch {
	case len(spec.Capabilities) == 0:
		return nil, errors.New("no capability")
	case spec.Mix == nil || len(spec.Mix.Pool) == 0 || len(spec.Mix.Partners) != len(spec.Mix.Pool) || (spec.Mix.Weights != nil && len(spec.Mix.Weights) != len(spec.Mix.Pool)):
		return nil, errors.New("no capability mix, or one that does not fit its pool")
	case spec.MaxRounds < 1:
		return nil, fmt.Errorf("max rounds: %d is not a positive number", spec.MaxRounds)
	case !(spec.NearThreshold > 0 && spec.NearThreshold <= 1):
		return nil, fmt.Errorf("near threshold: %v is not in (0, 1]", spec.NearThreshold)
	case spec.Model == nil || spec.Model.Model == "":
		return nil, errors.New("no model")
	}
	if spec.Names == nil {
		spec.Names = map[string]string{}
	}
	if spec.Taxonomy != nil {
		r.tax = &dsl.Taxonomy{}
		for _, c := range spec.Taxonomy {
			r.tax.Capabilities = append(r.tax.Capabilities, dsl.Capability{Name: c.Name, Description: c.Description})
		}
	}
	for _, ex := range spec.Examples {
		r.examples = append(r.examples, example{path: ex.Path, caps: ex.Caps, src: ex.Src})
	}
	if r.corpus, err = unpackEntries(spec.Corpus); err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.runs.put(ref, r, keptRuns)
	w.mu.Unlock()
	return r, nil
}

// seen reads the chain of seen tasks whose last link is head ("": none): the links back to one
// it kept (or to the first), each checked to follow the one before.
func (w *workerState) seen(ctx context.Context, blobs queue.Blobs, head string) (*seenTasks, error) {
	var links []seenLink // from head back
	base := &seenTasks{desc: map[string]string{}}
	for ref := head; ref != ""; {
		w.mu.Lock()
		kept, ok := w.heads.get(ref)
		w.mu.Unlock()
		if ok {
			base = kept
			break
		}
		data, err := blobs.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		var l seenLink
		if err := json.Unmarshal(data, &l); err != nil {
			return nil, fmt.Errorf("link %s: %v", ref, err)
		}
		if (len(links) > 0 && l.N != links[len(links)-1].N-1) || l.N < 1 || (l.Prev == "") != (l.N == 1) {
			return nil, fmt.Errorf("link %s: task %d does not follow the chain", ref, l.N)
		}
		links = append(links, l)
		ref = l.Prev
	}
	if len(links) == 0 {
		return base, nil
	}
	if links[len(links)-1].N != len(base.entries)+1 {
		return nil, fmt.Errorf("the chain %s does not follow the tasks kept", head)
	}
	out := &seenTasks{entries: make([]*entry, len(base.entries), len(base.entries)+len(links)), desc: maps.Clone(base.desc)}
	copy(out.entries, base.entries)
	for k := len(links) - 1; k >= 0; k-- {
		es, err := unpackEntries([]entryJSON{links[k].Entry})
		if err != nil {
			return nil, err
		}
		out.entries = append(out.entries, es[0])
		out.desc[es[0].name] = links[k].Desc
	}
	w.mu.Lock()
	w.heads.put(head, out, keptHeads)
	w.mu.Unlock()
	return out, nil
}

// gen is the run as the attempt of a job reads it, with desc the descriptions of the tasks it has
// seen. It shares the run's decoded parts, which the attempt only reads.
func (r *workerRun) gen(desc map[string]string, pool *isolate.Pool, getenv func(string) string, log io.Writer) (*gen, error) {
	s := r.spec
	cfg, err := isolate.WorkerModel(s.Model, getenv)
	if err != nil {
		return nil, err
	}
	g := &gen{
		opts: Options{Capabilities: s.Capabilities, Seed: s.Seed, MaxRounds: s.MaxRounds, NearThreshold: s.NearThreshold, SkeletonDedup: s.SkeletonDedup,
			Model: cfg, StandInsOnly: s.StandInsOnly, RedTeam: s.RedTeam, Pool: pool, Log: log},
		system: s.System, mix: s.Mix, ref: parseReference(s.Reference), names: s.Names, support: s.Support, desc: desc, tax: r.tax, examples: r.examples, corpus: r.corpus,
	}
	if !s.StandInsOnly {
		ms := isolate.SettingsOf(cfg)
		g.models = &isolate.TaskModels{User: ms, Judge: ms, Base: cfg}
	}
	return g, nil
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
	return &outcome{rec: a.Record, src: a.Source, hash: a.Hash, sh: sh, desc: a.Description, runs: a.Runs}, nil
}

func packEntry(e *entry) entryJSON {
	return entryJSON{Name: e.name, Where: e.where, Attempt: e.attempt, Hash: e.hash, Shingles: packShingles(e.shingles), Skel: e.skel}
}

func unpackEntries(es []entryJSON) ([]*entry, error) {
	out := make([]*entry, 0, len(es))
	for _, e := range es {
		sh, err := unpackShingles(e.Shingles)
		if err != nil {
			return nil, fmt.Errorf("task %q: %v", e.Name, err)
		}
		out = append(out, &entry{name: e.Name, where: e.Where, attempt: e.Attempt, hash: e.Hash, shingles: sh, skel: e.Skel})
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
