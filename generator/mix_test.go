package generator

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/refdoc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func primaries(p *mixPlan, n int) []string {
	var out []string
	for i := range n {
		out = append(out, p.draw(i, int64(100+i)).Primary)
	}
	return out
}

func TestMixDraws(t *testing.T) {
	t.Parallel()
	pool := []string{"a.x", "b.x", "c.x"}
	cooc := cooccurrence([][]string{{"a.x", "b.x"}, {"b.x", "a.x", "z.x"}, {"c.x"}})
	p, err := newMixPlan(pool, nil, 0, false, cooc)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.x", "b.x", "c.x", "a.x", "b.x", "c.x", "a.x"}, primaries(p, 7), "round robin")
	for i := range 20 {
		d := p.draw(i, int64(i))
		switch d.Primary {
		case "a.x":
			assert.Equal(t, []string{"a.x", "b.x"}, d.Caps, "b goes with a in the corpus")
		case "b.x":
			assert.Equal(t, []string{"b.x", "a.x"}, d.Caps)
		default:
			assert.Equal(t, []string{"c.x"}, d.Caps, "nothing goes with c")
		}
	}

	none, err := newMixPlan(pool, nil, -1, false, cooc)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.x"}, none.draw(0, 0).Caps, "a negative Combine draws no other")
	all, err := newMixPlan(pool, nil, 0, true, cooc)
	require.NoError(t, err)
	assert.Equal(t, draw{Caps: pool}, all.draw(5, 5), "all of them, none the primary")

	w := []Weight{{"a.x", 3}, {"c.x", 0}}
	p1, err := newMixPlan(pool, w, 0, false, cooc)
	require.NoError(t, err)
	got := primaries(p1, 8)
	count := map[string]int{}
	for _, c := range got {
		count[c]++
	}
	assert.Equal(t, map[string]int{"a.x": 6, "b.x": 2}, count, "3:1, and weight 0 never primary")
	p2, _ := newMixPlan(pool, w, 0, false, cooc)
	assert.Equal(t, got[5:], []string{p2.draw(5, 0).Primary, p2.draw(6, 0).Primary, p2.draw(7, 0).Primary}, "an attempt draws the same whatever was drawn before it")

	_, err = newMixPlan(pool, []Weight{{"d.x", 1}}, 0, false, cooc)
	require.ErrorIs(t, err, ErrUsage)
	_, err = newMixPlan(pool, []Weight{{"a.x", 0}, {"b.x", 0}, {"c.x", 0}}, 0, false, cooc)
	require.ErrorIs(t, err, ErrUsage)
}

// The others are drawn with the attempt's seed, the likelier the more tasks list them together.
func TestMixPartnersBySeed(t *testing.T) {
	t.Parallel()
	pool := []string{"a.x", "b.x", "c.x", "d.x"}
	var tasks [][]string
	for range 9 {
		tasks = append(tasks, []string{"a.x", "b.x"})
	}
	tasks = append(tasks, []string{"a.x", "c.x"})
	p, err := newMixPlan(pool, nil, 0, false, cooccurrence(tasks))
	require.NoError(t, err)
	seen := map[string]int{}
	for i := 0; i < 400; i += 4 { // attempts whose primary is a.x
		d := p.draw(i, int64(i))
		require.Len(t, d.Caps, 2)
		assert.Equal(t, d, p.draw(i, int64(i)), "the same attempt draws the same")
		seen[d.Caps[1]]++
	}
	assert.Greater(t, seen["b.x"], seen["c.x"])
	assert.Greater(t, seen["c.x"], 0)
	assert.Zero(t, seen["d.x"])
	p3, _ := newMixPlan(pool, nil, 3, false, cooccurrence(tasks))
	assert.Equal(t, []string{"a.x", "b.x", "c.x"}, p3.draw(0, 1).Caps, "every partner once, in pool order")
}

func TestCoverage(t *testing.T) {
	t.Parallel()
	recs := []Record{
		{Status: "accepted", Primary: "a.x", Capabilities: []string{"a.x", "b.x"}, MultiTurn: true},
		{Status: "rejected", Primary: "b.x", Capabilities: []string{"b.x"}},
		{Status: "accepted", Primary: "b.x", Capabilities: []string{"b.x", "z.x"}},
	}
	rows := Coverage(recs, []string{"a.x", "b.x", "c.x"})
	assert.Equal(t, []CoverageRow{
		{Capability: "a.x", Primary: 1, Asked: 1, Accepted: 1, Multi: 1},
		{Capability: "b.x", Primary: 2, Asked: 3, Accepted: 2, Rejected: 1, Single: 1, Multi: 1},
		{Capability: "c.x"},
		{Capability: "z.x", Asked: 1, Accepted: 1, Single: 1},
	}, rows)
	var b strings.Builder
	WriteCoverage(&b, rows)
	assert.Contains(t, b.String(), "b.x               2      3         2         1       1      1\n")
}

func TestBudgetStop(t *testing.T) {
	t.Parallel()
	recs := []Record{{Tokens: Tokens{Total: 100}}, {Tokens: Tokens{Total: 201}}} // mean 151 rounded up
	assert.False(t, budgetStop(nil, 3, 10), "no mean before the first attempt")
	assert.False(t, budgetStop(recs, 0, 0), "no budget")
	assert.False(t, budgetStop(recs, 0, 452))
	assert.True(t, budgetStop(recs, 0, 451))
	assert.True(t, budgetStop(recs, 1, 602), "an attempt in flight counts")
	assert.False(t, budgetStop(recs, 1, 603))
}

// The reference is cut from refdoc.Markdown(): the core in every request, a service's entries
// for its capabilities, entries a diagnostic names for a repair, and an index of the rest.
func TestReferenceParts(t *testing.T) {
	t.Parallel()
	md := refdoc.Markdown()
	r := parseReference(md)
	core := r.core()
	assert.Contains(t, core, "### `task(")
	assert.Contains(t, core, "### `claims.states(")
	assert.Contains(t, core, "### `ws.unexpected(")
	assert.NotContains(t, core, "### `ws.mail.deliver(")
	assert.NotContains(t, core, "### `mail_send(")
	assert.NotContains(t, core, "### `simulated_user(")
	assert.NotContains(t, core, "| mail |", "the services' rows come with their capabilities")
	assert.Contains(t, core, "ws.mail.address, .deliver, .deliver_many", "the index")
	assert.Contains(t, core, "simulated_user")
	assert.Less(t, len(core), len(md)/3)

	sent := map[int]bool{}
	part := r.forCapabilities([]string{"mail.reply", "safety.restraint"}, sent)
	assert.Contains(t, part, "### `ws.mail.deliver(")
	assert.Contains(t, part, "| mail |")
	assert.Contains(t, part, "- `mail_send(to, subject, body, cc=[], attachments=[])`: ")
	assert.NotContains(t, part, "ws.fs.write")
	assert.NotContains(t, part, "### `simulated_user(")
	assert.Contains(t, r.forCapabilities([]string{"multi_turn.clarify"}, map[int]bool{}), "### `simulated_user(")

	named := r.named([]string{"ws.fs.write: wrong type", "call mail_send with to", "ws.mail.deliver again", "time.parse_time fails"}, sent)
	assert.Contains(t, named, "### `ws.fs.write(")
	assert.Contains(t, named, "### `mail_send(", "the whole tool entry")
	assert.Contains(t, named, "### `time.parse_time(")
	assert.NotContains(t, named, "### `ws.mail.deliver(", "already sent")
	assert.Equal(t, "", r.named([]string{"ws.fs.write"}, sent), "sent once")
	assert.Contains(t, r.named([]string{"ws.calendar has no .book"}, map[int]bool{}), "### `ws.calendar.add(", "an object named brings its methods")

	// every entry is somewhere: in the core, or in one of the parts
	all := map[int]bool{}
	var caps []string
	for _, s := range []string{"mail", "files", "calendar", "records", "contacts", "chat", "multi_turn"} {
		caps = append(caps, s+".x")
	}
	r.forCapabilities(caps, all)
	var names []string
	for _, e := range r.entries {
		names = append(names, e.name)
	}
	r.named(names, all)
	for k, e := range r.entries {
		if !r.inCore(k) && !all[k] {
			t.Errorf("entry %q is in no part", e.name)
		}
	}
}

func TestFitExample(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("# what the example is\n\n")
	for i := range 200 {
		b.WriteString("HELPER_" + strings.Repeat("x", i%7) + " = struct(a = 1,\n    b = 2)\n\n")
	}
	b.WriteString("def _solve(agent):\n    agent.reply(\"done\")\n\ntask(\n    name = \"t\",\n)\n")
	src := b.String()
	got, ok := fitExample(src, 600)
	require.True(t, ok)
	assert.LessOrEqual(t, jsonLen(got), 600)
	assert.True(t, strings.HasPrefix(got, "# what the example is\n"))
	assert.True(t, strings.HasSuffix(got, "task(\n    name = \"t\",\n)\n"))
	assert.Contains(t, got, "lines (helpers inlined from lib/, data) are left out")
	same, ok := fitExample(src, len(src)*2)
	assert.True(t, ok)
	assert.Equal(t, src, same)
	_, ok = fitExample(src, 50)
	assert.False(t, ok)
}

func TestBudgetNotOnAQueue(t *testing.T) {
	t.Parallel()
	_, err := RunQueued(t.Context(), Options{Capabilities: []string{"mail.reply"}, Count: 1, Out: t.TempDir(), BudgetTokens: 10}, nil, nil)
	require.ErrorIs(t, err, ErrUsage)
	assert.Equal(t, "BudgetTokens cannot be used on a queue yet", err.Error())
}
