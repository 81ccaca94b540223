package isolate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/syntax"
)

// taskEpisode is an episode of the one task of src, as file t.star of a corpus shown as "gen".
func taskEpisode(src string, agent isolate.Agent) isolate.Episode {
	return isolate.Episode{Display: "gen", Files: map[string][]byte{"t.star": []byte(src)}, File: "t.star", Agent: agent, Seed: 3}
}

// inProcess runs the same episode in this process: its trace and result.
func inProcess(t *testing.T, ep isolate.Episode, model modelagent.Config) (string, *episode.Result) {
	t.Helper()
	c := dsl.NewCorpus(mapFS(ep.Files), ".", "gen")
	task, src, err := isolate.FindTask(context.Background(), c, "t.star", "move-todo")
	require.NoError(t, err)
	sources, err := trace.Sources(c, "t.star")
	require.NoError(t, err)
	var buf bytes.Buffer
	r, setup, err := isolate.RunEpisode(context.Background(), isolate.Run{Task: task, Source: src, Sources: sources, Seed: ep.Seed, Agent: ep.Agent, Model: model, Trace: &buf})
	require.NoError(t, err)
	require.Nil(t, setup)
	return buf.String(), r
}

// mapFS is a corpus's files as a file system.
func mapFS(files map[string][]byte) fstest.MapFS {
	m := fstest.MapFS{}
	for p, data := range files {
		m[p] = &fstest.MapFile{Data: data}
	}
	return m
}

// An episode in a worker writes the trace this process would write, byte for byte, with its
// prints and the task it runs; the worker's model agent talks to the endpoint through the pool,
// which sends the key.
func TestEpisodeInWorkerIsTheEpisodeHere(t *testing.T) {
	t.Parallel()
	p := newPool(t, isolate.Options{Workers: 1})
	src := strings.Replace(okTask, `def _solve(agent):`, "def _solve(agent):\n    print(\"solving\")", 1)

	ep := taskEpisode(src, isolate.Agent{Name: "oracle"})
	var got bytes.Buffer
	var begun isolate.TaskInfo
	var prints []string
	res, err := p.Episode(context.Background(), ep, isolate.Host{Trace: &got,
		Begin: func(ti isolate.TaskInfo) { begun = ti },
		Print: func(pos syntax.Position, msg string) { prints = append(prints, fmt.Sprintf("%s: %s", pos, msg)) }})
	require.NoError(t, err)
	want, r := inProcess(t, ep, modelagent.Config{})
	assert.Equal(t, want, got.String())
	assert.Equal(t, trace.EndOf(r), res.End)
	assert.True(t, res.End.Passed)
	assert.Nil(t, res.Err)
	assert.Equal(t, "", res.Stopped)
	assert.Equal(t, "move-todo", begun.Name)
	assert.Equal(t, 1, begun.Turns)
	assert.Equal(t, []string{"gen/t.star:9:10: solving"}, prints)

	srv := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if r.Rounds() == 0 {
			return chattest.Answer{Body: chattest.Calls("", chattest.Call("c1", "fs_move", `{"src":"/notes/todo.txt","dst":"/notes/done.txt"}`))}
		}
		return chattest.Answer{Body: chattest.Say("Moved it to /notes/done.txt.")}
	})
	model := modelagent.Config{Model: "m", BaseURL: srv.BaseURL(), APIKey: "sk-pool"}
	ep = taskEpisode(okTask, isolate.Agent{Name: "openai", Model: isolate.SettingsOf(model), System: "You help {address}."})
	got.Reset()
	res, err = p.Episode(context.Background(), ep, isolate.Host{Trace: &got, Model: model})
	require.NoError(t, err)
	want, _ = inProcess(t, ep, model)
	assert.Equal(t, want, got.String())
	assert.True(t, res.End.Passed)
	reqs := srv.Requests()
	require.Len(t, reqs, 4, "two requests from the worker, two from this process")
	for _, r := range reqs {
		assert.Equal(t, "Bearer sk-pool", r.Header.Get("Authorization"))
	}
	assert.EqualValues(t, 1, p.Started(), "one worker ran every episode")
}

// A model's retries go through the pool: a 503 is retried after the pool's wait, and the pool is
// told; a request the endpoint refuses for good ends the episode with model-error.
func TestEpisodeModelRetriesAndModelError(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		switch n := calls.Add(1); {
		case n == 1:
			return chattest.Error(http.StatusServiceUnavailable, "busy", "")
		case strings.Contains(fmt.Sprint(r.Messages), "refuse"):
			return chattest.Error(http.StatusBadRequest, "no such model", "invalid_request_error")
		}
		return chattest.Answer{Body: chattest.Say("Done.")}
	})
	var retries []string
	model := modelagent.Config{Model: "m", BaseURL: srv.BaseURL(), MaxRetries: 2, Backoff: time.Millisecond,
		Sleep:   func(ctx context.Context, d time.Duration) error { return nil },
		OnRetry: func(attempt int, delay time.Duration, reason error) { retries = append(retries, reason.Error()) }}
	p := newPool(t, isolate.Options{Workers: 1})
	ep := taskEpisode(okTask, isolate.Agent{Name: "openai", Model: isolate.SettingsOf(model)})
	res, err := p.Episode(context.Background(), ep, isolate.Host{Model: model})
	require.NoError(t, err)
	assert.Nil(t, res.Err, "the retry succeeded")
	assert.Equal(t, []string{"HTTP 503 Service Unavailable"}, retries)

	ep = taskEpisode(strings.Replace(okTask, "Please rename", "Please refuse to rename", 1), ep.Agent)
	res, err = p.Episode(context.Background(), ep, isolate.Host{Model: model})
	require.NoError(t, err)
	require.NotNil(t, res.Err)
	assert.Equal(t, episode.ModelError, res.Err.Code)
	assert.Contains(t, res.Err.Message, "HTTP 400 Bad Request: no such model")
	assert.Equal(t, episode.ModelError, res.End.Error.Code)
}

// A worker that stops in the middle of an episode costs that episode: its trace has the events
// so far and an end event with the diagnostic, and the next episode runs on a fresh worker.
func TestEpisodeStoppedWorker(t *testing.T) {
	if raceBuild {
		t.Skip("memory limits under the race detector")
	}
	bomb := strings.Replace(okTask, "def _solve(agent):", `def _grow(ws):
    x = []
    x.extend(range(1 << 40))
    return len(x)

def _hang(ws):
    x = [1]
    for i in range(8):
        x = [x] * 200
    return x == x

def _solve(agent):`, 1)
	bomb = strings.Replace(bomb, `tools = ["fs"],`, `tools = ["fs", tool(name = "grow", description = "grows", params = {}, impl = _grow),
             tool(name = "hang", description = "hangs", params = {}, impl = _hang)],`, 1)
	cases := []struct {
		tool, code string
		opts       isolate.Options
	}{
		// the memory limit is reached long before the time limit, on any machine
		{"grow", "memory-limit", isolate.Options{Workers: 1, MemoryLimit: 256 << 20, TimeLimit: 10 * time.Minute}},
		// the hang never ends: it is stopped at the time limit, however slow the machine (the
		// worker is warm, so the limit is not spent starting it)
		{"hang", "timeout", isolate.Options{Workers: 1, MemoryLimit: 2 << 30, TimeLimit: 2 * time.Second}},
	}
	for _, c := range cases {
		t.Run(c.code, func(t *testing.T) {
			src := strings.Replace(bomb, `agent.call("fs_move"`, fmt.Sprintf("agent.call(%q)\n    agent.call(\"fs_move\"", c.tool), 1)
			p := newPool(t, c.opts)
			warm, err := p.Episode(context.Background(), taskEpisode(okTask, isolate.Agent{Name: "oracle"}), isolate.Host{})
			require.NoError(t, err)
			require.True(t, warm.End.Passed)
			var got bytes.Buffer
			res, err := p.Episode(context.Background(), taskEpisode(src, isolate.Agent{Name: "oracle"}), isolate.Host{Trace: &got})
			require.NoError(t, err)
			assert.Equal(t, c.code, res.Stopped)
			require.NotNil(t, res.Err)
			assert.Equal(t, c.code, res.Err.Code)
			assert.Equal(t, "gen/t.star", res.Err.File)
			assert.Contains(t, res.Err.Message, "the episode")
			events, err := trace.Read(strings.NewReader(got.String()))
			require.NoError(t, err, "the trace so far is a whole trace")
			var kinds []string
			for _, e := range events {
				kinds = append(kinds, e.Kind)
			}
			assert.Equal(t, []string{"start", "user", "call", "end"}, kinds, "the call that never returned is the last event")
			end := events[len(events)-1].Body.(*trace.End)
			assert.Equal(t, c.code, end.Error.Code)
			assert.Equal(t, events[0].Body.(*trace.Start).State, end.State, "a call that did not return changed nothing")
			assert.False(t, end.Passed)
			assert.Equal(t, end, res.End)

			res2, err := p.Episode(context.Background(), taskEpisode(okTask, isolate.Agent{Name: "oracle"}), isolate.Host{})
			require.NoError(t, err)
			assert.True(t, res2.End.Passed, "the next episode runs")
			assert.EqualValues(t, 2, p.Started(), "on a fresh worker")
		})
	}
}

// An episode that cannot start says why, as run says it in this process.
func TestEpisodeThatCannotStart(t *testing.T) {
	t.Parallel()
	p := newPool(t, isolate.Options{Workers: 1})
	two := okTask + strings.Replace(okTask[strings.Index(okTask, "task("):], "move-todo", "move-again", 1)
	for src, want := range map[string]string{
		"task(\n": "gen/t.star:2:1: error[syntax]",
		two:       "gen/t.star declares 2 tasks (move-todo, move-again); name one as gen/t.star:NAME",
	} {
		_, err := p.Episode(context.Background(), taskEpisode(src, isolate.Agent{Name: "oracle"}), isolate.Host{})
		var se *isolate.StartError
		require.True(t, errors.As(err, &se), "%v", err)
		assert.Contains(t, se.Msg, want)
	}
	res, err := p.Episode(context.Background(), taskEpisode(strings.Replace(okTask, `ws.fs.write(`, `fail("no setup")`+"\n    ws.fs.write(", 1), isolate.Agent{Name: "oracle"}), isolate.Host{})
	require.NoError(t, err)
	require.NotNil(t, res.Setup)
	assert.Equal(t, "script-error", res.Setup.Code)
	assert.Contains(t, res.Setup.Message, "no setup")
}

// A replay in a worker gives the result of a replay here; one that runs out of time is stopped.
func TestReplayInWorker(t *testing.T) {
	p := newPool(t, isolate.Options{Workers: 1, TimeLimit: 2 * time.Second})
	ep := taskEpisode(okTask, isolate.Agent{Name: "oracle"})
	tr, _ := inProcess(t, ep, modelagent.Config{})
	res, err := p.Replay(context.Background(), isolate.Replay{Display: "gen", Files: ep.Files, File: "t.star", Trace: []byte(tr)})
	require.NoError(t, err)
	require.NotNil(t, res.Result)
	assert.True(t, res.Result.Matched())
	assert.Equal(t, "move-todo", res.Result.Task)

	hang := strings.Replace(okTask, `    agent.call("fs_move"`, "    x = [1]\n    for i in range(8):\n        x = [x] * 200\n    y = x == x\n    agent.call(\"fs_move\"", 1)
	res, err = p.Replay(context.Background(), isolate.Replay{Display: "gen", Files: map[string][]byte{"t.star": []byte(hang)}, File: "t.star", Trace: []byte(tr)})
	require.NoError(t, err)
	require.NotNil(t, res.Stopped)
	assert.Equal(t, "timeout", res.Stopped.Code)
	assert.Contains(t, res.Stopped.Message, "the replay ran longer than the isolated worker's limit of 2s")
}

// The worker's environment has no OPENAI_API_KEY: the key stays in the pool's process.
func TestWorkerNeverSeesTheKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	exe, err := os.Executable()
	require.NoError(t, err)
	p := newPool(t, isolate.Options{Workers: 1, Command: []string{exe, "__env_worker"}})
	res, err := p.Run(context.Background(), job(okTask))
	require.NoError(t, err)
	msg := res.Report.Tasks[0].Diagnostics[0].Message
	assert.Contains(t, msg, "panic: key=[]")
	assert.NotContains(t, msg, "sk-secret")
}

func BenchmarkWorkerStart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		p, err := isolate.NewPool(isolate.Options{Workers: 1})
		require.NoError(b, err)
		_, err = p.Run(context.Background(), isolate.Job{Files: map[string][]byte{"t.star": []byte("x = 1\n")}, Check: []string{"t.star"}, InfoOnly: true})
		require.NoError(b, err)
		p.Close()
	}
}
