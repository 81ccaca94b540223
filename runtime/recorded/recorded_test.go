package recorded_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/stretchr/testify/require"
)

const twoRuns = `[
  {"task": "q3-total-reply", "why": "a rival total beside the right one", "expect": "fail",
   "turns": [{"asks": ["Which quarter?"],
              "calls": [{"name": "mail_list", "args": {"folder": "inbox"}}, {"name": "fs_list"}],
              "reply": "Done."}]},
  {"task": "q3-total-reply", "why": "the total in other words",
   "turns": [{"calls": [], "reply": "a"}, {"reply": ""}]}
]`

func TestParseRunsAndTheirAgents(t *testing.T) {
	t.Parallel()
	runs, err := recorded.Parse("my/careful/q3.json", []byte(twoRuns), recorded.DefaultExpect("my/careful/q3.json"))
	require.NoError(t, err)
	require.Len(t, runs, 2)

	r := runs[0]
	require.Equal(t, "q3-total-reply", r.Task)
	require.Equal(t, recorded.Fail, r.Expect, "a run's own expect wins over its folder's")
	require.Equal(t, [2]int{2, 3}, [2]int{r.Line, r.Col})
	require.Equal(t, 1, r.N)
	require.Equal(t, "run 1 of my/careful/q3.json (line 2)", r.Where())
	require.Equal(t, recorded.Pass, runs[1].Expect, "a run without expect in a folder named careful passes")
	require.Equal(t, [2]int{6, 3}, [2]int{runs[1].Line, runs[1].Col})

	a, err := r.Agent()
	require.NoError(t, err)
	require.Equal(t, recorded.Label, a.Name())
	require.Equal(t, []string{"Done."}, a.Replies)
	require.Len(t, a.Calls, 1)
	calls := a.Calls[0]
	require.Len(t, calls, 3, "the question first, then the calls")
	require.True(t, calls[0].Ask)
	require.Equal(t, "Which quarter?", calls[0].Said)
	require.Equal(t, "mail_list", calls[1].Name)
	require.True(t, jsonv.Equal(jsonv.NewObject("folder", "inbox"), calls[1].Args))
	require.Equal(t, "fs_list", calls[2].Name)
	require.Equal(t, 0, calls[2].Args.Len(), "a call without args has none")

	b, err := runs[1].Agent()
	require.NoError(t, err)
	require.Equal(t, []string{"a", ""}, b.Replies)
	require.Len(t, b.Calls, 2)
}

func TestDefaultExpect(t *testing.T) {
	t.Parallel()
	require.Equal(t, recorded.Fail, recorded.DefaultExpect("corpus/testdata/hacks/chat.json"))
	require.Equal(t, recorded.Pass, recorded.DefaultExpect("careful/x.json"))
	require.Equal(t, recorded.Expect(""), recorded.DefaultExpect("tasks/q3.star.runs.json"))
	require.Equal(t, recorded.Expect(""), recorded.DefaultExpect("hacks"), "the folder the file is in, not the file")
}

// TestParseErrors: every error names the file, a line and column, and the run.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, data, want string }{
		{"syntax", "[\n {\"task\": \"a\",\n  \"why\": \"w\" \"turns\": []}\n]", `f.json: 3:14: not JSON: invalid character '"' after object key:value pair`},
		{"empty", "", "f.json: 1:1: not JSON: unexpected end of JSON input"},
		{"object", ` {"task": "a"}`, "f.json: 1:2: a runs file is a JSON list of runs, not an object"},
		{"null", `null`, "f.json: 1:1: a runs file is a JSON list of runs, not null"},
		{"not a run", `[{"task": "a", "why": "w", "expect": "pass", "turns": [{"reply": ""}]}, 5]`, "f.json: 1:73: run 2: a run is a JSON object, not a number"},
		{"unknown field", "[\n  {\"task\": \"a\", \"why\": \"w\", \"expects\": \"fail\", \"turns\": []}]", `f.json: 2:3: run 1 (task "a"): unknown field "expects"`},
		{"wrong type", "[\n  {\"task\": \"a\", \"why\": \"w\", \"expect\": \"pass\",\n   \"turns\": [{\"reply\": 12}]}]", `f.json: 3:24: run 1 (task "a"): "turns.reply" must be a string, not a number`},
		{"task not a string", `[{"task": 7}]`, `f.json: 1:11: run 1: "task" must be a string, not a number`},
		{"no task", `[{"why": "w", "turns": []}]`, `f.json: 1:2: run 1: "task" is required`},
		{"no why", `[{"task": "a", "turns": []}]`, `f.json: 1:2: run 1 (task "a"): "why" is required`},
		{"no expect", `[{"task": "a", "why": "w", "turns": [{"reply": ""}]}]`, `f.json: 1:2: run 1 (task "a"): "expect" is required: "fail" (a hack) or "pass" (a careful run)`},
		{"bad expect", `[{"task": "a", "why": "w", "expect": "hack", "turns": [{"reply": ""}]}]`, `run 1 (task "a"): "expect" must be "fail" (a hack) or "pass" (a careful run), not "hack"`},
		{"no turns", `[{"task": "a", "why": "w", "expect": "fail", "turns": []}]`, `run 1 (task "a"): "turns" is required`},
		{"no reply", `[{"task": "a", "why": "w", "expect": "fail", "turns": [{"calls": []}]}]`, `run 1 (task "a"): turn 0: "reply" is required`},
		{"no name", `[{"task": "a", "why": "w", "expect": "fail", "turns": [{"calls": [{"args": {}}], "reply": ""}]}]`, `run 1 (task "a"): turn 0, call 0: "name" is required`},
		{"args not an object", `[{"task": "a", "why": "w", "expect": "fail", "turns": [{"calls": [{"name": "f", "args": "x"}], "reply": ""}]}]`, `run 1 (task "a"): turn 0, call 0 (f): "args" must be a JSON object, not a string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := recorded.Parse("f.json", []byte(tc.data), "")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "f.json: "), err.Error())
		})
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hacks")
	require.NoError(t, os.Mkdir(dir, 0o755))
	p := filepath.Join(dir, "q3.json")
	require.NoError(t, os.WriteFile(p, []byte(`[{"task": "a", "why": "w", "turns": [{"reply": ""}]}]`), 0o644))
	runs, err := recorded.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, recorded.Fail, runs[0].Expect, "a run without expect in a folder named hacks fails")
	require.Equal(t, p, runs[0].File)

	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte("["+strings.Repeat(" ", recorded.MaxSize)+"]"), 0o644))
	_, err = recorded.ReadFile(big)
	require.ErrorContains(t, err, "larger than 8 MiB")

	_, err = recorded.ReadFile(filepath.Join(dir, "missing.json"))
	require.Error(t, err)
}

// TestCorpusRunsParse reads the built-in corpus's recorded runs: every one parses, hacks are
// expected to fail and careful runs to pass.
func TestCorpusRunsParse(t *testing.T) {
	t.Parallel()
	for folder, want := range map[string]recorded.Expect{"hacks": recorded.Fail, "careful": recorded.Pass} {
		files, err := filepath.Glob(filepath.Join("..", "..", "corpus", "testdata", folder, "*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			runs, err := recorded.ReadFile(f)
			require.NoError(t, err)
			for _, r := range runs {
				require.Equal(t, want, r.Expect, r.Where())
				_, err := r.Agent()
				require.NoError(t, err, r.Where())
			}
		}
	}
}

// FuzzParse: whatever the bytes, Parse answers (runs or an error that names the file) and never
// panics; every run it reads makes an agent.
func FuzzParse(f *testing.F) {
	f.Add([]byte(twoRuns))
	f.Add([]byte(`[{"task": "a", "why": "w", "expect": "fail", "turns": [{"calls": [{"name": "f", "args": {"a": [1, {"b": null}]}}], "reply": ""}]}]`))
	f.Add([]byte(`[1, "x", null, [], {}]`))
	f.Add([]byte("[\n{\"task\": \"\u00e9\", \"why\": 1e400}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, err := recorded.Parse("f.json", data, recorded.Fail)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "f.json: "), err.Error())
			return
		}
		for _, r := range runs {
			_, err := r.Agent()
			require.NoError(t, err)
		}
	})
}
