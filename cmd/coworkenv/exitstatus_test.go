package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exit-status rule is written once: `coworkenv --help`, every command's --help and the README
// give the same text.
func TestExitStatusRuleIsWrittenOnce(t *testing.T) {
	t.Parallel()
	_, out, _ := cli(t, "--help")
	assert.Contains(t, out, exitStatusHelp)
	for _, c := range commands() {
		_, out, _ := cli(t, c.name, "--help")
		assert.Contains(t, out, exitStatusHelp, c.name)
		assert.NotRegexp(t, `(?m)^\s*Exit status: [^(]`, out, "%s: a command's own exit-status text", c.name)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	assert.Contains(t, string(readme), exitStatusHelp, "README.md quotes the rule as exitstatus.go has it")
}

// unreadable makes a file unreadable, or skips the test when it stays readable (as root).
func unreadable(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, os.Chmod(p, 0))
	t.Cleanup(func() { os.Chmod(p, 0o644) })
	if f, err := os.Open(p); err == nil {
		f.Close()
		t.Skip("a file with mode 000 stays readable here (running as root)")
	}
}

// Every case the rule lists, for validate, run and rollout: a file that does not load is a
// negative verdict (1), a path that cannot be used is the command line's error (2).
func TestExitStatuses(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"empty.star":       "",
		"notask.star":      "X = 1\ndef f():\n    return X\n",
		"one/copy.star":    copyNoteTask,
		"one/broken.star":  "def f(:\n",
		"bad/broken.star":  "task(name = 1)\n",
		"nothing/notes.md": "no task here\n",
	})
	p := func(rel string) string { return filepath.Join(dir, rel) }
	out := func() string { return filepath.Join(t.TempDir(), "o") }
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"validate", p("empty.star")}, 1, "error[no-task]: the file is empty"},
		{[]string{"validate", p("notask.star"), "--in-process"}, 1, "error[no-task]: the file declares no task"},
		{[]string{"validate", p("nothing")}, 2, "no task files in it"},
		{[]string{"validate", p("missing.star")}, 2, "no such file or directory"},
		{[]string{"run", p("empty.star")}, 1, "error[no-task]"},
		{[]string{"run", p("one/broken.star")}, 1, "error[syntax]"},                 // told by a worker
		{[]string{"run", p("one/broken.star"), "--in-process"}, 1, "error[syntax]"}, // loaded here
		{[]string{"run", p("one/copy.star") + ":nope"}, 2, `has no task "nope"`},
		{[]string{"run", p("one")}, 2, "is a folder; name one task"},
		{[]string{"rollout", p("nothing"), "--out", out()}, 2, "no task files in it"},
		{[]string{"rollout", p("bad"), "--out", out()}, 1, "no task to run: 1 file did not load"},
		{[]string{"rollout", p("empty.star"), "--out", out()}, 1, "no task to run: 1 file did not load"},
		{[]string{"rollout", p("one/copy.star"), "--agent", "noop", "--samples", "2", "--out", out()}, 1, "2 episodes run"},
		{[]string{"doc", "diagnostics", "extra"}, 2, `unexpected argument "extra" after diagnostics`},
		{[]string{"doc", "extra"}, 2, `unknown topic "extra"`},
	} {
		code, stdout, stderr := cli(t, c.args...)
		assert.Equal(t, c.code, code, "%v: %s%s", c.args, stdout, stderr)
		assert.Contains(t, stdout+stderr, c.want, c.args)
	}

	// rollout of a folder with one broken file: the other runs, the broken one is named and counted
	o := out()
	code, stdout, stderr := cli(t, "rollout", p("one"), "--out", o)
	assert.Equal(t, 1, code, stdout+stderr)
	assert.Contains(t, stderr, "skipping "+p("one/broken.star")+": it does not load:\n  "+p("one/broken.star")+":1:8: error[syntax]")
	assert.Regexp(t, `(?m)^copy-note +1/1 `, stdout)
	assert.Contains(t, stdout, "1 task file did not load (named on stderr)")
	code, stdout, _ = cli(t, "rollout", p("one"), "--out", o, "--json")
	assert.Equal(t, 1, code)
	assert.EqualValues(t, 1, rolloutJSON(t, stdout)["not_loaded"])
	// and without it, every sample passes: 0
	code, stdout, stderr = cli(t, "rollout", p("one/copy.star"), "--out", o)
	assert.Equal(t, 0, code, stdout+stderr)
}

// A path that exists but cannot be read is refused like a missing one.
func TestExitStatusUnreadable(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask, "t.jsonl": "{}\n"})
	for _, args := range [][]string{
		{"validate", filepath.Join(dir, "copy.star")},
		{"run", filepath.Join(dir, "copy.star")},
		{"replay", filepath.Join(dir, "t.jsonl")},
	} {
		unreadable(t, filepath.Join(dir, filepath.Base(args[1])))
		code, stdout, stderr := cli(t, args...)
		assert.Equal(t, 2, code, "%v: %s%s", args, stdout, stderr)
		assert.Contains(t, stderr, "permission denied", args)
	}
}

// --memory-limit and --time-limit bound workers only: where none runs they are refused.
func TestLimitsWithoutWorkers(t *testing.T) {
	t.Parallel()
	p := writeTask(t, helloTask)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--memory-limit", "100"}, "--memory-limit bounds worker processes, and none runs"},
		{[]string{"validate", p, "--in-process", "--time-limit", "5s"}, "--time-limit bounds worker processes, and --in-process runs none"},
		{[]string{"run", "fuel-surcharge-answer", "--memory-limit", "100"}, "--memory-limit bounds worker processes, and none runs"},
		{[]string{"rollout", "fuel-surcharge-answer", "--memory-limit", "100", "--out", t.TempDir()}, "none runs"},
	} {
		code, stdout, stderr := cli(t, c.args...)
		assert.Equal(t, 2, code, "%v: %s%s", c.args, stdout, stderr)
		assert.Contains(t, stderr, c.want, c.args)
	}
	code, stdout, stderr := cli(t, "run", p+":hello", "--memory-limit", "512", "--json")
	assert.Equal(t, 0, code, "a file from disk runs in a worker, which the limit bounds: %s%s", stdout, stderr)
}

// A flag's usage that quotes words in backquotes does not show them as the value's name.
func TestFlagHelpNamesValues(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"generate", "rollout"} {
		_, out, _ := cli(t, cmd, "--help")
		assert.NotRegexp(t, regexp.MustCompile(`(?m)^  -\w[\w-]* \S+ \S`), out, cmd)
	}
	_, out, _ := cli(t, "generate", "--help")
	assert.Contains(t, out, "  -reference string\n")
	_, out, _ = cli(t, "export", "--help")
	assert.Contains(t, out, "  -format openai|sharegpt|llamafactory\n", "a one-word backquoted name stays")
}

// `run` of a folder says it is a folder, and a file is not looked up as a task name.
func TestRunNamesAFolder(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"a/copy.star": copyNoteTask, "notes.txt": "x"})
	code, _, stderr := cli(t, "run", filepath.Join(dir, "a"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, filepath.Join(dir, "a")+" is a folder; name one task")
	assert.NotContains(t, stderr, "no such file")
	code, _, stderr = cli(t, "run", filepath.Join(dir, "notes.txt"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "notes.txt: not a .star file")
}

// validate and run show a diagnostic at the same line and column.
func TestValidateAndRunAgreeOnColumns(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"schema.star": "X = 1\ntask(name = \"a\", prompt = \"p\", tools = [\"nope\"])\n",
		"setup.star": `def _setup(ws):
    ws.fs.read("/nope")

def _verify(ws, ep):
    check(True, "x")

def _solve(agent):
    agent.reply("x")

task(name = "s", prompt = "p", tools = ["fs"], setup = _setup, verify = _verify, solution = _solve)
`,
	})
	for file, at := range map[string]string{"schema.star": ":2:1: error[schema]", "setup.star": ":2:5: error[script-error]"} {
		p := filepath.Join(dir, file)
		_, out, _ := cli(t, "validate", p)
		assert.Contains(t, out, p+at, file)
		for _, where := range []string{"--isolate", "--in-process"} {
			_, _, errs := cli(t, "run", p, where)
			assert.Contains(t, errs, p+at, "%s %s", file, where)
		}
	}
}

// A standalone file's capabilities are checked against the built-in taxonomy, which the
// diagnostic names; a typo'd one neither passes validate nor reaches a rollout's figures.
func TestStandaloneCapabilities(t *testing.T) {
	t.Parallel()
	typo := strings.Replace(copyNoteTask, `capabilities = ["files.organize"]`, `capabilities = ["files.organise"]`, 1)
	require.NotEqual(t, typo, copyNoteTask)
	dir := writeFiles(t, map[string]string{"typo.star": typo, "ok/copy.star": copyNoteTask})
	p := filepath.Join(dir, "typo.star")
	for _, where := range []string{"--isolate", "--in-process"} {
		code, out, errs := cli(t, "validate", p, where)
		assert.Equal(t, 1, code, out+errs)
		assert.Contains(t, out, `unknown capability "files.organise": not declared in the built-in taxonomy, corpus/capabilities.star`, where)
	}
	code, out, errs := cli(t, "validate", "--strict", filepath.Join(dir, "ok", "copy.star"))
	assert.Equal(t, 0, code, "a built-in capability: %s%s", out, errs)

	code, out, errs = cli(t, "rollout", p, filepath.Join(dir, "ok"), "--out", t.TempDir(), "--json")
	assert.Equal(t, 1, code, errs)
	assert.NotContains(t, out, "files.organise")
	assert.Contains(t, errs, `skipping `+p+`: it does not load`)

	// a corpus's own taxonomy is named by its file
	corpus := writeFiles(t, map[string]string{"capabilities.star": rolloutCaps, "tasks/typo.star": typo})
	_, out, _ = cli(t, "validate", filepath.Join(corpus, "tasks"))
	assert.Contains(t, out, `unknown capability "files.organise": not declared in `+filepath.Join(corpus, "capabilities.star"))
}

// The task of writing-tasks.md's "The shape of a good task" validates as the page says, in a
// folder of its own; the page's load paths need a corpus, as it says.
func TestWritingTasksTemplate(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "writing-tasks.md"))
	require.NoError(t, err)
	doc := string(b)
	i := strings.Index(doc, "## The shape of a good task")
	require.True(t, i >= 0)
	block := doc[i:]
	j := strings.Index(block, "```python\n")
	require.True(t, j >= 0)
	src := block[j+len("```python\n"):]
	src = src[:strings.Index(src, "```")]
	p := filepath.Join(t.TempDir(), "task.star")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	code, out, errs := cli(t, "validate", "--strict", p)
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "1 task: 1 ok, 0 warn, 0 invalid")
	assert.Contains(t, doc, "`coworkenv validate --strict task.star` says\n`ok`")

	// `//` is the root: beside a standalone file, lib/ is looked for next to it
	dir := writeFiles(t, map[string]string{"x.star": `load("//lib/cast.star", "PEOPLE")` + "\n"})
	_, out, _ = cli(t, "validate", filepath.Join(dir, "x.star"))
	assert.Contains(t, out, "error[load]: //lib/cast.star: no such file in the corpus ("+filepath.Join(dir, "lib", "cast.star")+")")
	assert.Contains(t, doc, "`//lib/x.star` then means\n  `lib/x.star` beside the file")
}

// Turns (and a simulated user's rounds) are numbered from 0 in the transcript, as in the trace.
func TestRunNumbersTurnsAsTheTrace(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"two.star": twoStepsTask})
	tr := filepath.Join(t.TempDir(), "t.jsonl")
	code, out, errs := cli(t, "run", filepath.Join(dir, "two.star"), "--trace", tr)
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "· 2 turns ·")
	assert.Contains(t, out, "── turn 0 ──\nuser: Write beta to /b.txt.")
	assert.Contains(t, out, "── turn 1 ──\nuser: Now delete /a.txt.")
	var users []any
	for _, ev := range readLines(t, tr) {
		if ev["event"] == "user" {
			users = append(users, ev["turn"])
		}
	}
	assert.Equal(t, []any{0.0, 1.0}, users)
}

// Progress on stderr when it is not a terminal: a line at each tenth of 20 units or more, and
// none for less.
func TestPlainProgress(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"copy.star": copyNoteTask})
	code, _, errs := cli(t, "rollout", filepath.Join(dir, "copy.star"), "--agent", "noop", "--samples", "20", "--in-process", "--out", t.TempDir())
	assert.Equal(t, 1, code)
	lines := regexp.MustCompile(`(?m)^rollout: \d+/20 .*$`).FindAllString(errs, -1)
	require.Len(t, lines, 10, errs)
	assert.Equal(t, "rollout: 2/20 (10%) · 0 passed", lines[0])
	assert.Equal(t, "rollout: 20/20 (100%) · 0 passed", lines[9])

	_, _, errs = cli(t, "rollout", filepath.Join(dir, "copy.star"), "--agent", "noop", "--samples", "19", "--in-process", "--out", t.TempDir())
	assert.NotContains(t, errs, "rollout: ")
}
