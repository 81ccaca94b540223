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
	"github.com/coworkenv/coworkenv/isolate"
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

// agentChoice is a checked agent selection: it makes one agent per episode, here or in a
// worker (spec: everything but the key).
type agentChoice struct {
	name string
	spec isolate.Agent
	// cfg is the model's configuration in this process (openai only): the key, and OnRetry when
	// something is told about the model's retries (for `run`).
	cfg modelagent.Config
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
		return &agentChoice{name: name, spec: isolate.Agent{Name: name}}, nil
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
	return &agentChoice{name: "openai", cfg: cfg, spec: isolate.Agent{Name: "openai", Model: isolate.SettingsOf(cfg), System: *af.system}}, nil
}

// newAgent makes the agent of one episode of p in this process, and the system prompt it sends
// ("" for agents that are not models).
func (c *agentChoice) newAgent(p *episode.Prepared) (episode.Agent, string, error) {
	return isolate.NewAgent(c.spec, c.cfg, p)
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
	if c.spec.System != "" {
		system = c.spec.System
	}
	o.Set("model", strings.TrimSpace(c.cfg.Model))
	o.Set("temperature", temp)
	o.Set("max_tokens", int64(c.cfg.MaxTokens))
	o.Set("system", system)
	return o
}
