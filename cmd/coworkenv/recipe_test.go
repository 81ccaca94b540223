package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recipeCommands are the command lines of the sh blocks of docs/recipe.md, in order: those of
// coworkenv without the program's name, split into arguments (double quotes group; $NAME is
// expanded from env), and mkdir -p DIR.
func recipeCommands(t *testing.T, env map[string]string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "recipe.md"))
	require.NoError(t, err)
	var out [][]string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "```sh":
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "mkdir -p "):
			out = append(out, strings.Fields(line))
		case in && strings.HasPrefix(line, "coworkenv "):
			out = append(out, shellWords(t, os.Expand(line, func(k string) string {
				v, ok := env[k]
				require.True(t, ok, "docs/recipe.md uses $%s", k)
				return v
			}))[1:])
		}
	}
	return out
}

// shellWords splits a command line as sh would one without escapes: spaces separate, double
// quotes group.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var cur strings.Builder
	quoted, has := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, has = !quoted, true
		case r == ' ' && !quoted:
			if has {
				words = append(words, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	require.False(t, quoted, "unbalanced quotes: %s", line)
	if has {
		words = append(words, cur.String())
	}
	return words
}

// recipePolicy answers the two generated tasks of the recipe: it reads the asker's mail, replies
// in its thread and tells the user. rightLoan says whether it gives the loan's right date (the
// rabies answer is always right).
func recipePolicy(rightLoan bool) func(msgs []map[string]any) string {
	return func(msgs []map[string]any) string {
		prompt := ""
		for _, m := range msgs {
			if m["role"] == "user" {
				prompt, _ = m["content"].(string)
				break
			}
		}
		reply, said := "Hi Nadia, we have 18 doses of rabies vaccine left.", "I replied to Nadia: rabies, 18."
		if strings.Contains(prompt, "loan") {
			date := "2026-04-15" // the other loan's date
			if rightLoan {
				date = "2026-06-30"
			}
			reply, said = "Hi Xin, Harbour at Dusk goes back to Rijks Depot by "+date+".", "I replied to Xin: Harbour at Dusk, "+date+"."
		}
		args, _ := json.Marshal(map[string]string{"id": "m2", "body": reply})
		switch len(toolMessages(msgs)) {
		case 0:
			return chatCalls("", chatCall("c1", "mail_read", `{"id":"m2"}`))
		case 1:
			return chatCalls("", chatCall("c2", "mail_reply", string(args)))
		}
		return chatSay(said)
	}
}

// TestRecipe runs docs/recipe.md: every coworkenv command of its sh blocks but serve, in order,
// with scripted models as the teacher (and the student before training, which gets the test
// task wrong) and the student after training (which gets it right); the generation replays the
// generator's committed cassette. It checks what each step writes, up to the comparison.
func TestRecipe(t *testing.T) {
	modelEnv(t)
	teacher := newChatFake(t, recipePolicy(false))
	student := newChatFake(t, recipePolicy(true))
	testdata, err := filepath.Abs(genTestdata)
	require.NoError(t, err)
	cmds := recipeCommands(t, map[string]string{
		"TEACHER": "teacher", "TEACHER_URL": teacher.url(),
		"BASE": "teacher", "BASE_URL": teacher.url(),
		"STUDENT": "student", "STUDENT_URL": student.url(),
	})
	t.Chdir(t.TempDir())
	ran := map[string]string{} // the stdout of each command, by its first two words
	for _, args := range cmds {
		name := strings.Join(args[:min(2, len(args))], " ")
		if args[0] == "serve" {
			continue // runs until stopped: serve has its own tests
		}
		if args[0] == "mkdir" {
			require.NoError(t, os.MkdirAll(args[2], 0o755))
			continue
		}
		if args[0] == "generate" {
			// the recorded cassette answers in place of the model
			var kept []string
			for i := 0; i < len(args); i++ {
				if args[i] == "--model" || args[i] == "--base-url" {
					i++
					continue
				}
				kept = append(kept, args[i])
			}
			args = append(kept, "--replay", filepath.Join(testdata, "cassette", "run.cassette"),
				"--reference", filepath.Join(testdata, "cassette", "reference.md"), "--corpus", filepath.Join(testdata, "corpus"))
		}
		code, stdout, errs := cli(t, args...)
		if args[0] == "rollout" && code == 1 {
			// a rollout whose samples did not all pass says so with its status
			require.Contains(t, stdout, "0 failed, 0 interrupted", "coworkenv %s\n%s%s", strings.Join(args, " "), stdout, errs)
			code = 0
		}
		require.Equal(t, 0, code, "coworkenv %s\n%s%s", strings.Join(args, " "), stdout, errs)
		ran[name] += stdout
	}
	require.Contains(t, ran, "report --compare", "the recipe ends with the comparison")

	// 1-2: two generated tasks, valid, one in each split
	assert.FileExists(t, filepath.Join("gen", "mail-reply", "loan-return-date.star"))
	assert.FileExists(t, filepath.Join("gen", "mail-reply", "rabies-vaccine-stock.star"))
	assert.Contains(t, ran["validate --strict"], "2 tasks: 2 ok, 0 warn, 0 invalid")
	assert.Regexp(t, `rabies-vaccine-stock .*\[train: scenario `, ran["list gen"])
	assert.Regexp(t, `loan-return-date .*\[test: scenario `, ran["list gen"])

	// 3: the teacher ran the training split only, and its traces say so
	tasksIn := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		return names
	}
	assert.Equal(t, []string{"rabies-vaccine-stock"}, tasksIn(filepath.Join("runs", "teacher-train")))
	start := traceStart(t, filepath.Join("runs", "teacher-train", "rabies-vaccine-stock", "3.jsonl"))
	require.NotNil(t, start.Split)
	assert.Equal(t, trace.Split{Name: "train", Family: "scenario Delta Stichting (non-profit), Lieke Janssen", Ratio: "0.5,0,0.5", Seed: 1}, *start.Split)

	// 4: four identical passing episodes make one demonstration; the summary says why
	assert.Contains(t, ran["export sft"], "wrote 1 episode to data/sft.jsonl from 4 traces; selected from 4; by split: 1 train; skipped 3: 3 selected out: same tool calls as a better episode of the task")
	rows := readLines(t, filepath.Join("data", "sft.jsonl"))
	require.Len(t, rows, 1)
	checkChatLine(t, "recipe", rows[0])
	require.Len(t, readLines(t, filepath.Join("data", "coworkenv.jsonl")), 1)
	assert.FileExists(t, filepath.Join("data", "dataset_info.json"))

	// 6: the RL task dataset holds the training task, a row per seed
	tasks := readLines(t, filepath.Join("data", "tasks.jsonl"))
	require.Len(t, tasks, 4)
	for _, row := range tasks {
		assert.Equal(t, "rabies-vaccine-stock", row["task"])
		assert.Equal(t, "train", row["extra_info"].(map[string]any)["split"])
	}

	// 7: both rollouts of the test split hold its task only; the base model fails it, the student passes
	for dir, passed := range map[string]bool{"base-test": false, "student-test": true} {
		assert.Equal(t, []string{"loan-return-date"}, tasksIn(filepath.Join("runs", dir)))
		for i := range 4 {
			end, _ := traceEnd(t, filepath.Join("runs", dir, "loan-return-date", []string{"0", "1", "2", "3"}[i]+".jsonl"))
			assert.Equal(t, passed, end["passed"], "%s sample %d", dir, i)
		}
	}
	// the test split never becomes training data
	code, _, errs := cli(t, "export", "sft", filepath.Join("runs", "student-test"), "--out", filepath.Join("data", "leak.jsonl"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "is in the test split")
	assert.NoFileExists(t, filepath.Join("data", "leak.jsonl"))

	// 8: the comparison: 0% before, 100% after, the task flipped, its episodes linked
	page, err := os.ReadFile("compare.html")
	require.NoError(t, err)
	html := string(page)
	assert.Contains(t, html, `<tr><th scope="row">overall</th><td class="n">1</td><td class="n">0.0%</td><td class="n">100.0%</td><td class="n delta pass">&#43;100.0</td>`)
	up := html[strings.Index(html, `id="flips-up"`):strings.Index(html, `id="flips-down"`)]
	assert.Contains(t, up, "loan-return-date")
	assert.Contains(t, up, `href="./compare-episodes/b/loan-return-date/0.html"`)
	assert.FileExists(t, filepath.Join("compare-episodes", "b", "loan-return-date", "0.html"))
	assert.FileExists(t, filepath.Join("compare-episodes", "a", "loan-return-date", "3.html"))
}
