package chat

import (
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
)

func init() { Service.Names = names }

// names are the people behind the handles of the chat ("mehmet.aydin" → Mehmet Aydin).
func names(st *workspace.State) []service.Name {
	v := read(st)
	seen := map[string]bool{}
	var out []service.Name
	add := func(h string) {
		if seen[h] {
			return
		}
		seen[h] = true
		if p := service.PersonOfAddress(h); p != "" {
			out = append(out, service.Name{Text: p, Class: "person"})
		}
	}
	add(v.me)
	for _, c := range v.channels() {
		for _, m := range c.Members {
			add(m)
		}
	}
	for m := range v.all(false) {
		add(m.Sender)
	}
	return out
}
