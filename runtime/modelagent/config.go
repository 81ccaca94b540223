package modelagent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
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
	// TopP is sent as top_p when set (0 to 1); nil leaves it to the server.
	TopP *float64
	// Stop are stop sequences, sent as stop when there are any.
	Stop []string
	// ExtraBody holds fields merged into the top level of every request body, after everything
	// the agent sets: its keys win (chat_template_kwargs, return_token_ids, logprobs, top_k...).
	// model, messages, tools and stream are the agent's and are refused.
	ExtraBody *jsonv.Object
	// Headers are sent on every request, after the Authorization of APIKey (so an Authorization
	// given here wins). Traces record their names, never their values.
	Headers http.Header
	// HostHeaders are the names of headers that HTTPClient adds on its way out, which Headers
	// does not hold: an isolated worker's requests are sent by the process that started it,
	// with the headers the worker never sees. Describe lists them with the names of Headers.
	HostHeaders []string

	// ToolCallFormat says how tool calls that a model writes as text are read, when its answer
	// has no tool_calls (a server without a tool parser for the model, or one that missed it):
	// FormatAuto ("" too) tries every text format, FormatNative reads none, and a format's name
	// (FormatHermes, FormatQwenXML, FormatLlama, FormatMistral) reads only that one. A call is
	// taken from text only when it names one of the episode's tools.
	ToolCallFormat string
	// ReasoningHistory says whether the reasoning of past answers goes back to the model, as
	// reasoning_content on its assistant messages: ReasoningKeep or ReasoningDrop. "" (or
	// ReasoningAuto) keeps it for the models known to need it in a tool-call loop and drops it
	// for the rest (KeepsReasoning): some servers refuse the field, and most chat templates leave
	// it out anyway. With keep, a past tool-call message without reasoning gets
	// "reasoning_content": "" (DeepSeek's thinking mode refuses one without the field).
	ReasoningHistory string
	// ToolChoice is sent as tool_choice on every request that carries tools: ToolChoiceAuto,
	// ToolChoiceNone or ToolChoiceRequired; "" sends none (the server's default). vLLM takes a
	// request with tools and no tool_choice as "auto", which it refuses unless it was started
	// with --enable-auto-tool-choice and a --tool-call-parser.
	ToolChoice string

	// System is the system prompt; "" means DefaultSystemPrompt. "{address}", "{now}",
	// "{timezone}" and "{local_now}" in it are replaced by the user's mail address, the virtual
	// time (UTC), the user's time zone and the time there when the episode starts (FillSystem).
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

// The values of Config.ToolCallFormat.
const (
	FormatAuto    = "auto"
	FormatNative  = "native"
	FormatHermes  = "hermes"   // <tool_call>{"name": ..., "arguments": {...}}</tool_call> (Hermes, Qwen2.5, Qwen3)
	FormatQwenXML = "qwen-xml" // <tool_call><function=NAME><parameter=KEY>VALUE</parameter></function></tool_call> (Qwen3-Coder)
	FormatLlama   = "llama"    // {"name": ..., "parameters": {...}}, alone or after <|python_tag|> (Llama 3.x)
	FormatMistral = "mistral"  // [TOOL_CALLS][{"name": ..., "arguments": {...}}] or [TOOL_CALLS]NAME[ARGS]{...}
)

// ToolCallFormats are the values Config.ToolCallFormat accepts besides "".
var ToolCallFormats = []string{FormatAuto, FormatNative, FormatHermes, FormatQwenXML, FormatLlama, FormatMistral}

// The values of Config.ToolChoice besides "" (not sent).
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// ToolChoices are the values Config.ToolChoice accepts besides "".
var ToolChoices = []string{ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired}

// The values of Config.ReasoningHistory.
const (
	ReasoningAuto = "auto"
	ReasoningKeep = "keep"
	ReasoningDrop = "drop"
)

// reasoningModels are the parts of model names, lowercase, of the models known to need their
// reasoning back in a tool-call loop: DeepSeek's (its API's thinking mode, on by default for
// deepseek-reasoner since V3.2, V4 and the flash models, refuses a past tool-call message without
// its reasoning_content, and ignores the reasoning of the other messages) and Kimi's thinking
// models (K2 Thinking, K2.5). Names are matched by substring so that the forms of hosting
// services ("deepseek-ai/DeepSeek-V4-Flash", "moonshotai/Kimi-K2-Thinking") match too.
var reasoningModels = []string{"deepseek", "kimi-k2-thinking", "kimi-k2.5", "kimi-k2p5"}

// KeepsReasoning reports whether ReasoningHistory "" keeps the reasoning of a model: when its
// name, in any case, contains deepseek, kimi-k2-thinking, kimi-k2.5 or kimi-k2p5.
func KeepsReasoning(model string) bool {
	m := strings.ToLower(model)
	for _, s := range reasoningModels {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// refusedExtra are the request fields ExtraBody may not set: the agent's own, and stream (the
// agent reads one JSON answer).
var refusedExtra = map[string]string{
	"model":    "the model is Model (--model)",
	"messages": "the agent writes the conversation",
	"tools":    "the tools are the task's",
	"stream":   "the agent reads whole answers, not streams",
}

// refusedHeaders are the headers Headers may not set: the HTTP client's own.
var refusedHeaders = map[string]bool{"Host": true, "Content-Length": true, "Content-Type": true,
	"Transfer-Encoding": true, "Connection": true}

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
	if p := cfg.TopP; p != nil && (math.IsNaN(*p) || *p < 0 || *p > 1) {
		return cfg, fmt.Errorf("modelagent: top_p %v must be a number from 0 to 1", *p)
	}
	for _, s := range cfg.Stop {
		if s == "" {
			return cfg, errors.New("modelagent: a stop sequence is empty")
		}
	}
	if err := checkExtraBody(cfg.ExtraBody); err != nil {
		return cfg, err
	}
	headers, err := checkHeaders(cfg.Headers)
	if err != nil {
		return cfg, err
	}
	cfg.Headers = headers
	switch f := strings.TrimSpace(cfg.ToolCallFormat); {
	case f == "":
		cfg.ToolCallFormat = FormatAuto
	case slices.Contains(ToolCallFormats, f):
		cfg.ToolCallFormat = f
	default:
		return cfg, fmt.Errorf("modelagent: tool call format %q is not one of %s", cfg.ToolCallFormat, strings.Join(ToolCallFormats, ", "))
	}
	cfg.ToolChoice = strings.TrimSpace(cfg.ToolChoice)
	if cfg.ToolChoice != "" && !slices.Contains(ToolChoices, cfg.ToolChoice) {
		return cfg, fmt.Errorf("modelagent: tool choice %q is not one of %s", cfg.ToolChoice, strings.Join(ToolChoices, ", "))
	}
	switch strings.TrimSpace(cfg.ReasoningHistory) {
	case "", ReasoningAuto:
		cfg.ReasoningHistory = ReasoningDrop
		if KeepsReasoning(cfg.Model) {
			cfg.ReasoningHistory = ReasoningKeep
		}
	case ReasoningKeep:
		cfg.ReasoningHistory = ReasoningKeep
	case ReasoningDrop:
		cfg.ReasoningHistory = ReasoningDrop
	default:
		return cfg, fmt.Errorf("modelagent: reasoning history %q is not auto, keep or drop", cfg.ReasoningHistory)
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

// checkExtraBody refuses the fields of an extra body that are the agent's.
func checkExtraBody(o *jsonv.Object) error {
	if o == nil {
		return nil
	}
	for _, m := range o.Members {
		if why, ok := refusedExtra[m.Key]; ok {
			return fmt.Errorf("modelagent: the extra body may not set %q: %s", m.Key, why)
		}
	}
	if _, err := jsonv.Encode(o); err != nil {
		return fmt.Errorf("modelagent: the extra body: %v", err)
	}
	return nil
}

// checkHeaders checks the names and values of extra headers and returns them with canonical
// names (a copy).
func checkHeaders(h http.Header) (http.Header, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := http.Header{}
	for _, name := range sortedKeys(h) {
		if !validHeaderName(name) {
			return nil, fmt.Errorf("modelagent: %q is not a header name", name)
		}
		canon := http.CanonicalHeaderKey(name)
		if refusedHeaders[canon] {
			return nil, fmt.Errorf("modelagent: the header %s is the HTTP client's, not one to set", canon)
		}
		for _, v := range h[name] {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, fmt.Errorf("modelagent: the value of the header %s has a line break or a NUL", canon)
			}
			out[canon] = append(out[canon], v)
		}
	}
	return out, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// sortedKeys are the keys of h in order.
func sortedKeys(h http.Header) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
