package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
)

// loadRE finds the modules of load statements without parsing the file (the parent never runs
// or parses what it has not checked; a load this misses is reported by the worker).
var loadRE = regexp.MustCompile(`(?m)^[ \t]*load\(\s*["']([^"'\n]+)["']`)

// Support returns the files every task file of c may need beside itself: the root's
// capabilities.star and the .star files under lib/. Like every read of the corpus, it fails on
// a file or folder that a symbolic link leads out of the root.
func Support(c *dsl.Corpus) (map[string][]byte, error) {
	out := map[string][]byte{}
	if c.HasTaxonomy() {
		data, err := c.ReadSource(dsl.CapabilitiesFile)
		if err != nil {
			return nil, err
		}
		out[dsl.CapabilitiesFile] = data
	}
	lib := path.Join(c.Root, "lib")
	if err := c.CheckPath("lib"); err != nil {
		return nil, err
	}
	if _, err := fs.Stat(c.FS, lib); err != nil {
		return out, nil
	}
	err := fs.WalkDir(c.FS, lib, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".star") {
			return err
		}
		rel := strings.TrimPrefix(p, c.Root+"/")
		if c.Root == "." {
			rel = p
		}
		data, err := c.ReadSource(rel)
		if err != nil {
			return err
		}
		out[rel] = data
		return nil
	})
	return out, err
}

// FilesFor returns the files a job on the task file rel needs: support (from Support), the file
// and, transitively, the files it loads from elsewhere in the corpus.
func FilesFor(c *dsl.Corpus, support map[string][]byte, rel string) (map[string][]byte, error) {
	files := make(map[string][]byte, len(support)+1)
	for k, v := range support {
		files[k] = v
	}
	data, err := c.ReadSource(rel)
	if err != nil {
		return nil, err
	}
	files[rel] = data
	todo := []string{rel}
	for len(todo) > 0 {
		from := todo[0]
		todo = todo[1:]
		for _, m := range loadRE.FindAllSubmatch(files[from], -1) {
			p, err := dsl.ResolveLoad(from, string(m[1]))
			if err != nil {
				continue // the worker's loader reports it
			}
			if _, have := files[p]; have {
				continue
			}
			data, err := c.ReadSource(p)
			var esc *dsl.EscapeError
			switch {
			case errors.As(err, &esc):
				return nil, err
			case err == nil:
				files[p] = data
				todo = append(todo, p)
			}
		}
	}
	return files, nil
}

// TaskModels are models that answer for the simulated users and judges of the tasks a
// validation checks, beside their stand-ins (validate.Options.Models): the user and judge models
// an episode's Agent names, for a validation. A worker is given their settings only; their
// requests come back through this process, which sends each with Base's key and HTTP client to
// that model's base URL and nowhere else (ModelConfig), and waits here between their retries
// (Base.Sleep; Base.OnRetry is told), a time that does not count against the worker's limit.
type TaskModels struct {
	// User and Judge are the settings of the user and judge models (SettingsOf); nil leaves
	// that one to the stand-ins.
	User, Judge *ModelSettings
	// Base is the configuration the requests are sent with in this process: the key, the HTTP
	// client, the waits between retries (as Host.Model is for an episode's task models).
	Base modelagent.Config
}

func (m *TaskModels) agent() Agent { return Agent{User: m.User, Judge: m.Judge} }

// Models are the models in this process, for a validation here (validate.Options.Models); nil
// for nil.
func (m *TaskModels) Models() (*episode.Models, error) {
	if m == nil {
		return nil, nil
	}
	return NewModels(m.agent(), m.Base)
}

// serve answers a call of the models in a worker: a request of the user or judge model
// ("user.http", "judge.http"), or a wait between retries.
func (m *TaskModels) serve(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	role, method, inside := strings.Cut(method, ".")
	switch {
	case !inside && role == "sleep":
		return serveModel(ctx, m.Base, role, params)
	case !inside:
		return nil, fmt.Errorf("a validation serves no %q calls", role)
	}
	cfg, err := taskModel(m.agent(), role, m.Base)
	if err != nil {
		return nil, err
	}
	return serveModel(ctx, cfg, method, params)
}

// message passes the retries the worker tells of on to Base.OnRetry.
func (m *TaskModels) message(msg *message) {
	if msg.Retry != nil && m.Base.OnRetry != nil {
		m.Base.OnRetry(msg.Retry.Attempt, msg.Retry.Delay, errors.New(msg.Retry.Reason))
	}
}

// ValidateOptions tune ValidateCorpusWith.
type ValidateOptions struct {
	// Progress, when set, is called after each file with the count done and the total.
	Progress func(done, total int)
	// Models, when set, are the models the validator also runs the tasks against.
	Models *TaskModels
	// Runs are recorded runs the validator plays against the tasks they name
	// (validate.Options.Runs): each file's job carries those that may play against its tasks.
	Runs []*recorded.Run
}

// runsOf are the runs that may play against the tasks of the task file rel: those of its own
// sidecar, and those given for every task of their name (recorded.Run.For).
func runsOf(runs []*recorded.Run, rel string) []*recorded.Run {
	var out []*recorded.Run
	for _, r := range runs {
		if r.For == "" || r.For == rel {
			out = append(out, r)
		}
	}
	return out
}

// ValidateCorpus is validate.Corpus with every task file checked in a worker of the pool: the
// same report, in the same order (the taxonomy's own diagnostics first, then files in path
// order, then tasks in declaration order), with a task name that an earlier file already
// declared reported as a schema error on the later one.
func ValidateCorpus(ctx context.Context, p *Pool, c *dsl.Corpus, files []string, progress func(done, total int)) (*validate.Report, error) {
	return ValidateCorpusWith(ctx, p, c, files, ValidateOptions{Progress: progress})
}

// ValidateCorpusWith is ValidateCorpus with options: with Models, it is validate.Corpus with
// validate.Options.Models set to those models (their requests sent from this process).
func ValidateCorpusWith(ctx context.Context, p *Pool, c *dsl.Corpus, files []string, opts ValidateOptions) (*validate.Report, error) {
	progress := opts.Progress
	if files == nil {
		var err error
		if files, err = c.TaskFiles(); err != nil {
			return nil, err
		}
	}
	support, err := Support(c)
	if err != nil {
		return nil, err
	}
	results := make([]*Result, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, p.Workers())
	for i, rel := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			job, local, err := fileJob(ctx, c, support, rel)
			job.Models = opts.Models
			job.Runs = runsOf(opts.Runs, rel)
			switch {
			case err != nil:
				errs[i] = err
			case local != nil:
				results[i] = local
			default:
				results[i], errs[i] = p.Run(ctx, job)
			}
			if progress != nil {
				mu.Lock()
				done++
				progress(done, len(files))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return mergeResults(c, results), nil
}
