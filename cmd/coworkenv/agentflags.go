package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

// agentFlagsHelp is the part of the usage text of `run` and `rollout` about agents.
const agentFlagsHelp = `The openai agent is a model behind any OpenAI-compatible chat-completions endpoint (hosted APIs,
vLLM, Ollama, llama.cpp, SGLang): --base-url (default $OPENAI_BASE_URL, else the OpenAI API) and
the key from $OPENAI_API_KEY (never a flag; local servers need none). Its system prompt states the
coworker role, the user's mail address and the virtual date after setup; --system replaces it,
with {address} and {now} filled in. The prompt sent is recorded in the trace.`

// agentFlags choose and configure the agent of `run` and `rollout`.
type agentFlags struct {
	fs          *flag.FlagSet
	agent       *string
	model       *string
	baseURL     *string
	temperature optFloat
	maxTokens   *int
	system      *string
	retries     *int
	timeout     *time.Duration
}

// modelFlagNames are the flags that only mean something for --agent openai.
var modelFlagNames = []string{"model", "base-url", "temperature", "max-tokens", "system", "retries", "timeout"}

func addAgentFlags(fs *flag.FlagSet) *agentFlags {
	af := &agentFlags{fs: fs}
	af.agent = fs.String("agent", "", "the agent: oracle, noop or openai (default: openai when --model is given, else oracle)")
	af.model = fs.String("model", "", "openai: the model name sent with every request")
	af.baseURL = fs.String("base-url", "", "openai: the API's base URL, like http://localhost:8000/v1 (default $OPENAI_BASE_URL, else "+modelagent.DefaultBaseURL+")")
	fs.Var(&af.temperature, "temperature", "openai: sampling temperature, sent as given, 0 included (default: the server's)")
	af.maxTokens = fs.Int("max-tokens", 0, "openai: cap on the tokens of each completion (0: no cap)")
	af.system = fs.String("system", "", "openai: the system prompt instead of the default one; {address} and {now} are filled in")
	af.retries = fs.Int("retries", modelagent.DefaultMaxRetries, "openai: retries of a request after 408, 429, 5xx or a timeout, with exponential backoff (0: none)")
	af.timeout = fs.Duration("timeout", modelagent.DefaultTimeout, "openai: time limit of one HTTP attempt (0: none)")
	return af
}

// optFloat is a float flag that knows whether it was given.
type optFloat struct {
	v   float64
	set bool
}

func (o *optFloat) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.FormatFloat(o.v, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return fmt.Errorf("%q is not a number >= 0", s)
	}
	o.v, o.set = f, true
	return nil
}

// agentChoice is a checked agent selection: it makes one agent per episode.
type agentChoice struct {
	name   string
	cfg    modelagent.Config // openai only
	system string            // --system as given
	// onRetry, when set, is told about the model's retries (for `run`).
	onRetry func(attempt int, delay time.Duration, reason error)
}

// choose checks the agent flags after parsing.
func (af *agentFlags) choose() (*agentChoice, error) {
	given := map[string]bool{}
	af.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	name := *af.agent
	if name == "" {
		name = "oracle"
		if given["model"] {
			name = "openai"
		}
	}
	switch name {
	case "oracle", "noop":
		for _, f := range modelFlagNames {
			if given[f] {
				return nil, fmt.Errorf("--%s: only for --agent openai, not %s", f, name)
			}
		}
		return &agentChoice{name: name}, nil
	case "openai":
	default:
		return nil, fmt.Errorf("--agent: unknown agent %q (want oracle, noop or openai)", name)
	}
	if strings.TrimSpace(*af.model) == "" {
		return nil, errors.New("--agent openai needs --model NAME")
	}
	switch {
	case *af.maxTokens < 0:
		return nil, fmt.Errorf("--max-tokens: %d is negative", *af.maxTokens)
	case *af.retries < 0:
		return nil, fmt.Errorf("--retries: %d is negative", *af.retries)
	case *af.timeout < 0:
		return nil, fmt.Errorf("--timeout: %s is negative", *af.timeout)
	}
	cfg := modelagent.Config{Model: *af.model, BaseURL: *af.baseURL, MaxTokens: *af.maxTokens, MaxRetries: *af.retries, Timeout: *af.timeout}
	if af.temperature.set {
		t := af.temperature.v
		cfg.Temperature = &t
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1 // none
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = -1 // no limit
	}
	cfg = modelagent.FromEnv(cfg, os.Getenv)
	if _, err := modelagent.New(cfg); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "modelagent: "))
	}
	if cfg.APIKey == "" && (cfg.BaseURL == "" || strings.TrimRight(cfg.BaseURL, "/") == modelagent.DefaultBaseURL) {
		return nil, fmt.Errorf("OPENAI_API_KEY is not set; %s needs it (for a local server, give --base-url or OPENAI_BASE_URL)", modelagent.DefaultBaseURL)
	}
	return &agentChoice{name: "openai", cfg: cfg, system: *af.system}, nil
}

// systemPrompt is the system prompt of an episode of p: the default one (or --system) with the
// user's address and the virtual time right after setup.
func (c *agentChoice) systemPrompt(p *episode.Prepared) string {
	address, now := p.Base.Mail().Address(), p.Base.Clock().NowString()
	if c.system == "" {
		return modelagent.DefaultSystemPrompt(address, now)
	}
	return strings.NewReplacer("{address}", address, "{now}", now).Replace(c.system)
}

// newAgent makes the agent of one episode of p, and the system prompt it sends ("" for agents
// that are not models). The model is given the prompt fully written out, so that the trace
// records exactly what was sent.
func (c *agentChoice) newAgent(p *episode.Prepared) (episode.Agent, string, error) {
	switch c.name {
	case "oracle":
		return episode.Oracle{}, "", nil
	case "noop":
		return episode.Noop{}, "", nil
	}
	system := c.systemPrompt(p)
	cfg := c.cfg
	cfg.System = system
	cfg.OnRetry = c.onRetry
	a, err := modelagent.New(cfg)
	if err != nil {
		return nil, "", err
	}
	return a, system, nil
}

// manifest describes the agent for a rollout's manifest: what must not change when a rollout
// is resumed (the base URL and the retry settings may).
func (c *agentChoice) manifest() *jsonv.Object {
	o := jsonv.NewObject("agent", c.name)
	if c.name != "openai" {
		return o
	}
	var temp, system jsonv.Value
	if c.cfg.Temperature != nil {
		temp = *c.cfg.Temperature
	}
	if c.system != "" {
		system = c.system
	}
	o.Set("model", strings.TrimSpace(c.cfg.Model))
	o.Set("temperature", temp)
	o.Set("max_tokens", int64(c.cfg.MaxTokens))
	o.Set("system", system)
	return o
}
