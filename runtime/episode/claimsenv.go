package episode

import (
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
)

// claimsEnv is what the claims module knows in a verifier: the task's time zone and region, the
// episode's clock, and the names and ids of the workspace (read when a verifier first needs them);
// record hears every statement checked.
func claimsEnv(t *dsl.Task, st *workspace.State, record func(claims.Use)) *claims.Env {
	return &claims.Env{
		Region:   t.Region,
		Location: t.Location,
		Now: func() time.Time {
			now, _ := time.Parse(time.RFC3339, st.Clock().NowString())
			return now
		},
		Names:  func() []claims.KnownName { return WorkspaceNames(st) },
		IDs:    func() []string { return workspaceIDs(st) },
		Record: record,
	}
}

// WorkspaceNames are the names the services of a state hold, each once (the first class given
// for it wins), in the order of services.All.
func WorkspaceNames(st *workspace.State) []claims.KnownName {
	seen := map[string]bool{}
	var out []claims.KnownName
	for _, s := range services.All {
		if s.Names == nil {
			continue
		}
		for _, n := range s.Names(st) {
			if n.Text == "" || seen[n.Text] {
				continue
			}
			seen[n.Text] = true
			out = append(out, claims.KnownName{Key: n.Text, Class: claims.NameClass(n.Class), Aliases: n.Aliases})
		}
	}
	return out
}

func workspaceIDs(st *workspace.State) []string {
	var out []string
	for _, s := range services.All {
		if s.IDs != nil {
			out = append(out, s.IDs(st)...)
		}
	}
	return out
}
