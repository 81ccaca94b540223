package dsl_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const okTask = `
def _setup(ws):
    ws.fs.write("/a.txt", "hi")

def _verify(ws, ep):
    check(ws.fs.exists("/b.txt"), "b exists")

def _solve(agent):
    agent.call("fs_write", path = "/b.txt", content = "x")
    agent.reply("done")

task(name = "t1", prompt = "Copy a.", tools = ["fs"], setup = _setup, verify = _verify, solution = _solve)
`

func corpusOf(files map[string]string) *dsl.Corpus {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v)}
	}
	return dsl.NewCorpus(m, ".", "c")
}

// load loads the file rel; a file that runs but declares no task (a script these tests run for
// its top-level code) has its no-task diagnostic dropped.
func load(t *testing.T, files map[string]string, rel string) *dsl.File {
	t.Helper()
	return dropNoTask(corpusOf(files).LoadFile(context.Background(), rel))
}

func dropNoTask(f *dsl.File) *dsl.File {
	if len(f.Diags) == 1 && f.Diags[0].Code == "no-task" {
		f.Diags = nil
	}
	return f
}

// A task file that is empty or never calls task() does not load: its one diagnostic says so.
func TestNoTask(t *testing.T) {
	for src, want := range map[string]string{
		"":                            "the file is empty",
		"\n  \n# a comment\n":         "the file declares no task",
		"X = 1\ndef f():\n    pass\n": "the file declares no task",
	} {
		f := corpusOf(map[string]string{"a.star": src}).LoadFile(context.Background(), "a.star")
		require.Len(t, f.Diags, 1, "%q", src)
		d := f.Diags[0]
		assert.Equal(t, "no-task", d.Code)
		assert.Equal(t, dsl.Error, d.Severity)
		assert.Equal(t, "c/a.star", d.File)
		assert.Contains(t, d.Message, want)
		assert.Contains(t, d.Message, "task(...)")
	}
	f := load(t, map[string]string{"a.star": okTask}, "a.star")
	assert.Empty(t, f.Diags)
}

func TestLoadTask(t *testing.T) {
	f := load(t, map[string]string{"a.star": okTask}, "a.star")
	require.Empty(t, f.Diags)
	require.Len(t, f.Tasks, 1)
	task := f.Tasks[0]
	assert.Equal(t, "t1", task.Name)
	assert.True(t, task.SingleTurn)
	require.Len(t, task.Turns, 1)
	assert.Equal(t, "Copy a.", task.Turns[0].User)
	assert.NotNil(t, task.Turns[0].Solution)
	assert.Equal(t, 50, task.MaxCallsPerTurn)
	assert.Equal(t, 1.0, task.PassThreshold)
	assert.Equal(t, "2026-01-05T09:00:00Z", task.StartTime.Format("2006-01-02T15:04:05Z07:00"))
	assert.Equal(t, "c/a.star", task.File)
	assert.Equal(t, 12, int(task.Pos.Line))
	var names []string
	for _, s := range task.Tools {
		names = append(names, s.Name)
		assert.True(t, s.Builtin)
		assert.False(t, s.Named)
	}
	assert.Contains(t, names, "fs_write")
}

// Each malformed declaration stops the file with one diagnostic of the given code whose message
// names the builtin and the argument, at the line of the call.
func TestDeclarationErrors(t *testing.T) {
	fn := "def f(ws):\n    pass\ndef v(ws, ep):\n    pass\ndef s(agent):\n    pass\n"
	cases := []struct {
		name, src, code, msg string
		line                 int
	}{
		{"name type", `task(name = 1, prompt = "p", tools = [])`, "schema", "task: name: got int, want string", 7},
		{"name pattern", `task(name = "Bad Name", prompt = "p", tools = [])`, "schema", `task: name: "Bad Name" does not match`, 7},
		{"both", `task(name = "a", prompt = "p", turns = [turn(user = "u")], tools = [])`, "schema", "not both", 7},
		{"neither", `task(name = "a", tools = [])`, "schema", "give prompt (one turn) or turns", 7},
		{"unknown group", `task(name = "a", prompt = "p", tools = ["email"])`, "schema", `unknown tool group or tool "email"`, 7},
		{"missing tools", `task(name = "a", prompt = "p")`, "schema", "task: missing required argument tools", 7},
		{"unknown arg", `task(name = "a", prompt = "p", tools = [], promt = "x")`, "schema", `task: unexpected keyword argument promt (want one of name, prompt, `, 7},
		{"setup arity", `task(name = "a", prompt = "p", tools = [], setup = v)`, "schema", "task: setup: v must take (ws)", 7},
		{"turn user type", `task(name = "a", turns = [turn(user = ["x"])], tools = [])`, "schema", "turn: user: got list, want string, function (ws, ep) or simulated_user(...)", 7},
		{"turn advance", `task(name = "a", turns = [turn(user = "u", advance = "soon")], tools = [])`, "schema", "turn: advance:", 7},
		{"task solution with turns", `task(name = "a", turns = [turn(user = "u")], tools = [], solution = s)`, "schema", "gives each turn its own solution", 7},
		{"param type", `tool(name = "t", description = "d", params = {"x": param("date")}, impl = f)`, "schema", `param: type: "date" is not one of`, 7},
		{"tool name", `tool(name = "Bad-Name", description = "d", params = {}, impl = f)`, "schema", `tool: name: "Bad-Name" does not match`, 7},
		{"impl params", `tool(name = "t", description = "d", params = {"x": param("string")}, impl = f)`, "schema", `tool: impl: f: has no parameter "x"`, 7},
		{"enum type", `param("integer", enum = ["a"])`, "schema", `param: enum: element 0: got string, want integer`, 7},
		{"default type", `param("string", default = 3)`, "schema", "param: default: got integer, want string", 7},
		{"pass threshold", `task(name = "a", prompt = "p", tools = [], pass_threshold = 2)`, "schema", "pass_threshold: 2 is not between 0 and 1", 7},
		{"faults tool", `task(name = "a", prompt = "p", tools = ["fs"], faults = {"rate": 0.5, "tools": ["mail_send"]})`, "schema", `"mail_send" is not one of the task's tools`, 7},
		{"faults key", `task(name = "a", prompt = "p", tools = ["fs"], faults = {"rte": 0.5})`, "schema", `task: faults: unexpected keyword argument rte (want one of rate, tools, seed, nth)`, 7},
		{"faults rate", `task(name = "a", prompt = "p", tools = ["fs"], faults = {"rate": "often"})`, "schema", "task: faults: rate: got string, want float", 7},
		{"faults nth", `task(name = "a", prompt = "p", tools = ["fs"], faults = {"nth": {"fs_read": [0]}})`, "schema", `task: faults: nth: "fs_read": element 0: want an attempt number`, 7},
		{"capability outside taxonomy file", `capability(name = "x.y", description = "d")`, "schema", "only allowed in the corpus root's capabilities.star", 7},
		{"check at top level", `check(True, "x")`, "script-error", "check: only allowed inside a verifier", 7},
		{"runtime error", `x = 1 // 0`, "script-error", "division by zero", 7},
		{"steps", "def loop():\n    n = 0\n    while True:\n        n += 1\nloop()", "step-limit", "step budget", 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := load(t, map[string]string{"a.star": fn + c.src + "\n"}, "a.star")
			require.Len(t, f.Diags, 1, "diags: %v", f.Diags)
			d := f.Diags[0]
			assert.Equal(t, c.code, d.Code)
			assert.Contains(t, d.Message, c.msg)
			assert.Equal(t, "c/a.star", d.File)
			assert.Equal(t, c.line, d.Line, d.String())
			assert.Empty(t, f.Tasks)
		})
	}
}

func TestDuplicateNames(t *testing.T) {
	src := okTask + "\ntask(name = \"t1\", prompt = \"again\", tools = [])\n"
	f := load(t, map[string]string{"a.star": src}, "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "schema", f.Diags[0].Code)
	assert.Contains(t, f.Diags[0].Message, `"t1" is already declared at c/a.star:12:5`)

	c := corpusOf(map[string]string{"a.star": okTask, "b.star": okTask})
	files, err := c.LoadAll(context.Background())
	require.NoError(t, err)
	dups := dsl.DuplicateNames(files)
	require.Len(t, dups, 1)
	for task, d := range dups {
		assert.Equal(t, "c/b.star", task.File)
		assert.Contains(t, d.Message, "already declared at c/a.star")
	}
}

func TestSyntaxErrorsAllReportedSorted(t *testing.T) {
	f := load(t, map[string]string{"a.star": "def f():\n    return undefined_a\n\ndef g():\n    return undefined_b\n"}, "a.star")
	require.Len(t, f.Diags, 2)
	assert.Equal(t, "syntax", f.Diags[0].Code)
	assert.Equal(t, 2, f.Diags[0].Line)
	assert.Contains(t, f.Diags[0].Message, "undefined_a")
	assert.Equal(t, 5, f.Diags[1].Line)

	f = load(t, map[string]string{"a.star": "task(name = \n"}, "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "syntax", f.Diags[0].Code)
}

func TestLoad(t *testing.T) {
	files := map[string]string{
		"capabilities.star":  `capability(name = "mail.reply", description = "Answer mail.")`,
		"lib/people.star":    `load("//lib/base.star", "DOMAIN")` + "\nBOB = \"bob@\" + DOMAIN\n",
		"lib/base.star":      `DOMAIN = "x.example"`,
		"lib/cycle_a.star":   `load("//lib/cycle_b.star", "B")` + "\nA = 1\n",
		"lib/cycle_b.star":   `load("//lib/cycle_a.star", "A")` + "\nB = 1\n",
		"tasks/ok.star":      `load("//lib/people.star", "BOB")` + "\nX = BOB\n",
		"tasks/rel.star":     `load("../lib/base.star", "DOMAIN")` + "\n",
		"tasks/escape.star":  `load("//../secret.star", "S")` + "\n",
		"tasks/escape2.star": `load("../../secret.star", "S")` + "\n",
		"tasks/missing.star": `load("//lib/nope.star", "S")` + "\n",
		"tasks/symbol.star":  `load("//lib/people.star", "CAROL")` + "\n",
		"tasks/cycle.star":   `load("//lib/cycle_a.star", "A")` + "\n",
		"tasks/badcap.star":  `task(name = "a", prompt = "p", tools = [], capabilities = ["mail.rply"])`,
	}
	c := corpusOf(files)
	ctx := context.Background()
	assert.Empty(t, dropNoTask(c.LoadFile(ctx, "tasks/ok.star")).Diags)
	assert.Empty(t, dropNoTask(c.LoadFile(ctx, "tasks/rel.star")).Diags)
	for rel, frag := range map[string]string{
		"tasks/escape.star":  "leaves the corpus root",
		"tasks/escape2.star": "leaves the corpus root",
		"tasks/missing.star": "no such file in the corpus",
		"tasks/symbol.star":  "CAROL not found",
		"tasks/cycle.star":   "load cycle",
	} {
		f := c.LoadFile(ctx, rel)
		require.Len(t, f.Diags, 1, rel)
		assert.Equal(t, "load", f.Diags[0].Code, rel)
		assert.Contains(t, f.Diags[0].Message, frag, rel)
		assert.Equal(t, 1, f.Diags[0].Line, rel)
	}
	f := c.LoadFile(ctx, "tasks/badcap.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "schema", f.Diags[0].Code)
	assert.Contains(t, f.Diags[0].Message, `unknown capability "mail.rply"`)

	got, err := c.TaskFiles()
	require.NoError(t, err)
	for _, rel := range got {
		assert.True(t, strings.HasPrefix(rel, "tasks/"), rel)
	}
}

func TestDialect(t *testing.T) {
	src := "s = set([1, 2])\nn = 0\nwhile n < 3:\n    n += 1\nfor i in range(2):\n    n += i\nif n > 0:\n    n = n\n"
	f := load(t, map[string]string{"a.star": src}, "a.star")
	assert.Empty(t, f.Diags)

	f = load(t, map[string]string{"a.star": "def r(n):\n    return r(n - 1) if n else 0\nr(3)\n"}, "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "script-error", f.Diags[0].Code)
	assert.Contains(t, f.Diags[0].Message, "called recursively")
}

// The wall-clock limit cancels a script that is within its step budget.
func TestTimeout(t *testing.T) {
	c := corpusOf(map[string]string{"a.star": "def spin():\n    n = 0\n    while True:\n        n += 1\nspin()\n"}).
		WithLimits(dsl.Limits{Timeout: 30 * time.Millisecond}) // no step budget
	f := c.LoadFile(context.Background(), "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "timeout", f.Diags[0].Code)
	// where it stops depends on the moment: somewhere in spin (its loop jumps back to line 1)
	assert.True(t, f.Diags[0].Line >= 1 && f.Diags[0].Line <= 4, f.Diags[0].String())
}

// A cancelled context stops a script too, and is not reported as a timeout.
func TestCancel(t *testing.T) {
	c := corpusOf(map[string]string{"a.star": "def spin():\n    n = 0\n    while True:\n        n += 1\nspin()\n"}).WithLimits(dsl.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := c.LoadFile(ctx, "a.star")
	require.Len(t, f.Diags, 1)
	assert.Equal(t, "script-error", f.Diags[0].Code)
	assert.Contains(t, f.Diags[0].Message, "canceled")
}
