package generator_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/internal/chattest"
	"github.com/coworkenv/coworkenv/validate/redteam"
)

// realSizeRuns is a red team's answer of the real size: 4 hacks and 2 careful runs, each as long
// as the runs of testdata/redteam/runs.json, in a ```json block after a paragraph of prose.
func realSizeRuns(b *testing.B) string {
	var runs []map[string]any
	data, err := os.ReadFile("testdata/redteam/runs.json")
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, &runs); err != nil {
		b.Fatal(err)
	}
	var out []map[string]any
	for i := 0; i < redteam.DefaultHacks; i++ {
		out = append(out, runs[0])
	}
	for i := 0; i < redteam.DefaultCareful; i++ {
		out = append(out, runs[1])
	}
	data, _ = json.MarshalIndent(out, "", "  ")
	return "I read the verifier closely. It checks the sent folder as the episode ends and forgives a moved " +
		"message, so a wrong reply hidden in the trash may pass; the date could also be stated about the wrong " +
		"painting. Here are my runs.\n\n```json\n" + string(data) + "\n```\n"
}

// BenchmarkRedTeamCost measures what the red team adds to an accepted task, with a fake model
// that answers in the real size (a task file of the golden output; 4 hacks and 2 careful runs)
// and counts a token per 4 bytes of each request's body and answer, as newFake does: the
// requests, prompt and completion tokens of the red team per accepted task, beside those of the
// generation itself (with the real language reference in its prompt).
func BenchmarkRedTeamCost(b *testing.B) {
	task := fenced(strongLoan(b))
	runs := realSizeRuns(b)
	srv := chattest.New(b, func(r *chattest.Request) chattest.Answer {
		text := task
		if isRedTeam(r) {
			text = runs
		}
		return chattest.Answer{Body: chattest.Completion{Model: r.Model, Message: chattest.Text(text),
			PromptTokens: len(r.Body) / 4, CompletionTokens: len(text) / 4}.String()}
	})
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) { redTeamCost(b, srv, on) })
	}
	if !strings.Contains(runs, "```json") {
		b.Fatal("no runs")
	}
}

func redTeamCost(b *testing.B, srv *chattest.Server, on bool) {
	var sum generator.Summary
	var accepted int
	for i := 0; i < b.N; i++ {
		opts := options(nil, &fakeModel{srv}, b.TempDir(), 1)
		opts.Reference = "" // the real one
		opts.Jobs = 1
		if on {
			opts.RedTeam = &redteam.Defaults
		}
		s, err := generator.Run(context.Background(), opts)
		if err != nil || s.Accepted != 1 {
			b.Fatalf("%v: %+v", err, s)
		}
		accepted += s.Accepted
		sum.Tokens.Prompt += s.Tokens.Prompt
		sum.Tokens.Completion += s.Tokens.Completion
		sum.RedTeam.Requests += s.RedTeam.Requests
		sum.RedTeam.Tokens.Prompt += s.RedTeam.Tokens.Prompt
		sum.RedTeam.Tokens.Completion += s.RedTeam.Tokens.Completion
	}
	per := func(n int) float64 { return float64(n) / float64(accepted) }
	b.ReportMetric(per(sum.RedTeam.Requests), "redteam-requests/task")
	b.ReportMetric(per(sum.RedTeam.Tokens.Prompt), "redteam-prompt-tokens/task")
	b.ReportMetric(per(sum.RedTeam.Tokens.Completion), "redteam-completion-tokens/task")
	b.ReportMetric(per(sum.Tokens.Prompt), "gen-prompt-tokens/task")
	b.ReportMetric(per(sum.Tokens.Completion), "gen-completion-tokens/task")
}
