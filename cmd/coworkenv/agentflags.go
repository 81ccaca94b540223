package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// agentFlagsHelp is the part of the usage text of `run` and `rollout` about agents.
const agentFlagsHelp = `The openai agent is a model behind any OpenAI-compatible chat-completions endpoint (hosted APIs,
vLLM, Ollama, llama.cpp, SGLang): --base-url (default $OPENAI_BASE_URL, else the OpenAI API) and
the key from $OPENAI_API_KEY (never a flag; local servers need none). Its system prompt states the
coworker role, the user's mail address and the virtual date after setup; --system replaces it,
with {address}, {now}, {timezone} and {local_now} filled in. The prompt sent is recorded in the trace.

Request options, sent on every request: --temperature, --top-p, --max-tokens, --stop (repeat it for
several), --extra-body with a JSON object whose fields are merged into the request and win (like
'{"chat_template_kwargs": {"enable_thinking": false}, "return_token_ids": true}'; model, messages,
tools and stream are refused), and --header 'Name: value' (repeatable; traces record the names
only, and in isolated runs only this process sees the values). --tool-call-format says how tool
calls a model writes as text are read when its answer has none of its own: auto (every format),
native (none), hermes, qwen-xml, llama or mistral. --tool-choice auto|none|required is sent as
tool_choice with the tools (default: not sent; vLLM refuses tools without it unless started with
--enable-auto-tool-choice). --reasoning-history keep|drop says whether the reasoning of past
answers goes back to the model (auto: keep for DeepSeek and Kimi thinking models, drop
otherwise). docs/models.md has the details.

The models inside a task, with any agent (the oracle too: a reference run against a real user):
--user-model NAME answers for the task's simulated users and --judge-model NAME for the judges of
its verifiers, at --user-base-url and --judge-base-url (default: --base-url, else $OPENAI_BASE_URL,
else the OpenAI API), with the key from $OPENAI_API_KEY and the agent's --retries and --timeout.
Without them the task's stand-ins answer. Their answers and verdicts are recorded in the trace,
and replay gives them back without any model.`

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
	topP        optFloat
	stop        stringList
	extraBody   *string
	headers     stringList
	callFormat  *string
	toolChoice  *string
	reasoning   *string
	// the models inside the task
	taskModels *taskModelFlags
	// script, when set (run only), is --script FILE: the agent script is one of the choices.
	script *string
}

// modelFlagNames are the flags that only mean something for --agent openai.
var modelFlagNames = []string{"model", "base-url", "temperature", "max-tokens", "system", "retries", "timeout",
	"top-p", "stop", "extra-body", "header", "tool-call-format", "tool-choice", "reasoning-history"}

// addAgentFlags adds the flags of the agent; script, when set (for run), is where --script FILE
// goes, which makes the agent script a choice.
func addAgentFlags(fs *flag.FlagSet, script *string) *agentFlags {
	af := &agentFlags{fs: fs, script: script}
	agents := "oracle, noop or openai (default: openai when --model is given, else oracle)"
	if script != nil {
		agents = "oracle, noop, openai or script (default: openai when --model is given, script when --script is, else oracle)"
	}
	af.agent = fs.String("agent", "", "the agent: "+agents)
	af.model = fs.String("model", "", "openai: the model name sent with every request")
	af.baseURL = fs.String("base-url", "", "openai: the API's base URL, like http://localhost:8000/v1 (default $OPENAI_BASE_URL, else "+modelagent.DefaultBaseURL+")")
	fs.Var(&af.temperature, "temperature", "openai: sampling temperature, sent as given, 0 included (default: the server's)")
	af.maxTokens = fs.Int("max-tokens", 0, "openai: cap on the tokens of each completion (0: no cap)")
	af.system = fs.String("system", "", "openai: the system prompt instead of the default one; {address}, {now}, {timezone} and {local_now} are filled in")
	af.retries = fs.Int("retries", modelagent.DefaultMaxRetries, "openai: retries of a request after 408, 429, 5xx or a timeout, with exponential backoff (0: none)")
	af.timeout = fs.Duration("timeout", modelagent.DefaultTimeout, "openai: time limit of one HTTP attempt (0: none)")
	fs.Var(&af.topP, "top-p", "openai: nucleus sampling, from 0 to 1, sent as top_p (default: the server's)")
	fs.Var(&af.stop, "stop", "openai: a stop sequence; repeat for several")
	af.extraBody = fs.String("extra-body", "", "openai: a JSON object whose fields are merged into every request, and win")
	fs.Var(&af.headers, "header", "openai: a header 'Name: value' sent with every request; repeat for several (traces record the name only)")
	af.callFormat = fs.String("tool-call-format", modelagent.FormatAuto, "openai: how tool calls written as text are read: "+strings.Join(modelagent.ToolCallFormats, ", "))
	af.toolChoice = fs.String("tool-choice", "", "openai: the tool_choice sent with the tools: "+strings.Join(modelagent.ToolChoices, ", ")+" (default: none sent)")
	af.reasoning = fs.String("reasoning-history", modelagent.ReasoningAuto, "openai: whether past reasoning goes back to the model: keep, drop or auto (keep for DeepSeek and Kimi thinking models)")
	af.taskModels = addTaskModelFlags(fs, true)
	return af
}

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ", ")
}

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// parseHeaders reads --header values, each "Name: value".
func parseHeaders(list []string) (http.Header, error) {
	if len(list) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, s := range list {
		name, value, ok := strings.Cut(s, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("--header: %q is not 'Name: value'", s)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// parseExtraBody reads --extra-body, which must be a JSON object.
func parseExtraBody(s string) (*jsonv.Object, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("--extra-body: not JSON: %v", err)
	}
	o, ok := v.(*jsonv.Object)
	if !ok {
		return nil, fmt.Errorf("--extra-body: must be a JSON object like '{\"top_k\": 20}', not %s", jsonv.TypeName(v))
	}
	return o, nil
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
// worker (spec: everything but the key), and names the models inside the task (spec's User and
// Judge).
type agentChoice struct {
	name string
	spec isolate.Agent
	// cfg is the model's configuration in this process (openai): the key, and OnRetry when
	// something is told about the model's retries (for `run`). The user and judge models are sent
	// with its key, client and hooks (isolate.ModelConfig); for another agent with such models it
	// holds only the key.
	cfg modelagent.Config
}

// choose checks the agent flags after parsing.
func (af *agentFlags) choose() (*agentChoice, error) {
	c, err := af.chooseAgent()
	if err != nil {
		return nil, err
	}
	var agent *modelagent.Config // nil unless the agent is openai (and --base-url "")
	if c.name == "openai" {
		agent = &c.cfg
	}
	user, judge, key, err := af.taskModels.check(*af.baseURL, agent)
	if err != nil {
		return nil, err
	}
	if user != nil || judge != nil {
		c.spec.User, c.spec.Judge = user, judge
		c.cfg.APIKey = key // the one key of the environment
	}
	return c, nil
}

// chooseAgent checks the flags of the agent.
func (af *agentFlags) chooseAgent() (*agentChoice, error) {
	given := map[string]bool{}
	af.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	name := *af.agent
	if name == "" {
		name = "oracle"
		switch {
		case given["model"]:
			name = "openai"
		case af.script != nil && given["script"]:
			name = recorded.Label
		}
	}
	if af.script != nil && name != recorded.Label {
		for _, f := range []string{"script", "run"} {
			if given[f] {
				return nil, fmt.Errorf("--%s: only for --agent script, not %s", f, name)
			}
		}
	}
	switch {
	case name == "oracle" || name == "noop" || name == recorded.Label && af.script != nil:
		for _, f := range modelFlagNames {
			if given[f] {
				return nil, fmt.Errorf("--%s: only for --agent openai, not %s", f, name)
			}
		}
		if name == recorded.Label && *af.script == "" {
			return nil, errors.New("--agent script needs --script FILE (a runs file)")
		}
		return &agentChoice{name: name, spec: isolate.Agent{Name: name}}, nil
	case name == "openai":
	case af.script != nil:
		return nil, fmt.Errorf("--agent: unknown agent %q (want oracle, noop, openai or script)", name)
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
	extra, err := parseExtraBody(*af.extraBody)
	if err != nil {
		return nil, err
	}
	headers, err := parseHeaders(af.headers)
	if err != nil {
		return nil, err
	}
	cfg := modelagent.Config{Model: *af.model, BaseURL: *af.baseURL, MaxTokens: *af.maxTokens, MaxRetries: *af.retries, Timeout: *af.timeout,
		Stop: af.stop, ExtraBody: extra, Headers: headers, ToolCallFormat: *af.callFormat, ReasoningHistory: *af.reasoning,
		ToolChoice: strings.TrimSpace(*af.toolChoice)}
	if af.temperature.set {
		t := af.temperature.v
		cfg.Temperature = &t
	}
	if af.topP.set {
		p := af.topP.v
		cfg.TopP = &p
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1 // none
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = -1 // no limit
	}
	cfg = modelagent.FromEnv(cfg, os.Getenv)
	if _, err := modelagent.New(cfg); err != nil {
		msg := strings.TrimPrefix(err.Error(), "modelagent: ")
		switch {
		case strings.HasPrefix(msg, "the extra body"):
			msg = "--extra-body: " + msg
		case strings.Contains(msg, "header"):
			msg = "--header: " + msg
		case strings.HasPrefix(msg, "tool call format"):
			msg = "--tool-call-format: " + msg
		case strings.HasPrefix(msg, "tool choice"):
			msg = "--tool-choice: " + msg
		case strings.HasPrefix(msg, "reasoning history"):
			msg = "--reasoning-history: " + msg
		case strings.HasPrefix(msg, "top_p"):
			msg = "--top-p: " + msg
		case strings.Contains(msg, "stop sequence"):
			msg = "--stop: " + msg
		}
		return nil, errors.New(msg)
	}
	if cfg.APIKey == "" && (cfg.BaseURL == "" || strings.TrimRight(cfg.BaseURL, "/") == modelagent.DefaultBaseURL) {
		return nil, fmt.Errorf("OPENAI_API_KEY is not set; %s needs it (for a local server, give --base-url or OPENAI_BASE_URL)", modelagent.DefaultBaseURL)
	}
	return &agentChoice{name: "openai", cfg: cfg, spec: isolate.Agent{Name: "openai", Model: isolate.SettingsOf(cfg), System: *af.system}}, nil
}

// newAgent makes the agent of one episode of p in this process, and the system prompt it sends
// ("" for agents that are not models); the models inside the task come with it
// (isolate.WithModels).
func (c *agentChoice) newAgent(p *episode.Prepared) (episode.Agent, string, error) {
	agent, system, err := isolate.NewAgent(c.spec, c.cfg, p)
	if err != nil {
		return nil, "", err
	}
	models, err := isolate.NewModels(c.spec, c.cfg)
	if err != nil {
		return nil, "", err
	}
	return isolate.WithModels(agent, models), system, nil
}

// manifest describes the agent for a rollout's manifest: what must not change when a rollout
// is resumed (the base URLs, the retry settings and the header values may). The settings added
// after the first manifests (top_p, stop, the extra body, the header names, the tool-call
// format, the tool choice, the reasoning history, the user and judge models) are written only
// when given, so that older rollouts resume.
func (c *agentChoice) manifest() *jsonv.Object {
	o := jsonv.NewObject("agent", c.name)
	if c.name == "openai" {
		c.modelManifest(o)
	}
	if c.spec.User != nil {
		o.Set("user_model", c.spec.User.Model)
	}
	if c.spec.Judge != nil {
		o.Set("judge_model", c.spec.Judge.Model)
	}
	return o
}

// modelManifest adds the agent model's settings to a manifest.
func (c *agentChoice) modelManifest(o *jsonv.Object) {
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
	cfg := c.cfg
	if cfg.TopP != nil {
		o.Set("top_p", *cfg.TopP)
	}
	if len(cfg.Stop) > 0 {
		o.Set("stop", tools.Strings(cfg.Stop))
	}
	if cfg.ExtraBody != nil {
		o.Set("extra_body", jsonv.Clone(cfg.ExtraBody))
	}
	if len(c.spec.Model.HeaderNames) > 0 {
		o.Set("headers", tools.Strings(c.spec.Model.HeaderNames))
	}
	if f := cfg.ToolCallFormat; f != "" && f != modelagent.FormatAuto {
		o.Set("tool_call_format", f)
	}
	if cfg.ToolChoice != "" {
		o.Set("tool_choice", cfg.ToolChoice)
	}
	if r := cfg.ReasoningHistory; r != "" && r != modelagent.ReasoningAuto {
		o.Set("reasoning_history", r)
	}
}
