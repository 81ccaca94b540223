package dsl

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperCorpus has two task files that load //lib/outer.star, which loads //lib/inner.star.
func helperCorpus() *Corpus {
	task := func(name string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`load("//lib/outer.star", "greeting")
task(name = "` + name + `", prompt = greeting, tools = ["fs"], verify = lambda ws, ep: check(True, "ok"))
`)}
	}
	return NewCorpus(fstest.MapFS{
		"a.star":         task("a"),
		"b.star":         task("b"),
		"lib/outer.star": {Data: []byte("load(\"//lib/inner.star\", \"word\")\ngreeting = word + \", please.\"\n")},
		"lib/inner.star": {Data: []byte("word = \"Hello\"\n")},
	}, ".", "c").WithLimits(Limits{Steps: DefaultLimits.Steps, Timeout: time.Minute})
}

// A helper whose load the wall-clock limit cut short is not kept: a later file that loads it
// loads it again, and loads. The helper that timed out is the one loaded directly, or one loaded
// by it (whose failure is then the outer helper's too).
func TestTimedOutHelperIsNotKept(t *testing.T) {
	for _, c := range []struct {
		name  string
		guard int // the Guard (in the order they start: a.star, outer, inner) whose limit fires at once
	}{{"the helper", 2}, {"the helper's helper", 3}} {
		t.Run(c.name, func(t *testing.T) {
			fw := useFakeWall(t)
			fire := wallAfter
			wallAfter = func(d time.Duration, f func()) wallTimer {
				timer := fire(d, f)
				if len(fw.timers) == c.guard {
					timer.(*fakeTimer).fire() // this load runs past its limit
				}
				return timer
			}
			corp := helperCorpus()
			a := corp.LoadFile(context.Background(), "a.star")
			require.Len(t, a.Diags, 1)
			assert.Equal(t, "load", a.Diags[0].Code)
			assert.Contains(t, a.Diags[0].Message, "timeout")

			b := corp.LoadFile(context.Background(), "b.star")
			require.Empty(t, b.Diags, "a timed-out load is not kept")
			assert.Equal(t, "Hello, please.", b.Tasks[0].Turns[0].User)
		})
	}
}

// A helper that fails by itself fails the same way every time: its outcome is kept.
func TestFailedHelperIsKept(t *testing.T) {
	corp := helperCorpus()
	corp.FS.(fstest.MapFS)["lib/inner.star"] = &fstest.MapFile{Data: []byte("word = 1 + \"x\"\n")}
	a := corp.LoadFile(context.Background(), "a.star")
	require.Len(t, a.Diags, 1)
	corp.FS.(fstest.MapFS)["lib/inner.star"] = &fstest.MapFile{Data: []byte("word = \"Hello\"\n")}
	b := corp.LoadFile(context.Background(), "b.star")
	require.Len(t, b.Diags, 1, "the first outcome is the corpus's")
	assert.Equal(t, a.Diags[0].Message, b.Diags[0].Message)
}

// A load that a cancelled context cut short is not kept either: here the context is cancelled
// as the first helper starts, so that the helper it loads does not run.
func TestCancelledHelperIsNotKept(t *testing.T) {
	fw := useFakeWall(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fire := wallAfter
	wallAfter = func(d time.Duration, f func()) wallTimer {
		timer := fire(d, f)
		if len(fw.timers) == 2 {
			cancel() // the outer helper's limit starts: the episode is interrupted
		}
		return timer
	}
	corp := helperCorpus()
	a := corp.LoadFile(ctx, "a.star")
	require.Len(t, a.Diags, 1)
	assert.Contains(t, a.Diags[0].Message, "canceled")
	corp.mu.Lock()
	kept := len(corp.modules)
	corp.mu.Unlock()
	assert.Zero(t, kept, "no helper is kept")
	b := corp.LoadFile(context.Background(), "b.star")
	require.Empty(t, b.Diags)
}

// A corpus's limits are fixed: WithLimits makes another corpus, which loads the files anew.
func TestWithLimits(t *testing.T) {
	t.Parallel()
	c := helperCorpus()
	assert.Same(t, c, c.WithLimits(c.Limits()))
	tight := c.WithLimits(Limits{Steps: 1})
	assert.NotSame(t, c, tight)
	assert.Equal(t, Limits{Steps: 1}, tight.Limits())
	assert.Equal(t, Limits{Steps: DefaultLimits.Steps, Timeout: time.Minute}, c.Limits(), "c keeps its own")
	f := tight.LoadFile(context.Background(), "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "step-limit", f.Diags[0].Code)
	require.Empty(t, c.LoadFile(context.Background(), "a.star").Diags, "what the other corpus loaded is not c's")
}
