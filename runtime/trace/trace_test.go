package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/conformance"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task with mail, files, a task-defined tool over ws.db, two turns and faults.
const taskSrc = `
def _setup(ws):
    ws.mail.address = "me@acme.example"
    ws.fs.write("/stock.csv", "sku,count\nA,3\nB,5\n")
    ws.db.insert("orders", {"id": "o1", "sku": "A", "qty": 2, "status": "open"})
    ws.mail.deliver(sender = "boss@acme.example", subject = "Ship o1", body = "Please ship order o1.", date = "2026-01-05T08:00:00Z")

def _ship(ws, order):
    o = ws.db.get("orders", order)
    if o == None:
        fail("no order " + order)
    ws.db.update("orders", order, status = "shipped")
    return {"order": order, "status": "shipped"}

SHIP = tool(name = "ship_order", description = "Ship an order.", params = {"order": param("string")}, impl = _ship)

def _solve1(agent):
    agent.call("mail_read", id = "m1")
    agent.call("ship_order", order = "o1")
    agent.call("mail_reply", id = "m1", body = "Shipped o1.")
    agent.reply("Shipped.")

def _verify1(ws, ep):
    check(ws.db.get("orders", "o1")["status"] == "shipped", "o1 shipped")
    check(len(ws.mail.messages(folder = "sent")) == 1, "boss told")

def _before2(ws):
    ws.fs.write("/stock.csv", "sku,count\nA,1\nB,5\n")

def _solve2(agent):
    agent.call("fs_read", path = "/stock.csv")
    agent.call("fs_write", path = "/report.md", content = "A: 1 left\n")
    agent.reply("Report written.")

def _verify2(ws, ep):
    check(ws.fs.exists("/report.md") and "1" in ws.fs.read("/report.md"), "report")

task(
    name = "ship-and-report",
    turns = [
        turn(user = "Handle the boss's mail.", verify = _verify1, solution = _solve1),
        turn(user = lambda ws, ep: "Thanks! You said: " + ep.reply + " Now write a stock report.", before = _before2, verify = _verify2, solution = _solve2, advance = "1h"),
    ],
    tools = ["mail", "fs", SHIP],
    setup = _setup,
    faults = {"rate": 0.4, "tools": ["ship_order", "mail_reply", "fs_write"], "seed": 3},
)
`

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
	f := newFixture(taskSrc)
	data := record(t, f.task(t), f.src, 0)
	assert.Contains(t, string(data), `"fault":true`, "the fixture should hit a fault")
	r := replay(t, f, data)
	assert.True(t, r.Matched(), "%v", r.Divergence)
	assert.False(t, r.TaskChanged)
}

// Two runs, and many concurrent runs, of the same task and seed give byte-identical traces.
func TestTracesAreByteIdentical(t *testing.T) {
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

func TestTamperedTraces(t *testing.T) {
	// without faults, so that each tampering has one clear consequence
	f := newFixture(noFaults)
	orig := lines(record(t, f.task(t), f.src, 0))
	check := func(t *testing.T, ls []string, line int, event, tool string) *trace.Divergence {
		t.Helper()
		r := replay(t, f, join(ls))
		require.NotNil(t, r.Divergence, "the tampering goes unnoticed")
		assert.Equal(t, line, r.Divergence.Line, r.Divergence.String())
		assert.Equal(t, event, r.Divergence.Event, r.Divergence.String())
		assert.Equal(t, tool, r.Divergence.Tool, r.Divergence.String())
		return r.Divergence
	}
	t.Run("changed result", func(t *testing.T) {
		ls := append([]string(nil), orig...)
		i := find(t, ls, 0, `"event":"result"`, `Ship o1`)
		ls[i] = strings.Replace(ls[i], "Ship o1", "Ship o2", 1)
		d := check(t, ls, i+1, "result", "mail_read")
		assert.Contains(t, strings.Join(d.Diffs, "\n"), `content.subject: recorded "Ship o2", replayed "Ship o1"`)
	})
	t.Run("changed argument", func(t *testing.T) {
		ls := append([]string(nil), orig...)
		i := find(t, ls, 0, `"event":"call"`, `"fs_write"`)
		ls[i] = strings.Replace(ls[i], "/report.md", "/other.md", 1)
		d := check(t, ls, i+2, "result", "fs_write")
		assert.Contains(t, strings.Join(d.Diffs, "\n"), `content.path: recorded "/report.md", replayed "/other.md"`)
	})
	t.Run("dropped read", func(t *testing.T) {
		ls := append([]string(nil), orig...)
		i := find(t, ls, 0, `"event":"call"`, `"mail_read"`)
		ls = append(ls[:i:i], ls[i+2:]...)
		d := check(t, ls, i+2, "result", "ship_order")
		assert.Contains(t, d.Diffs[0], "call id: recorded call_2, replayed call_1")
	})
	t.Run("dropped write", func(t *testing.T) {
		ls := append([]string(nil), orig...)
		i := find(t, ls, 0, `"event":"call"`, `"mail_reply"`)
		ls = append(ls[:i:i], ls[i+2:]...)
		// the reply follows; the turn's verifier then scores differently
		check(t, ls, i+2, "turn_end", "")
	})
	t.Run("reordered calls", func(t *testing.T) {
		ls := append([]string(nil), orig...)
		i := find(t, ls, 0, `"event":"call"`, `"fs_read"`)
		require.Contains(t, ls[i+2], `"fs_write"`)
		ls[i], ls[i+1], ls[i+2], ls[i+3] = ls[i+2], ls[i+3], ls[i], ls[i+1]
		check(t, ls, i+2, "result", "fs_write")
	})
	t.Run("changed task file", func(t *testing.T) {
		changed := newFixture(strings.Replace(noFaults, `A,3\nB,5`, `A,4\nB,5`, 1))
		r := replay(t, changed, join(orig))
		assert.True(t, r.TaskChanged)
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

var noFaults = strings.Replace(taskSrc, `faults = {"rate": 0.4, "tools": ["ship_order", "mail_reply", "fs_write"], "seed": 3},`, "", 1)

func TestReadErrorsNameTheLine(t *testing.T) {
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
