// Package simmodel answers for the models inside a task with real models: a simulated user
// (simulated_user) and a judge (judge() in a verifier), each behind an OpenAI-compatible
// chat-completions endpoint. New gives the episode.Models of RunOptions.Models; without it the
// task's stand-ins answer.
//
// The engine builds every request (the chat messages, system first); this package sends it as it
// is through modelagent.Chat, so a request is retried like the agent's (408, 429, 5xx, timeouts,
// dropped connections) and one that fails for good is a *modelagent.RequestError, which stops the
// episode with the code model-error. What the model answers is read here:
//
//   - A user model's answer is the user's next message, trimmed, without a leading <think>
//     block. The answer DONE (in any case, with trailing dots or exclamation marks) says the user
//     is satisfied and has nothing more to say in the turn; so does an answer whose last line is
//     DONE, and then the text before that line is dropped: a done user's answer is not shown to
//     the agent (UserAsk.Content is "" when Done). An empty answer is done too (the user says
//     nothing more). A longer answer than a chat message may hold (limits.ChatText) is cut.
//   - A judge model's answer holds one JSON object {"passed": bool, "score": number, "reason":
//     string}, alone, in a code fence, or with text around it. The score is clamped to [0, 1];
//     without "passed" the verdict passes when the score is at least 0.5, and without "score" the
//     score is 1 for a verdict that passed and 0 for one that did not. The reason is made one line
//     of at most MaxReason bytes. An answer without such an object is a verdict that failed, with
//     the score 0 and a reason that quotes the start of the answer.
package simmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	openai "github.com/sashabaranov/go-openai"
)

// Source is the Source of the exchanges and verdicts a model gave.
const Source = "model"

// Bounds of what is read from a model's answer.
const (
	// MaxAnswer is the longest answer of a user model that is kept (a chat message's limit).
	MaxAnswer = limits.ChatText
	// MaxReason is the longest reason of a verdict.
	MaxReason = 1 << 10
	// maxVerdictText is how much of a judge's answer is searched for the verdict.
	maxVerdictText = 256 << 10
	// maxTries is how many places of a judge's answer a verdict is looked for at.
	maxTries = 100
	// shownAnswer is how many characters of an answer that is no verdict its reason quotes.
	shownAnswer = 80
)

// New returns the Models whose User sends every simulated user's request to the model user and
// whose Judge sends every judge's request to the model judge. A nil configuration leaves that
// one to the task's stand-ins (its func is nil); both nil give nil. The configurations are
// checked as modelagent.NewChat checks them (System is not used). The Models may serve many
// episodes at once.
func New(user, judge *modelagent.Config) (*episode.Models, error) {
	if user == nil && judge == nil {
		return nil, nil
	}
	m := &episode.Models{}
	if user != nil {
		c, err := modelagent.NewChat(*user)
		if err != nil {
			return nil, fmt.Errorf("the user model: %w", err)
		}
		name := strings.TrimSpace(user.Model)
		m.User = func(ctx context.Context, x *episode.UserAsk) error {
			text, err := complete(ctx, c, x.Request)
			if err != nil {
				return err
			}
			x.Content, x.Done = UserAnswer(text)
			x.Source, x.Model = Source, name
			return nil
		}
	}
	if judge != nil {
		c, err := modelagent.NewChat(*judge)
		if err != nil {
			return nil, fmt.Errorf("the judge model: %w", err)
		}
		name := strings.TrimSpace(judge.Model)
		m.Judge = func(ctx context.Context, j *episode.JudgeCall) error {
			text, err := complete(ctx, c, j.Request)
			if err != nil {
				return err
			}
			j.Passed, j.Score, j.Reason = Verdict(text)
			j.Source, j.Model = Source, name
			return nil
		}
	}
	return m, nil
}

// complete sends the engine's request (chat messages as JSON values) and gives the answer's
// text.
func complete(ctx context.Context, c *modelagent.Chat, request []jsonv.Value) (string, error) {
	msgs, err := messagesOf(request)
	if err != nil {
		return "", err
	}
	ans, err := c.Complete(ctx, msgs)
	if err != nil {
		return "", err
	}
	return ans.Text, nil
}

// messagesOf reads the chat messages of a request the engine built.
func messagesOf(request []jsonv.Value) ([]openai.ChatCompletionMessage, error) {
	raw, err := jsonv.Encode(request)
	if err != nil {
		return nil, fmt.Errorf("the request to the model is not JSON: %v", err)
	}
	var msgs []openai.ChatCompletionMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, fmt.Errorf("the request to the model is not a list of chat messages: %v", err)
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("the request to the model has no message")
	}
	return msgs, nil
}

// UserAnswer reads a user model's answer (see the package documentation): the user's message,
// or done.
func UserAnswer(text string) (content string, done bool) {
	t := strings.TrimSpace(withoutThinking(text))
	if t == "" || isDone(t) {
		return "", true
	}
	if k := strings.LastIndexByte(t, '\n'); k >= 0 && isDone(t[k+1:]) {
		return "", true
	}
	return clip(t, MaxAnswer), false
}

// isDone reports whether a line is DONE, in any case, with trailing dots or exclamation marks.
func isDone(line string) bool {
	return strings.EqualFold(strings.TrimRight(strings.TrimSpace(line), ".!"), "DONE")
}

// withoutThinking is an answer without a leading <think> block (modelagent.SplitThink).
func withoutThinking(text string) string {
	content, _, _ := modelagent.SplitThink(text)
	return content
}

// Verdict reads a judge model's answer (see the package documentation).
func Verdict(text string) (passed bool, score float64, reason string) {
	t := strings.TrimSpace(withoutThinking(text))
	if v, ok := findVerdict(clip(t, maxVerdictText)); ok {
		return v.passed, v.score, v.reason
	}
	if t == "" {
		return false, 0, "the judge's answer was not a verdict: it was empty"
	}
	return false, 0, "the judge's answer was not a verdict: " + oneLine(clipRunes(t, shownAnswer))
}

type verdict struct {
	passed bool
	score  float64
	reason string
}

// findVerdict reads the first JSON object in s that is a verdict: one with "passed" or "score"
// of the right type. Code fences and text around it do not matter: the object may start at any
// "{" (one inside an object that is no verdict too), and the first maxTries are tried.
func findVerdict(s string) (verdict, bool) {
	for i, tries := 0, 0; i < len(s) && tries < maxTries; i, tries = i+1, tries+1 {
		k := strings.IndexByte(s[i:], '{')
		if k < 0 {
			break
		}
		i += k
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		dec.UseNumber()
		var obj map[string]json.RawMessage
		if dec.Decode(&obj) != nil {
			continue
		}
		if v, ok := verdictOf(obj); ok {
			return v, true
		}
	}
	return verdict{}, false
}

// verdictOf reads the fields of a verdict.
func verdictOf(obj map[string]json.RawMessage) (verdict, bool) {
	var v verdict
	passed, hasPassed := boolOf(obj["passed"])
	score, hasScore := numberOf(obj["score"])
	switch {
	case !hasPassed && !hasScore:
		return v, false
	case !hasScore:
		score = 0
		if passed {
			score = 1
		}
	case !hasPassed:
		passed = score >= 0.5
	}
	v.passed, v.score = passed, math.Min(1, math.Max(0, score))
	var reason string
	if json.Unmarshal(obj["reason"], &reason) == nil {
		v.reason = clip(oneLine(strings.TrimSpace(reason)), MaxReason)
	}
	return v, true
}

// boolOf reads true or false, also written as a string; null is no value.
func boolOf(raw json.RawMessage) (bool, bool) {
	if raw == nil || string(raw) == "null" {
		return false, false
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// numberOf reads a finite number, also written as a string; null is no value.
func numberOf(raw json.RawMessage) (float64, bool) {
	var n json.Number
	if raw == nil || string(raw) == "null" || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// clip cuts s to at most n bytes, at the start of a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// clipRunes cuts s to at most n characters, with "…" when it was longer.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
