package contacts

import (
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
)

func init() { Service.Names = names }

// names are the people of the directory (with their other names), their companies and places.
func names(st *workspace.State) []service.Name {
	var out []service.Name
	for _, c := range All(st) {
		out = append(out, service.Name{Text: c.Name, Class: "person", Aliases: c.Aliases})
		if c.Company != "" {
			out = append(out, service.Name{Text: c.Company, Class: "company"})
		}
		if c.Location != "" {
			out = append(out, service.Name{Text: c.Location, Class: "place"})
		}
	}
	return out
}
