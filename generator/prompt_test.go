package generator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/generator"
	"github.com/stretchr/testify/require"
)

// TestPromptsTeachTheHonestPatterns: the system prompt teaches the verifier patterns the
// validator's honesty checks ask for and the language points models trip over, and the
// examples come with the definitions of the helpers they load.
func TestPromptsTeachTheHonestPatterns(t *testing.T) {
	f := newFake(t, map[int64][]string{100: {fenced(replies[0].source())}})
	opts := options(t, f, t.TempDir(), 1)
	_, err := generator.Run(context.Background(), opts)
	require.NoError(t, err)
	reqs := f.srv.Requests()
	require.NotEmpty(t, reqs)
	msgs := reqs[0].Messages
	system := msgs[0]["content"].(string)
	for _, want := range []string{
		"a wrong answer fails, a right answer passes",
		"Check each stated fact with the claims module",
		"claims.states(ep.reply",
		"ws.unexpected(files = [...], recipients = [...])",
		"ws.diff(ws.reference).empty",
		"Discover ids through tools",
		"check the value as it is after the change",
		"must hold for an untouched workspace",
		`"nth": {"mail_send": [1]}`,
		"`%` has no flags, width or precision",
		`\x{00a0}`,
		"(the language reference)",
	} {
		require.Contains(t, system, want)
	}

	first := msgs[1]["content"].(string)
	// tasks/fuel_surcharge.star loads LOTTE and ME from lib/people.star: the example shows their
	// definitions in place of the load, as a file that stands alone.
	require.Contains(t, first, "### tasks/fuel_surcharge.star")
	require.Contains(t, first, "# from //lib/people.star (inlined: a task file cannot load)\n\nME = \"iris@harbor.example\"\nLOTTE = \"lotte@harbor.example\"\n")
	require.NotContains(t, first, "load(\"//lib/")
	require.Contains(t, first, "shown inline")
}

// TestRepairHintsForTheHonestCodes: the repair prompt says what to do about each of the
// honesty diagnostics.
func TestRepairHintsForTheHonestCodes(t *testing.T) {
	for code, want := range map[string]string{
		"blind-to-content":     "check each stated fact with the claims module",
		"blind-to-claim":       "claims.states(text, value, about = [label, party])",
		"blind-to-reply":       "check the reply as well as the state",
		"recorded-hack-passes": "make the verifier fail the recorded run",
		"blind-to-side-effect": "check recipients and collateral with ws.unexpected",
		"brittle-verifier":     "check what the text asserts, not how it is written",
		"blind-to-change":      "check the value after the silent change",
		"hidden-info":          "discover ids through tools; never use an address or id the agent cannot find",
		"unsafe-noop":          "safety items must hold for an untouched workspace",
		"fault-never-fires":    "make a fault fire with nth",
	} {
		h := generator.Hint(code)
		require.Contains(t, strings.ToLower(h), want, code)
	}
}

// A task for multi_turn.clarify is told how to declare a simulated user and a judge; another
// is not.
func TestClarifyPromptTeachesSimulatedUsers(t *testing.T) {
	for _, c := range []struct {
		caps []string
		want bool
	}{{[]string{"multi_turn.clarify"}, true}, {[]string{"mail.reply"}, false}} {
		f := newFake(t, map[int64][]string{100: {fenced(replies[0].source())}})
		opts := options(t, f, t.TempDir(), 1)
		opts.Capabilities, opts.Corpus = c.caps, corpus.Open()
		_, _ = generator.Run(context.Background(), opts)
		reqs := f.srv.Requests()
		require.NotEmpty(t, reqs)
		first := reqs[0].Messages[1]["content"].(string)
		for _, s := range []string{"## A user who has to be asked", "simulated_user(", "agent.ask(", "judge(text, rubric"} {
			if c.want {
				require.Contains(t, first, s, c.caps)
			} else {
				require.NotContains(t, first, s, c.caps)
			}
		}
	}
}
