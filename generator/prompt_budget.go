package generator

import (
	"fmt"
	"hash/fnv"
	"sort"

	openai "github.com/sashabaranov/go-openai"
)

// FirstRequestGoal is the most bytes the body of an attempt's first request should take: the
// example it shows is chosen, and if need be cut, to fit (see firstMessages). A repair request
// repeats the first one without its example, adds the answer and the diagnostics, and so stays
// within about FirstRequestGoal plus the answer.
const FirstRequestGoal = 40 * 1024

// requestSlack is what a request's body holds besides its messages' contents (the model, the
// roles, the options), with room to spare.
const requestSlack = 1024

// shownAccepted is the most tasks of the run a first request lists as already written (the
// latest ones); the duplicate checks still compare with all of them.
const shownAccepted = 20

// firstMessages are the messages of attempt i's first request: the system prompt (the same for
// every request of the run, so that a provider's prompt cache holds it), then the attempt's
// request: its capabilities, the reference of the services they use, its scenario, the latest
// tasks of the run, and one corpus example for its capabilities: the one that shares most of
// them (the primary counting double; ties in an order drawn from the seed) and fits in
// FirstRequestGoal whole, else the best one cut to fit.
//
// lean is the request's text without the example, which repair requests send in its place.
func (g *gen) firstMessages(d draw, i int, seed int64, seen []*entry, desc map[string]string, sent map[int]bool) (msgs []openai.ChatCompletionMessage, lean string) {
	sc := RunScenario(g.opts.Seed, i) // sc.Seed is seed
	if len(seen) > shownAccepted {
		seen = seen[len(seen)-shownAccepted:]
	}
	refPart := g.ref.forCapabilities(d.Caps, sent)
	user := firstPrompt(d.Caps, d.Primary, g.tax, sc, nil, seen, desc, refPart)
	const exampleHead = 400 // the examples' heading and the example's title
	budget := FirstRequestGoal - requestSlack - jsonLen(g.system) - jsonLen(user) - exampleHead
	ranked := rankExamples(g.examples, d, seed)
	var chosen []example
	for _, ex := range ranked {
		if jsonLen(ex.src) <= budget {
			chosen = []example{ex}
			break
		}
	}
	if chosen == nil && len(ranked) > 0 {
		if src, ok := fitExample(ranked[0].src, budget); ok {
			ex := ranked[0]
			ex.src = src
			chosen = []example{ex}
		}
	}
	lean = user
	if chosen != nil {
		user = firstPrompt(d.Caps, d.Primary, g.tax, sc, chosen, seen, desc, refPart)
		lean = firstPrompt(d.Caps, d.Primary, g.tax, sc, []example{{path: chosen[0].path, caps: chosen[0].caps,
			src: "# (the example is left out of repair requests)\n"}}, seen, desc, refPart)
	}
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: g.system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}, lean
}

// rankExamples orders the corpus examples that share a capability with the draw: most shared
// first (the primary counting double), ties in an order drawn from the seed. With none
// sharing one, every example is ranked.
func rankExamples(pool []example, d draw, seed int64) []example {
	type scored struct {
		ex    example
		score int
		order uint64
	}
	var cands []scored
	for _, ex := range pool {
		n := 0
		for _, c := range ex.caps {
			switch {
			case c == d.Primary:
				n += 2
			case contains(d.Caps, c):
				n++
			}
		}
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", seed, ex.path)
		cands = append(cands, scored{ex, n, h.Sum64()})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].order < cands[j].order
	})
	var out []example
	for _, c := range cands {
		if c.score > 0 || cands[0].score == 0 {
			out = append(out, c.ex)
		}
	}
	return out
}
