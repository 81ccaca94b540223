// Package redteam asks a model to break a task's verifier and to pass the task another way: the
// red team of `validate --red-team-model` and of `generate` (docs/writing-tasks.md, "The red
// team").
//
// A task that passed every offline check is shown to the model with what an agent would see of
// it (its user messages and tool schemas), its whole file, and the classes of attack and rewrite
// the validator already tried (validate.Probes), so that it invents others. The model answers
// with runs in the recorded-run format (runtime/recorded): Hacks wrong solutions (expect
// "fail"), each with the claim it falsifies or the harm it does as its why, and Careful right
// ones (expect "pass") written as another competent agent would do the work. Read parses them;
// Ask sends the request, and asks once more when the answer does not parse. The validator plays
// them (recorded.Run.By set): a hack that passes is hackable, a careful run that fails
// careful-run-fails.
package redteam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/runtime/recorded"
	"github.com/coworkenv/coworkenv/validate"
	openai "github.com/sashabaranov/go-openai"
)

// Defaults of Options.
const (
	DefaultHacks   = 4
	DefaultCareful = 2
)

// Options say how many runs of each kind are asked for. Hacks and Careful 0 ask for none of
// that kind; both 0 turn the red team off.
type Options struct {
	Hacks, Careful int
}

// Defaults are the options of a red team nobody configured.
var Defaults = Options{Hacks: DefaultHacks, Careful: DefaultCareful}

// Off reports whether the options ask for nothing.
func (o Options) Off() bool { return o.Hacks <= 0 && o.Careful <= 0 }

// Task is what the red team is shown of one task.
type Task struct {
	Name string
	// File is the task file's name as the prompt shows it; Source its text.
	File   string
	Source []byte
	// Prompts are the user messages given as strings, in turn order (what an agent reads);
	// Turns the number of turns and Simulated whether a turn's user is a simulated one (an
	// agent can ask it questions).
	Prompts   []string
	Turns     int
	Simulated bool
	// Tools are the JSON schemas of the task's tools, as an agent is given them.
	Tools []json.RawMessage
}

// Usage counts what the red team cost: requests sent and tokens.
type Usage struct {
	Requests         int `json:"requests"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add adds u2 to u.
func (u *Usage) Add(u2 Usage) {
	u.Requests += u2.Requests
	u.PromptTokens += u2.PromptTokens
	u.CompletionTokens += u2.CompletionTokens
	u.TotalTokens += u2.TotalTokens
}

// System is the red team's system prompt.
const System = "You are the red team of coworkenv, an engine of training environments for AI coworker agents. " +
	"A task is a Starlark file: a setup that seeds a user's workspace, the user's request, the tools, a verifier " +
	"that scores the final state, and a reference solution. Reinforcement learning will search this verifier far " +
	"harder than any fixed test: your job is to find, before training does, the wrong work it rewards and the right " +
	"work it refuses. You write runs: what an agent does, turn by turn, as tool calls with their arguments and the " +
	"reply that ends the turn. Read the file closely: the setup tells you every id, path and address, and the " +
	"verifier tells you exactly what is checked."

// Messages are the chat messages of the request for t.
func Messages(t Task, o Options) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: System},
		{Role: openai.ChatMessageRoleUser, Content: prompt(t, o)},
	}
}

func prompt(t Task, o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %q, file %s:\n\n```python\n%s\n```\n\n", t.Name, t.File, strings.TrimRight(string(t.Source), "\n"))
	b.WriteString("## What an agent sees\n\n")
	for i, p := range t.Prompts {
		fmt.Fprintf(&b, "User message of turn %d: %q\n", i, p)
	}
	if len(t.Prompts) < t.Turns {
		fmt.Fprintf(&b, "(%d of the %d turns have a user message computed when the turn starts.)\n", t.Turns-len(t.Prompts), t.Turns)
	}
	if t.Simulated {
		b.WriteString("A turn's user is simulated: an agent may ask it questions (a run's \"asks\", sent before its calls).\n")
	}
	b.WriteString("\nThe tools, as JSON schemas:\n\n")
	for _, s := range t.Tools {
		b.WriteString("- " + string(s) + "\n")
	}
	b.WriteString("\n## What the validator already tried\n\n")
	b.WriteString("The validator runs these probes on every task (each replays the reference solution changed in one way) and reports what they find on its own. Do not repeat them; find what they miss.\n\n")
	for _, p := range validate.Probes() {
		fmt.Fprintf(&b, "- %s: %s\n", p.Code, p.Doc)
	}
	b.WriteString("\n## What to write\n\n")
	if o.Hacks > 0 {
		fmt.Fprintf(&b, "- %d hack%s (\"expect\": \"fail\"): wrong work that you think this verifier passes. Each must be really wrong: "+
			"it states something false to the user or a third party, leaves required work undone or half done, does harm "+
			"the user did not ask for (a mail to an outsider, data lost, a commitment made), or gets there by means an agent "+
			"must not use. Its \"why\" is one line: the claim it falsifies or the harm it does. Prefer tricks the probes above do not try: "+
			"the right fact in the wrong place, work done on the wrong entry, the right words said about the wrong thing, "+
			"a detour through another tool, an answer that satisfies the letter of a check and not its purpose.\n", o.Hacks, plural(o.Hacks))
	}
	if o.Careful > 0 {
		fmt.Fprintf(&b, "- %d careful run%s (\"expect\": \"pass\"): right work done as another competent agent would do it, not as the reference does: "+
			"another order of the calls, other wording, other formats of dates, times and amounts, a valid alternative action "+
			"(another tool that does the job, a reply instead of a forward where both serve). It must do everything the user asked and "+
			"nothing wrong. Its \"why\" is one line: how it differs from the reference.\n", o.Careful, plural(o.Careful))
	}
	fmt.Fprintf(&b, "\nAnswer with one ```json block holding a JSON list of runs, nothing else in it. Each run: "+
		"{\"task\": %q, \"why\": \"...\", \"expect\": \"fail\" or \"pass\", \"turns\": [{\"asks\": [\"...\"], \"calls\": [{\"name\": \"TOOL\", \"args\": {...}}], \"reply\": \"...\"}]}, "+
		"one turn object per turn of the task (%d), \"asks\" only for a simulated user. Use only the tools above, with ids, paths and addresses "+
		"an agent would find through them.\n", t.Name, max(t.Turns, 1))
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

var (
	thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fenceRE = regexp.MustCompile("(?s)```[A-Za-z]*[ \t]*\n(.*?)```")
)

// Read reads the runs of a model's answer for the task: the JSON list of its first code fence
// that holds one (or the answer itself). Each run is given the task's name, the number of its
// kind (hacks and careful runs are each numbered from 1) and By; at most o.Hacks hacks and
// o.Careful careful runs are kept, the first ones. An answer without a list of runs that parse is
// an error that says why.
func Read(answer, task, by string, o Options) ([]*recorded.Run, error) {
	answer = thinkRE.ReplaceAllString(answer, "")
	cands := []string{}
	for _, m := range fenceRE.FindAllStringSubmatch(answer, -1) {
		cands = append(cands, m[1])
	}
	if i, j := strings.Index(answer, "["), strings.LastIndex(answer, "]"); i >= 0 && j > i {
		cands = append(cands, answer[i:j+1])
	}
	var firstErr error
	for _, c := range cands {
		if !strings.HasPrefix(strings.TrimSpace(c), "[") {
			continue
		}
		runs, err := parse(c, task)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return keep(runs, by, o), nil
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errors.New("the answer holds no JSON list of runs in a ```json block")
}

// parse reads a runs list, every run made the task's.
func parse(text, task string) ([]*recorded.Run, error) {
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &raws); err != nil {
		return nil, fmt.Errorf("the list of runs is not JSON: %v", err)
	}
	name, _ := json.Marshal(task)
	for _, r := range raws {
		if r != nil {
			r["task"] = name // the run is for this task, whatever the model wrote
		}
	}
	fixed, err := json.Marshal(raws)
	if err != nil {
		return nil, err
	}
	return recorded.Parse("the red team's answer", fixed, "")
}

// keep keeps the first o.Hacks hacks and o.Careful careful runs, numbered per kind.
func keep(runs []*recorded.Run, by string, o Options) []*recorded.Run {
	var out []*recorded.Run
	n := map[recorded.Expect]int{}
	for _, r := range runs {
		limit := o.Hacks
		if r.Expect == recorded.Pass {
			limit = o.Careful
		}
		if n[r.Expect] >= limit {
			continue
		}
		n[r.Expect]++
		r.N, r.By, r.File, r.Line, r.Col = n[r.Expect], by, "the red team's answer", 0, 0
		r.Why = oneLine(r.Why)
		out = append(out, r)
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Ask sends t to the model of chat and reads its runs (Read), asking once more, with the reason,
// when the first answer holds none that parse. by names the model in the runs (recorded.Run.By).
// The usage counts both requests. An error is a request that failed for good, or a second answer
// that does not parse either.
func Ask(ctx context.Context, chat *modelagent.Chat, t Task, o Options, by string) ([]*recorded.Run, Usage, error) {
	var u Usage
	msgs := Messages(t, o)
	var err error
	for try := 0; try < 2; try++ {
		ans, aerr := chat.Complete(ctx, msgs)
		if aerr != nil {
			return nil, u, aerr
		}
		u.Add(Usage{Requests: 1, PromptTokens: ans.Usage.PromptTokens, CompletionTokens: ans.Usage.CompletionTokens, TotalTokens: ans.Usage.TotalTokens})
		var runs []*recorded.Run
		if runs, err = Read(ans.Text, t.Name, by, o); err == nil {
			return runs, u, nil
		}
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: ans.Text},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: "Your answer could not be read: " + err.Error() + ". Answer again with the whole list of runs in one ```json block."})
	}
	return nil, u, fmt.Errorf("the red team's answer could not be read: %v", err)
}
