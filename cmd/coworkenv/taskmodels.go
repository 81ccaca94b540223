package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

// taskModelFlags are the flags of the models inside a task (run, rollout, validate):
// --user-model answers for the task's simulated users and --judge-model for the judges of its
// verifiers, at --user-base-url and --judge-base-url.
type taskModelFlags struct {
	fs                       *flag.FlagSet
	userModel, userBaseURL   *string
	judgeModel, judgeBaseURL *string
}

// addTaskModelFlags adds the flags. agentURL says whether the command has the agent model's
// --base-url, which the base URLs then default to before $OPENAI_BASE_URL.
func addTaskModelFlags(fs *flag.FlagSet, agentURL bool) *taskModelFlags {
	def := "$OPENAI_BASE_URL, else " + modelagent.DefaultBaseURL
	if agentURL {
		def = "--base-url, else " + def
	}
	tf := &taskModelFlags{fs: fs}
	tf.userModel = fs.String("user-model", "", "the model that answers for the task's simulated users (default: their stand-ins)")
	tf.userBaseURL = fs.String("user-base-url", "", "the user model's base URL (default "+def+")")
	tf.judgeModel = fs.String("judge-model", "", "the model that judges for the judge() calls of the task's verifiers (default: their stand-ins)")
	tf.judgeBaseURL = fs.String("judge-base-url", "", "the judge model's base URL (default "+def+")")
	return tf
}

// check checks the flags after parsing: the settings of the user and judge models (nil for one
// not asked for), and the key of the environment their requests are sent with ("" when there is
// none or neither is asked for). agentURL is the agent model's --base-url ("" for none), the
// default of their base URLs; agent, when the agent is a model, is its configuration, whose
// retries and timeout they share (else they have the defaults).
func (tf *taskModelFlags) check(agentURL string, agent *modelagent.Config) (user, judge *isolate.ModelSettings, key string, err error) {
	given := map[string]bool{}
	tf.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, m := range []struct {
		role, model, baseURL string
		dst                  **isolate.ModelSettings
	}{{isolate.RoleUser, *tf.userModel, *tf.userBaseURL, &user}, {isolate.RoleJudge, *tf.judgeModel, *tf.judgeBaseURL, &judge}} {
		modelFlag, urlFlag := "--"+m.role+"-model", "--"+m.role+"-base-url"
		switch {
		case !given[m.role+"-model"]:
			if given[m.role+"-base-url"] {
				return nil, nil, "", fmt.Errorf("%s: only with %s NAME", urlFlag, modelFlag)
			}
			continue
		case strings.TrimSpace(m.model) == "":
			return nil, nil, "", fmt.Errorf("%s: the model name is empty", modelFlag)
		}
		baseURL, from := m.baseURL, urlFlag
		if baseURL == "" {
			baseURL, from = agentURL, modelFlag
		}
		cfg := modelagent.FromEnv(modelagent.Config{Model: strings.TrimSpace(m.model), BaseURL: baseURL}, os.Getenv)
		if agent != nil {
			cfg.MaxRetries, cfg.Timeout = agent.MaxRetries, agent.Timeout
		}
		if _, err := modelagent.NewChat(cfg); err != nil {
			return nil, nil, "", fmt.Errorf("%s: %s", from, strings.TrimPrefix(err.Error(), "modelagent: "))
		}
		if cfg.APIKey == "" && (cfg.BaseURL == "" || strings.TrimRight(cfg.BaseURL, "/") == modelagent.DefaultBaseURL) {
			return nil, nil, "", fmt.Errorf("OPENAI_API_KEY is not set; %s at %s needs it (for a local server, give %s or OPENAI_BASE_URL)",
				modelFlag, modelagent.DefaultBaseURL, urlFlag)
		}
		*m.dst = isolate.SettingsOf(cfg)
		key = cfg.APIKey // the one key of the environment
	}
	return user, judge, key, nil
}
