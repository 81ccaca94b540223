package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/conformance"
	"github.com/coworkenv/coworkenv/internal/tasktest"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskSrc is a task with mail, files, a task-defined tool over ws.db, two turns and faults.
const taskSrc = tasktest.ShipAndReport

type fixture struct {
	corpus *dsl.Corpus
	src    []byte
}

func newFixture(src string) *fixture {
	return &fixture{corpus: dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "c"), src: []byte(src)}
}

func (f *fixture) task(t testing.TB) *dsl.Task {
	file := f.corpus.LoadFile(context.Background(), "t.star")
	require.Empty(t, file.Diags)
	return file.Tasks[0]
}

func (f *fixture) loader(file, name string) (*dsl.Task, []byte, error) {
	lf := f.corpus.LoadFile(context.Background(), "t.star")
	for _, t := range lf.Tasks {
		if t.Name == name {
			return t, f.src, nil
		}
	}
	return nil, nil, fmt.Errorf("no task %s", name)
}

func record(t testing.TB, task *dsl.Task, src []byte, seed int64) []byte {
	p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: seed})
	require.Nil(t, d)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, trace.StartOf(p, src, seed, "oracle"))
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{Observer: w})
	require.NoError(t, w.End(r))
	require.Nil(t, r.Err)
	return buf.Bytes()
}

func replay(t *testing.T, f *fixture, data []byte) *trace.Result {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	r, err := trace.Replay(context.Background(), events, f.loader)
	require.NoError(t, err)
	return r
}

func TestRecordAndReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(taskSrc)
	data := record(t, f.task(t), f.src, 0)
	assert.Contains(t, string(data), `"fault":true`, "the fixture should hit a fault")
	r := replay(t, f, data)
	assert.True(t, r.Matched(), "%v", r.Divergence)
	assert.False(t, r.TaskChanged)
}

// Two runs, and many concurrent runs, of the same task and seed give byte-identical traces.
func TestTracesAreByteIdentical(t *testing.T) {
	t.Parallel()
	f := newFixture(taskSrc)
	task := f.task(t)
	want := record(t, task, f.src, 7)
	assert.Equal(t, want, record(t, task, f.src, 7))
	assert.NotEqual(t, want, record(t, task, f.src, 8), "another seed gives another trace")
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = record(t, task, f.src, 7)
		}()
	}
	wg.Wait()
	for i := range got {
		assert.Equal(t, want, got[i], "goroutine %d", i)
	}
}

// lines splits a trace; join puts it back.
func lines(data []byte) []string {
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}
func join(ls []string) []byte {
	s := strings.Join(ls, "")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s)
}

// find returns the index of the n-th line containing all fragments.
func find(t *testing.T, ls []string, n int, frags ...string) int {
	for i, l := range ls {
		ok := true
		for _, fr := range frags {
			ok = ok && strings.Contains(l, fr)
		}
		if ok {
			if n == 0 {
				return i
			}
			n--
		}
	}
	t.Fatalf("no line with %v", frags)
	return -1
}

// tamper replays the trace ls and wants a divergence at the line (1-based) of the event kind,
// with tool the divergence names.
func tamper(t *testing.T, f *fixture, ls []string, line int, event, tool string) *trace.Divergence {
	t.Helper()
	r := replay(t, f, join(ls))
	require.NotNil(t, r.Divergence, "the tampering goes unnoticed")
	assert.Equal(t, line, r.Divergence.Line, r.Divergence.String())
	assert.Equal(t, event, r.Divergence.Event, r.Divergence.String())
	assert.Equal(t, tool, r.Divergence.Tool, r.Divergence.String())
	return r.Divergence
}

// edit is a copy of ls with line i rewritten: from becomes to, which must be there.
func edit(t *testing.T, ls []string, i int, from, to string) []string {
	t.Helper()
	require.Contains(t, ls[i], from)
	out := append([]string(nil), ls...)
	out[i] = strings.Replace(out[i], from, to, 1)
	return out
}

// drop is a copy of ls without the n lines from i.
func drop(ls []string, i, n int) []string {
	return append(ls[:i:i], ls[i+n:]...)
}

// An oracle trace is replayed by running the oracle again: every call and reply it records must
// be the oracle's.
func TestTamperedTraces(t *testing.T) {
	t.Parallel()
	// without faults, so that each tampering has one clear consequence
	f := newFixture(noFaults)
	orig := lines(record(t, f.task(t), f.src, 0))
	t.Run("changed result", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"result"`, `Ship o1`)
		d := tamper(t, f, edit(t, orig, i, "Ship o1", "Ship o2"), i+1, "result", "mail_read")
		assert.Contains(t, strings.Join(d.Diffs, "\n"), `content.subject: recorded "Ship o2", replayed "Ship o1"`)
	})
	t.Run("changed argument", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"call"`, `"fs_write"`)
		d := tamper(t, f, edit(t, orig, i, "/report.md", "/other.md"), i+1, "call", "fs_write")
		assert.Contains(t, strings.Join(d.Diffs, "\n"), `args.path: recorded "/other.md", replayed "/report.md"`)
	})
	t.Run("changed reply", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"reply"`, `"Shipped."`)
		d := tamper(t, f, edit(t, orig, i, `"Shipped."`, `"Shipped, and refunded the customer."`), i+1, "reply", "")
		assert.Equal(t, []string{`content: recorded "Shipped, and refunded the customer.", replayed "Shipped."`}, d.Diffs)
	})
	t.Run("changed reply of noop", func(t *testing.T) {
		p, d := episode.Prepare(context.Background(), f.task(t), episode.Options{})
		require.Nil(t, d)
		var buf bytes.Buffer
		w := trace.NewWriter(&buf, trace.StartOf(p, f.src, 0, "noop"))
		require.NoError(t, w.End(p.Run(context.Background(), episode.Noop{}, episode.RunOptions{Observer: w})))
		ls := lines(buf.Bytes())
		require.True(t, replay(t, f, join(ls)).Matched())
		i := find(t, ls, 0, `"event":"reply"`)
		tamper(t, f, edit(t, ls, i, `"Done."`, `"I shipped o1 and told the boss."`), i+1, "reply", "")
	})
	t.Run("dropped read", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"call"`, `"mail_read"`)
		ls := drop(orig, i, 2)
		d := tamper(t, f, ls, i+1, "call", "ship_order")
		assert.Contains(t, d.Diffs, `name: recorded "ship_order", replayed "mail_read"`)
	})
	t.Run("dropped write", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"call"`, `"mail_reply"`)
		ls := drop(orig, i, 2)
		d := tamper(t, f, ls, i+1, "reply", "")
		assert.Equal(t, []string{"event: recorded reply, replayed call (turn 0)"}, d.Diffs)
	})
	t.Run("reordered calls", func(t *testing.T) {
		ls := append([]string(nil), orig...)
		i := find(t, ls, 0, `"event":"call"`, `"fs_read"`)
		require.Contains(t, ls[i+2], `"fs_write"`)
		ls[i], ls[i+1], ls[i+2], ls[i+3] = ls[i+2], ls[i+3], ls[i], ls[i+1]
		tamper(t, f, ls, i+1, "call", "fs_write")
	})
	t.Run("changed seed", func(t *testing.T) {
		// the task draws nothing from ws.rand and injects no faults: only rand shows the seed
		require.NotContains(t, noFaults, "rand")
		require.NotContains(t, noFaults, "faults")
		d := tamper(t, f, edit(t, orig, 0, `"seed":0,`, `"seed":5,`), 1, "start", "")
		require.Len(t, d.Diffs, 1)
		assert.Contains(t, d.Diffs[0], "random source after setup (rand): recorded ")
	})
	t.Run("changed seed, older trace", func(t *testing.T) {
		// without rand, nothing the trace records depends on the seed of this task: the replay
		// matches and says that it could not check the seed
		ls := edit(t, orig, 0, `"seed":0,`, `"seed":5,`)
		ls[0] = regexp.MustCompile(`,"rand":"[0-9a-f]{16}"`).ReplaceAllString(ls[0], "")
		r := replay(t, f, join(ls))
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.Contains(t, strings.Join(r.Notes, "\n"), "a changed seed of a task that draws nothing and injects no faults cannot show")
	})
	t.Run("changed clock", func(t *testing.T) {
		d := tamper(t, f, edit(t, orig, 0, `"now":"2026-01-05T09:00:00Z"`, `"now":"2026-01-06T09:00:00Z"`), 1, "start", "")
		assert.Equal(t, []string{`clock after setup (now): recorded "2026-01-06T09:00:00Z", replayed "2026-01-05T09:00:00Z"`}, d.Diffs)
	})
	t.Run("changed tool schema", func(t *testing.T) {
		d := tamper(t, f, edit(t, orig, 0, `"Ship an order."`, `"Ship an order, and refund it."`), 1, "start", "")
		assert.Contains(t, d.Diffs[0], `tools[`)
	})
	t.Run("changed turn of a call", func(t *testing.T) {
		i := find(t, orig, 0, `"event":"call"`, `"mail_read"`)
		tamper(t, f, edit(t, orig, i, `"turn":0`, `"turn":1`), i+1, "call", "mail_read")
	})
	t.Run("changed task file", func(t *testing.T) {
		changed := newFixture(strings.Replace(noFaults, `A,3\nB,5`, `A,4\nB,5`, 1))
		r := replay(t, changed, join(orig))
		assert.True(t, r.TaskChanged)
		require.Len(t, r.Changed, 1)
		assert.True(t, r.Changed[0].Task)
		assert.Contains(t, r.Warnings()[0], "task file c/t.star changed since the trace was recorded")
		require.NotNil(t, r.Divergence, "the replay still runs and finds the changed setup")
		assert.Equal(t, 1, r.Divergence.Line)
		assert.Contains(t, r.Divergence.Diffs[0], "state after setup")
	})
	t.Run("truncated file", func(t *testing.T) {
		data := join(orig)
		_, err := trace.Read(bytes.NewReader(data[:len(data)/2]))
		require.Error(t, err)
		assert.Regexp(t, `^line \d+: the trace is truncated`, err.Error())
		_, err = trace.Read(bytes.NewReader(join(orig[:len(orig)-1])))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not end")
	})
}

// The trace of an agent that cannot be run again is re-issued as recorded: its calls are checked
// through their results and ids, and a note says so.
func TestTamperedScriptedTraces(t *testing.T) {
	t.Parallel()
	f := newFixture(noFaults)
	orig := lines(record(t, f.task(t), f.src, 0))
	orig[0] = strings.Replace(orig[0], `"agent":"oracle"`, `"agent":"custom"`, 1)
	r := replay(t, f, join(orig))
	assert.True(t, r.Matched(), "%v", r.Divergence)
	assert.Contains(t, strings.Join(r.Notes, "\n"), `the agent "custom" cannot be run again`)

	i := find(t, orig, 0, `"event":"call"`, `"mail_read"`)
	d := tamper(t, f, drop(orig, i, 2), i+1, "call", "ship_order")
	assert.Equal(t, "id: recorded call_2, replayed call_1 (a call before it is missing, extra or moved)", d.Diffs[0])
}

var noFaults = strings.Replace(taskSrc, `faults = {"rate": 0.4, "tools": ["ship_order", "mail_reply", "fs_write"], "seed": 3},`, "", 1)

func TestReadErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	f := newFixture(taskSrc)
	orig := lines(record(t, f.task(t), f.src, 0))
	cases := map[string]func([]string) []string{
		"not JSON":      func(ls []string) []string { ls[2] = "{oops\n"; return ls },
		"unknown event": func(ls []string) []string { ls[2] = strings.Replace(ls[2], `"event":"`, `"event":"x`, 1); return ls },
		"missing field": func(ls []string) []string { ls[2] = strings.Replace(ls[2], `"turn":`, `"tern":`, 1); return ls },
		"not an object": func(ls []string) []string { ls[2] = "[1]\n"; return ls },
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			ls := mod(append([]string(nil), orig...))
			_, err := trace.Read(bytes.NewReader(join(ls)))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "line 3: "), err.Error())
		})
	}
}

func FuzzRead(f *testing.F) {
	fx := newFixture(taskSrc)
	data := record(f, fx.task(f), fx.src, 0)
	f.Add(data)
	f.Add(data[:100])
	f.Add([]byte("{\"event\":\"start\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = trace.Read(bytes.NewReader(b)) // must not panic
	})
}

// Every valid task of the conformance suite: its oracle trace replays exactly.
func TestConformanceTracesReplay(t *testing.T) {
	t.Parallel()
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("the conformance suite is not there")
	}
	c := dsl.NewCorpus(os.DirFS(dir), ".", dir)
	files, err := c.LoadAll(context.Background())
	require.NoError(t, err)
	n := 0
	for _, file := range files {
		for _, task := range file.Tasks {
			p, d := episode.Prepare(context.Background(), task, episode.Options{})
			if d != nil {
				continue // invalid/setup_errors.star
			}
			var buf bytes.Buffer
			w := trace.NewWriter(&buf, trace.StartOf(p, file.Source, 0, "oracle"))
			res := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{Observer: w})
			require.NoError(t, w.End(res))
			events, err := trace.Read(&buf)
			require.NoError(t, err, task.Name)
			src := file.Source
			r, err := trace.Replay(context.Background(), events, func(string, string) (*dsl.Task, []byte, error) { return task, src, nil })
			require.NoError(t, err)
			assert.True(t, r.Matched(), "%s: %v", task.Name, r.Divergence)
			n++
		}
	}
	assert.Greater(t, n, 30)
}
