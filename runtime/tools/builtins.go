package tools

import (
	"slices"
	"sync"
)

// groupOrder is the order of the built-in groups, as SPEC §2.3 lists them.
var groupOrder = []string{"fs", "mail", "calendar"}

// registry is built once; its tools are shared and must not be modified.
var registry = sync.OnceValue(func() []*Tool {
	var all []*Tool
	all = append(all, fsTools()...)
	all = append(all, mailTools()...)
	all = append(all, calendarTools()...)
	return all
})

// Builtins returns every built-in tool: the fs group, then mail, then calendar, each in the
// order of SPEC §2.3. The slice is new; the tools are shared and must not be modified.
func Builtins() []*Tool { return slices.Clone(registry()) }

// Builtin returns the built-in tool called name.
func Builtin(name string) (*Tool, bool) {
	for _, t := range registry() {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Group returns the built-in tools of group name, in order; nil for an unknown group.
func Group(name string) []*Tool {
	var out []*Tool
	for _, t := range registry() {
		if t.Group == name {
			out = append(out, t)
		}
	}
	return out
}

// Groups returns the names of the built-in groups in the order of SPEC §2.3: fs, mail,
// calendar.
func Groups() []string { return slices.Clone(groupOrder) }

// Parameter constructors, to keep the tool tables short.

func req(name, typ, desc string) Param {
	return Param{Name: name, Type: typ, Description: desc, Required: true}
}

func opt(name, typ, desc string, def any) Param {
	p := Param{Name: name, Type: typ, Description: desc}
	if def != nil {
		p.Default, p.HasDefault = def, true
	}
	return p
}

func withItems(p Param, items string) Param {
	p.Items = items
	return p
}
