package episode

import (
	"context"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// The models inside a task: a simulated user (a turn's user declared with simulated_user) answers
// the agent within its turn, and a judge (judge() in a verifier) scores a text against a rubric.
// Each has a deterministic stand-in in the task (a Starlark function) that answers when no model
// is given; Models, when set, answers instead. Every exchange is reported to the observer
// (OnUserAsk, OnJudge), so a trace records it and replay can give the recorded answer back.

// UserAsk is one exchange with a simulated user: the agent's message and the user's answer.
type UserAsk struct {
	Turn int // 0-based
	// Round counts the user's answers in this turn before this one (0 for the first exchange).
	Round int
	// Said is the agent's message the user answers.
	Said string
	// Calls is how many tool calls the episode had made before the exchange (its place among
	// Result.Calls: what the agent may have learnt from it, it learnt before call Calls).
	Calls int
	// Request is the chat-completions conversation the engine built for a user model from the
	// declaration and the turn so far (system message first); RequestSHA256 is the SHA-256 of
	// its JSON encoding (jsonv), which replay compares.
	Request       []jsonv.Value
	RequestSHA256 string
	// Content is the user's answer, "" when Done.
	Content string
	// Done says the user has nothing more to say in this turn: satisfied, or its rounds spent.
	Done bool
	// Source says who answered: "stand-in", "model", or "rounds" (the rounds were spent and
	// nobody was asked).
	Source string
	// Model is the user model's name when Source is "model".
	Model string
}

// JudgeCall is one verdict of a judge.
type JudgeCall struct {
	Turn *int // the turn whose verifier asked, nil for the task's final verifier
	// Rubric and Text are what the verifier gave the judge.
	Rubric, Text string
	// Request is the chat-completions conversation the engine built for a judge model;
	// RequestSHA256 is the SHA-256 of its JSON encoding (jsonv).
	Request       []jsonv.Value
	RequestSHA256 string
	// The verdict: passed, a score in [0, 1], a one-line reason.
	Passed bool
	Score  float64
	Reason string
	// Source says who judged: "stand-in" or "model"; Model is the judge model's name.
	Source string
	Model  string
}

// Models answers for the models inside a task instead of their stand-ins (RunOptions.Models).
type Models struct {
	// User, when set, answers for every simulated user: it is given the exchange with Turn,
	// Round, Said, Request and RequestSHA256 filled in and sets Content, Done, Source and Model.
	User func(ctx context.Context, x *UserAsk) error
	// Judge, when set, judges for every judge() call: it is given the call with Turn, Rubric,
	// Text, Request and RequestSHA256 filled in and sets Passed, Score, Reason, Source and Model.
	Judge func(ctx context.Context, j *JudgeCall) error
}
