package isolate_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/internal/queuetest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/queue"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startValidateQueue starts a server with the validate queue and workers running
// ValidateHandler on p, whose environment holds the key "sk-worker".
func startValidateQueue(t *testing.T, p *isolate.Pool, workers int) *queuetest.Workers {
	return queuetest.Start(t, isolate.ValidateQueue, workers, isolate.ValidateHandler(p, func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-worker"
		}
		return ""
	}))
}

// queuedCorpus has a taxonomy, a task that loads a helper that loads another, a task name
// declared twice, a task with a capability the taxonomy lacks and a file that does not load.
func queuedCorpus() *dsl.Corpus {
	return dsl.NewCorpus(fstest.MapFS{
		"capabilities.star": {Data: []byte(`capability(name = "files.edit", description = "edit files")` + "\n")},
		"lib/util.star":     {Data: []byte("load(\"//lib/more.star\", \"PATH\")\nTODO = PATH\n")},
		"lib/more.star":     {Data: []byte("PATH = \"/notes/todo.txt\"\n")},
		"a/one.star":        {Data: []byte(strings.Replace(okTask, "prompt =", "capabilities = [\"files.edit\"],\n    prompt =", 1))},
		"b/two.star":        {Data: []byte("load(\"//lib/util.star\", \"TODO\")\n" + strings.Replace(okTask, `"/notes/todo.txt"`, "TODO", 2))},
		"b/three.star":      {Data: []byte(strings.Replace(okTask, "capabilities", "x", 1) + "\ntask(name = \"z\", prompt = \"p\", tools = [], capabilities = [\"nope\"])\n")},
		"c/broken.star":     {Data: []byte("def _setup(ws)\n    pass\n")},
	}, ".", "ext")
}

func reportText(r *validate.Report, verbose bool) string {
	var b strings.Builder
	r.WriteText(&b, verbose)
	return b.String()
}

func guarded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A queued validation gives the report a local isolated one gives, text and JSON, for a folder
// and for one of its files given again (the same job, checked once); checked again, nothing is
// run again.
func TestValidateQueuedMatchesLocal(t *testing.T) {
	t.Parallel()
	p := newPool(t, isolate.Options{Workers: 2})
	srcs := []isolate.Source{{Corpus: queuedCorpus()}, {Corpus: queuedCorpus(), Files: []string{"b/two.star"}}}
	var want []*validate.Report
	for _, s := range srcs {
		rep, err := isolate.ValidateCorpusWith(context.Background(), p, s.Corpus, s.Files, isolate.ValidateOptions{})
		require.NoError(t, err)
		want = append(want, rep)
	}
	require.Contains(t, reportJSON(want[0]), "already declared at ext/a/one.star:12:5")
	require.True(t, want[0].Failed(false))

	vq := startValidateQueue(t, p, 3)
	var last queue.Progress
	got, err := isolate.ValidateQueued(guarded(t), vq.Q, srcs, isolate.QueuedValidateOptions{Progress: func(p queue.Progress) { last = p }})
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i := range srcs {
		assert.Equal(t, reportJSON(want[i]), reportJSON(got[i]))
		assert.Equal(t, reportText(want[i], false), reportText(got[i], false))
		assert.Equal(t, reportText(want[i], true), reportText(got[i], true))
	}
	assert.Equal(t, int64(4), vq.Runs(), "one job per file")
	assert.Equal(t, queue.Progress{Total: 4, Done: 4}, last)

	again, err := isolate.ValidateQueued(guarded(t), vq.Q, srcs[:1], isolate.QueuedValidateOptions{})
	require.NoError(t, err)
	assert.Equal(t, reportJSON(want[0]), reportJSON(again[0]))
	assert.Equal(t, int64(4), vq.Runs(), "the same files are not checked again")
}

// With task models, the worker sends their requests with the key of its own environment, and
// the report is the local one's.
func TestValidateQueuedWithModels(t *testing.T) {
	t.Parallel()
	user, judge := withholding(t), fairJudge(t)
	tm := &isolate.TaskModels{
		User:  isolate.SettingsOf(modelagent.Config{Model: "user-model", BaseURL: user.BaseURL(), MaxRetries: -1}),
		Judge: isolate.SettingsOf(modelagent.Config{Model: "judge-model", BaseURL: judge.BaseURL(), MaxRetries: -1}),
		Base:  modelagent.Config{APIKey: "sk-producer"},
	}
	p := newPool(t, isolate.Options{Workers: 2})
	want, err := isolate.ValidateCorpusWith(context.Background(), p, modelsCorpus(), nil, isolate.ValidateOptions{Models: tm})
	require.NoError(t, err)
	asked := len(user.Requests()) + len(judge.Requests())
	require.NotZero(t, asked)

	vq := startValidateQueue(t, p, 2)
	got, err := isolate.ValidateQueued(guarded(t), vq.Q, []isolate.Source{{Corpus: modelsCorpus()}}, isolate.QueuedValidateOptions{Models: tm})
	require.NoError(t, err)
	assert.Equal(t, reportJSON(want), reportJSON(got[0]))
	require.Equal(t, 2*asked, len(user.Requests())+len(judge.Requests()), "the same runs asked the models in the queue's worker and here")
	for _, reqs := range [][]*chattest.Request{user.Requests(), judge.Requests()} {
		for i, r := range reqs {
			key := "Bearer sk-producer" // the local validation's first, then the queued one's
			if i >= len(reqs)/2 {
				key = "Bearer sk-worker"
			}
			assert.Equal(t, key, r.Header.Get("Authorization"))
		}
	}
}
