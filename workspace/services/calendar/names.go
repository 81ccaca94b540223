package calendar

import (
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
)

func init() { Service.Names = names }

// names are the people behind the attendees' addresses.
func names(st *workspace.State) []service.Name {
	seen := map[string]bool{}
	var out []service.Name
	evs, _ := st.Calendar().Events("", "", "")
	for _, e := range evs {
		for _, a := range e.Attendees {
			if seen[a] {
				continue
			}
			seen[a] = true
			if p := service.PersonOfAddress(a); p != "" {
				out = append(out, service.Name{Text: p, Class: "person"})
			}
		}
	}
	return out
}
