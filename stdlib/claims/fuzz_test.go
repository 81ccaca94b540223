package claims

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// FuzzRead reads any text an agent may write: it never panics, every claim lies inside the text,
// and a second reading (not from the cache) gives the same claims. The seeds are texts of the
// shapes the reader handles; `go test ./stdlib/claims -fuzz FuzzRead` explores from them.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		benchMail,
		"The cut-off, if Bram agrees, is 14:30. If Polderveld calls before noon, 12:00 instead.",
		"Clinic schedule, Thursday 15 October\n09:00 Grace Okafor, check-up\n09:30 (free)\n10:20 Daan Visser",
		"The offsite is confirmed for Friday 27 March.*\n\n* Subject to the deposit.",
		"| ref | status | ETA |\n| --- | --- | --- |\n| VF-1 | delayed | 2026-01-06 15:00 |",
		"Transit is 4 days, 6 with customs checks; was 3 to 4%, now 16.11. at 2 PM CT, $85, tel. 912 345 678",
		"> On Mon, Dirk wrote:\n> 14:30 is wrong; not 100% sure, but",
		"",
	} {
		f.Add(s, "NL")
		f.Add(s, "US")
	}
	f.Fuzz(func(t *testing.T, text, region string) {
		if len(text) > 1<<14 || len(region) > 3 {
			return
		}
		opt := Options{Region: region, Written: time.Date(2026, 3, 17, 9, 0, 0, 0, time.UTC)}
		a := read(text, opt).Claims()
		for _, c := range a {
			if c.Start < 0 || c.End > len(text) || c.Start > c.End {
				t.Fatalf("claim %+v lies outside the text (%d bytes)", c, len(text))
			}
		}
		if b := read(text, opt).Claims(); !reflect.DeepEqual(a, b) {
			t.Fatalf("two readings differ:\n%+v\n%+v", a, b)
		}
	})
}

// A bug of the reader that panics fails the call with an error that names it, not the process.
func TestGuardedTurnsAPanicIntoAnError(t *testing.T) {
	t.Parallel()
	v, err := guarded("claims.states", func() (starlark.Value, error) { panic("slice bounds out of range") })
	if v != nil || err == nil || !strings.Contains(err.Error(), "claims.states: the reader failed on this text") {
		t.Fatalf("got %v, %v", v, err)
	}
	v, err = guarded("claims.states", func() (starlark.Value, error) { return starlark.True, nil })
	if v != starlark.True || err != nil {
		t.Fatalf("got %v, %v", v, err)
	}
}
