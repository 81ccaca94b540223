package modelagent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultMaxRetries = 4
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 30 * time.Second
	DefaultTimeout    = 10 * time.Minute
)

// Config configures one model agent. The zero value of every field but Model is usable.
type Config struct {
	// Model is the model name sent with every request (required).
	Model string
	// BaseURL of an OpenAI-compatible API, including the version path, like
	// "http://localhost:8000/v1". "" means DefaultBaseURL; FromEnv fills it from OPENAI_BASE_URL.
	BaseURL string
	// APIKey is sent as a bearer token; "" sends no Authorization header (local servers).
	APIKey string

	// Temperature is sent as given, 0 included; nil leaves it to the server.
	Temperature *float64
	// MaxTokens caps each completion; 0 sends no cap. It goes out as max_tokens, or as
	// max_completion_tokens for the models go-openai knows to reject max_tokens (o1, o3, o4, gpt-5...).
	MaxTokens int

	// System is the system prompt; "" means DefaultSystemPrompt. "{address}" and "{now}" in it are
	// replaced by the user's mail address and the virtual time when the episode starts.
	System string

	// MaxRetries is how often one request is retried after a 408, 429 or 5xx answer (501 excepted),
	// a timeout or a dropped connection. 0 means DefaultMaxRetries; a negative value, no retry.
	MaxRetries int
	// Backoff is the delay before the first retry; it doubles with every retry, up to MaxBackoff,
	// and each delay is drawn between half and all of that (jitter). 0 means DefaultBackoff.
	Backoff time.Duration
	// MaxBackoff caps one delay, also one asked for by a Retry-After header. 0 means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// JitterSeed seeds the jitter; the agent has its own source, never the global one. 0 gives
	// every agent of the process a different seed (its creation number), so that agents running
	// side by side do not retry in lockstep; the jitter changes timing only, never an episode.
	JitterSeed uint64
	// Timeout bounds one HTTP attempt (a timed-out attempt is retried). 0 means DefaultTimeout;
	// a negative value, no limit but the context's.
	Timeout time.Duration

	// HTTPClient sends the requests; nil means a client on http.DefaultTransport.
	HTTPClient *http.Client
	// Sleep waits between retries; nil means a timer that returns ctx.Err() as soon as ctx is done.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, if set, is told about every retry before its delay (for progress output).
	OnRetry func(attempt int, delay time.Duration, reason error)
}

// FromEnv returns cfg with an empty BaseURL taken from OPENAI_BASE_URL and an empty APIKey from
// OPENAI_API_KEY, so flags given by the caller win over the environment. getenv nil means os.Getenv.
func FromEnv(cfg Config, getenv func(string) string) Config {
	if getenv == nil {
		getenv = os.Getenv
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = getenv("OPENAI_BASE_URL")
	}
	if cfg.APIKey == "" {
		cfg.APIKey = getenv("OPENAI_API_KEY")
	}
	return cfg
}

// withDefaults checks cfg and fills in the defaults.
func (cfg Config) withDefaults() (Config, error) {
	cfg.Model = strings.TrimSpace(cfg.Model)
	if cfg.Model == "" {
		return cfg, errors.New("modelagent: a model name is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	cfg.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfg, fmt.Errorf("modelagent: base URL %q is not an http(s) URL like http://localhost:8000/v1", cfg.BaseURL)
	}
	if t := cfg.Temperature; t != nil && (math.IsNaN(*t) || math.IsInf(*t, 0) || *t < 0) {
		return cfg, fmt.Errorf("modelagent: temperature %v must be a number >= 0", *t)
	}
	if cfg.MaxTokens < 0 {
		return cfg, fmt.Errorf("modelagent: max tokens %d must be >= 0", cfg.MaxTokens)
	}
	if cfg.Backoff < 0 || cfg.MaxBackoff < 0 {
		return cfg, errors.New("modelagent: backoff delays must be >= 0")
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.Backoff {
		cfg.MaxBackoff = cfg.Backoff
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	return cfg, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DefaultSystemPrompt is the system prompt of an episode whose user has the given mail address
// (may be "") at the given virtual time (RFC 3339).
func DefaultSystemPrompt(address, now string) string {
	var b strings.Builder
	b.WriteString("You are a capable coworker: an assistant who works on the user's behalf in their own " +
		"workspace (their files, mail, calendar and business tools), using only the tools you are given. ")
	if address != "" {
		fmt.Fprintf(&b, "The user's mail address is %s; mail you send goes out from it. ", address)
	}
	if now != "" {
		if t, err := time.Parse(time.RFC3339, now); err == nil {
			fmt.Fprintf(&b, "It is now %s, %s. ", t.Weekday(), now)
		} else {
			fmt.Fprintf(&b, "It is now %s. ", now)
		}
		b.WriteString("Use this date and time, not your own, for words like today or next week. ")
	}
	b.WriteString("Look things up with the tools instead of guessing, act on the user's request, and do " +
		"not change anything they did not ask for. When you are done, or need to ask the user something, " +
		"answer in plain text without calling a tool: that message is your reply.")
	return b.String()
}

// UserContent is the user message as the model is shown it: when the virtual clock no longer
// shows the time the model was last told (stated: the system prompt's, then each note's), the
// message starts with a note of the new time, so that a model knows a day has passed between
// turns. The agent and export sft both build user messages with it.
func UserContent(user, now, stated string) string {
	if now == "" || stated == "" || now == stated {
		return user
	}
	when := now
	if t, err := time.Parse(time.RFC3339, now); err == nil {
		when = t.Weekday().String() + ", " + now
	}
	return "(It is now " + when + ".)\n\n" + user
}

// systemPrompt is the system message of an episode.
func (cfg *Config) systemPrompt(address, now string) string {
	if cfg.System == "" {
		return DefaultSystemPrompt(address, now)
	}
	return strings.NewReplacer("{address}", address, "{now}", now).Replace(cfg.System)
}
