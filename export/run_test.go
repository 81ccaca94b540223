package export

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memSink is a Sink that keeps what it is given; skip is its kind's rule, fail makes Add fail.
type memSink struct {
	skip              func(*Episode) string
	fail              error
	added             []string // the paths added, and their system messages
	committed, aborts int
}

func (s *memSink) Skip(e *Episode) string {
	if s.skip == nil {
		return ""
	}
	return s.skip(e)
}

func (s *memSink) Add(e *Episode, system string) error {
	if s.fail != nil {
		return s.fail
	}
	s.added = append(s.added, e.Path+" "+system)
	return nil
}

func (s *memSink) Commit() error { s.committed++; return nil }
func (s *memSink) Abort()        { s.aborts++ }

// writeTrace runs agent on the flaky task and writes its trace, with the system message system,
// to dir/name.
func writeTrace(t *testing.T, dir, name string, agent episode.Agent, system string) string {
	t.Helper()
	task, src := loadTask(t, flakyTask)
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	var buf bytes.Buffer
	start := trace.StartOf(p, src, 0, agent.Name())
	start.System = system
	w := trace.NewWriter(&buf, start)
	require.NoError(t, w.End(p.Run(context.Background(), agent, episode.RunOptions{Observer: w})))
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// Run reads every trace, leaves out what cannot be read, what every kind and the sink's kind
// leave out, and what the replay leaves out (counting those it could not check), writes the rest
// with their system messages, and commits; each trace left out is told.
func TestRunLeavesOutAndWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oracle := writeTrace(t, dir, "oracle.jsonl", episode.Oracle{}, "")
	model := writeTrace(t, dir, "model.jsonl", modelLike{}, "S")
	down := writeTrace(t, dir, "down.jsonl", modelDown{}, "S")
	edited := writeTrace(t, dir, "edited.jsonl", modelLike{}, "S")
	gone := writeTrace(t, dir, "gone.jsonl", modelLike{}, "S")
	broken := filepath.Join(dir, "broken.jsonl")
	require.NoError(t, os.WriteFile(broken, []byte("{not a trace\n"), 0o644))

	sink := &memSink{skip: func(e *Episode) string {
		if e.Path == oracle {
			return "not a model's episode"
		}
		return ""
	}}
	var told []string
	var progress [][2]int
	sum, err := Run(context.Background(), []string{oracle, model, down, broken, edited, gone}, sink, RunOptions{
		Verify: func(ctx context.Context, data []byte, e *Episode) (string, string, bool) {
			switch e.Path {
			case edited:
				return SkipDiverged, "event 3", false
			case gone:
				return "not verifiable", "the task file is not there", true
			}
			return "", "", false
		},
		Progress:     func(done, kept int) { progress = append(progress, [2]int{done, kept}) },
		OnUnreadable: func(path string, err error) { told = append(told, "unreadable "+filepath.Base(path)) },
		OnLeftOut:    func(path, why, detail string) { told = append(told, why+" "+filepath.Base(path)+": "+detail) },
	})
	require.NoError(t, err)
	assert.Equal(t, []string{model + " S"}, sink.added, "the model's episode, with its recorded system message")
	assert.Equal(t, 1, sink.committed)
	assert.Equal(t, 0, sink.aborts)
	assert.Equal(t, 6, sum.Traces)
	assert.Equal(t, 1, sum.Kept)
	assert.Equal(t, 1, sum.Unreadable)
	assert.Equal(t, 2, sum.LeftOut)
	assert.Equal(t, 1, sum.Unverified)
	assert.True(t, sum.Failed())
	reasons, n := sum.Reasons()
	assert.Equal(t, 4, n)
	assert.Equal(t, []string{"1 " + SkipDiverged, "1 inconclusive (model-error)", "1 not a model's episode", "1 not verifiable"}, reasons)
	assert.Equal(t, []string{"unreadable broken.jsonl", SkipDiverged + " edited.jsonl: event 3", "not verifiable gone.jsonl: the task file is not there"}, told)
	assert.Equal(t, [][2]int{{0, 0}, {1, 0}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}, progress)
}

// A write that fails, or ctx done during a replay, aborts the sink: nothing is written.
func TestRunAbortsOnAFailedWriteOrAnInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := writeTrace(t, dir, "model.jsonl", modelLike{}, "S")
	sink := &memSink{fail: errors.New("disk full")}
	_, err := Run(context.Background(), []string{model}, sink, RunOptions{})
	assert.EqualError(t, err, "disk full")
	assert.Equal(t, 1, sink.aborts)
	assert.Equal(t, 0, sink.committed)

	ctx, cancel := context.WithCancel(context.Background())
	sink = &memSink{}
	_, err = Run(ctx, []string{model, model}, sink, RunOptions{Verify: func(context.Context, []byte, *Episode) (string, string, bool) {
		cancel()
		return "", "", false
	}})
	assert.ErrorIs(t, err, ErrInterrupted)
	assert.Equal(t, 1, sink.aborts)
	assert.Empty(t, sink.added)
}
