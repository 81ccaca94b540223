package claims

import (
	"fmt"
	"strings"
	"testing"
)

// hostileTexts are shapes a text built to slow the reader takes, at n entries each: one sentence
// of n clauses that each supersede the one before ("was 3 pallets, now 4 pallets again"), a
// schedule of n lines, and n sentences marked with a footnote that sets a condition.
func hostileTexts(n int) map[string]string {
	var chain, sched, foot strings.Builder
	chain.WriteString("The account was suspended")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&chain, ", was %d pallets, now %d pallets again", i, i+1)
		fmt.Fprintf(&sched, "09:%02d Dirk, check-up\n", i%60)
		fmt.Fprintf(&foot, "Item %d is confirmed.*\n", i)
	}
	chain.WriteString(".")
	foot.WriteString("* Subject to approval.")
	return map[string]string{"chain": chain.String(), "schedule": sched.String(), "footnotes": foot.String()}
}

// A reading stays local however a sentence is built: what a value is about spans at most
// chainMax clauses of at most 2×reach tokens each, so the text a claim carries and the work of
// reading it do not grow with the sentence (a sentence of 4,000 chained clauses made every
// claim carry the whole sentence, and reading it took seconds).
func TestReadingStaysLocal(t *testing.T) {
	t.Parallel()
	for name, text := range hostileTexts(4000) {
		d := read(text, Options{})
		if len(d.ments) < 4000 {
			t.Fatalf("%s: %d claims read, want at least 4000", name, len(d.ments))
		}
		for _, m := range d.ments {
			if toks := len(strings.Fields(m.About)); toks > chainMax*2*reach {
				t.Fatalf("%s: a claim is about %d words of the text: %.80q…", name, toks, m.About)
			}
		}
	}
}

// BenchmarkReadHostile reads the hostile shapes at 1,000, 4,000 and 16,000 entries: the time per
// reading grows with the text, not with its square.
//
//	go test ./stdlib/claims -run XXX -bench ReadHostile
func BenchmarkReadHostile(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		texts := hostileTexts(n)
		for _, name := range []string{"chain", "schedule", "footnotes"} {
			text := texts[name]
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				for i := 0; i < b.N; i++ {
					read(text, Options{})
				}
			})
		}
	}
}
