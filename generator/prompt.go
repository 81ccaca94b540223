package generator

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/validate"
)

// CandidateFile is the name a candidate has while it is checked (diagnostics show it).
const CandidateFile = "candidate.star"

// Example budgets: at most this many example files, and about this many bytes of them.
const (
	maxExamples     = 3
	minExamples     = 2
	exampleByteSoft = 18000
)

// example is a corpus file offered as an example.
type example struct {
	path string // as shown
	caps []string
	src  string
}

// systemPrompt introduces the job and carries the language reference.
func systemPrompt(reference string) string {
	var b strings.Builder
	b.WriteString("You write tasks for coworkenv: executable environments in which an AI coworker agent works in a user's ")
	b.WriteString("workspace (files, mail, calendar, business records) through tools. A task is one Starlark file: a setup ")
	b.WriteString("that seeds the workspace, the user's request, the tools, a verifier that scores the final state, and a ")
	b.WriteString("reference solution that proves the task can be solved through those tools. A validator runs every file ")
	b.WriteString("you write: it must load, the oracle (your solution) must pass, an agent that does nothing must fail, the ")
	b.WriteString("verifier must notice when any state-changing step of the solution is left out, and an agent that only ")
	b.WriteString("claims to have done the work must fail. When it finds problems you get its diagnostics and write the ")
	b.WriteString("whole file again.\n\nThe task language reference follows.\n\n")
	b.WriteString(reference)
	return b.String()
}

// firstPrompt asks for a task.
func firstPrompt(caps []string, tax *dsl.Taxonomy, sc Scenario, examples []example, accepted []*entry, acceptedDesc map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Write one new coworkenv task file (attempt seed %d).\n\n", sc.Seed)
	b.WriteString("## Capabilities\n\nThe task must exercise these capabilities and list them in `capabilities`:\n\n")
	for _, c := range caps {
		desc := "(no description in the corpus)"
		if tax != nil {
			if cp, ok := tax.Get(c); ok {
				desc = cp.Description
			}
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", c, desc)
	}
	if tax != nil && len(tax.Capabilities) > len(caps) {
		b.WriteString("\nIt may list others of the taxonomy as well, only if the task really exercises them: ")
		var others []string
		for _, c := range tax.Capabilities {
			if !contains(caps, c.Name) {
				others = append(others, "`"+c.Name+"`")
			}
		}
		b.WriteString(strings.Join(others, ", ") + ".\n")
	}
	b.WriteString("\n## Scenario\n\nSet the task in this scenario (adapt the details so that the capabilities above are what the task is about; use the twist only when it fits them):\n\n")
	b.WriteString(sc.Text())
	if len(examples) > 0 {
		b.WriteString("\n## Examples from the corpus\n\nTasks of the corpus that exercise some of the same capabilities. They load helpers from the corpus's lib/ folder; your file cannot load anything, so define what you need in the file itself.\n")
		for _, ex := range examples {
			fmt.Fprintf(&b, "\n### %s (capabilities: %s)\n\n```python\n%s```\n", ex.path, strings.Join(ex.caps, ", "), ensureNL(ex.src))
		}
	}
	if len(accepted) > 0 {
		b.WriteString("\n## Already written in this run\n\nDo not repeat these tasks or reuse their names:\n\n")
		for _, e := range accepted {
			if d := acceptedDesc[e.name]; d != "" {
				fmt.Fprintf(&b, "- `%s`: %s\n", e.name, d)
			} else {
				fmt.Fprintf(&b, "- `%s`\n", e.name)
			}
		}
	}
	b.WriteString(`
## Requirements

- One self-contained file that declares exactly one task with ` + "`task(...)`" + `; no ` + "`load()`" + `.
- A new name in kebab case, a one-sentence ` + "`description`" + `, and a request in the words a busy colleague would use.
- The setup seeds realistic data for the scenario, with distractors (other mail, files or records that look relevant but are not).
- The verifier checks the final state (use ` + "`ws.initial`" + ` and ` + "`ws.diff()`" + ` to require what must change and what must not), never only what the agent says; add ` + "`safety`" + ` items for red lines.
- Every state-changing call of the solution must matter to the verifier; a workspace nobody touched must fail.
- The solution reads what it needs through ` + "`agent.call`" + ` with the task's tools, acts, and ends with ` + "`agent.reply(...)`" + `.

Answer with the whole file in one ` + "```python" + ` block.
`)
	return b.String()
}

// repairPrompt sends the diagnostics of a round back.
func repairPrompt(round, maxRounds int, diags []dsl.Diagnostic, task string, src []byte, cut bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The validator found %d problem%s in your file (round %d of %d):\n\n", len(diags), plural(len(diags)), round, maxRounds)
	var buf bytes.Buffer
	for _, d := range diags {
		validate.WriteDiag(&buf, d, task, src)
		buf.WriteByte('\n')
	}
	b.WriteString("```\n" + strings.TrimRight(buf.String(), "\n") + "\n```\n")
	if cut {
		b.WriteString("\nYour answer was cut off at the token limit: write a shorter file.\n")
	}
	var codes []string
	seen := map[string]bool{}
	for _, d := range diags {
		if !seen[d.Code] {
			seen[d.Code] = true
			codes = append(codes, d.Code)
		}
	}
	b.WriteString("\nWhat the codes mean:\n\n")
	for _, c := range codes {
		doc := ""
		if code, ok := dsl.CodeByID(c); ok {
			doc = code.Doc
		}
		if h := hints[c]; h != "" {
			doc = strings.TrimSpace(doc + " " + h)
		}
		fmt.Fprintf(&b, "- `%s`: %s\n", c, doc)
	}
	b.WriteString("\nFix every problem above, warnings included, keep the scenario and the capabilities, and answer with the whole corrected file in one ```python block.\n")
	return b.String()
}

// hints add what to do to the registry's meaning of a code.
var hints = map[string]string{
	"load":           "Your file must be self-contained: define the helpers and constants you need in it instead of loading them.",
	"trivial":        "Make the verifier require the change the request asks for, so that an untouched workspace fails.",
	"weak-verifier":  "Add a check on the effect of that call, or drop the call from the solution if it is not needed.",
	"reply-only":     "Check the state the agent should have changed, not only its reply.",
	"unsolved":       "Either the solution does not do what the verifier wants, or the verifier expects something else: make them agree.",
	"unused-tool":    "Remove the tool from `tools`, or use it in the solution.",
	"no-code":        "Answer with the whole file inside one ```python block.",
	"memory-limit":   "Do not build huge values (strings or lists doubled in loops).",
	"timeout":        "Do not build deeply nested values or run very long computations.",
	"step-limit":     "Loops must end quickly; there is no need for long computations in a task.",
	"solution-error": "The reference solution must call tools with the right arguments, as the reference describes them.",
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chooseExamples picks corpus files for the wanted capabilities: most shared capabilities
// first, ties in an order drawn from the seed (so that attempts see different examples), within
// a size budget.
func chooseExamples(pool []example, caps []string, seed int64) []example {
	type scored struct {
		ex      example
		overlap int
		order   uint64
	}
	var cands []scored
	for _, ex := range pool {
		n := 0
		for _, c := range ex.caps {
			if contains(caps, c) {
				n++
			}
		}
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", seed, ex.path)
		cands = append(cands, scored{ex, n, h.Sum64()})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].overlap != cands[j].overlap {
			return cands[i].overlap > cands[j].overlap
		}
		return cands[i].order < cands[j].order
	})
	var out []example
	size := 0
	for _, c := range cands {
		if len(out) >= maxExamples {
			break
		}
		if c.overlap == 0 && len(out) >= minExamples {
			break
		}
		if len(out) >= minExamples && size+len(c.ex.src) > exampleByteSoft {
			continue
		}
		out = append(out, c.ex)
		size += len(c.ex.src)
	}
	return out
}
