package serve

// POST /episodes: one whole episode against the caller's own model.
//
// A trainer that serves its policy behind an OpenAI-compatible endpoint (vLLM, SGLang, a proxy
// that routes each session to a worker) gives the task, the seed, its model's name and base URL
// and its sampling settings; the server runs the episode with the model agent, exactly as
// `coworkenv run --agent openai` does, trace included, and answers once the episode is over with
// its reward, the parts of it, the conversation as the agent sent it, the tools and the trace.
//
// The server then acts as a client of a URL its caller chose: anyone who may call the server
// may have it send chat-completions requests, with the headers and key they give, to any
// http(s) address the server can reach. That is what the endpoint is for; docs/serve.md says so,
// and a server reachable beyond the loopback needs a token. Other schemes, URLs with user info,
// a query or a fragment are refused, and redirects are not followed.
//
// Secrets. The key goes out as the bearer token and the headers as they are given; the trace
// records the headers' names only (as every model trace does), and neither the key nor a
// header's value is written anywhere by the server. Should the model's server echo one back (in
// an error message, say), it is replaced by [redacted] in the trace and the answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

// Bounds of an episode request's model settings.
const (
	maxEpisodeRetries = 10
	maxEpisodeTimeout = time.Hour
)

// episodes is the front end of POST /episodes. An episode it runs takes a place of the
// registry's while it runs, and ends with the request or when the registry closes.
type episodes struct{ *front }

func (a *episodes) routes(m *http.ServeMux) {
	m.HandleFunc("/episodes", a.route(true, map[string]http.HandlerFunc{http.MethodPost: a.runEpisode}))
}

// episodeRequest is the body of POST /episodes: the task and seed, as for POST /sessions, and
// the model agent's settings (modelagent.Config).
type episodeRequest struct {
	start

	Model   string `json:"model"`
	BaseURL string `json:"base_url"`
	APIKey  string `json:"api_key"`

	Temperature *float64 `json:"temperature"`
	TopP        *float64 `json:"top_p"`
	MaxTokens   int      `json:"max_tokens"`
	Stop        []string `json:"stop"`
	// ExtraBody is a JSON object merged into every request body (its key order kept).
	ExtraBody json.RawMessage `json:"extra_body"`
	// Headers are sent on every request to the model, one value each.
	Headers          map[string]string `json:"headers"`
	ToolCallFormat   string            `json:"tool_call_format"`
	ReasoningHistory string            `json:"reasoning_history"`
	// ToolChoice is sent as tool_choice with the tools ("": none sent), as --tool-choice.
	ToolChoice string `json:"tool_choice"`
	// System replaces the default system prompt; {address}, {now}, {timezone} and {local_now} are
	// filled in.
	System string `json:"system"`
	// MaxRetries of one request (nil: the agent's default; 0: none); Timeout of one attempt in
	// seconds (nil: the agent's default).
	MaxRetries *int     `json:"max_retries"`
	Timeout    *float64 `json:"timeout"`
}

// episodeResult is the answer to POST /episodes.
type episodeResult struct {
	ID   string `json:"id"`
	Task string `json:"task"`
	Seed int64  `json:"seed"`
	// Reward is the end score; Components its parts; TurnRewards each turn's verifier score by
	// turn (null for a turn without one); Checks the rubric items; State the final state hash.
	Reward      float64         `json:"reward"`
	Passed      bool            `json:"passed"`
	Components  episodeParts    `json:"components"`
	TurnRewards []*float64      `json:"turn_rewards"`
	Checks      []trace.Check   `json:"checks"`
	State       string          `json:"state"`
	Error       *episodeFailure `json:"error,omitempty"`
	// Messages is the conversation as the agent sent it to the model (its last answer
	// included); Tools the tool schemas it sent; Trace the trace's events, one object per line
	// of the JSON Lines trace.
	Messages []json.RawMessage `json:"messages"`
	Tools    []json.RawMessage `json:"tools"`
	Trace    []json.RawMessage `json:"trace"`
	// TraceFile is where the server keeps the trace (with --traces); TraceError says why it could
	// not be written.
	TraceFile  string `json:"trace_file,omitempty"`
	TraceError string `json:"trace_error,omitempty"`
}

type episodeParts struct {
	Completion float64 `json:"completion"`
	Safety     float64 `json:"safety"`
	Robustness float64 `json:"robustness"`
}

// episodeFailure is what stopped the episode or zeroed its score: model-error when the model's
// endpoint failed for good, interrupted when the server stopped it, and the engine's other codes.
type episodeFailure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (a *episodes) runEpisode(w http.ResponseWriter, r *http.Request) {
	var req episodeRequest
	t, ok := a.decodeStart(w, r, &req, &req.start)
	if !ok {
		return
	}
	cfg, secrets, e := modelConfig(&req)
	if e != nil {
		writeError(w, e)
		return
	}
	id, err := a.reg.reserve()
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	// The episode counts as a session while it runs.
	defer a.reg.release()

	// The episode ends with the request, and when the server closes.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-a.reg.stopping():
			cancel()
		case <-ctx.Done():
		}
	}()

	rec := &episodeTrace{secrets: secrets}
	var tf *rollout.TraceFile
	if a.reg.traceDir != "" {
		tf = &rollout.TraceFile{Path: a.reg.tracePath(id)}
		rec.file = tf
	}
	run := a.runHere
	if t.pool != nil {
		run = a.runInWorker
	}
	res, refused, err := run(ctx, id, t, &req, cfg, rec)
	if refused != nil {
		writeError(w, refused)
		return
	}
	end := res.end
	out := episodeResult{ID: id, Task: t.task.Name, Seed: req.Seed, Reward: end.Score, Passed: end.Passed,
		Components: episodeParts{end.Completion, end.Safety, end.Robustness}, TurnRewards: res.turnRewards,
		Checks: end.Checks, State: end.State, Messages: sentMessages(res.messages), Tools: []json.RawMessage{}, Trace: rec.events}
	if out.TurnRewards == nil {
		out.TurnRewards = []*float64{}
	}
	if out.Checks == nil {
		out.Checks = []trace.Check{}
	}
	if end.Error != nil {
		out.Error = &episodeFailure{Code: end.Error.Code, Message: end.Error.Message}
	}
	out.Tools = append(out.Tools, t.tools...)
	traceErr := err
	if traceErr == nil {
		traceErr = rec.err
	}
	if tf != nil {
		// the trace of an episode that was stopped before it finished keeps its .partial name
		interrupted := end.Error != nil && end.Error.Code == episode.Interrupted
		out.TraceFile = tf.Path
		if interrupted {
			out.TraceFile += ".partial"
		}
		if ferr := tf.Finish(interrupted); ferr != nil && traceErr == nil {
			traceErr = ferr
		}
	}
	if traceErr != nil {
		out.TraceError = traceErr.Error()
	}
	// the trace's lines go out as they are, without encoding/json's HTML escapes
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		writeError(w, &apiError{http.StatusInternalServerError, "internal", err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, json.RawMessage(redact(bytes.TrimSpace(body.Bytes()), secrets)))
}

// episodeOutcome is how an episode of POST /episodes ended: its end event, each turn's reward
// (by turn, nil for a turn without one), and the model agent's messages as it sent them.
type episodeOutcome struct {
	end         *trace.End
	turnRewards []*float64
	messages    []json.RawMessage
}

// runHere runs an episode of POST /episodes in this process: its outcome and the trace's error,
// if any, or the refusal to answer.
func (a *episodes) runHere(ctx context.Context, id string, t *task, req *episodeRequest, cfg modelagent.Config, rec *episodeTrace) (*episodeOutcome, *apiError, error) {
	var agent *modelagent.Agent
	run := isolate.Run{Task: t.task, Source: t.source, Sources: t.sources, Seed: req.Seed, Trace: isolate.Lines(rec.line),
		NewAgent: func(p *episode.Prepared) (episode.Agent, string, error) {
			ag, system, err := isolate.NewAgent(isolate.Agent{Name: "openai", System: req.System}, cfg, p)
			if err == nil {
				agent, _ = ag.(*modelagent.Agent)
			}
			return ag, system, err
		},
		Print: a.reg.printer(id)}
	res, setup, err := isolate.RunEpisode(ctx, run)
	switch {
	case setup != nil:
		return nil, &apiError{http.StatusUnprocessableEntity, CodeSetupFailed, setup.String()}, nil
	case res == nil:
		return nil, badRequest(strings.TrimPrefix(err.Error(), "modelagent: ")), nil
	}
	out := &episodeOutcome{end: trace.EndOf(res)}
	for _, turn := range res.Turns {
		out.turnRewards = append(out.turnRewards, turn.Score)
	}
	if agent != nil {
		for _, m := range agent.Messages() {
			if b, err := json.Marshal(m); err == nil {
				out.messages = append(out.messages, b)
			}
		}
	}
	return out, nil, err
}

// runInWorker runs an episode of POST /episodes in a worker of the task's pool, the model's
// requests sent from this process (isolate.Host.Model). A worker that stops ends the episode
// with its error (memory-limit, timeout, crash), as a run in a worker does.
func (a *episodes) runInWorker(ctx context.Context, id string, t *task, req *episodeRequest, cfg modelagent.Config, rec *episodeTrace) (*episodeOutcome, *apiError, error) {
	ep := isolate.Episode{Display: t.spec.Display, Files: t.spec.Files, File: t.spec.File, Task: t.spec.Task, Seed: req.Seed,
		Agent: isolate.Agent{Name: "openai", Model: isolate.SettingsOf(cfg), System: req.System}, Messages: true}
	res, err := t.pool.Episode(ctx, ep, isolate.Host{Trace: isolate.Lines(rec.line), Print: a.reg.printer(id), Model: cfg})
	switch {
	case err != nil:
		var se *isolate.StartError
		if errors.As(err, &se) {
			return nil, badRequest(strings.TrimPrefix(se.Msg, "modelagent: ")), nil
		}
		return nil, &apiError{http.StatusInternalServerError, "internal", err.Error()}, nil
	case res.Setup != nil:
		return nil, &apiError{http.StatusUnprocessableEntity, CodeSetupFailed, res.Setup.String()}, nil
	}
	return &episodeOutcome{end: res.End, turnRewards: res.TurnScores, messages: res.Messages}, nil, nil
}

// modelConfig checks the model settings of a request and makes the model agent's configuration
// of them; secrets are the values the trace and the answer must not hold (the key, and the
// headers' values).
func modelConfig(req *episodeRequest) (modelagent.Config, []string, *apiError) {
	cfg := modelagent.Config{Model: strings.TrimSpace(req.Model), APIKey: req.APIKey, Temperature: req.Temperature, TopP: req.TopP,
		MaxTokens: req.MaxTokens, Stop: req.Stop, ToolCallFormat: req.ToolCallFormat, ReasoningHistory: req.ReasoningHistory,
		ToolChoice: req.ToolChoice}
	if cfg.Model == "" {
		return cfg, nil, badRequest("model is required: the model name sent with every request")
	}
	if err := checkBaseURL(req.BaseURL); err != nil {
		return cfg, nil, badRequest("base_url: " + err.Error())
	}
	cfg.BaseURL = req.BaseURL
	if raw := bytes.TrimSpace(req.ExtraBody); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		v, err := jsonv.Decode(raw)
		o, ok := v.(*jsonv.Object)
		if err != nil || !ok {
			return cfg, nil, badRequest("extra_body must be a JSON object like {\"top_k\": 20}")
		}
		cfg.ExtraBody = o
	}
	var secrets []string
	if req.APIKey != "" {
		secrets = append(secrets, req.APIKey)
	}
	if len(req.Headers) > 0 {
		cfg.Headers = http.Header{}
		for name, value := range req.Headers {
			cfg.Headers[name] = []string{value}
			secrets = append(secrets, value)
		}
	}
	switch {
	case req.MaxRetries == nil:
	case *req.MaxRetries < 0 || *req.MaxRetries > maxEpisodeRetries:
		return cfg, nil, badRequest(fmt.Sprintf("max_retries %d: want 0 to %d", *req.MaxRetries, maxEpisodeRetries))
	case *req.MaxRetries == 0:
		cfg.MaxRetries = -1 // the agent's "no retry"
	default:
		cfg.MaxRetries = *req.MaxRetries
	}
	if req.Timeout != nil {
		d := time.Duration(*req.Timeout * float64(time.Second))
		if !(*req.Timeout > 0) || d <= 0 || d > maxEpisodeTimeout {
			return cfg, nil, badRequest(fmt.Sprintf("timeout %v: want seconds above 0, at most %d", *req.Timeout, int(maxEpisodeTimeout/time.Second)))
		}
		cfg.Timeout = d
	}
	// The server never follows a redirect: the request goes to the URL given and nowhere else.
	cfg.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// The agent checks the rest (temperature, top_p, stop, the extra body's and headers' names,
	// the formats); an agent made here only to check them sends nothing.
	if _, err := modelagent.New(cfg); err != nil {
		return cfg, nil, badRequest(strings.TrimPrefix(err.Error(), "modelagent: "))
	}
	return cfg, secrets, nil
}

// checkBaseURL accepts an http or https URL with a host and without user info, query or
// fragment (credentials go in api_key or headers; the agent appends /chat/completions).
func checkBaseURL(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("required: the model's OpenAI-compatible API, like http://localhost:8000/v1")
	}
	u, err := url.Parse(strings.TrimSpace(s))
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an http or https URL", s)
	case u.Host == "":
		return fmt.Errorf("%q has no host", s)
	case u.User != nil:
		return errors.New("the URL holds user info; send credentials in api_key or headers")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return errors.New("the URL has a query or a fragment; route by its path, the headers or extra_body")
	}
	return nil
}

// sentMessages is the agent's conversation as it sends it (its messages as encoding/json writes
// them): every message has "content" (the agent adds "content": "" where go-openai leaves it
// out).
func sentMessages(msgs []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(msgs))
	for _, b := range msgs {
		// through jsonv, which keeps the key order and writes the text without HTML escapes
		v, err := jsonv.Decode(b)
		if o, ok := v.(*jsonv.Object); err == nil && ok {
			if _, has := o.Get("content"); !has {
				with := &jsonv.Object{}
				for _, mem := range o.Members {
					with.Set(mem.Key, mem.Value)
					if mem.Key == "role" {
						with.Set("content", "")
					}
				}
				o = with
			}
			b = []byte(jsonv.MustEncode(o))
		}
		out = append(out, b)
	}
	return out
}

// episodeTrace keeps the trace of an episode as its lines come: each line with the secrets taken
// out, for the answer and for the trace file.
type episodeTrace struct {
	secrets []string
	file    *rollout.TraceFile
	mu      sync.Mutex
	events  []json.RawMessage
	err     error // the first write error of the file
}

func (t *episodeTrace) line(b []byte) {
	line := redact(bytes.Clone(b), t.secrets)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, line)
	if t.file != nil && t.err == nil {
		_, t.err = t.file.Write(append(bytes.Clone(line), '\n'))
	}
}

// redactedText replaces a secret.
const redactedText = "[redacted]"

// minSecret is the shortest value redact looks for: a shorter one (a header "X-Shard: 3") would
// be found in any text, and is not a secret.
const minSecret = 8

// redact replaces the secrets in the strings (and keys) of the JSON value data, which is given
// back as it is when it holds none of them.
func redact(data []byte, secrets []string) []byte {
	var found, forms []string
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		escaped := strings.Trim(jsonv.MustEncode(s), `"`)
		if bytes.Contains(data, []byte(s)) || bytes.Contains(data, []byte(escaped)) {
			found = append(found, s)
			forms = append(forms, s, escaped)
		}
	}
	if len(found) == 0 {
		return data
	}
	v, err := jsonv.Decode(data)
	if err != nil {
		// not a JSON value the decoder takes: the text itself loses the secrets
		for _, f := range forms {
			data = bytes.ReplaceAll(data, []byte(f), []byte(redactedText))
		}
		return data
	}
	return []byte(jsonv.MustEncode(redactValue(v, found)))
}

func redactValue(v jsonv.Value, secrets []string) jsonv.Value {
	switch x := v.(type) {
	case string:
		for _, s := range secrets {
			x = strings.ReplaceAll(x, s, redactedText)
		}
		return x
	case []jsonv.Value:
		for i := range x {
			x[i] = redactValue(x[i], secrets)
		}
		return x
	case *jsonv.Object:
		out := &jsonv.Object{}
		for _, m := range x.Members {
			out.Set(redactValue(m.Key, secrets).(string), redactValue(m.Value, secrets))
		}
		return out
	}
	return v
}
