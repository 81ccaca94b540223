package episode_test

import (
	"context"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A verifier's claims read the task's time zone and region, the episode's clock and the names of
// the workspace; every statement it checks is in Result.Claims.
const claimsTask = `
def _setup(ws):
    ws.mail.address = "iris.bakker@verdant.example"
    ws.contacts.add(name = "Dirk Peeters", email = "dirk.peeters@verdant.example", company = "De Kaasmakers B.V.")
    ws.mail.deliver(sender = "noor.visser@verdant.example", subject = "cut-off?", body = "When is it?")

def _solve(agent):
    agent.call("mail_send", to = ["noor.visser@verdant.example"], subject = "Cut-off",
               body = "Hi Noor, the Kaasmakers cut-off is tomorrow at 2:30 pm. Call Dirk on 010 555 0142.")
    agent.reply("Told Noor: the Kaasmakers cut-off is tomorrow (Tuesday) at 14:30.")

def _verify(ws, ep):
    body = ws.mail.messages(folder = "sent")[0] if ws.mail.messages(folder = "sent") else None
    check(claims.states(body, "14:30", about = ["cut-off", "Kaasmakers"]), "time, in the user's zone, about the company of a contact")
    check(claims.states(body, "2026-01-06", about = "cut-off"), "tomorrow, by the clock when the mail was sent")
    check(claims.states(body, "+31 10 555 0142", about = "Dirk"), "a national number of the task's region")
    check(claims.states(ep.reply, "2026-01-06T13:30:00Z", about = "cut-off"), "an instant, read in the user's time zone")
    check(not claims.states(body, "Tulpen", about = "cut-off"), "no other company")

task(name = "claims-env", prompt = "Tell Noor the cut-off.", tools = ["mail"], timezone = "+01:00", region = "NL",
     setup = _setup, verify = _verify, solution = _solve)
`

func TestClaimsInVerifiers(t *testing.T) {
	t.Parallel()
	r := run(t, load(t, claimsTask)["claims-env"], episode.Oracle{})
	require.Nil(t, r.Err)
	assert.True(t, r.Passed, "%v", r.FailedItems())
	require.Len(t, r.Claims, 5)
	assert.Equal(t, "states", r.Claims[0].Fn)
	assert.True(t, r.Claims[0].Verdict.OK, r.Claims[0].Verdict.Why)
	assert.Equal(t, "14:30", r.Claims[0].Verdict.Support.Value)
	assert.Contains(t, r.Claims[0].Text, "Hi Noor")
	assert.False(t, r.Claims[4].Verdict.OK)
}

// Without timezone and region, the same task reads 2:30 pm as 14:30 but the national phone
// number is no number, and the instant is read in UTC.
func TestClaimsWithoutTimezoneOrRegion(t *testing.T) {
	t.Parallel()
	src := claimsTask[:len(claimsTask)] // the same task, declared without timezone and region
	src = replace(src, `timezone = "+01:00", region = "NL",`, "")
	r := run(t, load(t, src)["claims-env"], episode.Oracle{})
	require.Nil(t, r.Err)
	var failed []string
	for _, it := range r.FailedItems() {
		failed = append(failed, it.Message)
	}
	assert.Equal(t, []string{"a national number of the task's region", "an instant, read in the user's time zone"}, failed)
}

func replace(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	panic("no " + old)
}

// judge(claims = [...]): the stand-in is the claims; a judge model is told them in words.
func TestJudgeWithClaims(t *testing.T) {
	t.Parallel()
	src := `
def _verify(ws, ep):
    judge(ep.reply, "The reply gives the cut-off.", claims = [claims.state("14:30", about = "cut-off"), claims.deny("16:15", about = "cut-off")])

task(name = "j", prompt = "p", tools = [], verify = _verify, solution = lambda agent: agent.reply(REPLY))
`
	for reply, pass := range map[string]bool{
		"The cut-off is 14:30, not 16:15.":      true,
		"The cut-off is 14:30.":                 false, // 16:15 is not denied
		"The cut-off is 14:30 or 16:15.":        false,
		"The cut-off is 2:30 pm (not 4:15 pm).": true,
	} {
		task := load(t, replace(src, "REPLY", `"`+reply+`"`))["j"]
		r := run(t, task, episode.Oracle{})
		require.Nil(t, r.Err)
		assert.Equal(t, pass, r.Passed, "%s: %v", reply, r.FailedItems())
		if pass {
			assert.Len(t, r.Claims, 2, "the stand-in's statements are recorded")
		} else {
			assert.NotEmpty(t, r.Claims, "the stand-in's statements are recorded")
		}
	}
	// the model's rubric
	task := load(t, replace(src, "REPLY", `"x"`))["j"]
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	require.Nil(t, d)
	var rubric string
	models := &episode.Models{Judge: func(_ context.Context, j *episode.JudgeCall) error {
		rubric = j.Rubric
		j.Passed = true
		return nil
	}}
	r := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{Models: models})
	require.Nil(t, r.Err)
	assert.Contains(t, rubric, "The reply gives the cut-off.\n\nThe text must also meet each of these:\n- The text states \"14:30\" about \"cut-off\"")
	assert.Contains(t, rubric, "- The text denies \"16:15\" about \"cut-off\"")
}

// The names of a state are the same whenever they are asked (they are kept by the state's hash),
// and a state with other mail has other names.
func TestWorkspaceNamesFollowTheState(t *testing.T) {
	t.Parallel()
	keys := func(st *workspace.State) []string {
		var out []string
		for _, n := range episode.WorkspaceNames(st) {
			out = append(out, n.Key)
		}
		return out
	}
	a := workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	_, err := a.Mail().Deliver(workspace.Delivery{Sender: "dirk.peeters@verdant.example", Subject: "hi", Body: "x"})
	require.NoError(t, err)
	b := a.Fork()
	_, err = b.Mail().Deliver(workspace.Delivery{Sender: "noor.visser@verdant.example", Subject: "hi", Body: "y"})
	require.NoError(t, err)
	first := keys(a)
	assert.Contains(t, first, "Dirk Peeters")
	assert.NotContains(t, first, "Noor Visser")
	assert.Contains(t, keys(b), "Noor Visser")
	assert.Equal(t, first, keys(a), "asked again")
	assert.Equal(t, first, keys(a.Fork()), "a fork with no change has the same names")
}
