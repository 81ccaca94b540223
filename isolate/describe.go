package isolate

import (
	"context"

	"github.com/coworkenv/coworkenv/dsl"
)

// DescribeFile describes the tasks of the task file rel of c (Describe, without the setup text):
// in a worker of p, or, with p nil, in this process (for a corpus validated in this process). A
// file that does not load has none.
func DescribeFile(ctx context.Context, p *Pool, c *dsl.Corpus, rel string) ([]TaskInfo, error) {
	if p == nil {
		f := c.LoadFile(ctx, rel)
		var out []TaskInfo
		for _, t := range f.Tasks {
			out = append(out, Describe(ctx, t, c.Limits(), false))
		}
		return out, nil
	}
	support, err := Support(c)
	if err != nil {
		return nil, err
	}
	l, err := LoadFile(ctx, p, c, support, rel)
	if err != nil {
		return nil, err
	}
	return l.Tasks, nil
}

// Loaded is a task file loaded in a worker: the files it needs, the tasks it declares, and the
// diagnostics that say why it does not load.
type Loaded struct {
	// Files are the files a job on the task file needs (FilesFor); nil when it cannot be read.
	Files map[string][]byte
	Tasks []TaskInfo
	// Diags are the file's diagnostics: it does not load, cannot be read, or stopped its worker
	// (memory-limit, timeout, crash). A file with diagnostics declares no task.
	Diags []dsl.Diagnostic
}

// LoadFile loads the task file rel of c in a worker of p (support is Support(c)) and describes
// its tasks (Describe, without the setup text). An error is a job that could not run.
func LoadFile(ctx context.Context, p *Pool, c *dsl.Corpus, support map[string][]byte, rel string) (*Loaded, error) {
	job, local, err := fileJob(ctx, c, support, rel)
	if err != nil {
		return nil, err
	}
	if local != nil {
		l := &Loaded{}
		for _, tr := range local.Report.Tasks {
			l.Diags = append(l.Diags, tr.Diagnostics...)
		}
		return l, nil
	}
	job.InfoOnly = true
	res, err := p.Run(ctx, job)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Files: job.Files, Tasks: res.Tasks, Diags: res.Diags}
	if res.Stopped != "" {
		for _, tr := range res.Report.Tasks {
			l.Diags = append(l.Diags, tr.Diagnostics...)
		}
		l.Tasks = nil
	}
	if len(l.Diags) > 0 {
		l.Tasks = nil
	}
	return l, nil
}
