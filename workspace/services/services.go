// Package services is the list of workspace services. Every consumer of services iterates
// All: the ws value (package wsmod), ws.diff(), the validator's words for a difference, the
// setup summary, the tool groups, the reference docs and the generator's prompt. Adding a
// service is one package that exports a *service.Service and one line in All.
package services

import (
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"github.com/coworkenv/coworkenv/workspace/services/calendar"
	"github.com/coworkenv/coworkenv/workspace/services/chat"
	"github.com/coworkenv/coworkenv/workspace/services/contacts"
	"github.com/coworkenv/coworkenv/workspace/services/files"
	"github.com/coworkenv/coworkenv/workspace/services/mail"
	"github.com/coworkenv/coworkenv/workspace/services/records"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// All lists every service, in the order docs, tool groups and setup summaries show them.
var All = []*service.Service{
	files.Service,
	mail.Service,
	calendar.Service,
	records.Service,
	contacts.Service,
	chat.Service,
}

// Tools returns every built-in tool, group by group in the order of All. The slice is new; the
// tools are shared and must not be modified.
func Tools() []*tools.Tool {
	var out []*tools.Tool
	for _, s := range All {
		out = append(out, s.Tools...)
	}
	return out
}

// Tool returns the built-in tool called name.
func Tool(name string) (*tools.Tool, bool) {
	for _, s := range All {
		for _, t := range s.Tools {
			if t.Name == name {
				return t, true
			}
		}
	}
	return nil, false
}

// Group returns the built-in tools of group name, in order; nil for an unknown group.
func Group(name string) []*tools.Tool {
	for _, s := range All {
		if len(s.Tools) > 0 && s.GroupName() == name {
			return slices.Clone(s.Tools)
		}
	}
	return nil
}

// Groups returns the names of the tool groups, in the order of All.
func Groups() []string {
	var out []string
	for _, s := range All {
		if len(s.Tools) > 0 {
			out = append(out, s.GroupName())
		}
	}
	return out
}

// ByPart returns the service whose state is part p.
func ByPart(p *workspace.Part) *service.Service {
	for _, s := range All {
		if s.Part == p {
			return s
		}
	}
	return nil
}

// SetupText is a canonical text of a workspace: what a reader of the task's setup would see,
// service by service.
func SetupText(st *workspace.State) string {
	var b strings.Builder
	for _, s := range All {
		if s.Setup != nil {
			b.WriteString(s.Setup(st))
		}
	}
	return b.String()
}

// DiffSection is what changed in one service between two states.
type DiffSection struct {
	Service *service.Service
	workspace.Section
}

// Sections returns the changes of ch service by service, in the order of All.
func Sections(ch workspace.Changes) []DiffSection {
	out := make([]DiffSection, 0, len(All))
	for _, s := range All {
		var sec workspace.Section
		if s.Section != nil {
			sec = s.Section(ch)
		} else {
			sec = ch.Part(s.Part)
		}
		out = append(out, DiffSection{s, sec})
	}
	return out
}
