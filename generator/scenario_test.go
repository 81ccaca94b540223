package generator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scenarioCounts counts what n attempts of a run draw.
func scenarioCounts(runSeed int64, n int) (counts map[string]int, pairRepeats int) {
	sets := map[string]map[string]bool{}
	add := func(k, v string) {
		if sets[k] == nil {
			sets[k] = map[string]bool{}
		}
		sets[k][v] = true
	}
	for i := range n {
		s := RunScenario(runSeed, i)
		if sets["business+lead"][s.Company+"|"+s.User.Name] {
			pairRepeats++
		}
		add("business+lead", s.Company+"|"+s.User.Name)
		add("businesses", s.Company)
		add("mail domains", s.MailHost)
		add("kinds of business", s.Domain)
		add("places", s.City)
		add("lead names", s.User.Name)
		first, last, _ := strings.Cut(s.User.Name, " ")
		add("lead first names", first)
		add("lead last names", last)
		add("lead roles", s.Domain+"|"+s.User.Role)
		add("situations", s.Situation)
		add("twists", s.Twist)
		add("situation×twist", s.Situation+"|"+s.Twist)
		add("people (all names)", s.User.Name)
		for _, p := range s.People {
			add("people (all names)", p.Name)
		}
	}
	counts = map[string]int{}
	for k, v := range sets {
		counts[k] = len(v)
	}
	return counts, pairRepeats
}

// 1,000 attempts of a run: no (business, lead person) pair twice, no lead name twice; the
// figures are those of docs/benchmarks.md ("Scenarios of a generation run").
func TestScenarioDraws(t *testing.T) {
	t.Parallel()
	for _, seed := range []int64{0, 7, 1 << 40} {
		counts, repeats := scenarioCounts(seed, 1000)
		assert.Zero(t, repeats, "seed %d", seed)
		assert.Equal(t, 1000, counts["lead names"], "seed %d", seed)
		assert.GreaterOrEqual(t, counts["businesses"], 990, "seed %d", seed)
		assert.Equal(t, len(allSituations)*len(allTwists), counts["situation×twist"], "every pair of situation and twist, seed %d", seed)
		assert.Equal(t, len(places), counts["places"])
		if seed == 0 {
			var keys []string
			for k := range counts {
				keys = append(keys, k)
			}
			for _, k := range []string{"businesses", "mail domains", "kinds of business", "places", "lead names", "lead first names", "lead last names", "lead roles", "people (all names)", "situations", "twists", "situation×twist"} {
				t.Log(fmt.Sprintf("%-20s %d", k, counts[k]))
			}
			require.Len(t, keys, 13)
		}
	}
	// the scenario of an attempt does not depend on the attempts before it
	assert.Equal(t, RunScenario(7, 123), RunScenario(7, 123))
	assert.Equal(t, int64(7+123), RunScenario(7, 123).Seed)
	assert.NotEqual(t, RunScenario(7, 123).Company, RunScenario(8, 123).Company)
}

func TestPermutationIsABijection(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 16, 60, 97, 4320} {
		p := newPermutation(3, "x", n)
		seen := map[int]bool{}
		for i := range n {
			k := p.at(i)
			require.True(t, k >= 0 && k < n)
			require.False(t, seen[k], "n %d: %d twice", n, k)
			seen[k] = true
		}
	}
}

func TestNamesInMailAddresses(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "elodie", emailLocal("Élodie"))
	assert.Equal(t, "ayse", emailLocal("Ayşe"))
	assert.Equal(t, "siobhan", emailLocal("Siobhán"))
	assert.Equal(t, "alder", slug("Alder &"))
	assert.Equal(t, "hanami-zorg", slug("Hanami Zorg"))
	for _, c := range cultures {
		for _, f := range c.first {
			assert.Regexp(t, `^[a-z]+$`, emailLocal(f), "%s (%s)", f, c.name)
		}
	}
}
