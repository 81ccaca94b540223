package wsmod

import (
	"errors"
	"github.com/coworkenv/coworkenv/internal/starargs"

	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// objAttr is the getter of an attribute that is one of the objects.
func objAttr(k int) func(o *object) (starlark.Value, error) {
	return func(o *object) (starlark.Value, error) { return &o.ws.objs[k], nil }
}

var rootMembers = []*member{
	{name: "clock", obj: kClock, get: objAttr(kClock),
		doc: "The virtual clock. It starts at the task's start_time and moves only when a script moves it."},
	{name: "rand", obj: kRand, get: objAttr(kRand),
		doc: "The random source, seeded from the task's seed: the same seed and the same sequence of draws give the same results. Every draw moves the source, so a read-only ws refuses draws."},
	{name: "initial", noView: true, get: getInitial,
		doc: "In verifiers: a read-only view of the state right after setup, with the same attributes as ws except initial and diff, so a verifier can require that something changed rather than that it exists. Where there is no initial state (setup, tools), reading ws.initial is an error and it is not listed by dir(ws)."},
	{name: "diff", noView: true, ret: "struct", call: diffFn, params: []starargs.Param{starargs.Opt("against", starlark.None)},
		doc: "What changed since ws.initial: a struct with files, mail, calendar, db and one field per other service (contacts, chat, …), each a struct of sorted lists added, changed and removed (file paths, message ids, event ids, \"collection/id\"), and empty (True when all of them are empty). changed lists what exists before and after with a different value (for mail that includes the folder, the read flag and the labels). against compares with another state instead: ws.diff(ws.reference) lists how the state differs from the one the reference solution leaves (added: here and not there), so ws.diff(ws.reference).empty is the whole-state reward in one line; it costs no more than the entries that differ. ws.diff compares end states only: a change that was undone does not show (see ws.history). Where there is no initial state, reading ws.diff is an error and it is not listed by dir(ws)."},
	{name: "history", noView: true, obj: kHistory, get: objAttr(kHistory),
		doc: "In verifiers (and in before, user functions and tools): the episode history since ws.initial, which keeps what the end state forgets: every mail sent even if later moved, every version a file had, every removed entry, every record write, and who made each change (the agent or a script)."},
	{name: "unexpected", noView: true, ret: "list", call: unexpectedFn}, // params and doc: services.go
	{name: "reference", noView: true, get: getReference,
		doc: "In verifiers: a read-only view of the state the task's reference solution leaves (at the end of this turn in a turn verifier, at the end of the episode in the task verifier), with the same attributes as ws.initial. It is computed once per prepared task, by running the reference with faults off and no verifier, and shared by every episode. Reading it elsewhere, or when the reference fails, is an error."},
}

var errNoReference = errors.New("there is no reference state here (ws.reference exists in verifiers)")

func getReference(o *object) (starlark.Value, error) {
	if o.ws.reference == nil {
		return nil, o.ws.wrap("ws.reference", errNoReference)
	}
	st, err := o.ws.reference()
	if err != nil {
		return nil, o.ws.wrap("ws.reference", err)
	}
	return newView(st), nil
}

var errNoInitial = errors.New("there is no initial state here (ws.initial and ws.diff exist in verifiers)")

// getInitial and diffFn run only where there is an initial state (object.Attr checks).
func getInitial(o *object) (starlark.Value, error) { return newView(o.ws.initial), nil }

func diffFn(c *call) (starlark.Value, error) {
	against := c.w.initial
	if !c.absent(0) {
		o, ok := c.args[0].(*object)
		if !ok || o.t != types[kRoot] {
			c.badType(0, c.args[0], "ws.initial or ws.reference")
			return nil, c.done()
		}
		against = o.ws.st
	}
	return DiffValue(workspace.Diff(against, c.w.st)), nil
}

// DiffValue converts changes to the struct ws.diff() returns.
func DiffValue(ch workspace.Changes) starlark.Value {
	d := starlark.StringDict{"empty": starlark.Bool(ch.Empty())}
	for _, sec := range services.Sections(ch) {
		d[sec.Service.DiffField()] = sectionValue(sec.Section)
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, d)
}

func sectionValue(s workspace.Section) starlark.Value {
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"added":   starconv.Strings(s.Added),
		"changed": starconv.Strings(s.Changed),
		"removed": starconv.Strings(s.Removed),
	})
}
