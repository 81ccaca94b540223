package workspace

import (
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
