package generator_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/coworkenv/coworkenv/validate/redteam"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The red team's fixtures: loan-return-date (the golden output of the committed cassette), a
// weak copy of it that passes every check and lets a wrong reply hidden in the trash through,
// and the fake red team's runs for it: that hack, a careful run in other words, and a "careful"
// run that is wrong (a new mail, not a reply in Xin's thread).
func strongLoan(t testing.TB) string {
	data, err := os.ReadFile("testdata/cassette/golden/loan-return-date.star")
	require.NoError(t, err)
	s := string(data)
	return s[strings.Index(s, "\n\n")+2:]
}

// redTeamRuns are the fake red team's runs: the first n of testdata/redteam/runs.json.
func redTeamRuns(t *testing.T, n int) string {
	var runs []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(mustRead(t, "testdata/redteam/runs.json")), &runs))
	out, err := json.Marshal(runs[:n])
	require.NoError(t, err)
	return string(out)
}

// redTeamFake answers the generator's requests from script (by seed and round) and the red
// team's with runs, in a ```json block.
func redTeamFake(t *testing.T, script map[int64][]string, runs string) *chattest.Server {
	gen := chattest.SeedScript{Answers: script, Missing: "fake: no answer scripted for seed %d round %d"}.Answer
	return chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if isRedTeam(r) {
			return chattest.Answer{Body: chattest.Say("My runs:\n\n```json\n" + runs + "\n```")}
		}
		return gen(r)
	})
}

func isRedTeam(r *chattest.Request) bool {
	sys, _ := r.Messages[0]["content"].(string)
	return sys == redteam.System
}

func redTeamOptions(t *testing.T, srv *chattest.Server, out string) generator.Options {
	opts := options(t, &fakeModel{srv}, out, 1)
	opts.Jobs = 1
	opts.MaxRounds = 3
	opts.RedTeam = &redteam.Options{Hacks: 4, Careful: 2}
	return opts
}

// A candidate that passes every check with a hole the probes miss: the red team's hack passes,
// hackable goes back to the author with the run, and the author's repair (the sound verifier)
// is accepted in round 2, its runs kept beside it. The red team is asked once for the attempt.
// The kept runs are played by a later validate: they behave on the sound verifier, and the hack
// passes again if the file is put back to the weak one.
func TestRedTeamHackRepaired(t *testing.T) {
	t.Parallel()
	weak := mustRead(t, "testdata/redteam/loan-weak.star")
	srv := redTeamFake(t, map[int64][]string{100: {fenced(weak), fenced(strongLoan(t))}}, redTeamRuns(t, 2))
	out := t.TempDir()
	sum, err := generator.Run(context.Background(), redTeamOptions(t, srv, out))
	require.NoError(t, err)
	require.Equal(t, 1, sum.Accepted)
	recs := readManifest(t, out)
	require.Len(t, recs, 1)
	rec := recs[0]
	assert.Equal(t, [][]string{{"hackable"}, {}}, rec.History)
	require.NotNil(t, rec.RedTeam)
	assert.Equal(t, 1, rec.RedTeam.Hacks)
	assert.Equal(t, 1, rec.RedTeam.Careful)
	assert.Equal(t, 1, rec.RedTeam.Requests)
	assert.Equal(t, 120, rec.RedTeam.Tokens.Total, "the fake's usage: 100 + 20")
	assert.Equal(t, "loan-return-date.star.runs.json", rec.RedTeam.Runs)
	assert.Equal(t, 1, sum.RedTeam.Requests)
	assert.Equal(t, 1, sum.RedTeam.Kept)

	var red, repair int
	for _, r := range srv.Requests() {
		if isRedTeam(r) {
			red++
			continue
		}
		if r.Rounds() == 1 {
			repair++
			last, _ := r.Messages[len(r.Messages)-1]["content"].(string)
			assert.Contains(t, last, "warning[hackable]: hack 1 of the red team (fake-model) passes (score 1.0; failed: no item)")
			assert.Contains(t, last, `"tells Xin the right date, then a wrong one (2026-04-15), and hides that mail in the trash"`)
			assert.Contains(t, last, `{"name":"mail_move","args":{"id":"m4","folder":"trash"}}`, "the run itself")
			assert.Contains(t, last, "Never delete or loosen a check that catches another hack", "the code's hint")
		}
	}
	assert.Equal(t, 1, red, "the red team is asked once per attempt")
	assert.Equal(t, 1, repair)

	kept, err := recorded.ReadFile(filepath.Join(out, "loan-return-date.star.runs.json"))
	require.NoError(t, err)
	require.Len(t, kept, 2)
	assert.Equal(t, recorded.Fail, kept[0].Expect)
	assert.Equal(t, recorded.Pass, kept[1].Expect)
	strictWithRuns(t, out) // the kept runs play, and behave

	// the weak verifier put back: the kept hack is caught without any model
	weakened := filepath.Join(out, "loan-return-date.star")
	require.NoError(t, os.WriteFile(weakened, []byte(weak), 0o644))
	rep := validateDir(t, out)
	var codes []string
	for _, d := range rep.Tasks[0].Diagnostics {
		codes = append(codes, d.Code)
	}
	assert.Equal(t, []string{"recorded-hack-passes"}, codes)
}

// A sound candidate: the red team's hack fails and its careful run passes, so nothing is raised
// and the task is accepted in one round with its runs. A careful run that fails is
// careful-run-fails; the author answers that it is wrong, and it is kept as a hack with the
// author's reason.
func TestRedTeamSoundAndDisputed(t *testing.T) {
	t.Parallel()
	strong := strongLoan(t)
	t.Run("sound", func(t *testing.T) {
		t.Parallel()
		srv := redTeamFake(t, map[int64][]string{100: {fenced(strong)}}, redTeamRuns(t, 2))
		out := t.TempDir()
		sum, err := generator.Run(context.Background(), redTeamOptions(t, srv, out))
		require.NoError(t, err)
		require.Equal(t, 1, sum.Accepted)
		rec := readManifest(t, out)[0]
		assert.Equal(t, [][]string{{}}, rec.History)
		assert.Equal(t, 1, rec.RedTeam.Requests)
		assert.Len(t, srv.Requests(), 2, "one generation request, one red-team request")
	})
	t.Run("disputed", func(t *testing.T) {
		t.Parallel()
		reason := "a new mail is not a reply in Xin's thread, which the request asks for"
		srv := redTeamFake(t, map[int64][]string{100: {fenced(strong), "Careful run 2 is wrong: " + reason + "\n\n" + fenced(strong)}}, redTeamRuns(t, 3))
		out := t.TempDir()
		sum, err := generator.Run(context.Background(), redTeamOptions(t, srv, out))
		require.NoError(t, err)
		require.Equal(t, 1, sum.Accepted)
		rec := readManifest(t, out)[0]
		assert.Equal(t, [][]string{{"careful-run-fails"}, {}}, rec.History)
		assert.Equal(t, 1, rec.RedTeam.Disputed)
		kept, err := recorded.ReadFile(filepath.Join(out, "loan-return-date.star.runs.json"))
		require.NoError(t, err)
		require.Len(t, kept, 3)
		assert.Equal(t, recorded.Fail, kept[2].Expect, "the disputed careful run is kept as a hack")
		assert.Contains(t, kept[2].Why, reason)
		strictWithRuns(t, out)
	})
}

// validateDir validates dir as `coworkenv validate DIR` does: with the runs files beside its task
// files.
func validateDir(t *testing.T, dir string) *validate.Report {
	c := dsl.NewCorpus(os.DirFS(dir), ".", dir)
	runs, err := validate.SidecarRuns(c, nil)
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Runs: runs})
	require.NoError(t, err)
	return rep
}

// strictWithRuns is validate --strict DIR, the runs files played.
func strictWithRuns(t *testing.T, dir string) {
	rep := validateDir(t, dir)
	var buf strings.Builder
	rep.WriteText(&buf, false)
	require.False(t, rep.Failed(true), buf.String())
}

// The request cache: a generation run over the simulated-user testdata (the model writes a task
// whose reference asks its simulated user, then the repair; it plays that user in every run of
// the validation, and is the red team) sends each distinct request body at most once, although
// its clients ask many twice: those are answered from the run's cache. A replay of its cassette
// asks nobody and gives the same manifest.
func TestOneRequestPerDistinctBody(t *testing.T) {
	t.Parallel()
	srv := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if isRedTeam(r) {
			return chattest.Answer{Body: chattest.Say("```json\n[]\n```")}
		}
		return generating(r)
	})
	out, cas := t.TempDir(), filepath.Join(t.TempDir(), "run.cassette")
	opts := options(t, &fakeModel{srv}, out, 1)
	opts.Capabilities = []string{"files.extract"}
	opts.RedTeam = &redteam.Defaults
	opts.Record = cas
	sum, err := generator.Run(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Accepted)
	require.Equal(t, 1, sum.RedTeam.Requests)

	seen := map[string]int{}
	for _, r := range srv.Requests() {
		seen[string(r.Body)]++
	}
	for body, n := range seen {
		assert.Equal(t, 1, n, "sent %d times: %.300s", n, body)
	}
	sent := len(srv.Requests())
	require.NotNil(t, sum.Requests)
	assert.Equal(t, sent, sum.Requests.Sent)
	assert.Greater(t, sum.Requests.Asked, sent, "some of the user model's requests were asked before")
	lines := strings.Count(strings.TrimSpace(mustRead(t, cas)), "\n")
	assert.Equal(t, sent, lines, "each request is recorded once")

	srv.Close()
	again := t.TempDir()
	opts = options(t, &fakeModel{srv}, again, 1)
	opts.Capabilities = []string{"files.extract"}
	opts.RedTeam = &redteam.Defaults // the cassette's settings win
	opts.Model.BaseURL, opts.Replay, opts.Record = "", cas, ""
	_, err = generator.Run(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, mustRead(t, filepath.Join(out, generator.ManifestFile)), mustRead(t, filepath.Join(again, generator.ManifestFile)))
	assert.Len(t, srv.Requests(), sent, "the replay asked nobody")
}
