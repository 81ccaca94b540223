package export

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/session"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fields each trainer's dataset rows must have, as their documentation writes them.
//
//   - TRL: huggingface/trl docs/source/grpo_trainer.md (commit f2cd57710ae3), "Providing an
//     external dataset": the trainer "uses its "prompt" column as the prompt, and passes the
//     row's other columns to reset() as keyword arguments"; a column "environment" routes between
//     environments and is not passed on, so a row must not have one. docs/source/dataset_formats.md
//     keeps "tools" as a JSON str.
//   - verl: volcengine/verl docs/preparation/prepare_data.rst (commit 904e7bf3199e): "each data
//     field should consist of the following 5 fields": data_source, prompt ("the format of
//     huggingface chat_template"), ability, reward_model (style, ground_truth), extra_info.
//   - SkyRL: NovaSky-AI/SkyRL skyrl-train/docs/datasets/dataset-preparation.rst (commit
//     09c3a1e427b1): data_source, prompt ("standard OpenAI chat format"), env_class,
//     reward_spec (method "rule" or "reward_model", ground_truth), extra_info (a dict); its
//     skyrl_train/dataset/dataset.py pops prompt and env_class and hands the rest to the
//     environment as env_extras.
var (
	trlFields   = []string{"prompt"}
	trlReserved = []string{"environment"}
	verlFields  = []string{"data_source", "prompt", "ability", "reward_model", "extra_info"}
	verlReward  = []string{"style", "ground_truth"}
	skyrlFields = []string{"data_source", "prompt", "env_class", "reward_spec", "extra_info"}
	skyrlReward = []string{"method", "ground_truth"}
)

// builtinTasks is the built-in corpus by task name, with each task's source and sources.
var builtinTasks = sync.OnceValues(func() (*dsl.Corpus, map[string]*builtinTask) {
	c := corpus.Open()
	files, err := c.TaskFiles()
	if err != nil {
		panic(err)
	}
	out := map[string]*builtinTask{}
	for _, rel := range files {
		f := c.LoadFile(context.Background(), rel)
		sources, err := trace.Sources(c, rel)
		if err != nil {
			panic(err)
		}
		for _, t := range f.Tasks {
			out[t.Name] = &builtinTask{t, f.Source, sources}
		}
	}
	return c, out
})

type builtinTask struct {
	task    *dsl.Task
	source  []byte
	sources []trace.Source
}

func builtinTaskNamed(t *testing.T, name string) *builtinTask {
	t.Helper()
	_, tasks := builtinTasks()
	bt, ok := tasks[name]
	require.True(t, ok, name)
	return bt
}

// traced runs an episode of the task in process with the agent and model, and reads its trace.
func traced(t *testing.T, bt *builtinTask, seed int64, agent string) (*Episode, *episode.Result) {
	t.Helper()
	var buf bytes.Buffer
	res, setup, err := isolate.RunEpisode(context.Background(), isolate.Run{Task: bt.task, Source: bt.source, Sources: bt.sources,
		Seed: seed, Agent: isolate.Agent{Name: agent}, Model: PromptModel(), Trace: &buf})
	require.Nil(t, setup)
	require.NoError(t, err)
	e, err := Decode(bt.task.Name, buf.Bytes())
	require.NoError(t, err)
	return e, res
}

// promptRow is the row of a task and seed, made as `export tasks` makes it.
func promptRow(t *testing.T, name string, seed int64, index int) *jsonv.Object {
	t.Helper()
	bt := builtinTaskNamed(t, name)
	e, res := traced(t, bt, seed, "openai")
	require.NotNil(t, res.Err)
	assert.Equal(t, episode.ModelError, res.Err.Code, "the prompt model stops the episode at its first request")
	assert.Contains(t, res.Err.Message, "asks no model")
	row, err := TaskRow(e, e.RecordedSystem(), bt.task.Capabilities, index)
	require.NoError(t, err)
	return row
}

func get(t *testing.T, o *jsonv.Object, key string) jsonv.Value {
	t.Helper()
	v, ok := o.Get(key)
	require.True(t, ok, "the row has %s", key)
	return v
}

// Rows of a single-turn task and of a task whose user is simulated, at two seeds, field by
// field: every field each trainer needs, with its type; the prompt and tools are what POST
// /sessions gives for that task and seed; the group is the one `export rl` gives the episodes of
// that task and seed.
func TestTaskRows(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name string
		seed int64
	}{{"fuel-surcharge-answer", 0}, {"fuel-surcharge-answer", 5}, {"consult-vat-reverse-charge", 0}, {"carrier-quote-award", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			bt := builtinTaskNamed(t, tc.name)
			row := promptRow(t, tc.name, tc.seed, i)
			assert.Equal(t, TaskRowFields, row.Keys(), "the fields, in order")

			// what each trainer needs
			for _, f := range append(append(append([]string{}, trlFields...), verlFields...), skyrlFields...) {
				get(t, row, f)
			}
			for _, f := range trlReserved {
				_, has := row.Get(f)
				assert.False(t, has, "a row must not have TRL's %s", f)
			}
			assert.Equal(t, DataSource, get(t, row, "data_source"))
			assert.Equal(t, EnvClass, get(t, row, "env_class"))
			rm := get(t, row, "reward_model").(*jsonv.Object)
			assert.Equal(t, verlReward, rm.Keys())
			rs := get(t, row, "reward_spec").(*jsonv.Object)
			assert.Equal(t, skyrlReward, rs.Keys())
			assert.Contains(t, []string{"rule", "reward_model"}, get(t, rs, "method"))
			ability, ok := get(t, row, "ability").(string)
			require.True(t, ok)
			assert.Equal(t, bt.task.Capabilities[0], ability)

			// the session parameters, and the ground truth that names them
			sess := get(t, row, "session").(*jsonv.Object)
			assert.Equal(t, []string{"task", "seed"}, sess.Keys())
			assert.Equal(t, tc.name, get(t, sess, "task"))
			assert.Equal(t, tc.seed, get(t, sess, "seed"))
			assert.Equal(t, jsonv.MustEncode(sess), get(t, rm, "ground_truth"))
			assert.Equal(t, jsonv.MustEncode(sess), get(t, rs, "ground_truth"))
			assert.Equal(t, tc.name, get(t, row, "task"))
			assert.Equal(t, tc.seed, get(t, row, "seed"))
			var caps []string
			for _, c := range get(t, row, "capabilities").([]jsonv.Value) {
				caps = append(caps, c.(string))
			}
			assert.Equal(t, bt.task.Capabilities, caps)

			// the prompt and tools are what a session of that task and seed starts with
			s, err := session.Create(context.Background(), bt.task, tc.seed, session.Options{})
			require.NoError(t, err)
			defer s.Close()
			want := s.State().Messages
			prompt := get(t, row, "prompt").([]jsonv.Value)
			require.Len(t, prompt, 2)
			require.Len(t, want, 2)
			for k, m := range prompt {
				mo := m.(*jsonv.Object)
				assert.Equal(t, []string{"role", "content"}, mo.Keys())
				assert.Equal(t, want[k].Role, get(t, mo, "role"))
				assert.Equal(t, want[k].Content, get(t, mo, "content"))
			}
			var tools []jsonv.Value
			for _, tool := range s.Tools() {
				tools = append(tools, tool)
			}
			toolsText, ok := get(t, row, "tools").(string)
			require.True(t, ok, "tools is a JSON string")
			assert.Equal(t, jsonv.MustEncode(tools), toolsText)

			// the group of `export rl` for an episode of the task and seed
			oracle, _ := traced(t, bt, tc.seed, "oracle")
			group := get(t, row, "group")
			assert.Equal(t, oracle.RLGroup(), group)
			assert.Equal(t, RL(oracle, "").Members[1], jsonv.Member{Key: "group", Value: group})

			info := get(t, row, "extra_info").(*jsonv.Object)
			assert.Equal(t, []string{"index", "task", "seed", "group"}, info.Keys())
			assert.Equal(t, int64(i), get(t, info, "index"))
			assert.Equal(t, group, get(t, info, "group"))
		})
	}
}

// The same task and seed give the same row, byte for byte; another seed another start state
// when the setup draws from the seed, and always another session.
func TestTaskRowDeterministic(t *testing.T) {
	t.Parallel()
	a := jsonv.MustEncode(promptRow(t, "carrier-quote-award", 3, 0))
	b := jsonv.MustEncode(promptRow(t, "carrier-quote-award", 3, 0))
	assert.Equal(t, a, b)
	c := jsonv.MustEncode(promptRow(t, "carrier-quote-award", 4, 0))
	assert.NotEqual(t, a, c)
}

// A trace without a system prompt (not a model's) or without a user message has no row.
func TestTaskRowNeedsAPrompt(t *testing.T) {
	t.Parallel()
	bt := builtinTaskNamed(t, "fuel-surcharge-answer")
	oracle, _ := traced(t, bt, 0, "oracle")
	_, err := TaskRow(oracle, oracle.RecordedSystem(), nil, 0)
	assert.ErrorContains(t, err, "no system prompt")

	start := &trace.Start{Format: trace.Format, Task: "t", File: "t.star", Engine: "test", Agent: "openai", System: "sys", Tools: []jsonv.Value{}}
	end := &trace.End{Checks: []trace.Check{}}
	e := &Episode{Path: "p", Events: []trace.Event{{Kind: start.Kind(), Body: start}, {Kind: end.Kind(), Body: end}}}
	_, err = TaskRow(e, "sys", nil, 0)
	assert.ErrorContains(t, err, "before its first user message")
}
