package isolate

// Queued validations (docs/scaling.md): ValidateQueued publishes one job per task file on a
// queue (package queue) instead of checking the files in a pool here; workers anywhere
// (ValidateHandler, `coworkenv worker --queue URL`) check each in a worker process as
// ValidateCorpusWith does, and ValidateQueued puts their reports together as ValidateCorpusWith
// does, so the report is the same.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
)

// ValidateQueue is the queue of queued validations, and the kind of its jobs.
const ValidateQueue = "validate"

// ValidateJob is the body of a validate job: one task file to check, with the files it needs
// (FilesFor) as refs of the queue's blob store, and the settings of the models that answer for
// its simulated users and judges (nil: their stand-ins). It holds no secret: a worker sends the
// models' requests with the key of its own environment.
type ValidateJob struct {
	Display string            `json:"display"` // how the corpus root is shown in diagnostics
	File    string            `json:"file"`    // the task file, root-relative; a key of Files
	Files   map[string]string `json:"files"`   // path → blob ref (queue.PutFiles)
	User    *ModelSettings    `json:"user,omitempty"`
	Judge   *ModelSettings    `json:"judge,omitempty"`
	// Runs are the recorded runs that may play against the file's tasks (Job.Runs).
	Runs []*recorded.Run `json:"runs,omitempty"`
}

// validateAnswer is the body of a validate job's result: the file's report (its JSON, as a
// worker process sends it) and its tasks.
type validateAnswer struct {
	Report json.RawMessage `json:"report"`
	Tasks  []TaskInfo      `json:"tasks"`
}

// Source is a corpus and the task files of it to check (nil: every task file), with the
// recorded runs played against its tasks (ValidateOptions.Runs; they travel with the jobs).
type Source struct {
	Corpus *dsl.Corpus
	Files  []string
	Runs   []*recorded.Run
}

// QueuedValidateOptions tune ValidateQueued.
type QueuedValidateOptions struct {
	// Models, when set, are the models the files are also checked against: their settings
	// (User and Judge) travel with the jobs, never Base.
	Models *TaskModels
	// Progress, when set, is told how far the jobs have got (queue.Produce.Progress).
	Progress func(queue.Progress)
}

// ValidateQueued is ValidateCorpusWith of each source, with each task file checked by a worker
// of the queue q: one job per task file (kind ValidateQueue), whose files go to q's blob store
// and whose ID is a hash of the job (the files' hashes, the display path, the models'
// settings), so a file checked again with the same content is not checked twice while the queue
// remembers the job. It returns the report of each source, the same as ValidateCorpusWith's. A file that cannot be read is reported here, as
// ValidateCorpusWith does. A job that fails (after the queue's deliveries) is an error, as a
// job the pool cannot run is for ValidateCorpusWith; so is ctx done before every result came.
func ValidateQueued(ctx context.Context, q *queue.Queue, srcs []Source, opts QueuedValidateOptions) ([]*validate.Report, error) {
	type slot struct{ src, file int }
	results := make([][]*Result, len(srcs))
	var jobs []queue.Job
	pending := map[string][]slot{} // job ID → the files it checks
	specs := map[string]Job{}      // job ID → the job, to read its answer
	files := make([][]string, len(srcs))
	for i, s := range srcs {
		c := s.Corpus
		files[i] = s.Files
		if files[i] == nil {
			var err error
			if files[i], err = c.TaskFiles(); err != nil {
				return nil, err
			}
		}
		support, err := Support(c)
		if err != nil {
			return nil, err
		}
		results[i] = make([]*Result, len(files[i]))
		for k, rel := range files[i] {
			job, local, err := fileJob(ctx, c, support, rel)
			switch {
			case err != nil:
				return nil, err
			case local != nil:
				results[i][k] = local
				continue
			}
			refs, err := q.PutFiles(ctx, job.Files)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			body := ValidateJob{Display: job.Display, File: rel, Files: refs, Runs: runsOf(s.Runs, rel)}
			if opts.Models != nil {
				body.User, body.Judge = opts.Models.User, opts.Models.Judge
			}
			data, err := json.Marshal(body)
			if err != nil {
				return nil, err
			}
			id := queue.JobID(ValidateQueue, data)
			if _, have := pending[id]; !have {
				jobs = append(jobs, queue.Job{ID: id, Kind: ValidateQueue, Body: data})
				specs[id] = job
			}
			pending[id] = append(pending[id], slot{i, k})
		}
	}
	err := q.Produce(ctx, queue.Produce{Jobs: jobs, Progress: opts.Progress, OnResult: func(r queue.Result) ([]queue.Job, error) {
		slots := pending[r.JobID]
		if len(slots) == 0 {
			return nil, nil
		}
		rel := files[slots[0].src][slots[0].file]
		if !r.OK {
			return nil, fmt.Errorf("validating %s: the job failed after %d deliveries: %s", rel, r.Deliveries, r.Error)
		}
		res, err := readValidateAnswer(r.Body, specs[r.JobID])
		if err != nil {
			return nil, fmt.Errorf("validating %s: %v", rel, err)
		}
		for _, s := range slots {
			results[s.src][s.file] = res
		}
		return nil, nil
	}})
	if err != nil {
		return nil, err
	}
	reps := make([]*validate.Report, len(srcs))
	for i, s := range srcs {
		reps[i] = mergeResults(s.Corpus, results[i])
	}
	return reps, nil
}

// readValidateAnswer reads the result of a validate job as the pool reads a worker's answer.
func readValidateAnswer(data []byte, job Job) (*Result, error) {
	var a validateAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("the worker's answer is not readable: %v", err)
	}
	return decodeResult(&response{Report: a.Report, Tasks: a.Tasks}, job)
}

// ValidateHandler runs validate jobs for queue.Work: each job's file is checked in a worker
// process of p, as ValidateCorpusWith checks it, and the answer is its report and tasks. The
// models of a job's settings send their requests from this process with the key in getenv
// (OPENAI_API_KEY). A job that cannot run (a body that is not a validate job, a pool that does
// not start its worker) fails; the queue delivers it again up to its max deliver. A file that
// stops its worker (memory-limit, timeout, crash) is not a failure: its report says so.
func ValidateHandler(p *Pool, getenv func(string) string) queue.Handler {
	return func(ctx context.Context, job queue.Job) ([]byte, error) {
		body, err := queue.Decode[ValidateJob](job, ValidateQueue)
		if err != nil {
			return nil, err
		}
		if _, ok := body.Files[body.File]; !ok || body.File == "" {
			return nil, errors.New("validate job: it does not carry the file it names")
		}
		files, err := queue.GetFiles(ctx, job.Blobs, body.Files)
		if err != nil {
			return nil, fmt.Errorf("validate job: %w", err)
		}
		j := Job{Display: body.Display, Files: files, Check: []string{body.File}, Runs: body.Runs}
		if body.User != nil || body.Judge != nil {
			base, err := WorkerModel(nil, getenv)
			if err != nil {
				return nil, err
			}
			j.Models = &TaskModels{User: body.User, Judge: body.Judge, Base: base}
		}
		res, err := p.Run(ctx, j)
		if err != nil {
			return nil, err
		}
		return json.Marshal(validateAnswer{Report: json.RawMessage(jsonv.MustEncode(res.Report.JSON())), Tasks: res.Tasks})
	}
}

// WorkerModel is the configuration a queue worker sends the requests of the model of settings
// s with (nil s: a configuration that only holds the key): s, with the key from getenv
// (OPENAI_API_KEY) and, when s has no base URL, OPENAI_BASE_URL, as a local run takes them. The
// values of extra headers never travel with a job: the requests go out without them.
func WorkerModel(s *ModelSettings, getenv func(string) string) (modelagent.Config, error) {
	var cfg modelagent.Config
	if s != nil {
		var err error
		if cfg, err = s.config(); err != nil {
			return cfg, err
		}
		cfg.HostHeaders = nil
	}
	return modelagent.FromEnv(cfg, getenv), nil
}

// fileJob is the job that checks the task file rel of c in a worker, or, for a file that cannot
// be read (a link out of the root), its report made here: that load diagnostic, and nothing
// runs to make it.
func fileJob(ctx context.Context, c *dsl.Corpus, support map[string][]byte, rel string) (Job, *Result, error) {
	job := Job{Display: c.Display, Check: []string{rel}}
	if _, err := c.ReadSource(rel); err != nil {
		rep, err := validate.Corpus(ctx, c, []string{rel}, validate.Options{Jobs: 1})
		if err != nil {
			return job, nil, err
		}
		return job, &Result{Report: rep, Tasks: []TaskInfo{}}, nil
	}
	var err error
	job.Files, err = FilesFor(c, support, rel)
	return job, nil, err
}

// mergeResults puts the results of the task files of c together into one report, in the order
// of the files: the taxonomy's own diagnostics first, then the files' tasks in declaration
// order, with a task name that an earlier file already declared reported as a schema error on
// the later one.
func mergeResults(c *dsl.Corpus, results []*Result) *validate.Report {
	rep := &validate.Report{}
	taxPath := c.DisplayPath(dsl.CapabilitiesFile)
	var taxEntry *validate.TaskReport
	type declared struct {
		file      string
		line, col int
	}
	first := map[string]declared{}
	var body []*validate.TaskReport
	for _, res := range results {
		info := map[string]TaskInfo{}
		for _, ti := range res.Tasks {
			info[ti.Name] = ti
		}
		for _, tr := range res.Report.Tasks {
			if tr.Task == "" && tr.File == taxPath {
				if taxEntry == nil {
					taxEntry = tr
				}
				continue
			}
			if tr.Task != "" {
				ti := info[tr.Task]
				if prev, dup := first[tr.Task]; dup {
					d := dsl.NewDiag("schema", fmt.Sprintf("task: name: %q is already declared at %s:%d:%d", tr.Task, prev.file, prev.line, prev.col))
					d.File, d.Line, d.Col = ti.File, ti.Line, ti.Col
					tr = &validate.TaskReport{Task: tr.Task, File: tr.File, Diagnostics: []dsl.Diagnostic{d}, Source: tr.Source}
				} else {
					first[tr.Task] = declared{ti.File, ti.Line, ti.Col}
				}
			}
			body = append(body, tr)
		}
	}
	if taxEntry != nil {
		rep.Add(taxEntry)
	}
	for _, tr := range body {
		rep.Add(tr)
	}
	return rep
}
