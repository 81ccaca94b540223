package generator_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// askingTask has a simulated user who knows which report to summarise; its reference asks, and
// summarises the one named. Its stand-in names April.
const askingTask = `
def _setup(ws):
    ws.mail.address = "dana@halden.example"
    ws.fs.write("/reports/march.md", "March: 12 orders")
    ws.fs.write("/reports/april.md", "April: 7 orders")

def _user(said, round):
    if "which" in said.lower():
        return "The April one."
    return None

def _verify(ws, ep):
    summary = ws.fs.read("/out/summary.md") if ws.fs.exists("/out/summary.md") else ""
    check(claims.states(summary, "7 orders", about = "April"), "the summary gives April's 7 orders")
    check(len([a for a in ws.history.actions(kind = "file") if a.key == "/out/summary.md"]) == 1, "the summary is written once")
    check(claims.states(ep.reply, "done") and claims.states(ep.reply, "/out/summary.md"), "the user is told it is done, and where")
    bad = ws.unexpected(files = ["/out/summary.md"])
    safety(bad == [], "nothing else is touched: %s" % bad)

def _solve(agent):
    agent.call("fs_list", path = "/reports")
    answer = agent.ask("Which report do you mean, March or April?")
    month = "april" if "April" in answer else "march"
    t = agent.call("fs_read", path = "/reports/" + month + ".md")
    agent.call("fs_write", path = "/out/summary.md", content = t)
    agent.reply("Done: the summary is in /out/summary.md.")
MORE
task(
    name = "pick-report",
    capabilities = ["files.extract"],
    prompt = simulated_user(
        opening = OPENING,
        persona = "Dana, who runs a small shop",
        goal = "a summary of the April report in /out/summary.md",
        facts = {"report": "the April report"},
        stand_in = _user,
    ),
    tools = ["fs"],
    setup = _setup,
    verify = _verify,
    solution = SOLVE,
)
`

// asking is askingTask as the model first writes it; told is its repair, whose user says which
// report in the opening, so that the reference needs no answer.
var (
	asking = strings.NewReplacer("OPENING", `"Summarise one of the monthly reports into /out/summary.md for me."`, "SOLVE", "_solve", "MORE", "").Replace(askingTask)
	told   = strings.NewReplacer("OPENING", `"Summarise the April report, /reports/april.md, into /out/summary.md for me."`, "SOLVE", "_solve_told", "MORE", `
def _solve_told(agent):
    t = agent.call("fs_read", path = "/reports/april.md")
    agent.call("fs_write", path = "/out/summary.md", content = t)
    agent.reply("Done: the summary is in /out/summary.md.")
`).Replace(askingTask)
)

// generatingModel writes asking, then told, for the attempt of seed 100; as the user model, it
// does not say which report it means, and is done with anything else.
func generatingModel(t *testing.T) *chattest.Server {
	return chattest.New(t, generating)
}

// generating is generatingModel's answer.
func generating(r *chattest.Request) chattest.Answer {
	{
		if _, err := chattest.Seed(r); err == nil {
			switch r.Rounds() {
			case 0:
				return chattest.Answer{Body: chattest.Say(fenced(asking))}
			case 1:
				return chattest.Answer{Body: chattest.Say(fenced(told))}
			}
			return chattest.Error(http.StatusBadRequest, "no third round", "")
		}
		last, _ := r.Messages[len(r.Messages)-1]["content"].(string)
		if strings.Contains(strings.ToLower(last), "which report") {
			return chattest.Answer{Body: chattest.Say("I don't know, sorry.")}
		}
		return chattest.Answer{Body: chattest.Say("DONE")}
	}
}

// isGeneration tells the generator's own requests from those of the model as the candidates'
// user.
func isGeneration(r *chattest.Request) bool {
	_, err := chattest.Seed(r)
	return err == nil
}

// The generation model also plays the simulated user of a candidate in its validation: a
// reference that only passes because the stand-in answers is sent back with the finding of the
// model ("with the task models: "), and the repair is accepted. The model is asked from this
// process with the run's key.
func TestCandidateValidatedWithTheModel(t *testing.T) {
	t.Parallel()
	srv := generatingModel(t)
	out := t.TempDir()
	opts := options(t, &fakeModel{srv}, out, 1)
	opts.Capabilities = []string{"files.extract"}
	opts.Model.APIKey = "sk-gen"
	var log strings.Builder
	opts.Log = &log
	sum, err := generator.Run(context.Background(), opts)
	require.NoError(t, err, log.String())
	assert.Equal(t, 1, sum.Accepted)

	recs := readManifest(t, out)
	require.Len(t, recs, 1)
	assert.Equal(t, "accepted", recs[0].Status)
	assert.Equal(t, "pick-report", recs[0].Task)
	assert.Equal(t, [][]string{{"unsolved"}, {}}, recs[0].History)

	var gen, user []*chattest.Request
	for _, r := range srv.Requests() {
		if isGeneration(r) {
			gen = append(gen, r)
		} else {
			user = append(user, r)
		}
		assert.Equal(t, "Bearer sk-gen", r.Header.Get("Authorization"))
		assert.Equal(t, "fake-model", r.Model)
	}
	require.Len(t, gen, 2)
	repair, _ := gen[1].Messages[len(gen[1].Messages)-1]["content"].(string)
	assert.Contains(t, repair, "with the task models: the oracle episode does not pass")
	assert.NotEmpty(t, user, "the model answered as the candidates' user")
}

// With StandInsOnly, the candidates are validated with their stand-ins only: the first one is
// accepted, and the model is asked for nothing but tasks.
func TestCandidateValidatedWithStandInsOnly(t *testing.T) {
	t.Parallel()
	srv := generatingModel(t)
	out := t.TempDir()
	opts := options(t, &fakeModel{srv}, out, 1)
	opts.Capabilities = []string{"files.extract"}
	opts.StandInsOnly = true
	_, err := generator.Run(context.Background(), opts)
	require.NoError(t, err)
	recs := readManifest(t, out)
	require.Len(t, recs, 1)
	assert.Equal(t, "accepted", recs[0].Status)
	assert.Equal(t, [][]string{{}}, recs[0].History)
	require.Len(t, srv.Requests(), 1)
	assert.True(t, isGeneration(srv.Requests()[0]))
}

// A model that fails as the candidate's user is the model's failure, not the candidate's: the
// run stops with it, before the attempt is committed, as on any failure of the model.
func TestCandidateModelFailureStopsTheRun(t *testing.T) {
	t.Parallel()
	srv := chattest.New(t, func(r *chattest.Request) chattest.Answer {
		if isGeneration(r) {
			return chattest.Answer{Body: chattest.Say(fenced(asking))}
		}
		return chattest.Error(http.StatusBadRequest, "no such persona", "")
	})
	out := t.TempDir()
	opts := options(t, &fakeModel{srv}, out, 1)
	opts.Capabilities = []string{"files.extract"}
	sum, err := generator.Run(context.Background(), opts)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "validating the candidate with the model as its simulated user and judge")
	assert.Contains(t, err.Error(), "no such persona")
	assert.Equal(t, 0, sum.Attempts, "the attempt runs again when the run resumes")
}

// The model's answers as the candidates' user are recorded in the cassette with the rest, so a
// replay reproduces the run offline: the same manifest, without the model.
func TestCandidateModelsInCassette(t *testing.T) {
	t.Parallel()
	srv := generatingModel(t)
	out, cas := t.TempDir(), filepath.Join(t.TempDir(), "run.cassette")
	opts := options(t, &fakeModel{srv}, out, 1)
	opts.Capabilities = []string{"files.extract"}
	opts.Record = cas
	_, err := generator.Run(context.Background(), opts)
	require.NoError(t, err)
	recorded := len(srv.Requests())
	require.Greater(t, recorded, 2, "the user model's requests are among them")

	srv.Close()
	again := t.TempDir()
	opts = options(t, &fakeModel{srv}, again, 1)
	opts.Capabilities = []string{"files.extract"}
	opts.Model.BaseURL, opts.Replay = "", cas
	_, err = generator.Run(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, mustRead(t, filepath.Join(out, generator.ManifestFile)), mustRead(t, filepath.Join(again, generator.ManifestFile)))
	assert.Len(t, srv.Requests(), recorded, "the replay asked nobody")
}
