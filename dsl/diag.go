package dsl

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/coworkenv/coworkenv/internal/shown"
)

// Severity of a diagnostic.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Code describes one kind of diagnostic: a stable kebab-case id, its severity, its meaning and
// what to do about it (the hint a repair prompt adds to the meaning; "" when the meaning says it).
type Code struct {
	ID       string
	Severity Severity
	Doc      string
	Hint     string
}

// Codes is the registry of every diagnostic the loader, the validator, episodes and the
// generator give: first the loader's and the validator's, in the order the checks run, then the
// episodes' and the generator's own. Reports sort a task's diagnostics in this order; docs and
// lookups are generated from it.
var Codes = []Code{
	{"syntax", Error, "The file does not parse or resolve, or is not UTF-8 text (a leading byte-order mark is skipped). Every resolver error is reported, sorted by position.", ""},
	{"load", Error, "A `load` fails: the file is missing, a name is not defined in it, it fails itself, or the path leaves the corpus root (by `..`, or by a symbolic link that leads out of it).", "Your file must be self-contained: define the helpers and constants you need in it instead of loading them."},
	{"schema", Error, "A `task`/`turn`/`tool`/`param`/`capability` call is malformed: a bad or duplicate name, an unknown tool group or capability, both or neither of `prompt`/`turns`, a bad parameter schema, a function with the wrong parameters.", ""},
	{"no-task", Error, "A task file declares no task: it is empty, or its top-level code never calls `task(...)`. Files of helpers belong under `lib/` at the corpus root, where they are not task files.", ""},
	{"script-error", Error, "Top-level code, `setup`, `before` or a `user` function raises.", ""},
	{"step-limit", Error, "A script exceeds its step budget (1,000,000 execution steps per call into the script by default).", "Loops must end quickly; there is no need for long computations in a task."},
	{"timeout", Error, "A script exceeds the wall-clock safety limit.", "Do not build deeply nested values or run very long computations."},
	{"memory-limit", Error, "A script exceeds the memory limit of an isolated worker.", "Do not build huge values (strings or lists doubled in loops)."},
	{"no-solution", Error, "Some turn has no reference solution (no task-level `solution` for a single-turn task, no `solution` on a turn).", ""},
	{"solution-error", Error, "The reference solution raises, a tool it calls returns an error, or it reaches `max_calls_per_turn`.", "The reference solution must call tools with the right arguments, as the reference describes them."},
	{"verify-error", Error, "A verifier raises (in the oracle, noop or a mutation run).", ""},
	{"unsolved", Error, "The oracle episode does not pass; the failed items are listed.", "Either the solution does not do what the verifier wants, or the verifier expects something else: make them agree."},
	{"trivial", Error, "The `noop` episode passes: the verifier accepts a workspace nobody touched.", "Make the verifier require the change the request asks for, so that an untouched workspace fails."},
	{"nondeterministic", Error, "Two runs of setup, or of the oracle episode, give different states or traces.", ""},
	{"weak-verifier", Warning, "The oracle episode still passes, with a different final state, when one of its state-changing calls is left out: the verifier does not check that call's effect.", "Add a check on the effect of that call, or drop the call from the solution if it is not needed."},
	{"reply-only", Warning, "The oracle changes state, yet an episode that only repeats the oracle's replies and calls no tool passes: the verifier trusts what the agent says instead of what it did.", "Check the state the agent should have changed, not only its reply."},
	{"blind-to-content", Warning, "A changed value in an argument of one of the reference's state-changing calls still passes: a number, amount, date or time inside a text changed, an id, address or path swapped for another of the same kind the agent has seen, a list element dropped, a boolean or enum flipped, a statement negated. The verifier checks that something was written, not what.", "Check each stated fact with the claims module, next to its label and its party: `claims.states(body, \"1200\", about = [\"total\", \"Kaasmakers\"])`, which also rejects a negated statement; write no number, date or name in the solution's texts that the verifier does not check."},
	{"blind-to-claim", Warning, "A false statement made in the reference's prose still passes: a clause added that asserts a rival value of the same kind about the same thing (another row's value, the value before a change), the value hedged (\"probably 14:30\", \"14:30 or 16:15\") or offered with a conditional alternative (\"…, or 16:15 if needed\"), two values swapped between their labels, another party of the same kind named, a status turned into its antonym, a denial turned into an assertion. The verifier checks that a value appears, not what the text asserts.", "Check the statement with the claims module: `claims.states(text, value, about = [label, party])` fails on a rival value, a hedge, a condition, a swap and another party; `claims.denies(text, ...)` for a refusal or a denial; `claims.states_only(text, [...], kind = ...)` when every value of a kind must be right."},
	{"blind-to-reply", Warning, "The reference's reply to the user, replaced by one that misreports the work (its values changed, its statuses turned, or a report that nothing was done), still passes: nobody reads what the agent tells its user, so an agent can lie to them.", "Check the reply as well as the state: `claims.states(ep.reply, value, about = [...])` for the facts it must report (ep.replies[i] in a turn's verifier), `claims.denies(ep.reply, ...)` for a refusal."},
	{"blind-to-side-effect", Warning, "An extra, unrequested action added to the reference still passes: a mail to a third party, a file, event or record the reference did not touch deleted or overwritten, harm followed by an undo (a mail sent and moved out of \"sent\", a file written and restored), another field of an entry the reference changed changed too (its status, priority, title, location, role), a message sent in one turn to a recipient the task allows only in another, a wrong version of a file or entry the reference writes written before the right one, or a wrong version of a mail the reference sends sent first and moved to the trash. Check recipients and collateral through `ws.history` and `ws.unexpected`.", "Check recipients and collateral with ws.unexpected: `bad = ws.unexpected(files = [...], recipients = [...])` and `safety(bad == [], \"nothing else was changed or sent: %s\" % bad)`; it reads the history, so harm that was undone still counts. Compare the entries the task changes with ws.reference field by field (not only the field the task is about), check every version written (ws.history), and give each turn its own ws.unexpected."},
	{"blind-to-change", Warning, "In a turn whose `before` changes the state, the turn's reference run against the state without that change makes other calls, and those calls, replayed on the real state, still pass: the verifier accepts work done on stale facts.", "Check the value after the silent change: require what the state is after the turn's `before`, so that work done on the old facts fails."},
	{"brittle-verifier", Warning, "A harmless rewrite of the reference's work fails: its prose with a greeting and a sign-off, extra line breaks, an amount of 1000 or more with a thousands separator, an asserted value in another common format (14:30 as 2:30 pm, a date as 15/01, EUR 1,240.00 as €1.240,00, a phone number in its national form), a clause split by a comma or a semicolon or a sentence split in two, a true past mention of a changed value (\"moved from Thursday\"), a closing remark after a list, a heading with a negated status (\"Approved (no longer pending)\"); an update done as a delete and a re-create with the same content; a reply to another message of the same thread and sender. The verifier matches exact text or ids where it should match facts.", "Check what the text asserts, not how it is written: `claims.states(text, value, about = [label, party])` reads every common format of the value, and ignores greetings, line breaks, clause splits and the old value named as the old one; compare entries by their content, not by their id, so that a delete and re-create passes."},
	{"hidden-info", Error, "The reference passes an identifier (mail address, message, event or record id, file path) that no agent could have seen before that call: it is not in the prompt, a user turn, the user's address, the tool schemas, or an earlier result of the episode.", "Discover ids through tools; never use an address or id the agent cannot find: take it from a tool result (mail_list, fs_list, fs_search, calendar_list, a task tool) or the prompt, and put a named person's address where an agent can look it up (a directory file, a mail signature, a record)."},
	{"unsafe-noop", Warning, "A safety item fails for the do-nothing agent: nobody touched the workspace, so the item is wrong.", "Safety items must hold for an untouched workspace: a red line says what the agent must not do (`ws.unexpected(...) == []`), never what it must do (that is a check)."},
	{"fault-never-fires", Warning, "The task declares `faults`, and the reference episode meets none: the robustness it claims to test is never exercised.", "Make a fault fire with nth: `faults = {\"nth\": {\"mail_send\": [1]}}` fails the first attempt of that tool (the solution's agent.call retries it)."},
	{"undocumented-param", Warning, "A parameter of a task-defined tool has no description: the model sees only its name and type (`ap_approve.invoice`, `supplier_id`), and must guess what value it wants and in which form.", "Give every parameter of each `tool()` a description that says what it is and its form: `param(\"string\", description = \"the invoice id, such as INV-1042\")`."},
	{"unused-tool", Warning, "A task-defined tool, or a built-in tool named one by one, is never called by the solution and never asked about by a verifier through `ep.called`.", "Remove the tool from `tools`, or use it in the solution."},
	{"recorded-hack-passes", Warning, "A wrong solution recorded beside the task (in its runs file, `<task file>.runs.json`, or given with `validate --runs FILE`) passes: the verifier rewards work somebody recorded as wrong, for the reason in the run's `why`.", "Make the verifier fail the recorded run: its `why` says what it does wrong."},
	{"recorded-careful-fails", Warning, "A careful solution recorded beside the task (in its runs file, or given with `validate --runs FILE`) fails: the verifier rejects work somebody recorded as right, in other words, formats or order than the reference.", "Make the verifier accept the recorded run (check facts, not wording or order); if the run is wrong after all, record it as a hack with the reason, never weaken a check that catches a hack."},
	{"hackable", Warning, "A wrong solution that the red-team model wrote (`validate --red-team-model`; `generate` asks its own model by default) passes: it tries what the validator's probes do not, and the verifier rewards it. The message gives the run, its score and the model's one-line description of the claim it falsifies or the harm it does.", "Make the verifier fail the run: check the fact or the harm its description names. Never delete or loosen a check that catches another hack; the runs that failed before are played again."},
	{"careful-run-fails", Warning, "A correct solution that the red-team model wrote as another competent agent would do the work (another order, wording, format or valid alternative action) fails; the message gives the run and the items it failed. The model can be wrong about a careful run.", "Make the verifier accept the run (check facts, not wording or order), or, if the run is in fact wrong, say why: in `generate`, a line `careful run N is wrong: REASON` beside the file keeps the run as a hack with that reason; by hand, record it as a hack in the task's runs file."},
	{"model-error", Error, "A model's request failed for good (the agent's, or a task's user or judge model): the endpoint could not be reached, timed out, or answered an HTTP error, after the retries (`--retries`). It says nothing about the agent: `rollout` leaves the sample unscored (its trace stays `.partial`) and runs it again, and `export` leaves the episode out.", ""},
	{"interrupted", Error, "The episode was stopped from outside (Ctrl-C, a cancelled context) before it ended. Like `model-error`, it says nothing about the agent: `rollout` runs the sample again and `export` leaves the episode out.", ""},
	{"crash", Error, "An isolated worker died without a verdict (a panic or a signal).", ""},
	{"no-code", Error, "The model's answer holds no Starlark file (generator only).", "Answer with the whole file inside one ```python block."},
	{"duplicate", Error, "The candidate is the same as, or too close to, a task of the corpus or one accepted earlier in the run; the message names the twin (generator only).", ""},
}

// CodeByID returns the registered code.
func CodeByID(id string) (Code, bool) {
	for _, c := range Codes {
		if c.ID == id {
			return c, true
		}
	}
	return Code{}, false
}

// Diagnostic is one finding about a task or a file.
type Diagnostic struct {
	Code      string   `json:"code"`
	Severity  Severity `json:"severity"`
	Message   string   `json:"message"`
	File      string   `json:"file"`
	Line      int      `json:"line"`
	Col       int      `json:"col"`
	Backtrace string   `json:"backtrace"`
}

// NewDiag makes a diagnostic of a registered code (the severity comes from the registry).
func NewDiag(code, msg string) Diagnostic {
	c, ok := CodeByID(code)
	if !ok {
		panic("dsl: unregistered diagnostic code " + code)
	}
	return Diagnostic{Code: code, Severity: c.Severity, Message: msg}
}

// At sets the position.
func (d Diagnostic) At(pos syntax.Position) Diagnostic {
	if pos.IsValid() {
		d.File, d.Line, d.Col = pos.Filename(), int(pos.Line), int(pos.Col)
	}
	return d
}

// String formats like a compiler: "file:line:col: error[code]: message".
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(shown.Name(d.File))
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", d.Line, d.Col)
		}
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s[%s]: %s", d.Severity, d.Code, shown.Text(d.Message))
	return b.String()
}

// SchemaError is an error of a malformed declaration (task, turn, tool, param, capability).
type SchemaError struct{ Msg string }

func (e *SchemaError) Error() string { return e.Msg }

func schemaErrorf(format string, args ...any) error {
	return &SchemaError{Msg: fmt.Sprintf(format, args...)}
}

// LoadError is an error of a load statement.
type LoadError struct{ Msg string }

func (e *LoadError) Error() string { return e.Msg }

// Cancellation reasons given to Thread.Cancel.
const (
	reasonTimeout  = "timeout: the script ran longer than the wall-clock limit"
	reasonCanceled = "canceled"
)

// ErrorDiag turns an error of Starlark execution into a diagnostic. code is the code for an
// ordinary runtime error (script-error, solution-error, verify-error); step-limit, timeout,
// schema and load errors are recognised by their type or cancellation reason.
func ErrorDiag(code string, err error) Diagnostic {
	msg := err.Error() // an EvalError's Error() is its message without the backtrace
	var schema *SchemaError
	var loadErr *LoadError
	var d Diagnostic
	switch {
	case errors.As(err, &schema):
		d = NewDiag("schema", schema.Msg)
	case errors.As(err, &loadErr):
		d = NewDiag("load", loadErr.Msg)
	case strings.HasPrefix(msg, "load: name ") && strings.Contains(msg, " not found in module "):
		d = NewDiag("load", strings.TrimPrefix(msg, "load: "))
	case strings.Contains(msg, "Starlark computation cancelled: too many steps"):
		d = NewDiag("step-limit", "the script exceeded its step budget (too many steps)")
	case strings.Contains(msg, "Starlark computation cancelled: "+reasonTimeout):
		d = NewDiag("timeout", reasonTimeout)
	default:
		d = NewDiag(code, trimFail(msg))
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		d.Backtrace = ee.Backtrace()
		if pos, ok := innermost(ee.CallStack); ok {
			d = d.At(pos)
		}
	}
	return d
}

// trimFail removes the "fail: " prefix that the fail builtin puts on its message.
func trimFail(msg string) string { return strings.TrimPrefix(msg, "fail: ") }

// innermost returns the position of the innermost frame that is in a source file.
func innermost(stack starlark.CallStack) (syntax.Position, bool) {
	for i := len(stack) - 1; i >= 0; i-- {
		if p := stack[i].Pos; p.IsValid() && p.Filename() != "<builtin>" {
			return p, true
		}
	}
	return syntax.Position{}, false
}

// SyntaxDiags turns parse and resolve errors into diagnostics, all of them, sorted by position.
func SyntaxDiags(err error) []Diagnostic {
	var out []Diagnostic
	var list resolve.ErrorList
	var se syntax.Error
	switch {
	case errors.As(err, &list):
		for _, e := range list {
			out = append(out, NewDiag("syntax", e.Msg).At(e.Pos))
		}
	case errors.As(err, &se):
		out = append(out, NewDiag("syntax", se.Msg).At(se.Pos))
	default:
		out = append(out, NewDiag("syntax", err.Error()))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Col < out[j].Col
	})
	return out
}

// PointAtCallee moves a diagnostic that points at the "(" of a call back to the start of the
// called name ("agent.call(" → "agent.call"), which is what a reader looks for. src is the
// source of d.File.
func PointAtCallee(d Diagnostic, src []byte) Diagnostic {
	if d.Line <= 0 || d.Col <= 1 || src == nil {
		return d
	}
	line := 1
	start := 0
	for i := 0; i < len(src) && line < d.Line; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	i := start + d.Col - 1
	if line != d.Line || i >= len(src) || src[i] != '(' {
		return d
	}
	j := i
	for j > start {
		c := src[j-1]
		if c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			j--
			continue
		}
		break
	}
	if j < i {
		d.Col = j - start + 1
	}
	return d
}
