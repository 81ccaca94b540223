package isolate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/runtime/simmodel"
)

// Agent names the agent of an episode, and for a model agent the settings it is made with, and
// the models that answer for the task's simulated users and judges: everything a worker needs to
// make them, and no secret. The models' key and HTTP client stay in the process that starts the
// workers (see Host).
type Agent struct {
	Name  string         `json:"name"` // oracle, noop, openai or script
	Model *ModelSettings `json:"model,omitempty"`
	// System is the model's system prompt as given (--system), with {address}, {now}, {timezone} and {local_now} still in
	// it; "" is the default prompt (SystemPrompt).
	System string `json:"system,omitempty"`
	// User and Judge are the settings of the models that answer for the task's simulated users
	// and judges (runtime/simmodel) with any agent; nil leaves them to the task's stand-ins. Their
	// requests go out with the key, HTTP client and waits of the agent's configuration in this
	// process (ModelConfig), never its extra headers.
	User  *ModelSettings `json:"user,omitempty"`
	Judge *ModelSettings `json:"judge,omitempty"`
	// Script is the recorded run the agent script plays (runtime/recorded).
	Script *recorded.Run `json:"script,omitempty"`
}

// The roles of the models inside a task, as ModelConfig and the calls of a worker name them.
const (
	RoleUser  = "user"
	RoleJudge = "judge"
)

// ModelConfig is the configuration in this process of the model of settings s that answers for
// the task's simulated users (RoleUser) or judges (RoleJudge): s, with the key, the HTTP client
// and the waits between retries of base (the agent's configuration here, which for an agent that
// is not a model holds only them). base's extra headers are the agent model's and are not sent;
// base's OnRetry is told about the retries, their reason naming the model's role.
func ModelConfig(role string, s *ModelSettings, base modelagent.Config) (modelagent.Config, error) {
	cfg, err := s.config()
	if err != nil {
		return cfg, err
	}
	cfg.HostHeaders = nil
	cfg.APIKey, cfg.HTTPClient, cfg.Sleep = base.APIKey, base.HTTPClient, base.Sleep
	cfg.OnRetry = roleRetry(role, base.OnRetry)
	return cfg, nil
}

// roleRetry is onRetry with the reason of a retry naming the model's role (nil for nil).
func roleRetry(role string, onRetry func(int, time.Duration, error)) func(int, time.Duration, error) {
	if onRetry == nil {
		return nil
	}
	return func(attempt int, delay time.Duration, reason error) {
		onRetry(attempt, delay, fmt.Errorf("the %s model: %w", role, reason))
	}
}

// NewModels are the models that answer for the task's simulated users and judges in an episode
// of a run in this process (ModelConfig of a.User and a.Judge with base), nil when a names none.
func NewModels(a Agent, base modelagent.Config) (*episode.Models, error) {
	return roleModels(a, func(role string, s *ModelSettings) (modelagent.Config, error) {
		return ModelConfig(role, s, base)
	})
}

// roleModels are the models of a's simulated users and judges, each configured by config from
// its settings, nil when a names none.
func roleModels(a Agent, config func(role string, s *ModelSettings) (modelagent.Config, error)) (*episode.Models, error) {
	var user, judge *modelagent.Config
	for _, m := range []struct {
		role string
		s    *ModelSettings
		dst  **modelagent.Config
	}{{RoleUser, a.User, &user}, {RoleJudge, a.Judge, &judge}} {
		if m.s == nil {
			continue
		}
		cfg, err := config(m.role, m.s)
		if err != nil {
			return nil, fmt.Errorf("the %s model: %v", m.role, err)
		}
		*m.dst = &cfg
	}
	return simmodel.New(user, judge)
}

// WithModels is agent with the models that answer for the task's simulated users and judges in
// its episode: RunEpisode runs agent itself, with m in its RunOptions (unless Run.Models is set).
// It lets a Run.NewAgent give the models of the episode with its agent.
func WithModels(agent episode.Agent, m *episode.Models) episode.Agent {
	if m == nil {
		return agent
	}
	return &withModels{Agent: agent, models: m}
}

type withModels struct {
	episode.Agent
	models *episode.Models
}

// ModelSettings are the fields of a modelagent.Config that a worker's model agent is made with.
// The extra headers are not among them (their values may be secrets): the pool adds them to
// the worker's requests (serveModel), and the worker knows only their names, for its trace.
type ModelSettings struct {
	Model       string        `json:"model"`
	BaseURL     string        `json:"base_url"`
	Temperature *float64      `json:"temperature,omitempty"`
	TopP        *float64      `json:"top_p,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Stop        []string      `json:"stop,omitempty"`
	MaxRetries  int           `json:"max_retries,omitempty"`
	Timeout     time.Duration `json:"timeout,omitempty"`
	Backoff     time.Duration `json:"backoff,omitempty"`
	MaxBackoff  time.Duration `json:"max_backoff,omitempty"`
	// ExtraBody is Config.ExtraBody as JSON text (its key order kept); "" for none.
	ExtraBody        string   `json:"extra_body,omitempty"`
	HeaderNames      []string `json:"header_names,omitempty"`
	ToolCallFormat   string   `json:"tool_call_format,omitempty"`
	ReasoningHistory string   `json:"reasoning_history,omitempty"`
	ToolChoice       string   `json:"tool_choice,omitempty"`
}

// SettingsOf are the settings of cfg that a worker may see.
func SettingsOf(cfg modelagent.Config) *ModelSettings {
	s := &ModelSettings{Model: cfg.Model, BaseURL: cfg.BaseURL, Temperature: cfg.Temperature, TopP: cfg.TopP, MaxTokens: cfg.MaxTokens,
		Stop: cfg.Stop, MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout, Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff,
		ToolCallFormat: cfg.ToolCallFormat, ReasoningHistory: cfg.ReasoningHistory, ToolChoice: cfg.ToolChoice}
	if cfg.ExtraBody != nil {
		s.ExtraBody = jsonv.MustEncode(cfg.ExtraBody)
	}
	for name := range cfg.Headers {
		s.HeaderNames = append(s.HeaderNames, http.CanonicalHeaderKey(name))
	}
	s.HeaderNames = append(s.HeaderNames, cfg.HostHeaders...)
	sort.Strings(s.HeaderNames)
	return s
}

// config is the configuration the settings describe; the extra body is not read back when it
// is not a JSON object (err).
func (s *ModelSettings) config() (modelagent.Config, error) {
	cfg := modelagent.Config{Model: s.Model, BaseURL: s.BaseURL, Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens,
		Stop: s.Stop, MaxRetries: s.MaxRetries, Timeout: s.Timeout, Backoff: s.Backoff, MaxBackoff: s.MaxBackoff,
		HostHeaders: s.HeaderNames, ToolCallFormat: s.ToolCallFormat, ReasoningHistory: s.ReasoningHistory, ToolChoice: s.ToolChoice}
	if s.ExtraBody != "" {
		v, err := jsonv.DecodeString(s.ExtraBody)
		o, ok := v.(*jsonv.Object)
		if err != nil || !ok {
			return cfg, fmt.Errorf("the extra body the worker was given is not a JSON object: %.200s", s.ExtraBody)
		}
		cfg.ExtraBody = o
	}
	return cfg, nil
}

// SystemPrompt is the system prompt of an episode of p: template (the default one when "") with
// the user's address, the virtual time right after setup and the user's time zone filled in
// (modelagent.SystemPromptOf).
func SystemPrompt(template string, p *episode.Prepared) string {
	return modelagent.SystemPromptOf(template, p)
}

// NewAgent makes the agent a of an episode of p, and the system prompt it sends ("" for agents
// that are not models). A model agent is made from cfg (its key, client and hooks; System is
// set here) and is given the prompt fully written out, so that the trace records exactly what
// was sent.
func NewAgent(a Agent, cfg modelagent.Config, p *episode.Prepared) (episode.Agent, string, error) {
	switch a.Name {
	case "oracle":
		return episode.Oracle{}, "", nil
	case "noop":
		return episode.Noop{}, "", nil
	case recorded.Label:
		if a.Script == nil {
			return nil, "", errors.New("the agent script has no run to play")
		}
		s, err := a.Script.Agent()
		return s, "", err
	case "openai":
	default:
		return nil, "", fmt.Errorf("unknown agent %q", a.Name)
	}
	system := SystemPrompt(a.System, p)
	cfg.System = system
	m, err := modelagent.New(cfg)
	if err != nil {
		return nil, "", err
	}
	return m, system, nil
}

// The worker's side of a model agent: its HTTP requests, its waits between retries and its
// retry notices go to the pool (conn.call, conn.send), which serves them with its own
// configuration (Host.call).

// workerModel is the configuration of a model agent in a worker. Settings it cannot read give
// an agent whose every request fails with the reason.
func workerModel(s *ModelSettings, c *conn) modelagent.Config {
	if s == nil {
		return modelagent.Config{}
	}
	cfg, err := s.config()
	cfg.HTTPClient = &http.Client{Transport: forwarder{c: c, method: "http"}}
	if err != nil {
		cfg.HTTPClient = &http.Client{Transport: failing{err}}
	}
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		_, err := c.call(ctx, "sleep", d)
		return err
	}
	cfg.OnRetry = func(attempt int, delay time.Duration, reason error) {
		c.send(&message{Retry: &retried{Attempt: attempt, Delay: delay, Reason: reason.Error()}})
	}
	return cfg
}

// workerModels are the models that answer for the task's simulated users and judges of an
// episode in a worker, nil when a names none: their HTTP requests go to the pool as calls
// "user.http" and "judge.http", which it serves with its configuration of that model (Host),
// and they wait and tell of their retries through the pool like the agent's model.
func workerModels(a Agent, c *conn) (*episode.Models, error) {
	return roleModels(a, func(role string, s *ModelSettings) (modelagent.Config, error) {
		cfg, err := s.config()
		if err != nil {
			return cfg, err
		}
		cfg.HostHeaders = nil
		cfg.HTTPClient = &http.Client{Transport: forwarder{c: c, method: role + ".http"}}
		cfg.Sleep = func(ctx context.Context, d time.Duration) error {
			_, err := c.call(ctx, "sleep", d)
			return err
		}
		cfg.OnRetry = roleRetry(role, func(attempt int, delay time.Duration, reason error) {
			c.send(&message{Retry: &retried{Attempt: attempt, Delay: delay, Reason: reason.Error()}})
		})
		return cfg, nil
	})
}

// failing is a transport whose every request fails with err.
type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// httpCall is a model's HTTP request or response on its way between a worker and the pool.
type httpCall struct {
	Method string      `json:"method,omitempty"`
	URL    string      `json:"url,omitempty"`
	Status int         `json:"status,omitempty"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// forwarder sends a worker's HTTP requests through the pool, as calls of the method: "http" for
// the agent's model, "user.http" and "judge.http" for the models inside the task.
type forwarder struct {
	c      *conn
	method string
}

func (f forwarder) RoundTrip(req *http.Request) (*http.Response, error) {
	call := &httpCall{Method: req.Method, URL: req.URL.String(), Header: req.Header}
	if req.Body != nil {
		defer req.Body.Close()
		var err error
		if call.Body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
	}
	raw, err := f.c.call(req.Context(), f.method, call)
	if err != nil {
		return nil, err
	}
	var ans httpCall
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, fmt.Errorf("the pool's answer: %v", err)
	}
	return &http.Response{StatusCode: ans.Status, Status: fmt.Sprintf("%d %s", ans.Status, http.StatusText(ans.Status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: ans.Header, Request: req,
		Body: io.NopCloser(bytes.NewReader(ans.Body)), ContentLength: int64(len(ans.Body))}, nil
}

// call serves a call of a worker's model agent: an HTTP request, sent with the key and the
// extra headers of cfg to its base URL and nowhere else, or a wait between retries.
func serveModel(ctx context.Context, cfg modelagent.Config, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "sleep":
		var d time.Duration
		if err := json.Unmarshal(params, &d); err != nil {
			return nil, err
		}
		if cfg.Sleep != nil {
			return nil, cfg.Sleep(ctx, d)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "http":
	default:
		return nil, fmt.Errorf("unknown call %q", method)
	}
	var in httpCall
	if err := json.Unmarshal(params, &in); err != nil {
		return nil, err
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = modelagent.DefaultBaseURL
	}
	if cfg.Model == "" || in.Method != http.MethodPost || !strings.HasPrefix(in.URL, base+"/") {
		return nil, fmt.Errorf("the worker may only send the model's requests to %s, not %s %s", base, in.Method, in.URL)
	}
	req, err := http.NewRequestWithContext(ctx, in.Method, in.URL, bytes.NewReader(in.Body))
	if err != nil {
		return nil, err
	}
	for k, vs := range in.Header {
		if !strings.EqualFold(k, "Authorization") {
			req.Header[k] = vs
		}
	}
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	for name, vs := range cfg.Headers {
		req.Header[http.CanonicalHeaderKey(name)] = append([]string(nil), vs...)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the worker's client adds the same wrapping
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if len(data) > maxHTTPBody {
		return nil, fmt.Errorf("the response is larger than %d bytes", maxHTTPBody)
	}
	return json.Marshal(&httpCall{Status: resp.StatusCode, Header: resp.Header, Body: data})
}

// maxHTTPBody bounds a model's response that the pool passes on.
const maxHTTPBody = 64 << 20

// failureOf is the answer to a call that failed: the message, and what the error is, so that the
// worker's model agent can tell a timeout or a refused connection (worth a retry) from the rest
// as it would in the pool.
func failureOf(err error) *callFailure {
	f := &callFailure{Message: err.Error()}
	var ne net.Error
	f.Timeout = errors.As(err, &ne) && ne.Timeout()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		f.Errno = uintptr(errno)
	}
	f.EOF = errors.Is(err, io.EOF)
	f.ShortRead = errors.Is(err, io.ErrUnexpectedEOF)
	var dns *net.DNSError
	if errors.As(err, &dns) {
		f.DNS = &dnsErr{Err: dns.Err, Name: dns.Name, Server: dns.Server, Timeout: dns.IsTimeout, Temporary: dns.IsTemporary, IsNotFound: dns.IsNotFound}
	}
	return f
}

// remoteError is a failed call as the worker sees it: the pool's message, and the same answers
// to errors.Is and errors.As about its kind.
type remoteError struct{ f *callFailure }

func (e *remoteError) Error() string   { return e.f.Message }
func (e *remoteError) Timeout() bool   { return e.f.Timeout }
func (e *remoteError) Temporary() bool { return e.f.Timeout }

func (e *remoteError) Unwrap() []error {
	var out []error
	if e.f.Errno != 0 {
		out = append(out, syscall.Errno(e.f.Errno))
	}
	if e.f.EOF {
		out = append(out, io.EOF)
	}
	if e.f.ShortRead {
		out = append(out, io.ErrUnexpectedEOF)
	}
	if d := e.f.DNS; d != nil {
		out = append(out, &net.DNSError{Err: d.Err, Name: d.Name, Server: d.Server, IsTimeout: d.Timeout, IsTemporary: d.Temporary, IsNotFound: d.IsNotFound})
	}
	return out
}
