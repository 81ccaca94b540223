package simmodel

import (
	"math"
	"testing"
)

// FuzzAnswers feeds model answers to the readers of a user model's answer and a judge's
// verdict: whatever a model writes, they return (no panic), a done answer has no content, and a
// verdict's score is a number in [0, 1] with a reason of one line.
func FuzzAnswers(f *testing.F) {
	for _, s := range []string{"DONE", "The March one.", "<think>x</think>DONE.", "ok\nDONE",
		"```json\n{\"passed\": true, \"score\": 0.8, \"reason\": \"clear\"}\n```", "{\"score\": 7}", "{\"passed\": \"yes\"}", "{{{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if content, done := UserAnswer(text); done && content != "" {
			t.Fatalf("done with content %q", content)
		}
		_, score, reason := Verdict(text)
		if math.IsNaN(score) || score < 0 || score > 1 {
			t.Fatalf("score %v", score)
		}
		for _, r := range reason {
			if r == '\n' {
				t.Fatalf("reason of several lines: %q", reason)
			}
		}
	})
}
