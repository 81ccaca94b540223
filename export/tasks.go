package export

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
)

// `export tasks`: a task dataset, one row per task and seed, for trainers that run the episodes
// themselves against `coworkenv serve` (docs/serve.md, "A task dataset").
//
// A row is what a trainer needs before the first model call: the prompt (the system message and
// the first user message, as the model agent sends them and as POST /sessions gives them), the
// tools, and the parameters that open the episode on serve ({"task", "seed"}). Its fields are the
// union of the row shapes of three trainers, which do not conflict:
//
//   - TRL's GRPOTrainer with an environment_factory and a train_dataset takes the "prompt" column
//     (chat messages) as the prompt and passes every other column to the environment's reset() as
//     keyword arguments (huggingface/trl docs/source/grpo_trainer.md, "Providing an external
//     dataset"); its datasets keep tools as a JSON string (docs/source/dataset_formats.md).
//   - verl's RLHFDataset wants data_source, prompt (chat messages), ability, reward_model {style,
//     ground_truth} and extra_info (volcengine/verl docs/preparation/prepare_data.rst).
//   - SkyRL wants data_source, prompt, env_class, reward_spec {method, ground_truth} and
//     extra_info, and hands every column but prompt and env_class to the environment as its
//     env_extras (NovaSky-AI/SkyRL skyrl-train/docs/datasets/dataset-preparation.rst and
//     skyrl_train/dataset/dataset.py).
//
// There is no answer to compare with: the reward comes from the episode's verifiers. The
// ground_truth of verl and SkyRL is therefore the session parameters as JSON text, so that a
// reward function given only it knows which episode the row stands for, and style and method
// are "rule" (the verifiers are programs, not a reward model).
//
// Every row has the same fields with the same types, in the same order, so that the JSON Lines
// file converts to Parquet (datasets.load_dataset("json", ...).to_parquet(...)) with one schema;
// the tools are a JSON string for that reason too (tasks have different tools).

// DataSource is the data_source of every row; EnvClass its env_class.
const (
	DataSource = "coworkenv"
	EnvClass   = "coworkenv"
)

// The model agent whose episodes record a task's prompt (PromptModel).
const (
	promptModel   = "coworkenv-export-tasks"
	promptBaseURL = "http://export-tasks.invalid/v1"
)

// errNoModel is the failure of every request of PromptModel's agent.
var errNoModel = errors.New("export tasks asks no model: the episode stops at its first request, once its prompt is recorded")

// PromptModel is the configuration of a model agent that asks no model: its first request fails
// at once, without a retry, so its episode ends with model-error right after the trace records
// what a model would have been sent first: the start event (the system prompt, the tools, the
// state after setup) and the first user message. Such a trace is what TaskRow reads. No request
// leaves the process: the HTTP client fails each one itself.
func PromptModel() modelagent.Config {
	return modelagent.Config{Model: promptModel, BaseURL: promptBaseURL, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: noModel{}}}
}

type noModel struct{}

func (noModel) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, errNoModel
}

// TaskRowFields are the fields of a row, in order.
var TaskRowFields = []string{"data_source", "prompt", "tools", "task", "seed", "group", "capabilities", "session",
	"ability", "reward_model", "env_class", "reward_spec", "extra_info"}

// TaskRow is the row of `export tasks` of the task and seed of e, the trace of a model agent's
// episode (PromptModel's, or any model's: only its start and its first user message are read);
// system is its system prompt (e.RecordedSystem()), capabilities the task's, and index the row's
// place in the file. The fields (TaskRowFields):
//
//   - data_source: DataSource
//   - prompt: [system message, first user message], in the chat-completions shape
//   - tools: the tool schemas as JSON text
//   - task, seed: the task's name and the run seed
//   - group: RLGroup, the group `export rl` gives the episodes of this task and seed
//   - capabilities: the task's, a list of strings
//   - session: {"task", "seed"}, the body of POST /sessions (and the task and seed of POST /episodes)
//   - ability: the task's first capability ("" when it has none)
//   - reward_model: {"style": "rule", "ground_truth": session as JSON text} (verl)
//   - env_class: EnvClass (SkyRL)
//   - reward_spec: {"method": "rule", "ground_truth": session as JSON text} (SkyRL)
//   - extra_info: {"index", "task", "seed", "group"}, and "split" and "family" when the trace
//     records the task's split (export tasks --split...)
func TaskRow(e *Episode, system string, capabilities []string, index int) (*jsonv.Object, error) {
	if system == "" {
		return nil, fmt.Errorf("%s: the trace records no system prompt (not a model agent's)", e.Path)
	}
	hist := e.History(false)
	if len(hist) < 2 || hist[1].Role != conversation.User {
		return nil, fmt.Errorf("%s: the episode ended before its first user message", e.Path)
	}
	prompt := []jsonv.Value{jsonv.NewObject("role", "system", "content", system), jsonv.NewObject("role", "user", "content", hist[1].Content)}
	tools, err := jsonv.Encode(e.Tools())
	if err != nil {
		return nil, fmt.Errorf("%s: the tools: %v", e.Path, err)
	}
	caps := make([]jsonv.Value, len(capabilities))
	for i, c := range capabilities {
		caps[i] = c
	}
	ability := ""
	if len(capabilities) > 0 {
		ability = capabilities[0]
	}
	task, seed, group := e.Task(), e.Seed(), e.RLGroup()
	session := func() *jsonv.Object { return jsonv.NewObject("task", task, "seed", seed) }
	truth := jsonv.MustEncode(session())
	extra := jsonv.NewObject("index", int64(index), "task", task, "seed", seed, "group", group)
	if sp := e.Start().Split; sp != nil {
		extra.Set("split", sp.Name)
		extra.Set("family", sp.Family)
	}
	return jsonv.NewObject(
		"data_source", DataSource,
		"prompt", prompt,
		"tools", string(tools),
		"task", task,
		"seed", seed,
		"group", group,
		"capabilities", caps,
		"session", session(),
		"ability", ability,
		"reward_model", jsonv.NewObject("style", "rule", "ground_truth", truth),
		"env_class", EnvClass,
		"reward_spec", jsonv.NewObject("method", "rule", "ground_truth", truth),
		"extra_info", extra,
	), nil
}
