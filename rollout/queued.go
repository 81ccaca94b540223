package rollout

// Queued rollouts (docs/scaling.md): RunQueued publishes the samples of a rollout as jobs on a
// queue (package queue) instead of running them, and workers anywhere (Handler, `coworkenv
// worker --queue URL`) run them in an isolate.Pool exactly as runIsolated does here and send
// back the trace. RunQueued writes each trace where a local run would, atomically, and fills the
// samples from it as it does for a resumed one.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// QueueName is the queue that rollouts and their workers share.
const QueueName = "rollout"

// JobKind is the kind of a rollout job.
const JobKind = "rollout"

// JobBody is what a worker needs to run one sample: the task file, the task, the sample's seed
// and the agent (Episode, without its files), the files the task file needs as refs of the
// queue's blob store (Files, by path), and where its trace goes. It holds no secret: a worker
// takes the model's key from its own environment.
type JobBody struct {
	Task    string            `json:"task"`  // the task's name: the trace is OUT/<task>/<index>.jsonl
	Index   int               `json:"index"` // the sample
	Episode isolate.Episode   `json:"episode"`
	Files   map[string]string `json:"files"` // the episode's files: path → blob ref (queue.PutFiles)
}

// QueueJobID is the id of the job of sample i of the task t: the SHA-256 of the hash of the
// files the worker is given, the task file and name, the sample, its seed and the run's agent
// configuration (the manifest's and the agent the worker makes). The same sample of the same
// files with the same settings always gets the same id, so publishing it again is harmless; a
// task whose files changed gets new ids.
func QueueJobID(ep *isolate.Episode, task string, i int, config *jsonv.Object) string {
	files := sha256.New()
	paths := make([]string, 0, len(ep.Files))
	for p := range ep.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(files, "%s\x00%s\x00", p, trace.FileSHA256(ep.Files[p]))
	}
	agent, _ := json.Marshal(ep.Agent)
	conf := ""
	if config != nil {
		conf = jsonv.MustEncode(config)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%x\x00%s\x00%s\x00%d\x00%d\x00%s\x00%s", files.Sum(nil), ep.File, task, i, ep.Seed, agent, conf)
	return JobKind + "-" + hex.EncodeToString(h.Sum(nil))
}

// RunQueued rolls out every task like Run, but runs no episode here: it stores each task's files
// in q's blob store once, publishes a job for each sample that has no current trace in Out and
// writes the traces the workers send back, each atomically to OUT/<task>/<sample>.jsonl, as they
// come. Every task must come with Isolated (workers run task files only). Resuming, the manifest and the checks are Run's. A sample whose
// job failed has no trace (not even a .partial: the worker keeps it) and the job's error; when
// ctx is done first, the samples still out are interrupted. Their jobs stay on the queue, and a
// rollout started again picks up their results. Options.Pool, Jobs and NewAgent are not used.
func RunQueued(ctx context.Context, tasks []Task, opts Options, q *queue.Queue) (*Result, error) {
	if opts.Samples < 1 {
		return nil, fmt.Errorf("samples: %d is not a positive number", opts.Samples)
	}
	if opts.Agent == "" {
		return nil, errors.New("rollout: no agent")
	}
	res, toRun, err := plan(tasks, opts, func(t Task) error {
		if t.Isolated == nil {
			return fmt.Errorf("rollout: task %s is not isolated; a queued rollout runs every episode in workers", t.Task.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var todo []queue.Job
	bySample := map[string]*Sample{}
	refs := map[int]map[string]string{} // the blob refs of each task's files
	for _, j := range toRun {
		t, s := tasks[j.t], &res.Tasks[j.t].Samples[j.i]
		ep := *t.Isolated
		ep.Seed, ep.Agent, ep.Split = s.Seed, opts.AgentSpec, t.Split
		id := QueueJobID(&ep, t.Task.Name, j.i, opts.Config)
		if refs[j.t] == nil {
			if refs[j.t], err = q.PutFiles(ctx, ep.Files); err != nil {
				return nil, fmt.Errorf("rollout: task %s: %w", t.Task.Name, err)
			}
		}
		ep.Files = nil
		body, err := json.Marshal(JobBody{Task: t.Task.Name, Index: j.i, Episode: ep, Files: refs[j.t]})
		if err != nil {
			return nil, err
		}
		bySample[id] = s
		todo = append(todo, queue.Job{ID: id, Kind: JobKind, Body: body})
	}

	report := reporter(res, opts)

	if len(todo) > 0 {
		collect(ctx, q, todo, bySample, report, opts.Queue)
	}

	res.count()
	return res, nil
}

// collect publishes the jobs and records their results in their samples until every job has
// one or ctx is done (queue.Produce, which tells progress how far the jobs have got). A sample
// left without a result is interrupted (ctx is done) or failed with the queue's error.
func collect(ctx context.Context, q *queue.Queue, jobs []queue.Job, bySample map[string]*Sample, report func(*Sample), progress func(queue.Progress)) {
	done := map[string]bool{}
	qerr := q.Produce(ctx, queue.Produce{Jobs: jobs, Progress: progress, OnResult: func(r queue.Result) ([]queue.Job, error) {
		done[r.JobID] = true
		s := bySample[r.JobID]
		record(s, r)
		report(s)
		return nil, nil
	}})
	// the samples without a result, in the order of the jobs
	for _, j := range jobs {
		if done[j.ID] {
			continue
		}
		s := bySample[j.ID]
		switch {
		case ctx.Err() != nil:
			s.Err, s.Code, s.Interrupted = "interrupted before its worker's result came back", episode.Interrupted, true
		case qerr != nil:
			s.Err = "queue: " + qerr.Error()
		default:
			s.Err = "queue: no result"
		}
		report(s)
	}
}

// diagCode finds the code of a diagnostic in an error's text ("error[model-error]: ...").
var diagCode = regexp.MustCompile(`\b(?:error|warning)\[([a-z0-9-]+)\]: `)

// record fills s from its job's result: the trace is written to s.Path (atomically) and read
// back as a resumed one is; a failed job leaves the sample failed with the job's error, and
// the code of the diagnostic it names.
func record(s *Sample, r queue.Result) {
	if !r.OK {
		s.Err = r.Error
		if m := diagCode.FindStringSubmatch(r.Error); m != nil {
			s.Code = m[1]
			s.Interrupted = m[1] == episode.Interrupted
		}
		return
	}
	events, err := trace.Read(bytes.NewReader(r.Body))
	if err != nil {
		s.Err = fmt.Sprintf("the trace the worker sent cannot be read: %v", err)
		return
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		s.Err = unwrapPath(err).Error()
		return
	}
	if err := writeAtomic(s.Path, r.Body); err != nil {
		s.Err = err.Error()
		return
	}
	FillSample(s, events)
}

// Handler runs rollout jobs for queue.Work: each job's episode runs in pool, with the files its
// body names read from the queue's blobs (Job.Blobs), as a local isolated sample does
// (runIsolated), and the job's answer is its trace. A model agent's
// requests and those of the task's user and judge models go out with the key in getenv
// (OPENAI_API_KEY, and OPENAI_BASE_URL for a model without a base URL). A job whose episode
// does not start, whose setup fails, whose worker stops (memory-limit, timeout, crash) or whose
// model fails for good fails with the diagnostic; the queue delivers it again up to its max
// deliver.
func Handler(pool *isolate.Pool, getenv func(string) string) queue.Handler {
	return func(ctx context.Context, job queue.Job) ([]byte, error) {
		body, err := queue.Decode[JobBody](job, JobKind)
		if err != nil {
			return nil, err
		}
		if body.Episode.Files, err = queue.GetFiles(ctx, job.Blobs, body.Files); err != nil {
			return nil, fmt.Errorf("rollout job: %w", err)
		}
		model, err := HostModel(body.Episode.Agent, getenv)
		if err != nil {
			return nil, err
		}
		var tr bytes.Buffer
		res, err := pool.Episode(ctx, body.Episode, isolate.Host{Trace: &tr, Model: model})
		switch {
		case err != nil:
			return nil, err
		case res.Setup != nil:
			return nil, errors.New(res.Setup.String())
		case res.Stopped != "" || (res.Err != nil && episode.Inconclusive(res.Err.Code)):
			return nil, errors.New(res.Err.String())
		}
		return tr.Bytes(), nil
	}
}

// HostModel is the model configuration a worker's pool serves agent a's requests with
// (isolate.Host.Model): the agent model's settings for a model agent, with the key and base URL
// taken from getenv as a local run takes them (isolate.WorkerModel). The values of extra headers
// never travel with a job: the requests go out without them.
func HostModel(a isolate.Agent, getenv func(string) string) (modelagent.Config, error) {
	return isolate.WorkerModel(a.Model, getenv)
}
