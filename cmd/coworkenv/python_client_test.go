package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tasks the Python tests drive with the oracle's actions: a single-turn task, a two-turn
// task, and a task whose user is simulated; and the seed.
var pythonOracleTasks = []string{"fuel-surcharge-answer", "carrier-quote-award", "consult-vat-reverse-charge"}

const pythonOracleSeed = 7

// pythonAct is one action of the oracle as the Python tests send it: a call (Call, Arguments,
// and Content when the oracle saw no error) or a message (Reply).
type pythonAct struct {
	Call      string          `json:"call,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Content   *string         `json:"content,omitempty"`
	Reply     *string         `json:"reply,omitempty"`
}

// pythonOracle is what the oracle did in a task, and what came of it.
type pythonOracle struct {
	Task          string        `json:"task"`
	Seed          int64         `json:"seed"`
	Turns         int           `json:"turns"`
	SimulatedUser bool          `json:"simulated_user"`
	Tools         []string      `json:"tools"`
	User          string        `json:"user"` // the first user message
	Acts          [][]pythonAct `json:"acts"` // by turn; each turn's last act is its reply
	TurnRewards   []*float64    `json:"turn_rewards"`
	Calls         int           `json:"calls"`
	End           *trace.End    `json:"end"` // the verdict: the trace's end event
}

// TestPythonClient builds the coworkenv binary, starts `coworkenv serve` as a process and runs
// the Python client's tests (clients/python, standard library only) against it: the oracle's
// actions on three built-in tasks through the client and through the TRL adapter, whose rewards
// and verdicts must be the oracle's, and the client's error codes. Ctrl-C then stops the server,
// every session's trace ends, and the finished ones replay.
func TestPythonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs Python")
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the Python client's tests need it")
	}
	dir := t.TempDir()
	bin := buildPythonServeBinary(t, dir)

	oracle := filepath.Join(dir, "oracle.json")
	writePythonOracle(t, oracle)
	// the task dataset as `export tasks` ships it, for the TRL adapter to take as it is
	rows := filepath.Join(dir, "rows.jsonl")
	code, exported, errs := cli(t, append([]string{"export", "tasks", "--out", rows, "--seeds", "2"}, pythonOracleTasks...)...)
	require.Equal(t, 0, code, exported+errs)

	traces := filepath.Join(dir, "traces")
	const token = "py-t0k3n"
	srv := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--traces", traces)
	srv.Env = append(os.Environ(), serveTokenEnv+"="+token) // the token through the environment, as the docs advise
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	var serverErr bytes.Buffer
	srv.Stderr = &serverErr
	require.NoError(t, srv.Start())
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			srv.Process.Kill()
			<-exited
		}
	})

	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var url string
	select {
	case url = <-addr:
	case err := <-exited:
		stopped = true
		t.Fatalf("serve ended before it listened: %v\n%s", err, serverErr.String())
	case <-time.After(time.Minute):
		t.Fatalf("serve did not say where it listens within a minute\n%s", serverErr.String())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	py := exec.CommandContext(ctx, python, "-m", "unittest", "-v")
	py.Dir = filepath.Join("..", "..", "clients", "python")
	py.Env = append(os.Environ(),
		"COWORKENV_URL="+url,
		"COWORKENV_ORACLE="+oracle,
		"COWORKENV_TASK_ROWS="+rows,
		serveTokenEnv+"="+token,
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in the repository
		"PYTHONUNBUFFERED=1",
	)
	out, err := py.CombinedOutput()
	t.Logf("python3 -m unittest -v (clients/python):\n%s", out)
	require.NoError(t, err, "the Python tests failed (output above)")
	require.NotContains(t, string(out), "skipped 'set COWORKENV_URL", "the tests that need the server ran")
	require.NotContains(t, string(out), "skipped 'set COWORKENV_TASK_ROWS", "the test of export tasks' rows ran")

	// The Python tests delete their sessions but the one test_left_open leaves open for Ctrl-C.
	resp, err := http.Get(url + "/health")
	require.NoError(t, err)
	var health struct {
		Sessions int `json:"sessions"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&health))
	resp.Body.Close()
	assert.Equal(t, 1, health.Sessions, "the sessions still on the server: the one test_left_open leaves")

	// Ctrl-C: every session is closed, every trace ends, and the server exits 0.
	require.NoError(t, srv.Process.Signal(os.Interrupt))
	select {
	case err := <-exited:
		stopped = true
		require.NoError(t, err, "serve exits 0 on Ctrl-C\n%s", serverErr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop within 30s of Ctrl-C\n%s", serverErr.String())
	}
	assert.Contains(t, serverErr.String(), "closing every session")
	checkPythonTraces(t, traces)
}

// buildPythonServeBinary builds the command into dir and returns the binary's path.
func buildPythonServeBinary(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "coworkenv")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command(goTool, "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// writePythonOracle runs the oracle of each task in process and writes what a client must send
// to do what it did, and what came of it, for the Python tests.
func writePythonOracle(t *testing.T, path string) {
	t.Helper()
	files, err := corpus.Open().LoadAll(context.Background())
	require.NoError(t, err)
	tasks := map[string]*dsl.Task{}
	for _, f := range files {
		for _, task := range f.Tasks {
			tasks[task.Name] = task
		}
	}
	var out []pythonOracle
	for _, name := range pythonOracleTasks {
		task := tasks[name]
		require.NotNil(t, task, name)
		p, d := episode.Prepare(context.Background(), task, episode.Options{Seed: pythonOracleSeed})
		require.Nil(t, d, name)
		r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
		require.Nil(t, r.Err, name)
		require.True(t, r.Passed, name)
		o := pythonOracle{Task: name, Seed: pythonOracleSeed, Turns: len(task.Turns), User: r.Turns[0].User,
			Calls: len(r.Calls), End: trace.EndOf(r), Acts: make([][]pythonAct, len(r.Turns))}
		for _, turn := range task.Turns {
			o.SimulatedUser = o.SimulatedUser || turn.Sim != nil
		}
		for _, tool := range task.Tools {
			o.Tools = append(o.Tools, tool.Name)
		}
		for i, tr := range r.Turns {
			o.TurnRewards = append(o.TurnRewards, tr.Score)
			asks := tr.Asks
			if n := len(asks); n > 0 && asks[n-1].Said == tr.Reply {
				asks = asks[:n-1] // the engine's own exchange with the reply
			}
			reply := func(text string) pythonAct { return pythonAct{Reply: &text} }
			for k, c := range r.Calls {
				for len(asks) > 0 && asks[0].Calls <= k {
					o.Acts[i] = append(o.Acts[i], reply(asks[0].Said))
					asks = asks[1:]
				}
				if c.Turn == i {
					a := pythonAct{Call: c.Name, Arguments: json.RawMessage(jsonv.MustEncode(c.Args))}
					if !c.IsError {
						content := conversation.ResultContent(c.Content) // as the client is shown it
						a.Content = &content
					}
					o.Acts[i] = append(o.Acts[i], a)
				}
			}
			for _, x := range asks {
				o.Acts[i] = append(o.Acts[i], reply(x.Said))
			}
			o.Acts[i] = append(o.Acts[i], reply(tr.Reply))
		}
		out = append(out, o)
	}
	data, err := json.MarshalIndent(map[string]any{"tasks": out}, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// checkPythonTraces: every session's trace ends with its end event; a finished episode's trace
// (DIR/<id>.jsonl) replays against the built-in corpus without a divergence, and the oracle's
// tasks have finished, passed, at least once each through the client and the TRL adapter.
func checkPythonTraces(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	files, err := corpus.Open().LoadAll(context.Background())
	require.NoError(t, err)
	tasks := map[string]*dsl.Task{}
	for _, f := range files {
		for _, task := range f.Tasks {
			tasks[task.Name] = task
		}
	}
	c := corpus.Open()
	passed := map[string]int{}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		events, err := trace.Read(bytes.NewReader(data))
		require.NoError(t, err, "%s: the trace is complete", e.Name())
		require.NotEmpty(t, events, e.Name())
		last := events[len(events)-1]
		require.Equal(t, "end", last.Kind, "%s ends with its end event", e.Name())
		end := last.Body.(*trace.End)
		if strings.HasSuffix(e.Name(), ".partial") {
			// closed before it finished: deleted by the tests, or by Ctrl-C
			require.NotNil(t, end.Error, e.Name())
			assert.Equal(t, "interrupted", end.Error.Code, e.Name())
			continue
		}
		require.True(t, strings.HasSuffix(e.Name(), ".jsonl"), e.Name())
		r, err := trace.ReplayCorpus(context.Background(), events, func(file, name string) (*dsl.Task, *dsl.Corpus, error) {
			task, ok := tasks[name]
			if !ok {
				return nil, nil, fmt.Errorf("no task %q", name)
			}
			return task, c, nil
		})
		require.NoError(t, err, e.Name())
		assert.True(t, r.Matched(), "%s replays: %v", e.Name(), r.Divergence)
		if end.Passed {
			passed[events[0].Body.(*trace.Start).Task]++
		}
	}
	sort.Strings(names)
	t.Logf("traces: %s", strings.Join(names, " "))
	for _, name := range pythonOracleTasks {
		assert.GreaterOrEqual(t, passed[name], 2, "%s passed through the client and through the TRL adapter", name)
	}
}
