package contacts

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Searches and listings read the indexes of the part, not the whole book: checked here against
// the same search and listing over every contact, over a book of 2,000 random contacts and again
// in a fork after random updates and deletions.

var (
	firsts = []string{"Greta", "Grete", "Jonas", "Zoë", "Zoe", "Ava", "Mehmet", "Ruben", "Anna", "Ann"}
	lasts  = []string{"Vogel", "Vogelaar", "Weber", "Müller", "Muller", "Jansen", "Aydin", "Dijkstra", "Smit"}
	roles  = []string{"dispatcher", "dispatch lead", "fleet planner", "planning lead", "controller", ""}
	teams  = []string{"Dispatch", "Fleet", "Finance", "Customer Service", ""}
	places = []string{"Antwerp", "Hamburg", "Gouda", "Rotterdam HQ", ""}
	notes  = []string{"", "", "asks for Greta in dispatch", "prefers mornings", "planning 0117"}
)

func randomContact(rng *rand.Rand, i int) *Contact {
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	c := &Contact{ID: fmt.Sprintf("c%d", i), Name: pick(firsts) + " " + pick(lasts), Role: pick(roles), Team: pick(teams), Location: pick(places),
		Company: pick([]string{"Verdant Freight", "De Kaasmakers", ""}), Notes: pick(notes), Source: []string{Directory, Personal}[i%2],
		Phone: fmt.Sprintf("+31 %d 555 %04d", rng.IntN(100), rng.IntN(10000))}
	if rng.IntN(3) > 0 {
		// two contacts, one of each source, may share an address, written in another case
		c.Email = fmt.Sprintf("%s.%d@verdant.example", pick([]string{"greta", "GRETA", "zoë", "ZOË"}), i/2)
	}
	if rng.IntN(4) == 0 {
		c.Aliases = []string{pick(firsts)}
	}
	return c
}

// searchAll is search over every contact, as it was before the index.
func searchAll(st *workspace.State, q string, f filter) []*Contact {
	ws := queryWords(q)
	var hits []*Contact
	scores := map[string]int{}
	for _, notes := range []bool{false, true} {
		for _, c := range All(st) {
			if s := score(c, ws, notes); f.keeps(c) && s > 0 {
				hits, scores[c.ID] = append(hits, c), s
			}
		}
		if len(hits) > 0 {
			break
		}
	}
	slices.SortFunc(hits, func(a, b *Contact) int {
		if scores[a.ID] != scores[b.ID] {
			return scores[b.ID] - scores[a.ID]
		}
		return byName(a, b)
	})
	return hits
}

func idsOf(cs []*Contact) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func checkReads(t *testing.T, st *workspace.State) {
	t.Helper()
	for _, q := range []string{"greta", "gre", "Grete Vogel", "vogelaar", "dispatchers", "planning", "planners hamburg", "0117", "555", "zoe muller",
		"kaas", "greta.1@verdant.example", "mornings", "asks greta", "g", "31", "nobody", "the team", "rotterdam hq", "müller", "zzzz 0117"} {
		for _, f := range []filter{{}, {team: "dispatch"}, {source: Personal}, {team: "customer service", source: Directory}} {
			got, err := search(st, q, f, nil)
			require.NoError(t, err)
			assert.Equal(t, idsOf(searchAll(st, q, f)), idsOf(got), "search %q %v", q, f)
		}
	}
	byNames := All(st)
	slices.SortFunc(byNames, byName)
	for _, f := range []filter{{}, {team: "dispatch"}, {location: "antwerp", source: Personal}, {company: "kaas"}} {
		var want []*Contact
		for _, c := range byNames {
			if f.keeps(c) {
				want = append(want, c)
			}
		}
		for _, limit := range []int64{1, 7, 200} {
			kept, total := list(st, f, limit)
			n := min(int(limit), len(want))
			assert.Equal(t, idsOf(want[:n]), idsOf(kept), "list %v %d", f, limit)
			assert.Equal(t, n, total)
		}
	}
	for _, c := range All(st)[:100] {
		var reps, mails []*Contact
		for _, o := range All(st) {
			if o.Manager == c.ID {
				reps = append(reps, o)
			}
			if c.Email != "" && strings.EqualFold(o.Email, c.Email) {
				mails = append(mails, o)
			}
		}
		assert.Equal(t, idsOf(reps), idsOf(reports(st, c.ID)), "reports of %s", c.ID)
		if c.Email != "" {
			assert.Equal(t, idsOf(mails), idsOf(newBook(st).byEmail(strings.ToUpper(c.Email))), "address %s", c.Email)
		}
	}
}

func TestReadsFollowTheIndexes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	var cs []*Contact
	for i := range 1000 {
		c := randomContact(rng, i+1)
		if i > 10 && rng.IntN(3) == 0 {
			c.Manager = fmt.Sprintf("c%d", 1+rng.IntN(i-1))
		}
		cs = append(cs, c)
	}
	base := workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	_, err := Add(base, cs)
	require.NoError(t, err)
	checkReads(t, base)
	base.Freeze()

	st := base.Fork()
	for i := range 200 {
		id := fmt.Sprintf("c%d", 1+rng.IntN(1000))
		old, ok := Get(st, id)
		if !ok {
			continue
		}
		if i%4 == 0 {
			_ = remove(st, id)
			continue
		}
		c := randomContact(rng, 0)
		c.ID, c.Manager = id, old.Manager
		_ = update(st, c) // an address taken by another fails, and changes nothing
	}
	checkReads(t, st)
	checkReads(t, base)
}

// The order contacts were added in does not show in what search and the listings return.
func TestReadsAreTheSameInAnyOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	var cs []*Contact
	for i := range 500 {
		cs = append(cs, randomContact(rng, i+1))
	}
	show := func(order []int) string {
		st := workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
		for _, i := range order {
			c := *cs[i]
			_, err := Add(st, []*Contact{&c})
			require.NoError(t, err)
		}
		var b strings.Builder
		for _, args := range []*jsonv.Object{jsonv.NewObject("query", "greta", "limit", int64(10)), jsonv.NewObject("query", "planning", "limit", int64(50)),
			jsonv.NewObject("query", "0117", "limit", int64(10)), jsonv.NewObject("query", "mornings", "limit", int64(10))} {
			res, err := searchTool(st, args)
			require.NoError(t, err)
			b.WriteString(jsonv.MustEncode(res))
		}
		res, err := listTool(st, jsonv.NewObject("limit", int64(200), "team", "dispatch"))
		require.NoError(t, err)
		b.WriteString(jsonv.MustEncode(res) + st.Hash())
		return b.String()
	}
	order := make([]int, len(cs))
	for i := range order {
		order[i] = i
	}
	first := show(order)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	assert.Equal(t, first, show(order))
}
