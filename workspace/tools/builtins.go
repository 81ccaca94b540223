package tools

import (
	"sync"
)

// The tools of the kernel's own services, built once; they are shared and must not be
// modified. Package services registers them with their services.
var (
	FSTools       = sync.OnceValue(fsTools)
	MailTools     = sync.OnceValue(mailTools)
	CalendarTools = sync.OnceValue(calendarTools)
)

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
