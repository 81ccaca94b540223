package export

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/runtime/conversation"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyTask has two turns without faults, so that scripted models pass it.
const copyTask = `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.fs.write("/a.txt", "alpha")

def _v1(ws, ep):
    check(ws.fs.exists("/b.txt"), "b is written")

def _s1(agent):
    a = agent.call("fs_read", path = "/a.txt")
    agent.call("fs_list", path = "/")
    agent.call("fs_write", path = "/b.txt", content = a)
    agent.reply("Copied.")

def _v2(ws, ep):
    check(not ws.fs.exists("/a.txt"), "a is deleted")

def _s2(agent):
    agent.call("fs_delete", path = "/a.txt")
    agent.reply("Deleted.")

task(
    name = "copy",
    turns = [
        turn(user = "Copy /a.txt to /b.txt.", verify = _v1, solution = _s1),
        turn(user = "Delete /a.txt.", verify = _v2, solution = _s2),
    ],
    tools = ["fs"],
    setup = _setup,
)
`

// step is one message of a scripted model. The agent runs its calls in order, as
// runtime/modelagent does, except the last notRun ones, which it answers with notRunMsg; a call
// with broken arguments is not run either.
type step struct {
	msg    episode.AssistantMessage
	notRun int
}

const notRunMsg = "the tool was not run: the turn ended before it"

// scripted is a model agent that sends the messages of its script, a list of steps per turn.
type scripted [][]step

func (scripted) Name() string { return "openai" }

func (s scripted) Turn(ctx context.Context, tc *episode.TurnContext) (string, error) {
	last := ""
	for _, st := range s[tc.Index] {
		tc.Assistant(st.msg)
		last = st.msg.Content
		for i, c := range st.msg.ToolCalls {
			id, fn := field(c, "id").(string), field(c, "function")
			name, args := field(fn, "name").(string), field(fn, "arguments").(string)
			if i >= len(st.msg.ToolCalls)-st.notRun {
				tc.NotRun(id, conversation.ToolErrorContent(notRunMsg, false))
				continue
			}
			parsed, problem := conversation.ParseArguments(args)
			if problem != "" {
				tc.NotRun(id, conversation.BadArgumentsContent(name, problem, args))
				continue
			}
			if _, err := tc.Call(id, name, parsed); err != nil {
				return "", err
			}
		}
	}
	return last, nil
}

// thinker reasons, writes text beside its calls, makes two calls at once, and leaves its last
// call of turn 2 unrun.
var thinker = scripted{
	{
		{msg: episode.AssistantMessage{Content: "Let me look.", Reasoning: "The note is in /a.txt.",
			ToolCalls: []jsonv.Value{call("a", "fs_read", `{"path": "/a.txt"}`), call("b", "fs_list", `{"path":"/"}`)}}},
		{msg: episode.AssistantMessage{Content: "", Reasoning: "Now I write it.",
			ToolCalls: []jsonv.Value{call("c", "fs_write", `{"path":"/b.txt","content":"alpha"}`)}}},
		{msg: episode.AssistantMessage{Content: "Copied.", Reasoning: "Done."}},
	},
	{
		{msg: episode.AssistantMessage{Content: "Deleting it.",
			ToolCalls: []jsonv.Value{call("d", "fs_delete", `{"path":"/a.txt"}`), call("e", "fs_read", `{"path":"/a.txt"}`)}}, notRun: 1},
		{msg: episode.AssistantMessage{Content: "Deleted."}},
	},
}

// sftEpisodes records the copy task with the oracle and with thinker; both pass.
func sftEpisodes(t *testing.T) (oracle, model *Episode) {
	t.Helper()
	task, src := loadTask(t, copyTask)
	oracle = record(t, task, src, 0, episode.Oracle{}, "", "runs/copy/0.jsonl")
	model = record(t, task, src, 0, thinker, "You are helpful.", "runs/copy/1.jsonl")
	require.True(t, oracle.Passed())
	require.True(t, model.Passed())
	return oracle, model
}

// writeRows writes the episodes' rows in shape through SFTFile, with system "SYS", and reads
// the file back with encoding/json, as a loader would.
func writeRows(t *testing.T, shape SFTShape, eps ...*Episode) (dir string, rows []map[string]any) {
	t.Helper()
	dir = t.TempDir()
	path := filepath.Join(dir, "train.jsonl")
	f, err := CreateSFT(path, shape)
	require.NoError(t, err)
	for _, e := range eps {
		require.Equal(t, "", SFTSkip(e, SFTOptions{IncludeReference: true, Shape: shape}))
		require.NoError(t, f.Add(e, "SYS"))
	}
	require.NoError(t, f.Commit())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		var row map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
		rows = append(rows, row)
	}
	require.Len(t, rows, len(eps))
	return dir, rows
}

// The field lists below are what each loader reads, written down from its source (the
// repository and file named with each; read at the commits of July and August 2026). The rows
// of each format are checked against the lists of the loaders that read that format.

// TRL's SFTTrainer reads the openai format.
//   - huggingface/trl trl/trainer/sft_trainer.py (tokenize_fn): example["messages"], and
//     example.get("tools") passed through json.loads when it is a string, both handed to the
//     tokenizer's chat template.
//   - huggingface/trl docs/source/dataset_formats.md (Tool Calling): messages of roles system,
//     user, assistant and tool with "content"; an assistant's "tool_calls", each {"type":
//     "function", "function": {"name", "arguments"}} with arguments an object; a tool message's
//     "name"; tools are function schemas {"type": "function", "function": {"name",
//     "description", "parameters"}}.
//   - the fields the chat templates read besides: "id" of a tool call and "tool_call_id"
//     (Mistral's templates, as copied in axolotl-ai-cloud/axolotl
//     src/axolotl/utils/chat_templates/templates/mistral_v3_tekken.jinja), and
//     "reasoning_content" (Qwen3's, .../templates/qwen3.jinja).
var trlRowKeys = []string{"messages", "tools"}
var trlMessageKeys = []string{"role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content"}
var trlRoles = []string{"system", "user", "assistant", "tool"}

// axolotl's chat_template strategy reads the openai format with its defaults, and the sharegpt
// format with field_messages: conversations and message_property_mappings {role: from, content:
// value} (axolotl-ai-cloud/axolotl src/axolotl/prompt_strategies/chat_template.py):
//   - ChatTemplatePrompter: field_messages "messages", field_tools "tools", field_thinking
//     "reasoning_content"; the default message_property_mappings {role: role, content: content,
//     reasoning_content: reasoning_content}; the default roles map human and user to user,
//     assistant and gpt to assistant, system to system, tool to tool.
//   - transform_message keeps "tool_calls", "tool_call_id" and "name" (the fields the template
//     uses) and json.loads arguments that are strings; _get_tools json.loads a tools string and
//     reads each tool's "function" and its "parameters".
var axolotlRoles = []string{"human", "user", "assistant", "gpt", "system", "tool"}
var axolotlKeptKeys = []string{"tool_calls", "tool_call_id", "name", "reasoning_content"}

// LLaMA-Factory reads the llamafactory format (hiyouga/LLaMA-Factory):
//   - src/llamafactory/data/parser.py (DatasetAttr.join): an entry's "file_name", "formatting",
//     "columns" (prompt, query, response, history, messages, system, tools, images, videos,
//     audios, chosen, rejected, kto_tag; one not named is None) and "tags" (role_tag,
//     content_tag, user_tag, assistant_tag, observation_tag, function_tag, system_tag).
//   - src/llamafactory/data/converter.py (SharegptDatasetConverter): message[role_tag] and
//     message[content_tag]; user_tag or observation_tag at even places, assistant_tag or
//     function_tag at odd ones, an even count; example[system] and example[tools].
//   - src/llamafactory/data/formatter.py: ToolFormatter json.loads the tools string;
//     FunctionFormatter finds the calls between tool_call_words (<tool_call>, </tool_call>) and
//     keeps the text around them, else reads the whole value, and json.loads them: one call or a
//     list, each with "name" and "arguments" (written back with json.dumps: an object).
var lfColumns = []string{"prompt", "query", "response", "history", "messages", "system", "tools",
	"images", "videos", "audios", "chosen", "rejected", "kto_tag"}
var lfTags = []string{"role_tag", "content_tag", "user_tag", "assistant_tag", "observation_tag", "function_tag", "system_tag"}
var lfEntryKeys = []string{"file_name", "formatting", "columns", "tags"}

// lfToolCallWords is LLaMA-Factory's FunctionFormatter search for the calls (its default
// tool_call_words, re.DOTALL, the first match).
var lfToolCallWords = regexp.MustCompile(`(?s)<tool_call>(.*?)</tool_call>`)

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkToolsString checks a tools value: a JSON string of function schemas.
func checkToolsString(t *testing.T, where string, v any) {
	s, ok := v.(string)
	require.True(t, ok, "%s: tools is a JSON string", where)
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &tools), where)
	require.NotEmpty(t, tools, where)
	for _, tool := range tools {
		assert.Equal(t, "function", tool["type"], where)
		fn, _ := tool["function"].(map[string]any)
		assert.NotEmpty(t, fn["name"], where)
		_, ok := fn["parameters"].(map[string]any)
		assert.True(t, ok, "%s: parameters", where)
	}
}

// checkToolCalls checks the tool_calls of a message: {"id", "type": "function", "function":
// {"name", "arguments": object}}.
func checkToolCalls(t *testing.T, where string, m map[string]any) {
	calls, has := m["tool_calls"]
	if !has {
		return
	}
	list, ok := calls.([]any)
	require.True(t, ok, where)
	for _, c := range list {
		call := c.(map[string]any)
		assert.ElementsMatch(t, []string{"id", "type", "function"}, keys(call), where)
		assert.Equal(t, "function", call["type"], where)
		fn := call["function"].(map[string]any)
		assert.ElementsMatch(t, []string{"name", "arguments"}, keys(fn), where)
		_, isObj := fn["arguments"].(map[string]any)
		assert.True(t, isObj, "%s: arguments are an object: %v", where, fn["arguments"])
	}
}

// Rows of each format have exactly the fields their loaders read, of the types they read.
func TestRowsMatchWhatLoadersRead(t *testing.T) {
	t.Parallel()
	oracle, model := sftEpisodes(t)

	// openai, for TRL and axolotl's defaults
	_, rows := writeRows(t, DefaultSFTShape, oracle, model)
	for i, row := range rows {
		where := "openai row " + string(rune('1'+i))
		assert.ElementsMatch(t, trlRowKeys, keys(row), where)
		checkToolsString(t, where, row["tools"])
		for _, x := range row["messages"].([]any) {
			m := x.(map[string]any)
			assert.Subset(t, trlMessageKeys, keys(m), where)
			assert.Contains(t, trlRoles, m["role"], where)
			assert.Contains(t, axolotlRoles, m["role"], where)
			_, isStr := m["content"].(string)
			assert.True(t, isStr, "%s: content is a string", where)
			if m["role"] == "tool" {
				assert.NotEmpty(t, m["name"], "%s: a tool message names its tool", where)
				assert.NotEmpty(t, m["tool_call_id"], where)
			}
			checkToolCalls(t, where, m)
		}
	}

	// sharegpt, for axolotl with field_messages: conversations and {role: from, content: value}
	_, rows = writeRows(t, SFTShape{Format: FormatShareGPT, ObjectArguments: true, ToolsJSON: true, Reasoning: true}, oracle, model)
	for _, row := range rows {
		assert.ElementsMatch(t, []string{"conversations", "tools"}, keys(row))
		checkToolsString(t, "sharegpt", row["tools"])
		for _, x := range row["conversations"].([]any) {
			m := x.(map[string]any)
			assert.Subset(t, append([]string{"from", "value"}, axolotlKeptKeys...), keys(m))
			assert.Contains(t, []string{"system", "human", "gpt", "tool"}, m["from"])
			assert.Contains(t, axolotlRoles, m["from"])
			checkToolCalls(t, "sharegpt", m)
		}
	}

	// llamafactory, and its dataset_info.json entry
	dir, rows := writeRows(t, SFTShape{Format: FormatLlamaFactory, Reasoning: true}, oracle, model)
	var info map[string]map[string]any
	data, err := os.ReadFile(filepath.Join(dir, DatasetInfo))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &info))
	entry := info["train"]
	require.NotNil(t, entry, "the entry is named after the file")
	assert.Subset(t, lfEntryKeys, keys(entry))
	assert.Equal(t, "train.jsonl", entry["file_name"])
	assert.Equal(t, "sharegpt", entry["formatting"])
	columns := entry["columns"].(map[string]any)
	tags := entry["tags"].(map[string]any)
	assert.Subset(t, lfColumns, keys(columns))
	assert.ElementsMatch(t, lfTags, keys(tags))
	for _, row := range rows {
		var named []string
		for _, col := range columns {
			named = append(named, col.(string))
		}
		assert.ElementsMatch(t, named, keys(row), "a row has the columns the entry names")
		assert.Equal(t, "SYS", row[columns["system"].(string)])
		checkToolsString(t, "llamafactory", row[columns["tools"].(string)])
		conv := row[columns["messages"].(string)].([]any)
		require.NotEmpty(t, conv)
		require.Equal(t, 0, len(conv)%2, "an even count")
		for i, x := range conv {
			m := x.(map[string]any)
			assert.ElementsMatch(t, []any{tags["role_tag"], tags["content_tag"]}, toAny(keys(m)))
			from, value := m[tags["role_tag"].(string)], m[tags["content_tag"].(string)].(string)
			if i%2 == 0 {
				assert.Contains(t, []any{tags["user_tag"], tags["observation_tag"]}, from, "place %d", i)
			} else {
				assert.Contains(t, []any{tags["assistant_tag"], tags["function_tag"]}, from, "place %d", i)
			}
			if from == tags["function_tag"] {
				js := value
				if match := lfToolCallWords.FindStringSubmatch(value); match != nil {
					js = match[1]
				}
				var calls []map[string]any
				require.NoError(t, json.Unmarshal([]byte(js), &calls), "the calls are JSON: %q", value)
				for _, c := range calls {
					assert.ElementsMatch(t, []string{"name", "arguments"}, keys(c))
					_, isObj := c["arguments"].(map[string]any)
					assert.True(t, isObj, "arguments are an object")
				}
			}
		}
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// entry is one message in a form every format can be read back into: the role, the text, the
// reasoning, and each call's tool name and arguments (JSON with sorted keys).
type entry struct {
	Role, Text, Reasoning string
	Calls                 []string
}

// canonical is JSON text with its object keys sorted.
func canonical(t *testing.T, v any) string {
	if s, ok := v.(string); ok {
		require.NoError(t, json.Unmarshal([]byte(s), &v))
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// expected are the messages of an episode, read straight from its trace events: every user
// message, every message of the model (or call and reply of another agent) and every tool
// message, in order.
func expected(t *testing.T, e *Episode, reasoning bool) []entry {
	var out []entry
	results := map[string]string{}
	notRun := map[string]string{}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.CallResult:
			results[b.ID] = conversation.ResultContent(b.Content) // a text result is its text
			if b.Error != nil {
				results[b.ID] = conversation.ToolErrorContent(*b.Error, b.Fault)
			}
		case *trace.NotRun:
			notRun[b.ID] = b.Content
		}
	}
	for _, ev := range e.Events {
		switch b := ev.Body.(type) {
		case *trace.User:
			out = append(out, entry{Role: "user", Text: b.Content})
		case *trace.Assistant:
			en := entry{Role: "assistant", Text: b.Content}
			if reasoning {
				en.Reasoning = b.Reasoning
			}
			var ids []string
			for _, c := range b.ToolCalls {
				fn := field(c, "function")
				en.Calls = append(en.Calls, field(fn, "name").(string)+" "+canonical(t, field(fn, "arguments")))
				ids = append(ids, field(c, "id").(string))
			}
			out = append(out, en)
			for _, id := range ids {
				content, ok := results[id]
				if !ok {
					content = notRun[id]
				}
				out = append(out, entry{Role: "tool", Text: content})
			}
		case *trace.Call:
			if !e.FromModel() {
				out = append(out, entry{Role: "assistant", Calls: []string{b.Name + " " + canonical(t, jsonv.MustEncode(b.Args))}})
				out = append(out, entry{Role: "tool", Text: results[b.ID]})
			}
		case *trace.Reply:
			if !e.FromModel() {
				out = append(out, entry{Role: "assistant", Text: b.Content})
			}
		}
	}
	return out
}

// readOpenAI reads messages (role/content) or conversations (from/value) back, checking that
// each tool message answers a call of the assistant message before it.
func readOpenAI(t *testing.T, msgs []any, roleKey, contentKey string, roles map[string]string) (system string, out []entry) {
	var pending []string
	for _, x := range msgs {
		m := x.(map[string]any)
		role := roles[m[roleKey].(string)]
		text := m[contentKey].(string)
		switch role {
		case "system":
			system = text
			continue
		case "tool":
			require.NotEmpty(t, pending, "a tool message answers a call")
			assert.Equal(t, pending[0], m["tool_call_id"])
			pending = pending[1:]
		default:
			assert.Empty(t, pending, "every call is answered")
		}
		en := entry{Role: role, Text: text}
		if r, ok := m["reasoning_content"]; ok {
			en.Reasoning = r.(string)
		}
		if calls, ok := m["tool_calls"].([]any); ok {
			for _, c := range calls {
				fn := c.(map[string]any)["function"].(map[string]any)
				en.Calls = append(en.Calls, fn["name"].(string)+" "+canonical(t, fn["arguments"]))
				pending = append(pending, c.(map[string]any)["id"].(string))
			}
		}
		out = append(out, en)
	}
	return system, out
}

// splitThink splits a value of the llamafactory format into its <think> block and the rest.
func splitThink(s string) (reasoning, text string) {
	if rest, ok := strings.CutPrefix(s, "<think>\n"); ok {
		if i := strings.Index(rest, "\n</think>\n\n"); i >= 0 {
			return rest[:i], rest[i+len("\n</think>\n\n"):]
		}
	}
	return "", s
}

// readLlamaFactory reads the conversations of a row of the llamafactory format back as
// LLaMA-Factory reads them: the calls of a function_call between its tool_call_words (or the
// whole value), the text around them, the results of an observation split where the export
// joined them.
func readLlamaFactory(t *testing.T, conv []any) []entry {
	var out []entry
	for _, x := range conv {
		m := x.(map[string]any)
		value := m["value"].(string)
		switch m["from"] {
		case "human":
			out = append(out, entry{Role: "user", Text: value})
		case "gpt":
			r, text := splitThink(value)
			out = append(out, entry{Role: "assistant", Text: text, Reasoning: r})
		case "function_call":
			js, rest := value, ""
			if loc := lfToolCallWords.FindStringSubmatchIndex(value); loc != nil {
				js, rest = value[loc[2]:loc[3]], value[:loc[0]]+value[loc[1]:]
			}
			r, text := splitThink(rest)
			if text != "" {
				require.True(t, strings.HasSuffix(text, "\n"), "the text beside calls ends its line: %q", value)
				text = strings.TrimSuffix(text, "\n")
			}
			en := entry{Role: "assistant", Text: text, Reasoning: r}
			var calls []map[string]any
			require.NoError(t, json.Unmarshal([]byte(js), &calls))
			for _, c := range calls {
				en.Calls = append(en.Calls, c["name"].(string)+" "+canonical(t, c["arguments"]))
			}
			out = append(out, en)
		case "observation":
			for _, r := range strings.Split(value, observationSep) {
				out = append(out, entry{Role: "tool", Text: r})
			}
		default:
			t.Fatalf("unknown from %v", m["from"])
		}
	}
	return out
}

// Every message of an oracle's and of a model's episode survives each format: the text beside
// tool calls, the reasoning, every call and every tool message (the one the model was shown for
// a call not run too).
func TestSFTRoundTrip(t *testing.T) {
	t.Parallel()
	oracle, model := sftEpisodes(t)
	for _, keep := range []bool{true, false} {
		want := [][]entry{expected(t, oracle, keep), expected(t, model, keep)}
		// the model's script is in its trace as written
		assert.Equal(t, entry{Role: "assistant", Text: "Let me look.", Reasoning: map[bool]string{true: "The note is in /a.txt."}[keep],
			Calls: []string{`fs_read {"path":"/a.txt"}`, `fs_list {"path":"/"}`}}, want[1][1])
		assert.Contains(t, want[1], entry{Role: "tool", Text: conversation.ToolErrorContent(notRunMsg, false)})

		shapes := map[string]SFTShape{
			FormatOpenAI:       {Format: FormatOpenAI, ObjectArguments: true, ToolsJSON: true, Reasoning: keep},
			FormatShareGPT:     {Format: FormatShareGPT, ObjectArguments: true, ToolsJSON: true, Reasoning: keep},
			FormatLlamaFactory: {Format: FormatLlamaFactory, Reasoning: keep},
		}
		for _, format := range []string{FormatOpenAI, FormatShareGPT, FormatLlamaFactory} {
			_, rows := writeRows(t, shapes[format], oracle, model)
			for i, row := range rows {
				var system string
				var got []entry
				switch format {
				case FormatOpenAI:
					system, got = readOpenAI(t, row["messages"].([]any), "role", "content",
						map[string]string{"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"})
				case FormatShareGPT:
					system, got = readOpenAI(t, row["conversations"].([]any), "from", "value",
						map[string]string{"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"})
				case FormatLlamaFactory:
					system, got = row["system"].(string), readLlamaFactory(t, row["conversations"].([]any))
				}
				assert.Equal(t, "SYS", system, format)
				assert.Equal(t, want[i], got, "%s row %d, reasoning kept %v", format, i+1, keep)
			}
		}
	}
}

// The model's conversation: reasoning beside text and calls, "" stays "", tool names, the
// recorded not_run message; Messages (what export rl writes) keeps the shape of earlier versions.
func TestModelMessagesWithOptions(t *testing.T) {
	t.Parallel()
	_, e := sftEpisodes(t)
	msgs := e.MessagesWith("S", DefaultSFTShape.messageOptions())
	require.Equal(t, []string{"system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant",
		"user", "assistant", "tool", "tool", "assistant"}, roles(msgs))
	assert.Equal(t, "The note is in /a.txt.", field(msgs[2], "reasoning_content"))
	assert.Equal(t, "", field(msgs[5], "content"), `"" stays ""`)
	assert.Equal(t, "Now I write it.", field(msgs[5], "reasoning_content"))
	assert.Nil(t, field(msgs[9], "reasoning_content"), "none recorded, none written")
	args := field(field(field(msgs[2], "tool_calls").([]jsonv.Value)[0], "function"), "arguments")
	assert.Equal(t, jsonv.NewObject("path", "/a.txt"), args)
	assert.Equal(t, "fs_list", field(msgs[4], "name"))
	assert.Equal(t, "e", field(msgs[11], "tool_call_id"))
	assert.Equal(t, "fs_read", field(msgs[11], "name"))
	assert.Equal(t, conversation.ToolErrorContent(notRunMsg, false), field(msgs[11], "content"), "the not_run event's message")

	// a trace of an older engine has no not_run events: the message is rebuilt
	old := &Episode{Path: e.Path}
	for _, ev := range e.Events {
		if _, ok := ev.Body.(*trace.NotRun); !ok {
			old.Events = append(old.Events, ev)
		}
	}
	require.Less(t, len(old.Events), len(e.Events))
	assert.Equal(t, `{"error":"the tool was not run"}`, field(old.MessagesWith("S", DefaultSFTShape.messageOptions())[11], "content"))

	// Messages: arguments as the model sent them, no name, no reasoning, the rebuilt message
	plain := e.Messages("S")
	require.Equal(t, roles(msgs), roles(plain))
	assert.Equal(t, `{"path": "/a.txt"}`, field(field(field(plain[2], "tool_calls").([]jsonv.Value)[0], "function"), "arguments"))
	for _, m := range plain {
		assert.Nil(t, field(m, "name"))
		assert.Nil(t, field(m, "reasoning_content"))
	}
	assert.Equal(t, `{"error":"the tool was not run"}`, field(plain[11], "content"))
	// export rl: the messages as the model sent them, with its reasoning and what it was told
	// about the calls not run
	rl := field(RL(e, "S"), "messages").([]jsonv.Value)
	assert.Equal(t, jsonv.MustEncode(e.MessagesWith("S", MessageOptions{Reasoning: true, RecordedNotRun: true})), jsonv.MustEncode(rl))
	assert.Equal(t, "The note is in /a.txt.", field(rl[2], "reasoning_content"))
	assert.Equal(t, `{"error":"the tool was not run: the turn ended before it"}`, field(rl[11], "content"))
}

var strictID = regexp.MustCompile(`^[A-Za-z0-9]{9}$`)

// Strict ids: 9 letters and digits, unique within the conversation, the tool messages still
// answer their calls, and the same conversation gets the same ids every time.
func TestStrictIDs(t *testing.T) {
	t.Parallel()
	oracle, model := sftEpisodes(t)
	o := DefaultSFTShape.messageOptions()
	o.StrictIDs = true
	for _, e := range []*Episode{oracle, model} {
		msgs := e.MessagesWith("S", o)
		seen := map[string]bool{}
		var pending []string
		for _, m := range msgs {
			if calls, ok := field(m, "tool_calls").([]jsonv.Value); ok {
				for _, c := range calls {
					id := field(c, "id").(string)
					assert.Regexp(t, strictID, id)
					assert.False(t, seen[id], "id %s twice", id)
					seen[id] = true
					pending = append(pending, id)
				}
			}
			if field(m, "role") == "tool" {
				require.NotEmpty(t, pending)
				assert.Equal(t, pending[0], field(m, "tool_call_id"))
				pending = pending[1:]
			}
		}
		assert.Empty(t, pending)
		assert.NotEmpty(t, seen)
		assert.Equal(t, jsonv.MustEncode(msgs), jsonv.MustEncode(e.MessagesWith("S", o)), "deterministic")
		// the results still go with their calls
		assert.Equal(t, jsonv.MustEncode(contents(e.MessagesWith("S", DefaultSFTShape.messageOptions()))), jsonv.MustEncode(contents(msgs)))
	}
	// two calls recorded under the same id still get two ids
	ids := newIDMap(true)
	assert.NotEqual(t, ids.next("x"), ids.next("x"))
}

func contents(msgs []jsonv.Value) []jsonv.Value {
	var out []jsonv.Value
	for _, m := range msgs {
		out = append(out, field(m, "content"))
	}
	return out
}

// malformed sends broken arguments once, then solves the task.
var malformed = scripted{
	{
		{msg: episode.AssistantMessage{ToolCalls: []jsonv.Value{call("x", "fs_read", `{"path": "/a.txt"`)}}},
		{msg: episode.AssistantMessage{ToolCalls: []jsonv.Value{call("c", "fs_write", `{"path":"/b.txt","content":"alpha"}`)}}},
		{msg: episode.AssistantMessage{Content: "Copied."}},
	},
	{
		{msg: episode.AssistantMessage{ToolCalls: []jsonv.Value{call("d", "fs_delete", `{"path":"/a.txt"}`)}}},
		{msg: episode.AssistantMessage{Content: "Deleted."}},
	},
}

// deep sends arguments nested one level deeper than the engine accepts (it refuses the call),
// then solves the task.
var deep = scripted{
	{
		{msg: episode.AssistantMessage{ToolCalls: []jsonv.Value{call("x", "fs_write", `{"path":"/b.txt","content":`+nestJSON(limits.ToolArgsDepth)+`}`)}}},
		{msg: episode.AssistantMessage{ToolCalls: []jsonv.Value{call("c", "fs_write", `{"path":"/b.txt","content":"alpha"}`)}}},
		{msg: episode.AssistantMessage{Content: "Copied."}},
	},
	malformed[1],
}

// Rows with arguments as objects hold nothing else: episodes with arguments that are not an
// object are always left out, and with objects so are those whose arguments nest deeper than
// the engine accepts (as objects they would make lines too deep to read back).
func TestObjectArgumentsOnly(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, copyTask)
	bad := record(t, task, src, 0, malformed, "S", "x/bad.jsonl")
	require.True(t, bad.Passed())
	require.Equal(t, 1, bad.MalformedCalls())
	for _, shape := range []SFTShape{{}, DefaultSFTShape, {Format: FormatLlamaFactory}} {
		assert.Equal(t, "a tool call with malformed arguments", SFTSkip(bad, SFTOptions{Shape: shape}))
	}
	// which is why: written as objects, broken arguments could only stay a string
	args := field(field(field(bad.MessagesWith("", MessageOptions{ObjectArguments: true})[1], "tool_calls").([]jsonv.Value)[0], "function"), "arguments")
	assert.Equal(t, `{"path": "/a.txt"`, args)

	e := record(t, task, src, 0, deep, "S", "x/deep.jsonl")
	require.True(t, e.Passed())
	require.Equal(t, 0, e.MalformedCalls())
	require.Equal(t, 1, e.DeepCalls())
	want := "a tool call with arguments nested deeper than 100 levels"
	assert.Equal(t, want, SFTSkip(e, SFTOptions{Shape: DefaultSFTShape}))
	assert.Equal(t, want, SFTSkip(e, SFTOptions{Shape: SFTShape{Format: FormatLlamaFactory}}))
	assert.Equal(t, "", SFTSkip(e, SFTOptions{Shape: SFTShape{Format: FormatShareGPT}}), "as strings they are kept")
	msgs := e.MessagesWith("", MessageOptions{ObjectArguments: true})
	deepArgs := field(field(field(msgs[1], "tool_calls").([]jsonv.Value)[0], "function"), "arguments")
	assert.IsType(t, "", deepArgs, "too deep for an object: a string")
	okArgs := field(field(field(msgs[3], "tool_calls").([]jsonv.Value)[0], "function"), "arguments")
	assert.IsType(t, &jsonv.Object{}, okArgs)
	line, err := jsonv.Encode(SFT(e, "S"))
	require.NoError(t, err)
	_, err = jsonv.Decode(line)
	assert.NoError(t, err, "the row reads back")

	// a crafted oracle trace with deep args in its call event
	oracle, _ := sftEpisodes(t)
	crafted := &Episode{Path: oracle.Path, Events: append([]trace.Event(nil), oracle.Events...)}
	for i, ev := range crafted.Events {
		if c, ok := ev.Body.(*trace.Call); ok {
			d, err := jsonv.DecodeString(`{"x":` + nestJSON(limits.ToolArgsDepth) + `}`)
			require.NoError(t, err)
			cc := *c
			cc.Args = d.(*jsonv.Object)
			crafted.Events[i].Body = &cc
			break
		}
	}
	assert.Equal(t, 1, crafted.DeepCalls())
	assert.Equal(t, want, SFTSkip(crafted, SFTOptions{IncludeReference: true, Shape: DefaultSFTShape}))
}

// endsOnResults ends its first turn on tool results, as a turn cut short by max_calls_per_turn
// does.
var endsOnResults = scripted{
	{
		{msg: episode.AssistantMessage{ToolCalls: []jsonv.Value{call("c", "fs_write", `{"path":"/b.txt","content":"alpha"}`)}}},
	},
	malformed[1],
}

// The llamafactory format leaves out what LLaMA-Factory's alternating roles cannot hold, and
// what would read back wrong; the other formats keep it.
func TestLlamaFactoryLeavesOut(t *testing.T) {
	t.Parallel()
	task, src := loadTask(t, copyTask)
	e := record(t, task, src, 0, endsOnResults, "S", "x/ends.jsonl")
	require.True(t, e.Passed())
	lf := SFTOptions{Shape: SFTShape{Format: FormatLlamaFactory}}
	assert.Equal(t, errLFTurnEndsOnResults.Error(), SFTSkip(e, lf))
	assert.Equal(t, "", SFTSkip(e, SFTOptions{Shape: DefaultSFTShape}))
	_, err := SFTRow(e, "S", lf.Shape)
	assert.Equal(t, errLFTurnEndsOnResults, err)

	user := jsonv.NewObject("role", "user", "content", "Hi.")
	answer := jsonv.NewObject("role", "assistant", "content", "Hello.")
	callMsg := func(text string) *jsonv.Object {
		return jsonv.NewObject("role", "assistant", "content", text, "tool_calls", []jsonv.Value{
			jsonv.NewObject("id", "a", "type", "function", "function", jsonv.NewObject("name", "fs_read", "arguments", jsonv.NewObject("path", "/a"))),
			jsonv.NewObject("id", "b", "type", "function", "function", jsonv.NewObject("name", "fs_read", "arguments", jsonv.NewObject("path", "/b"))),
		})
	}
	result := func(s string) *jsonv.Object {
		return jsonv.NewObject("role", "tool", "tool_call_id", "a", "content", s)
	}
	for _, c := range []struct {
		msgs []jsonv.Value
		err  error
	}{
		{[]jsonv.Value{user, callMsg("Looking."), result("1"), result("2"), answer}, nil},
		{[]jsonv.Value{user, callMsg("See <tool_call> here."), result("1"), result("2"), answer}, errLFToolCallText},
		{[]jsonv.Value{user, callMsg(""), result("1" + observationSep + "2"), result("3"), answer}, errLFSeparator},
		{[]jsonv.Value{user, callMsg(""), result("1"), result("2")}, errLFTurnEndsOnResults},
		{[]jsonv.Value{user, answer, answer}, errLFRoles},
		{[]jsonv.Value{user, user, answer}, errLFRoles},
		{[]jsonv.Value{answer}, errLFRoles},
		{nil, errLFRoles},
	} {
		_, err := llamaFactoryConversation(c.msgs, true)
		assert.Equal(t, c.err, err, "%s", jsonv.MustEncode(c.msgs))
	}
}

// The dataset_info.json entry is merged into the file beside the rows: the other entries stay,
// in their order, an entry of the same name is replaced; a file that is not LLaMA-Factory's is
// refused before anything is written; nothing is written until Commit.
func TestDatasetInfo(t *testing.T) {
	t.Parallel()
	oracle, model := sftEpisodes(t)
	shape := SFTShape{Format: FormatLlamaFactory}
	dir := t.TempDir()
	info := filepath.Join(dir, DatasetInfo)
	before := `{"alpaca": {"file_name": "alpaca.json", "num_samples": 3}, "train": {"file_name": "old.json"}, "zeta": {"file_name": "z.json"}}`
	require.NoError(t, os.WriteFile(info, []byte(before), 0o644))

	f, err := CreateSFT(filepath.Join(dir, "train.jsonl"), shape)
	require.NoError(t, err)
	require.NoError(t, f.Add(model, "SYS"))
	require.NoError(t, f.Add(oracle, "SYS"))
	b, _ := os.ReadFile(info)
	assert.Equal(t, before, string(b), "unchanged until Commit")
	require.NoError(t, f.Commit())
	v, err := jsonv.DecodeString(mustRead(t, info))
	require.NoError(t, err)
	got := v.(*jsonv.Object)
	assert.Equal(t, []string{"alpaca", "train", "zeta"}, got.Keys())
	alpaca, _ := got.Get("alpaca")
	assert.Equal(t, jsonv.NewObject("file_name", "alpaca.json", "num_samples", int64(3)), alpaca)
	train, _ := got.Get("train")
	assert.Equal(t, LlamaFactoryEntry("train.jsonl"), train)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	assert.Equal(t, []string{DatasetInfo, "train.jsonl"}, names, "no temporary file is left")

	// a new folder gets a dataset_info.json of one entry
	dir2 := t.TempDir()
	f, err = CreateSFT(filepath.Join(dir2, "agent.data.jsonl"), shape)
	require.NoError(t, err)
	require.NoError(t, f.Commit())
	v, err = jsonv.DecodeString(mustRead(t, filepath.Join(dir2, DatasetInfo)))
	require.NoError(t, err)
	assert.Equal(t, []string{"agent.data"}, v.(*jsonv.Object).Keys())
	assert.Equal(t, "", mustRead(t, filepath.Join(dir2, "agent.data.jsonl")))

	// Abort writes neither file; other formats write no dataset_info.json
	dir3 := t.TempDir()
	f, err = CreateSFT(filepath.Join(dir3, "a.jsonl"), shape)
	require.NoError(t, err)
	require.NoError(t, f.Add(model, "SYS"))
	f.Abort()
	f, err = CreateSFT(filepath.Join(dir3, "b.jsonl"), DefaultSFTShape)
	require.NoError(t, err)
	require.NoError(t, f.Commit())
	entries, _ = os.ReadDir(dir3)
	require.Len(t, entries, 1)
	assert.Equal(t, "b.jsonl", entries[0].Name())

	// refused: a dataset_info.json that is not a JSON object, or not JSON, and --out named like it
	for _, bad := range []string{`[1, 2]`, `{"a": `, `"x"`} {
		d := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(d, DatasetInfo), []byte(bad), 0o644))
		_, err := CreateSFT(filepath.Join(d, "train.jsonl"), shape)
		assert.ErrorContains(t, err, DatasetInfo, bad)
		entries, _ := os.ReadDir(d)
		assert.Len(t, entries, 1, "nothing written")
	}
	_, err = CreateSFT(filepath.Join(t.TempDir(), DatasetInfo), shape)
	assert.ErrorContains(t, err, "is where the dataset's entry goes")
}

func mustRead(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// docs/training.md shows the dataset_info.json entry that --format llamafactory writes.
func TestTrainingDocsEntry(t *testing.T) {
	t.Parallel()
	doc := mustRead(t, filepath.Join("..", "docs", "training.md"))
	start := strings.Index(doc, "```json\n\"coworkenv\": {")
	require.GreaterOrEqual(t, start, 0, "the entry is shown")
	block := doc[start+len("```json\n"):]
	block = block[:strings.Index(block, "```")]
	v, err := jsonv.DecodeString("{" + block + "}")
	require.NoError(t, err)
	shown, _ := v.(*jsonv.Object).Get("coworkenv")
	assert.Equal(t, LlamaFactoryEntry("coworkenv.jsonl"), shown)
}
