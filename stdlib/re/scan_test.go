package re

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/budget"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

// The scanner reads the subject through a counting reader; its matches are those of Go's
// string matcher, from the start and from every later position (the context of \b, ^ and $ in
// every mode, empty matches, invalid UTF-8 included).
func TestScannerFindsWhatRegexpFinds(t *testing.T) {
	t.Parallel()
	patterns := []string{`a`, `a*`, `a*b|a`, `\b`, `\bab`, `\B`, `^`, `$`, `(?m)^a`, `(?m)$`, `^a|b$`, `\Aa`, `a\z`,
		`(a)(b)?`, `(?P<x>a+)|(b)`, `x*`, `.`, `(?s).`, `é+`, `[^a]`, `\w+`, `(a|ab)(c|bcd)?`, `\Qa.\E`, `\Qa`, `(?i)A`, `()`}
	alphabet := []string{"a", "b", "c", "d", " ", "\n", "é", "\xff", "\xe2\x82", "x"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range patterns {
		want := regexp.MustCompile(p)
		for range 200 {
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := b.String()
			sc, err := scan(nil, "re.findall", p, 0)
			require.NoError(t, err)
			assert.Equal(t, want.FindAllStringSubmatchIndex(s, -1), sc.all(s, -1), "%q in %q", p, s)
			for n := 1; n < 3; n++ {
				assert.Equal(t, want.FindAllStringSubmatchIndex(s, n), sc.all(s, n), "%q in %q, n=%d", p, s, n)
			}
			require.NoError(t, sc.done())
			for _, md := range []mode{anchoredStart, anchoredBoth} {
				c, err := compile("re.match", p, 0, md)
				require.NoError(t, err)
				assert.Equal(t, c.re.FindStringSubmatchIndex(s), newScanner(nil, c, nil).find(s, 0), "%q in %q, mode %d", p, s, md)
			}
		}
	}
}

// budgeted returns a thread whose budget is spent after limit steps, and the steps charged.
func budgeted(limit uint64) (*starlark.Thread, *uint64) {
	th := &starlark.Thread{Name: "test"}
	n := new(uint64)
	budget.Install(th, func(_ *starlark.Thread, k uint64) error {
		if *n += k; *n > limit {
			return fmt.Errorf("spent")
		}
		return nil
	})
	return th, n
}

// Matching charges the step budget as it reads, so a pattern within the limits that would read
// a MiB hundreds of times over stops at the budget: 300 alternatives over 1 MiB, and a pattern
// that reads to the end of the subject from every position (once over 150 s in one process).
func TestMatchingStopsAtTheBudget(t *testing.T) {
	t.Parallel()
	words := make([]string, 300)
	for i := range words {
		words[i] = fmt.Sprintf("w%03dq", i)
	}
	alt := "(?:" + strings.Join(words, "|") + ")"
	subject := strings.Repeat("w001x w002y ", (1<<20)/12)
	const limit = 1_000_000
	for _, call := range []struct {
		fn   string
		args starlark.Tuple
	}{
		{"findall", starlark.Tuple{starlark.String(alt), starlark.String(subject)}},
		{"search", starlark.Tuple{starlark.String(alt), starlark.String(subject)}},
		{"findall", starlark.Tuple{starlark.String(`a*b|a`), starlark.String(strings.Repeat("a", 1<<20))}},
		{"sub", starlark.Tuple{starlark.String(`a*b|a`), starlark.String("x"), starlark.String(strings.Repeat("a", 1<<20))}},
		{"split", starlark.Tuple{starlark.String(`a*b|a`), starlark.String(strings.Repeat("a", 1<<20))}},
	} {
		th, n := budgeted(limit)
		_, err := starlark.Call(th, Module.Members[call.fn], call.args, nil)
		require.Error(t, err, call.fn)
		assert.Contains(t, err.Error(), "spent", call.fn)
		assert.Less(t, *n, uint64(limit+1000), "%s stopped as it passed the budget", call.fn)
	}

	// What fits is charged the same every time, and less than the budget.
	charge := func(fn string, args ...starlark.Value) uint64 {
		th, n := budgeted(limit)
		_, err := starlark.Call(th, Module.Members[fn], args, nil)
		require.NoError(t, err)
		return *n
	}
	big := strings.Repeat("word 12 ", (1<<20)/8)
	a := charge("findall", starlark.String(`\d+`), starlark.String(big))
	assert.Equal(t, a, charge("findall", starlark.String(`\d+`), starlark.String(big)))
	assert.Greater(t, a, uint64(100_000), "a MiB read is charged")
	assert.Less(t, a, uint64(limit/2), "a simple pattern reads a MiB within half the budget")
	assert.Equal(t, uint64(1), charge("search", starlark.String(`b`), starlark.String("ab")), "a short subject costs a step")
}
