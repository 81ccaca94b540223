package modelagent

import (
	"context"
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// Chat sends plain chat-completion requests (no tools) through the same transport as the agent:
// the request fields of the configuration are set (the temperature written as given, 0
// included; top_p, stop, the extra body) and its headers sent, 408/429/5xx answers, timeouts and
// dropped connections are retried with backoff, and failures come back as *RequestError. It serves
// callers that are not episodes, like the task generator. A Chat may be used by several
// goroutines at once; Attempts of a RequestError then counts the attempts of the last request.
type Chat struct {
	a *Agent
}

// NewChat checks cfg, fills in its defaults (System is not used) and returns a client.
func NewChat(cfg Config) (*Chat, error) {
	a, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return &Chat{a: a}, nil
}

// ChatAnswer is the first choice of an answer.
type ChatAnswer struct {
	// Text is the message's content (the text parts of a content array, or the refusal, when
	// content is empty).
	Text         string
	FinishReason string
	Usage        openai.Usage
}

// Complete asks the model for the next message of msgs.
func (c *Chat) Complete(ctx context.Context, msgs []openai.ChatCompletionMessage) (*ChatAnswer, error) {
	a := c.a
	resp, err := a.client.CreateChatCompletion(ctx, a.request(msgs, nil))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, a.requestError(err)
	}
	if len(resp.Choices) == 0 {
		return nil, &RequestError{Model: a.cfg.Model, URL: a.cfg.BaseURL, Message: "the answer has no choices",
			Attempts: a.tr.lastAttempts(), Err: errors.New("no choices")}
	}
	choice := resp.Choices[0]
	for _, ch := range resp.Choices {
		if ch.Index == 0 {
			choice = ch
			break
		}
	}
	return &ChatAnswer{Text: messageText(choice.Message), FinishReason: string(choice.FinishReason), Usage: resp.Usage}, nil
}
