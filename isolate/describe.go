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
	job, local, err := fileJob(ctx, c, support, rel)
	if err != nil || local != nil {
		return nil, err
	}
	job.InfoOnly = true
	res, err := p.Run(ctx, job)
	if err != nil {
		return nil, err
	}
	return res.Tasks, nil
}
