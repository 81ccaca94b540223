package pmap

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// check verifies the invariants of m: keys in order, sizes right, every node balanced.
func check[K, V any](t *testing.T, m Map[K, V]) {
	t.Helper()
	var visit func(n *node[K, V]) int
	visit = func(n *node[K, V]) int {
		if n == nil {
			return 0
		}
		l, r := visit(n.left), visit(n.right)
		require.Equal(t, l+r+1, n.size, "size")
		require.True(t, delta*(l+1) >= r+1 && delta*(r+1) >= l+1, "balance: %d and %d", l, r)
		if n.left != nil {
			require.Negative(t, m.cmp(n.left.key, n.key))
		}
		if n.right != nil {
			require.Positive(t, m.cmp(n.right.key, n.key))
		}
		return n.size
	}
	visit(m.root)
	keys := []K{}
	for k := range m.All() {
		keys = append(keys, k)
	}
	require.True(t, slices.IsSortedFunc(keys, m.cmp))
	require.Len(t, keys, m.Len())
}

func contents(m Map[int, string]) map[int]string {
	out := map[int]string{}
	for k, v := range m.All() {
		out[k] = v
	}
	return out
}

// version is a map as it was, and what it held then.
type version struct {
	m    Map[int, string]
	want map[int]string
}

// randomWrite sets (two times in three) or deletes a random key of m under owner o, checks what
// it returns against want, and makes the same change to want.
func randomWrite(t *testing.T, r *rand.Rand, m *Map[int, string], o *Owner, want map[int]string, keys int) {
	k := r.IntN(keys)
	if r.IntN(3) == 2 {
		old, ok := m.Delete(o, k)
		wv, had := want[k]
		require.Equal(t, had, ok)
		require.Equal(t, wv, old)
		delete(want, k)
		return
	}
	v := string(rune('a' + r.IntN(26)))
	old, rep := m.Set(o, k, v)
	wv, had := want[k]
	require.Equal(t, had, rep)
	require.Equal(t, wv, old)
	want[k] = v
}

// A map follows a Go map through random sets and deletes, and every version made on the way
// keeps its contents while later versions change.
func TestMatchesAMapAndKeepsVersions(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	m := New[int, string](cmp.Compare[int])
	want := map[int]string{}
	var versions []version
	for i := range 20000 {
		randomWrite(t, r, &m, nil, want, 3000)
		if i%997 == 0 {
			check(t, m)
			versions = append(versions, version{m, maps(want)})
		}
	}
	check(t, m)
	require.Equal(t, want, contents(m))
	for k, v := range want {
		got, ok := m.Get(k)
		require.True(t, ok)
		require.Equal(t, v, got)
	}
	_, ok := m.Get(-1)
	assert.False(t, ok)
	for _, v := range versions {
		assert.Equal(t, v.want, contents(v.m))
	}
}

func maps(m map[int]string) map[int]string {
	out := make(map[int]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Inserting keys in order, the worst case of an unbalanced tree, keeps the tree balanced.
func TestSortedInsertsStayBalanced(t *testing.T) {
	t.Parallel()
	m := New[int, int](cmp.Compare[int])
	for i := range 100000 {
		m.Set(nil, i, i)
	}
	check(t, m)
	var depth func(n *node[int, int]) int
	depth = func(n *node[int, int]) int {
		if n == nil {
			return 0
		}
		return 1 + max(depth(n.left), depth(n.right))
	}
	assert.LessOrEqual(t, depth(m.root), 40) // a weight-balanced tree of 100,000 keys is at most about 2 log2 n deep
	for i := 0; i < 100000; i += 2 {
		m.Delete(nil, i)
	}
	check(t, m)
	assert.Equal(t, 50000, m.Len())
}

func TestRanges(t *testing.T) {
	t.Parallel()
	m := New[int, int](cmp.Compare[int])
	for i := 0; i < 100; i += 10 {
		m.Set(nil, i, i*2)
	}
	collect := func(s func(func(int, int) bool)) []int {
		var out []int
		for k := range s {
			out = append(out, k)
		}
		return out
	}
	assert.Equal(t, []int{30, 40, 50, 60, 70, 80, 90}, collect(m.From(25)))
	assert.Equal(t, []int{30, 40, 50, 60, 70, 80, 90}, collect(m.From(30)))
	assert.Nil(t, collect(m.From(91)))
	assert.Equal(t, []int{20, 10, 0}, collect(m.Down(25)))
	assert.Equal(t, []int{20, 10, 0}, collect(m.Down(20)))
	assert.Nil(t, collect(m.Down(-1)))
	assert.Equal(t, []int{90, 80, 70, 60, 50, 40, 30, 20, 10, 0}, collect(m.Backward()))
	k, v, ok := m.Ceil(41)
	assert.True(t, ok)
	assert.Equal(t, []int{50, 100}, []int{k, v})
	k, _, ok = m.Floor(41)
	assert.True(t, ok)
	assert.Equal(t, 40, k)
	k, _, _ = m.Min()
	assert.Equal(t, 0, k)
	k, _, _ = m.Max()
	assert.Equal(t, 90, k)
	_, _, ok = New[int, int](cmp.Compare[int]).Max()
	assert.False(t, ok)
	assert.Equal(t, []int{0, 0, 1, 3, 3, 10, 10}, []int{m.Rank(-5), m.Rank(0), m.Rank(1), m.Rank(21), m.Rank(30), m.Rank(91), m.Rank(1000)})
	// stopping early
	n := 0
	for range m.From(0) {
		if n++; n == 3 {
			break
		}
	}
	assert.Equal(t, 3, n)
}

// naiveDiff compares two maps key by key.
func naiveDiff(a, b map[int]string) []Change[int, string] {
	var keys []int
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []Change[int, string]
	for _, k := range keys {
		av, ina := a[k]
		bv, inb := b[k]
		if ina && inb && av == bv {
			continue
		}
		out = append(out, Change[int, string]{Key: k, Before: av, After: bv, InBefore: ina, InAfter: inb})
	}
	return out
}

func diffOf(a, b Map[int, string]) []Change[int, string] {
	var out []Change[int, string]
	Diff(a, b, func(x, y string) bool { return x == y }, func(c Change[int, string]) bool {
		out = append(out, c)
		return true
	})
	return out
}

// Diff finds what naive comparison finds, between versions of one map and between maps built
// apart, and visits few nodes when the versions share most of them.
func TestDiff(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	base := New[int, string](cmp.Compare[int])
	for i := range 5000 {
		base.Set(nil, i*2, "v")
	}
	for round := range 50 {
		a, b := base, base
		for range r.IntN(20) {
			a.Set(nil, r.IntN(12000), "a")
		}
		for range r.IntN(20) {
			k := r.IntN(12000)
			if r.IntN(2) == 0 {
				b.Delete(nil, k)
			} else {
				b.Set(nil, k, "b")
			}
		}
		if round%10 == 0 { // built apart: nothing shared
			c := New[int, string](cmp.Compare[int])
			for k, v := range b.All() {
				c.Set(nil, k, v)
			}
			b = c
		}
		require.Equal(t, naiveDiff(contents(a), contents(b)), diffOf(a, b), "round %d", round)
		require.Equal(t, naiveDiff(contents(b), contents(a)), diffOf(b, a), "round %d", round)
	}
	assert.Nil(t, diffOf(base, base))
	empty := New[int, string](cmp.Compare[int])
	assert.Len(t, diffOf(empty, base), 5000)
	assert.Len(t, diffOf(base, empty), 5000)
}

// countingDiff counts the nodes Diff opens, through the sizes of the steps it pushes.
func TestDiffSkipsSharedSubtrees(t *testing.T) {
	t.Parallel()
	base := New[int, string](cmp.Compare[int])
	for i := range 100000 {
		base.Set(nil, i, "v")
	}
	a := base
	a.Set(nil, 500, "x")
	a.Set(nil, 70000, "y")
	calls := 0
	same := func(x, y string) bool { calls++; return x == y }
	var got []int
	Diff(base, a, same, func(c Change[int, string]) bool { got = append(got, c.Key); return true })
	assert.Equal(t, []int{500, 70000}, got)
	// only keys on the changed paths are compared by value: about 2 log n, not n
	assert.Less(t, calls, 200)
}

// Diff stops when fn returns false.
func TestDiffStops(t *testing.T) {
	t.Parallel()
	a := New[int, string](cmp.Compare[int])
	b := a
	for i := range 10 {
		b.Set(nil, i, "x")
	}
	n := 0
	Diff(a, b, func(x, y string) bool { return x == y }, func(Change[int, string]) bool { n++; return n < 3 })
	assert.Equal(t, 3, n)
}

// With an owner, a writer changes the nodes it made in place; the versions it took before it
// changed owners (a fork) keep their contents, as do versions another writer changes.
func TestOwnersChangeOnlyTheirNodes(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	m := New[int, string](cmp.Compare[int])
	o := NewOwner()
	want := map[int]string{}
	var versions []version
	for i := range 30000 {
		randomWrite(t, r, &m, o, want, 2000)
		if i%1500 == 0 {
			// a fork: both sides take new owners; the other side writes too
			versions = append(versions, version{m, maps(want)})
			other, oo, otherWant := m, NewOwner(), maps(want)
			for range 100 {
				randomWrite(t, r, &other, oo, otherWant, 2000)
			}
			check(t, other)
			require.Equal(t, otherWant, contents(other))
			o = NewOwner()
		}
	}
	check(t, m)
	require.Equal(t, want, contents(m))
	for i, v := range versions {
		check(t, v.m)
		require.Equal(t, v.want, contents(v.m), "version %d", i)
	}
}

// An owner's insert makes one node, where a path of copies is a node per level.
func TestOwnerMakesOneNodePerInsert(t *testing.T) {
	m := New[int, int](cmp.Compare[int])
	o := NewOwner()
	for i := range 10000 {
		m.Set(o, i*2, i)
	}
	k := 1
	owned := testing.AllocsPerRun(100, func() { m.Set(o, k, k); k += 2 })
	copied := testing.AllocsPerRun(100, func() { m.Set(nil, k, k); k += 2 })
	assert.LessOrEqual(t, owned, 1.0)
	assert.Greater(t, copied, 10.0)
	check(t, m)
}

// An Iter walks what From, Down and Backward yield, one key at a time, a range over one of them
// may be walked again, and Count counts what Rank does.
func TestIters(t *testing.T) {
	t.Parallel()
	m := New[int, int](cmp.Compare[int])
	for i := range 300 {
		m.Set(nil, i*3%301, i)
	}
	pull := func(it *Iter[int, int]) []int {
		var out []int
		for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
			out = append(out, k)
		}
		return out
	}
	seq := func(s func(func(int, int) bool)) []int {
		var out []int
		for k := range s {
			out = append(out, k)
		}
		return out
	}
	for _, k := range []int{-1, 0, 1, 150, 299, 300, 301} {
		var up, down []int
		for _, key := range seq(m.All()) {
			if key >= k {
				up = append(up, key)
			}
			if key <= k {
				down = append([]int{key}, down...)
			}
		}
		assert.Equal(t, up, pull(m.IterFrom(k)), "from %d", k)
		assert.Equal(t, down, pull(m.IterDown(k)), "down %d", k)
		from := m.From(k)
		assert.Equal(t, up, seq(from))
		assert.Equal(t, up, seq(from), "walked again")
	}
	assert.Equal(t, seq(m.Backward()), pull(m.IterBackward()))
	assert.Len(t, seq(m.Backward()), 300)
	assert.Nil(t, pull(New[int, int](cmp.Compare[int]).IterFrom(0)))
	for lo := -2; lo < 304; lo += 3 {
		for hi := lo - 3; hi < 306; hi += 5 {
			assert.Equal(t, max(m.Rank(hi)-m.Rank(lo), 0), m.Count(lo, hi), "[%d, %d)", lo, hi)
		}
	}
}
