package tools

import "slices"

// kernelTools are the built-in tools of this package, in the order of their groups.
func kernelTools() []*Tool { return slices.Concat(FSTools(), MailTools(), CalendarTools()) }

// builtin returns the tool of this package called name.
func builtin(name string) (*Tool, bool) {
	for _, t := range kernelTools() {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}
