package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task file that loads a helper, which loads another.
var helperFiles = map[string]string{
	"t.star": `load("//lib/x.star", "seed_inbox")

def _solve(agent):
    agent.call("mail_read", id = "m1")
    agent.reply("Read.")

def _verify(ws, ep):
    check(len(ws.mail.messages(folder = "inbox")) == 1, "one mail")

task(name = "helped", prompt = "Read the mail.", tools = ["mail"], setup = seed_inbox, verify = _verify, solution = _solve)
`,
	"lib/x.star": `load("//lib/y.star", "SUBJECT")

def seed_inbox(ws):
    ws.mail.deliver(sender = "boss@acme.example", subject = SUBJECT, body = "Please ship order o1.")
`,
	"lib/y.star": "SUBJECT = \"Ship o1\"\n",
}

// corpusOf is a corpus of the files, with edits applied: a path to its new text ("" removes it).
func corpusOf(edits map[string]string) *dsl.Corpus {
	fsys := fstest.MapFS{}
	for k, v := range helperFiles {
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	for k, v := range edits {
		if v == "" {
			delete(fsys, k)
			continue
		}
		fsys[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return dsl.NewCorpus(fsys, ".", "c")
}

func corpusLoader(c *dsl.Corpus) trace.CorpusLoader {
	return func(file, name string) (*dsl.Task, *dsl.Corpus, error) {
		f := c.LoadFile(context.Background(), "t.star")
		if len(f.Diags) > 0 {
			return nil, nil, fmt.Errorf("%v", f.Diags)
		}
		return f.Tasks[0], c, nil
	}
}

// recordIn records the oracle episode of t.star of c with the sources of the start event.
func recordIn(t *testing.T, c *dsl.Corpus) []byte {
	t.Helper()
	f := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	p, d := episode.Prepare(context.Background(), f.Tasks[0], episode.Options{})
	require.Nil(t, d)
	start := trace.StartOf(p, f.Source, 0, "oracle")
	var err error
	start.Sources, err = trace.Sources(c, "t.star")
	require.NoError(t, err)
	var buf bytes.Buffer
	w := trace.NewWriter(&buf, start)
	require.NoError(t, w.End(p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{Observer: w})))
	return buf.Bytes()
}

func replayIn(t *testing.T, c *dsl.Corpus, data []byte) *trace.Result {
	t.Helper()
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	r, err := trace.ReplayCorpus(context.Background(), events, corpusLoader(c))
	require.NoError(t, err)
	return r
}

// The start event records the task file and every file it loads; replay names the one that
// changed, whether or not the episode still matches.
func TestChangedHelperFiles(t *testing.T) {
	t.Parallel()
	data := recordIn(t, corpusOf(nil))
	events, err := trace.Read(bytes.NewReader(data))
	require.NoError(t, err)
	var paths []string
	for _, s := range events[0].Body.(*trace.Start).Sources {
		paths = append(paths, s.Path)
		assert.Len(t, s.SHA256, 64)
	}
	assert.Equal(t, []string{"t.star", "lib/x.star", "lib/y.star"}, paths)

	t.Run("unchanged", func(t *testing.T) {
		r := replayIn(t, corpusOf(nil), data)
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.False(t, r.TaskChanged)
		assert.Empty(t, r.Warnings())
	})
	t.Run("a comment in a helper", func(t *testing.T) {
		r := replayIn(t, corpusOf(map[string]string{"lib/y.star": "# the subject\nSUBJECT = \"Ship o1\"\n"}), data)
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.True(t, r.TaskChanged)
		require.Len(t, r.Changed, 1)
		assert.Equal(t, "lib/y.star", r.Changed[0].Path)
		assert.False(t, r.Changed[0].Task)
		assert.Regexp(t, `^helper file lib/y\.star changed since the trace was recorded \(sha256 [0-9a-f]{12}… now [0-9a-f]{12}…\)$`, r.Warnings()[0])
	})
	t.Run("a helper that changes setup", func(t *testing.T) {
		r := replayIn(t, corpusOf(map[string]string{"lib/y.star": "SUBJECT = \"Ship o2\"\n"}), data)
		assert.True(t, r.TaskChanged)
		assert.Equal(t, []string{"helper file lib/y.star changed since the trace was recorded"}, []string{strings.SplitN(r.Warnings()[0], " (", 2)[0]})
		require.NotNil(t, r.Divergence)
		assert.Equal(t, 1, r.Divergence.Line)
		assert.Contains(t, r.Divergence.Diffs[0], "state after setup")
	})
	t.Run("a helper no longer loaded", func(t *testing.T) {
		x := strings.Replace(helperFiles["lib/x.star"], `load("//lib/y.star", "SUBJECT")`, `SUBJECT = "Ship o1"`, 1)
		r := replayIn(t, corpusOf(map[string]string{"lib/x.star": x}), data)
		assert.True(t, r.Matched(), "%v", r.Divergence)
		require.Len(t, r.Changed, 2)
		assert.Contains(t, r.Warnings()[0], "helper file lib/x.star changed")
		assert.Equal(t, "helper file lib/y.star was loaded when the trace was recorded, but is not now", r.Warnings()[1])
	})
	t.Run("a helper newly loaded", func(t *testing.T) {
		y := "load(\"//lib/z.star\", \"Z\")\nSUBJECT = \"Ship o1\" + Z\n"
		r := replayIn(t, corpusOf(map[string]string{"lib/y.star": y, "lib/z.star": "Z = \"\"\n"}), data)
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.Equal(t, "helper file lib/z.star is loaded now, but was not when the trace was recorded", r.Warnings()[1])
	})
	t.Run("an older trace", func(t *testing.T) {
		ls := lines(data)
		ls[0] = ls[0][:strings.Index(ls[0], `,"sources":`)] + "}\n"
		r := replayIn(t, corpusOf(map[string]string{"lib/y.star": "# edited\nSUBJECT = \"Ship o1\"\n"}), join(ls))
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.False(t, r.TaskChanged, "nothing says the helper changed")
		assert.Equal(t, []string{"the trace records no sources (an older engine, or a writer without the corpus): the files the task file loads were not checked"}, r.Warnings())
	})
	t.Run("an older trace of a file that loads nothing", func(t *testing.T) {
		c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(noFaults)}}, ".", "c")
		data := recordIn(t, c)
		ls := lines(data)
		ls[0] = ls[0][:strings.Index(ls[0], `,"sources":`)] + "}\n"
		r := replayIn(t, c, join(ls))
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.Empty(t, r.Warnings(), "nothing was left unchecked")
	})
	t.Run("a loader without the corpus", func(t *testing.T) {
		c := corpusOf(map[string]string{"lib/y.star": "# edited\nSUBJECT = \"Ship o1\"\n"})
		events, err := trace.Read(bytes.NewReader(data))
		require.NoError(t, err)
		r, err := trace.Replay(context.Background(), events, func(string, string) (*dsl.Task, []byte, error) {
			f := c.LoadFile(context.Background(), "t.star")
			return f.Tasks[0], f.Source, nil
		})
		require.NoError(t, err)
		assert.True(t, r.Matched(), "%v", r.Divergence)
		assert.False(t, r.TaskChanged)
		assert.Equal(t, []string{"the replay was not given the task's corpus: the 2 files the task file loads were not checked"}, r.Warnings())
	})
	t.Run("a helper that is gone", func(t *testing.T) {
		events, err := trace.Read(bytes.NewReader(data))
		require.NoError(t, err)
		c := corpusOf(map[string]string{"lib/y.star": ""})
		_, err = trace.ReplayCorpus(context.Background(), events, func(string, string) (*dsl.Task, *dsl.Corpus, error) {
			return corpusOf(nil).LoadFile(context.Background(), "t.star").Tasks[0], c, nil
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "c/lib/y.star")
	})
}
