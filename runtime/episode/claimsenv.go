package episode

import (
	"sync"
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

// namesCache keeps the names of recent states by their hash: the validator's mutation runs end in
// the same state again and again (an edit of the reply changes no state), and names are a pure
// function of the state. Bounded; emptied when full.
var namesCache = struct {
	sync.Mutex
	m map[string][]claims.KnownName
}{m: map[string][]claims.KnownName{}}

const namesCacheSize = 256

// WorkspaceNames are the names the services of a state hold, each once (the first class given
// for it wins), in the order of services.All.
func WorkspaceNames(st *workspace.State) []claims.KnownName {
	h := st.Hash()
	namesCache.Lock()
	out, ok := namesCache.m[h]
	namesCache.Unlock()
	if ok {
		return out
	}
	out = workspaceNames(st)
	namesCache.Lock()
	if len(namesCache.m) >= namesCacheSize {
		clear(namesCache.m)
	}
	namesCache.m[h] = out
	namesCache.Unlock()
	return out
}

func workspaceNames(st *workspace.State) []claims.KnownName {
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
