// Package service is the contract of a workspace service: everything one service (files, mail,
// calendar, records, contacts, chat, …) declares, in one place. A service is one package that
// exports one *Service; the list in package services registers them all, and every consumer
// (the ws value scripts see, the state diff, the validator's reports, the setup summary, the
// tool groups, the reference docs and the generator's prompt) iterates that list.
//
// The state of a service outside the kernel is a workspace.Part: the kernel forks, hashes and
// diffs it and keeps the history of its writes, so a service cannot forget any of that. The
// kernel's own sections (files, mail, calendar, records) keep their state in package workspace,
// written out by hand for speed, and declare everything else here like any other service. A
// service's script binding is a table of Methods that package wsmod turns into ws.<Name>; its
// tools are ordinary tools.Tool values in group Name.
package service

import (
	"slices"
	"strings"
	"unicode"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"go.starlark.net/starlark"
)

// Service is one service.
type Service struct {
	// Name names the service everywhere: ws.<Name>, the tool group, the field of ws.diff() and
	// the keyword of ws.unexpected. The kernel's own sections keep their historical names
	// (ws.fs, ws.db; groups fs, mail, calendar; diff fields files, mail, calendar, db; keywords
	// files, messages, events, records, recipients): see WSName, Group, DiffName and Keywords.
	Name string
	// WSName, Group and DiffName override Name for the kernel's own sections ("" : Name).
	WSName, Group, DiffName string
	// Entry is what one entry is, in reports and the history ("contact", "chat message").
	Entry string
	// Doc is one paragraph: what the service models, for the reference and the prompts.
	Doc string
	// WSDoc documents ws.<ScriptName()> in the reference ("": Doc).
	WSDoc string

	// Part is the state of a service outside the kernel; nil for the kernel's own sections.
	Part *workspace.Part
	// Kinds are the kinds of the history actions of a kernel section (workspace.KindFile, …);
	// nil for a service with a part, whose actions are of kind Part.Entry (see HasKind).
	Kinds []string
	// Section returns a kernel section's part of a diff; nil for a service with a part, whose
	// section the kernel finds itself (Changes.Part).
	Section func(ch workspace.Changes) workspace.Section
	// WS are the members of ws.<ScriptName()>, in the order the reference shows them.
	WS []Method
	// Tools are the built-in tools of the group, in the order the agent sees them.
	Tools []*tools.Tool
	// Setup writes what a reader of a task's setup sees of this service ("" when empty).
	Setup func(st *workspace.State) string
	// Value converts an entry of one of the service's actions (workspace.Action.Before and
	// After) to the value scripts see in ws.history; it returns nil for anything else.
	Value func(e any) starlark.Value
	// Keywords are the keyword parameters of ws.unexpected that say what the agent may change in
	// the service; nil: one, Name, documented in Doc. ws.unexpected takes the first keyword of
	// each of the kernel's sections in the order of services.All, then their second ones
	// (recipients), then the keywords of the services with a part, likewise.
	Keywords []Keyword
	// Judge says in words why an action of the agent on the service is not allowed by the keys a
	// verifier passed to ws.unexpected, or "" when it is allowed: allowed holds the list given
	// for each keyword, in the order of Keywords (allowed[0] for the one keyword Name). A nil
	// Judge allows the keys of the actions and "*".
	Judge func(allowed [][]string, a workspace.Action) string
	// Probe makes one typical change through the service's own API; the kernel's guard test
	// checks that it changes the state hash, shows in the diff and is in the history.
	Probe func(st *workspace.State) error
	// Names lists the people, companies and places the service's entries name (a contact and
	// their company, the person behind a mail address) and IDs the identifiers of its entries
	// that people write in prose: what the claims module recognises in a text. Nil for none.
	Names func(st *workspace.State) []Name
	IDs   func(st *workspace.State) []string
}

// Name is a person, company or place an entry names: Class is "person", "company", "place" or
// "other"; Aliases are other ways it is written.
type Name struct {
	Text    string
	Class   string
	Aliases []string
}

// PersonOfAddress is the person a mail address or a chat handle names when it has the form
// first.last ("dirk.peeters@verdant.example" → "Dirk Peeters"), or "".
func PersonOfAddress(addr string) string {
	local := addr
	if i := strings.IndexByte(addr, '@'); i >= 0 {
		local = addr[:i]
	}
	parts := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' })
	if len(parts) < 2 || len(parts) > 3 {
		return ""
	}
	for i, p := range parts {
		if len(p) < 2 {
			return ""
		}
		for _, r := range p {
			if !unicode.IsLetter(r) {
				return ""
			}
		}
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, " ")
}

// Keyword is one keyword parameter of ws.unexpected.
type Keyword struct {
	Name string
	// Doc says what the keys allow, for ws.unexpected's doc: "allows paths, and …" (it follows
	// the name).
	Doc string
}

// ValueOf makes a Service.Value from the conversion of the entries of type T.
func ValueOf[T any](conv func(T) starlark.Value) func(e any) starlark.Value {
	return func(e any) starlark.Value {
		if x, ok := e.(T); ok {
			return conv(x)
		}
		return nil
	}
}

// UnexpectedKeywords are the service's keywords of ws.unexpected: Keywords, or Name.
func (s *Service) UnexpectedKeywords() []Keyword {
	if s.Keywords == nil {
		return []Keyword{{Name: s.Name}}
	}
	return s.Keywords
}

// HasKind reports whether the history actions of kind are the service's.
func (s *Service) HasKind(kind string) bool {
	if s.Part != nil {
		return s.Part.Entry == kind
	}
	return slices.Contains(s.Kinds, kind)
}

// ScriptDoc documents ws.<ScriptName()>.
func (s *Service) ScriptDoc() string { return or(s.WSDoc, s.Doc) }

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
// first one) and returned by Done; the accessors then return zero values. An error returned by
// Done is returned by Call as it is; any other error of Call is prefixed with the method's name.
type Args interface {
	Absent(i int) bool          // left out or None
	Value(i int) starlark.Value // as given; nil when left out
	Str(i int) string           // a required string
	OptStr(i int, def string) string
	OptBool(i int) *bool              // nil when absent
	Int(i int) int64                  // a required int
	StrList(i int, one bool) []string // a list of strings (one: a single string is a list of one); nil when absent
	Dict(i int) *starlark.Dict        // a dict; nil (and an error) when it is not one
	// Kwargs are the keyword arguments collected by the method's last parameter, when its name
	// starts with "**" ("**fields"), in the order given.
	Kwargs() []starlark.Tuple
	// Fields are the Kwargs as a JSON object (values converted as starconv.ToJSON does); nil
	// (and an error) when one cannot be converted.
	Fields() *jsonv.Object
	// StrListOf converts v, a value that is not a positional argument (one of the Kwargs), as
	// StrList does; name names it in errors.
	StrListOf(name string, v starlark.Value, one bool) []string
	Fail(format string, args ...any) // records an error, prefixed with the method's name
	Done() error                     // the first error recorded
	// Charge counts n steps of work against the calling script's step budget, and returns the
	// error that stops the script when that spends it: a method that loops over entries charges
	// as it goes (one step per entry looked at; bulk methods one per entry and one per KiB of
	// it), and returns the error as it is. A list the method returns is charged for it, a step
	// per element.
	Charge(n int) error
	// Sub binds the items of d (parameter names to values) as the keyword arguments of a call of
	// method, another method of the same object, for a method that takes the arguments of many
	// calls at once (ws.mail.deliver_many); what names that call in its errors ("message 3").
	Sub(method, what string, d *starlark.Dict) (Args, error)
}
