package serve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/serve"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadSessions is the size of the load test: as many live sessions as the issue asks one
// process to hold.
const loadSessions = 1000

// loadTask is a built-in multi-turn task whose oracle calls tools in both turns.
const loadTask = "carrier-quote-award"

// 1,000 sessions live at once, each mid-episode: every one is created and given its first
// action before any goes on, then all finish concurrently; every score equals the same
// episode run in process. The server's bound holds: one more session is refused while they live.
func TestThousandLiveSessions(t *testing.T) {
	// not in parallel: a corpus-wide or load test, it keeps both cores busy on its own
	if testing.Short() {
		t.Skip("the load test runs 1,000 episodes")
	}
	_, tasks := builtin()
	task := tasks[loadTask]
	require.NotNil(t, task)
	const seeds = 4 // a few seeds, so that episodes differ where the task draws from ws.rand
	type plan struct {
		acts [][]act
		want *episode.Result
	}
	plans := make([]plan, seeds)
	for s := range plans {
		plans[s].acts, plans[s].want = oracleActs(t, task, int64(s))
	}
	srv, c := newServer(t, serve.Options{MaxSessions: loadSessions, TraceDir: t.TempDir()})
	// more idle connections than Go keeps by default, so that 1,000 clients reuse theirs
	c.http.Transport.(*http.Transport).MaxIdleConnsPerHost = 64

	ids := make([]string, loadSessions)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // requests in flight: the test bounds its own load
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			cr := c.create(loadTask, int64(i%seeds))
			ids[i] = cr.ID
			first := plans[i%seeds].acts[0][0]
			status, _, data := c.send(cr.ID, first)
			assert.Equal(t, http.StatusOK, status, "%s", data)
		}()
	}
	wg.Wait()
	require.False(t, t.Failed())
	status, data := c.do("POST", "/sessions", map[string]any{"task": loadTask, "seed": 0}, nil)
	assert.Equal(t, http.StatusTooManyRequests, status, "%s", data)
	assert.Equal(t, "too_many_sessions", errorCode(t, data))

	results := make([]*session.Result, loadSessions)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			acts := plans[i%seeds].acts
			var last session.Step
			for turn, as := range acts {
				for k, a := range as {
					if turn == 0 && k == 0 {
						continue // sent above
					}
					status, st, data := c.send(ids[i], a)
					if !assert.Equal(t, http.StatusOK, status, "%s", data) {
						return
					}
					last = st
				}
			}
			results[i] = last.Result
		}()
	}
	wg.Wait()
	for i, r := range results {
		want := plans[i%seeds].want
		if assert.NotNil(t, r, "session %d", i) {
			assert.Equal(t, want.Score, r.Score, "session %d", i)
			assert.Equal(t, want.Passed, r.Passed, "session %d", i)
			assert.Equal(t, want.FinalState, r.State, "session %d", i)
		}
	}
	srv.Close()
}

// BenchmarkLiveSessions holds 1,000 sessions mid-episode and reports the memory they take, in
// all and per session (the heap after a collection, before and after).
func BenchmarkLiveSessions(b *testing.B) {
	_, tasks := builtin()
	task := tasks[loadTask]
	acts, _ := oracleActs(b, task, 0)
	for b.Loop() {
		b.StopTimer()
		srv, c := newServer(b, serve.Options{MaxSessions: loadSessions})
		before := heap()
		b.StartTimer()
		for range loadSessions {
			cr := c.create(loadTask, 0)
			c.send(cr.ID, acts[0][0])
		}
		b.StopTimer()
		after := heap()
		b.ReportMetric(float64(after-before)/loadSessions, "B/session")
		b.ReportMetric(float64(after-before)/(1<<20), "MiB/1000-sessions")
		srv.Close()
		b.StartTimer()
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// stepTimes runs n tool calls of one session through step and reports the median and the 99th
// percentile of their times (a new session each 49 calls: max_calls_per_turn is 50).
func stepTimes(b *testing.B, create func() func() error) {
	var times []time.Duration
	step := create()
	n := 0
	for b.Loop() {
		if n == 49 {
			b.StopTimer()
			step, n = create(), 0
			b.StartTimer()
		}
		t0 := time.Now()
		if err := step(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
		n++
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "µs-p50")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "µs-p99")
}

// BenchmarkStepInProcess is one tool call of a session through runtime/session, in process: the
// engine's own cost, the baseline of the HTTP figure.
func BenchmarkStepInProcess(b *testing.B) {
	_, tasks := builtin()
	task := tasks[loadTask]
	var s *session.Session
	stepTimes(b, func() func() error {
		if s != nil {
			s.Close()
		}
		var err error
		s, err = session.Create(context.Background(), task, 0, session.Options{Trace: io.Discard})
		if err != nil {
			b.Fatal(err)
		}
		return func() error {
			_, err := s.Call("", "mail_list", `{"folder": "inbox"}`)
			return err
		}
	})
	s.Close()
}

// BenchmarkStepHTTP is the same call through `serve` over HTTP on the loopback.
func BenchmarkStepHTTP(b *testing.B) {
	_, c := newServer(b, serve.Options{MaxSessions: 4})
	call := act{name: "mail_list", args: jsonv.NewObject("folder", "inbox")}
	var id string
	stepTimes(b, func() func() error {
		if id != "" {
			c.do("DELETE", "/sessions/"+id, nil, nil)
		}
		id = c.create(loadTask, 0).ID
		return func() error {
			if status, _, data := c.send(id, call); status != http.StatusOK {
				return fmt.Errorf("%d %s", status, data)
			}
			return nil
		}
	})
}

// BenchmarkCreateSession is sessions created (and closed) per second over HTTP.
func BenchmarkCreateSession(b *testing.B) {
	_, c := newServer(b, serve.Options{MaxSessions: 4})
	for b.Loop() {
		id := c.create(loadTask, 0).ID
		c.do("DELETE", "/sessions/"+id, nil, nil)
	}
}

// BenchmarkStepWebSocket is the same call over the OpenEnv WebSocket protocol (a step message
// and its observation).
func BenchmarkStepWebSocket(b *testing.B) {
	s := newOpenEnvServer(b, serve.Options{MaxSessions: 4})
	c := s.dial(b, "")
	stepTimes(b, func() func() error {
		observation(b, c.roundTrip(reset(loadTask, 0)))
		return func() error {
			m := c.roundTrip(step(map[string]any{"type": "call_tool", "tool_name": "mail_list", "arguments": map[string]any{"folder": "inbox"}}))
			if m.Type != "observation" {
				return fmt.Errorf("answer %s", m.Type)
			}
			return nil
		}
	})
}
