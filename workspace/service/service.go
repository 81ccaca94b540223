// Package service is the contract of a workspace service: everything one service (files, mail,
// calendar, records, contacts, chat, …) declares, in one place. A service is one package that
// exports one *Service; the list in package services registers them all, and every consumer
// (the ws value scripts see, the state diff, the validator's reports, the setup summary, the
// tool groups, the reference docs and the generator's prompt) iterates that list.
//
// The state of a service outside the kernel is a workspace.Part: the kernel forks, hashes and
// diffs it and keeps the history of its writes, so a service cannot forget any of that. Its
// script binding is a table of Methods that package wsmod turns into ws.<Name>; its tools are
// ordinary tools.Tool values in group Name.
package service

import (
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/starlark"
)

// Service is one service.
type Service struct {
	// Name names the service everywhere: ws.<Name>, the tool group, the field of ws.diff() and
	// the keyword of ws.unexpected. The kernel's own sections keep their historical names
	// (ws.fs, ws.db; groups fs, mail, calendar; diff fields files, mail, calendar, db): see
	// WSName, Group and DiffName.
	Name string
	// WSName, Group and DiffName override Name for the kernel's own sections ("" : Name).
	WSName, Group, DiffName string
	// Entry is what one entry is, in reports and the history ("contact", "chat message").
	Entry string
	// Doc is one paragraph: what the service models, for the reference and the prompts.
	Doc string

	// Part is the state of a service outside the kernel; nil for the kernel's own sections.
	Part *workspace.Part
	// WS are the members of ws.<Name> (nil for the kernel's sections, which wsmod binds itself).
	WS []Method
	// Tools are the built-in tools of the group, in the order the agent sees them.
	Tools []*tools.Tool
	// Setup writes what a reader of a task's setup sees of this service ("" when empty).
	Setup func(st *workspace.State) string
	// Value converts one of the part's entries to the value scripts see (history before/after);
	// it returns nil for an entry of another service.
	Value func(e workspace.Entry) starlark.Value
	// Judge says in words why an action of the agent on the part is not allowed by the keys a
	// verifier passed to ws.unexpected(<Name> = [...]), or "" when it is allowed.
	Judge func(allowed []string, a workspace.Action) string
	// Probe makes one typical change through the service's own API; the kernel's guard test
	// checks that it changes the state hash, shows in the diff and is in the history.
	Probe func(st *workspace.State) error
}

// ScriptName is the name of ws.<ScriptName>.
func (s *Service) ScriptName() string { return or(s.WSName, s.Name) }

// GroupName is the name of the tool group.
func (s *Service) GroupName() string { return or(s.Group, s.Name) }

// DiffField is the name of the service's field in ws.diff().
func (s *Service) DiffField() string { return or(s.DiffName, s.Name) }

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Param is one parameter of a method: Default is the default as written in the signature (""
// for a required parameter).
type Param struct{ Name, Default string }

// Method is one method of ws.<Name>. The same row binds the arguments and documents the method.
type Method struct {
	Name   string
	Params []Param
	Ret    string // what it returns, for the signature: "string", "list", "None", …
	Doc    string // one paragraph
	Write  bool   // it changes the state: refused on a read-only ws and on ws.initial
	Call   func(st *workspace.State, a Args) (starlark.Value, error)
	// Set makes the row an attribute, readable and settable like ws.mail.address: reading it
	// calls Call with no arguments (a nil Args; Params must be empty), assigning calls Set
	// (refused on a read-only ws and on ws.initial).
	Set func(st *workspace.State, v starlark.Value) error
}

// Args are the arguments of one call, by parameter position. A conversion error is kept (the
// first one) and returned by Done; the accessors then return zero values.
type Args interface {
	Absent(i int) bool          // left out or None
	Value(i int) starlark.Value // as given; nil when left out
	Str(i int) string           // a required string
	OptStr(i int, def string) string
	OptBool(i int) *bool              // nil when absent
	Int(i int) int64                  // a required int
	StrList(i int, one bool) []string // a list of strings (one: a single string is a list of one); nil when absent
	Fail(format string, args ...any)  // records an error, prefixed with the method's name
	Done() error                      // the first error recorded
}
