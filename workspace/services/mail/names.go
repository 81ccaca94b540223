package mail

import (
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
)

func init() { Service.Names = names }

// names are the people behind the addresses of the mailbox's senders and recipients
// ("dirk.peeters@…" → Dirk Peeters).
func names(st *workspace.State) []service.Name {
	seen := map[string]bool{}
	var out []service.Name
	add := func(addr string) {
		if seen[addr] {
			return
		}
		seen[addr] = true
		if p := service.PersonOfAddress(addr); p != "" {
			out = append(out, service.Name{Text: p, Class: "person"})
		}
	}
	add(st.Mail().Address())
	for m := range st.Mail().Scan(workspace.Filter{}, false) {
		add(m.Sender)
		for _, a := range m.To {
			add(a)
		}
		for _, a := range m.Cc {
			add(a)
		}
	}
	return out
}
