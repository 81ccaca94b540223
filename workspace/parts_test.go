package workspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type note struct{ text string }

func (n note) Digest() [32]byte { return Digest("note", n.text) }

var notesPart = &Part{Name: "notes", Entry: "note"}

func TestPartAbsentHashesAsBefore(t *testing.T) {
	s := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	before := s.Hash()
	assert.Empty(t, s.PartKeys(notesPart))
	assert.Equal(t, before, s.Hash(), "reading a part does not change the state")
	require.NoError(t, s.PartPut(notesPart, "n1", "add", note{"hello"}))
	assert.NotEqual(t, before, s.Hash())
	require.NoError(t, s.PartRemove(notesPart, "n1", "remove"))
	assert.Equal(t, before, s.Hash(), "an emptied part with no counter hashes as absent")
}

func TestPartWritesChangeHashDiffAndHistory(t *testing.T) {
	base := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	require.NoError(t, base.PartPut(notesPart, "n1", "add", note{"one"}))
	require.NoError(t, base.PartPut(notesPart, "n2", "add", note{"two"}))
	base.Freeze()

	a := base.Fork()
	h0 := a.Hash()
	require.NoError(t, a.PartPut(notesPart, "n1", "update", note{"ONE"}))
	h1 := a.Hash()
	assert.NotEqual(t, h0, h1, "changing an entry changes the hash")
	require.NoError(t, a.PartRemove(notesPart, "n2", "remove"))
	require.NoError(t, a.PartPut(notesPart, "n10", "add", note{"ten"}))
	n, err := a.NextNumber(notesPart)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.NotEqual(t, h1, a.Hash())

	d := Diff(base, a)
	assert.Equal(t, Section{Added: []string{"n10"}, Changed: []string{"n1"}, Removed: []string{"n2"}}, d.Part(notesPart))
	assert.False(t, d.Empty())
	assert.True(t, Diff(base, base.Fork()).Empty())

	// the fork did not change the base, which still reads its own entries
	e, ok := base.PartGet(notesPart, "n1")
	require.True(t, ok)
	assert.Equal(t, note{"one"}, e)
	assert.Equal(t, []string{"n1", "n2"}, base.PartKeys(notesPart))
	assert.Equal(t, []string{"n1", "n10"}, a.PartKeys(notesPart))

	h := a.History(base)
	require.Len(t, h, 3)
	assert.Equal(t, "note", h[0].Kind)
	assert.Equal(t, "update", h[0].Op)
	assert.Equal(t, note{"one"}, h[0].Before())
	assert.Equal(t, note{"ONE"}, h[0].After())
	assert.Equal(t, "remove", h[1].Op)
	assert.Nil(t, h[1].After())

	assert.ErrorIs(t, base.PartPut(notesPart, "n3", "add", note{"x"}), ErrFrozen)
	assert.Error(t, a.PartRemove(notesPart, "nope", "remove"))
}

func TestPartHashIndependentOfWriteOrder(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	other := &Part{Name: "alpha", Entry: "a"}
	x, y := New(start, 1), New(start, 1)
	require.NoError(t, x.PartPut(notesPart, "n1", "add", note{"1"}))
	require.NoError(t, x.PartPut(other, "k", "add", note{"k"}))
	require.NoError(t, y.PartPut(other, "k", "add", note{"k"}))
	require.NoError(t, y.PartPut(notesPart, "n1", "add", note{"1"}))
	assert.Equal(t, x.Hash(), y.Hash())
	// the same entry under two parts is two different states
	z := New(start, 1)
	require.NoError(t, z.PartPut(notesPart, "k", "add", note{"k"}))
	require.NoError(t, z.PartPut(notesPart, "n1", "add", note{"1"}))
	assert.NotEqual(t, x.Hash(), z.Hash())
}

func TestDigestIsUnambiguous(t *testing.T) {
	assert.NotEqual(t, Digest("x", "ab", "c"), Digest("x", "a", "bc"))
	assert.NotEqual(t, Digest("x", []string{"a", "b"}), Digest("x", "a", "b"))
	assert.NotEqual(t, Digest("x", 1), Digest("x", "1"))
	assert.NotEqual(t, Digest("x", true), Digest("y", true))
}

// tagged is an entry of taggedPart: its tags are its keys in byTag, and in words (an index of
// Refs).
type tagged struct{ tags []string }

func (e tagged) Digest() [32]byte { return Digest("tagged", e.tags) }

var (
	byTag     = &Index{Name: "tag", Keys: func(e Entry) []string { return e.(tagged).tags }}
	byTagRefs = &Index{Name: "tag refs", Keys: func(e Entry) []string { return e.(tagged).tags }, Refs: true}
	byNone    = &Index{Name: "none", Keys: func(Entry) []string { return nil }}
	tagPart   = &Part{Name: "tagged", Entry: "tagged", Indexes: []*Index{byTag, byTagRefs, byNone}}
)

// The indexes of a part follow its writes, in every fork apart: random puts and removes over a
// chain of forks, checked against the entries read in full after each.
func TestPartIndexesFollowWrites(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	tags := []string{"a", "ab", "b", "b\x00", "c", "\xff", ""}
	st := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	var states []*State
	for step := range 600 {
		if step%50 == 49 { // fork: the old state must keep its own indexes
			states = append(states, st)
			st = st.Fork()
		}
		key := fmt.Sprintf("k%d", rng.IntN(40))
		if rng.IntN(4) == 0 {
			_ = st.PartRemove(tagPart, key, "remove")
			continue
		}
		var ts []string
		for range rng.IntN(4) {
			ts = append(ts, tags[rng.IntN(len(tags))])
		}
		require.NoError(t, st.PartPut(tagPart, key, "put", tagged{ts}))
	}
	states = append(states, st)
	for _, s := range states {
		type hit struct{ k, key string }
		var all []hit // every key of every entry, as the index must order them
		for key, e := range s.PartEntries(tagPart, "") {
			for _, k := range e.(tagged).tags {
				if !slices.Contains(all, hit{k, key}) {
					all = append(all, hit{k, key})
				}
			}
		}
		slices.SortFunc(all, func(a, b hit) int { return compareIx(ixKey{a.k, a.key}, ixKey{b.k, b.key}) })
		for _, r := range [][2]string{{"", ""}, {"a", "b"}, {"a", PrefixEnd("a")}, {"b", "b\x00"}, {"b\x00", PrefixEnd("b\x00")}, {"c", ""}, {"\xff", ""}, {"z", "a"}} {
			var want []hit
			for _, h := range all {
				if h.k >= r[0] && (r[1] == "" || h.k < r[1]) {
					want = append(want, h)
				}
			}
			for _, x := range []*Index{byTag, byTagRefs} {
				var fwd, back []hit
				for k, e := range s.PartIndex(tagPart, x, r[0], r[1], false) {
					fwd = append(fwd, hit{k, keyOf(t, s, e)})
				}
				for k, e := range s.PartIndex(tagPart, x, r[0], r[1], true) {
					back = append(back, hit{k, keyOf(t, s, e)})
				}
				slices.Reverse(back)
				assert.Equal(t, want, fwd, "%s %q", x.Name, r)
				assert.Equal(t, want, back, "%s %q backwards", x.Name, r)
				for _, dir := range []bool{false, true} {
					var walked []hit
					w := s.PartIndexWalk(tagPart, x, r[0], r[1], dir)
					for k, e, ok := w.Next(); ok; k, e, ok = w.Next() {
						walked = append(walked, hit{k, keyOf(t, s, e)})
					}
					_, _, ok := w.Next()
					assert.False(t, ok, "a walk ends once")
					if dir {
						slices.Reverse(walked)
					}
					assert.Equal(t, want, walked, "%s %q walked, backwards: %v", x.Name, r, dir)
				}
				assert.Equal(t, len(want), s.PartIndexLen(tagPart, x, r[0], r[1]))
			}
		}
		assert.Zero(t, s.PartIndexLen(tagPart, byNone, "", ""))
	}
}

// keyOf finds the part key of entry e of s (entries of tagPart are not unique, so by identity
// of their tags).
func keyOf(t *testing.T, s *State, e Entry) string {
	for key, f := range s.PartEntries(tagPart, "") {
		if len(f.(tagged).tags) > 0 && len(e.(tagged).tags) > 0 && &f.(tagged).tags[0] == &e.(tagged).tags[0] {
			return key
		}
	}
	t.Fatalf("entry %v is not in the part", e)
	return ""
}

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "b", PrefixEnd("a"))
	assert.Equal(t, "a\x01", PrefixEnd("a\x00"))
	assert.Equal(t, "b", PrefixEnd("a\xff"))
	assert.Equal(t, "", PrefixEnd("\xff\xff"))
	assert.Equal(t, "", PrefixEnd(""))
}

func TestPartIndexOfAnotherPartPanics(t *testing.T) {
	t.Parallel()
	s := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	require.NoError(t, s.PartPut(notesPart, "n1", "add", note{"x"}))
	assert.Panics(t, func() { s.PartIndexLen(notesPart, byTag, "", "") })
	assert.Zero(t, s.PartIndexLen(tagPart, byTag, "", ""), "an absent part has empty indexes")
}
