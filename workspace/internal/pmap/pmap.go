// Package pmap is a persistent sorted map: a weight-balanced binary search tree whose nodes never
// change once made. A write makes new nodes along one path, O(log n) of them, and shares every
// other node with the map it came from, so copying a Map (a root pointer and a comparison) is
// O(1), old versions stay valid, and any number of goroutines may read a version while others
// write their own copies of it.
//
// Because unchanged subtrees are shared by pointer, Diff of two versions of one map skips what
// they share and costs O(d log n) for d differing keys. Every node knows the size of its subtree,
// which keeps the tree balanced (the weight-balanced tree of Adams, with the parameters ⟨3, 2⟩
// that Hirai and Yamamoto proved correct) and makes Len O(1).
//
// Why not a B-tree with lazy copy-on-write (github.com/tidwall/btree)? Its Copy gives the source
// tree a new isolation id, a write to a tree it shares with many readers: a frozen state forked
// from many goroutines at once would race unless every read took the tree's lock. Its nodes are
// not reachable, so two versions cannot be compared by what they share. And its path copy after
// a fork is a few nodes of up to 63 items each: several kilobytes a write where this tree copies
// about 20 nodes of 48 bytes.
package pmap

import "iter"

// Map is a sorted map from K to V. The zero Map is not usable: make one with New. A Map is a
// value: assigning it copies it in O(1), and the copy and the original change independently.
type Map[K, V any] struct {
	root *node[K, V]
	cmp  func(a, b K) int
}

type node[K, V any] struct {
	left, right *node[K, V]
	size        int
	key         K
	val         V
}

// New returns an empty map ordered by cmp, a total order (negative when a < b, 0 when equal).
func New[K, V any](cmp func(a, b K) int) Map[K, V] { return Map[K, V]{cmp: cmp} }

// Len is the number of keys.
func (m Map[K, V]) Len() int { return m.root.sz() }

// Same reports whether m and o are the same version: they share their root, so hold the same
// keys and values.
func (m Map[K, V]) Same(o Map[K, V]) bool { return m.root == o.root }

func (n *node[K, V]) sz() int {
	if n == nil {
		return 0
	}
	return n.size
}

// Get returns the value of k.
func (m Map[K, V]) Get(k K) (v V, ok bool) {
	for n := m.root; n != nil; {
		switch c := m.cmp(k, n.key); {
		case c < 0:
			n = n.left
		case c > 0:
			n = n.right
		default:
			return n.val, true
		}
	}
	return v, false
}

// Set sets the value of k and returns the value it replaced, if any.
func (m *Map[K, V]) Set(k K, v V) (old V, replaced bool) {
	m.root, old, replaced = m.insert(m.root, k, v)
	return old, replaced
}

func (m *Map[K, V]) insert(n *node[K, V], k K, v V) (*node[K, V], V, bool) {
	if n == nil {
		var zero V
		return &node[K, V]{size: 1, key: k, val: v}, zero, false
	}
	switch c := m.cmp(k, n.key); {
	case c < 0:
		l, old, rep := m.insert(n.left, k, v)
		if rep {
			return mk(n.key, n.val, l, n.right), old, true
		}
		return balanceL(n.key, n.val, l, n.right), old, false
	case c > 0:
		r, old, rep := m.insert(n.right, k, v)
		if rep {
			return mk(n.key, n.val, n.left, r), old, true
		}
		return balanceR(n.key, n.val, n.left, r), old, false
	}
	return mk(n.key, v, n.left, n.right), n.val, true
}

// Delete removes k and returns its value, if it was there.
func (m *Map[K, V]) Delete(k K) (old V, ok bool) {
	m.root, old, ok = m.remove(m.root, k)
	return old, ok
}

func (m *Map[K, V]) remove(n *node[K, V], k K) (*node[K, V], V, bool) {
	if n == nil {
		var zero V
		return nil, zero, false
	}
	switch c := m.cmp(k, n.key); {
	case c < 0:
		l, old, ok := m.remove(n.left, k)
		if !ok {
			return n, old, false
		}
		return balanceR(n.key, n.val, l, n.right), old, true
	case c > 0:
		r, old, ok := m.remove(n.right, k)
		if !ok {
			return n, old, false
		}
		return balanceL(n.key, n.val, n.left, r), old, true
	}
	return glue(n.left, n.right), n.val, true
}

// The balance of a weight-balanced tree with weights size+1: neither side of a node weighs more
// than delta times the other; a rotation is single when the inner grandchild weighs less than
// gamma times the outer one.
const (
	delta = 3
	gamma = 2
)

func mk[K, V any](k K, v V, l, r *node[K, V]) *node[K, V] {
	return &node[K, V]{left: l, right: r, size: l.sz() + r.sz() + 1, key: k, val: v}
}

// balanceL makes a node whose left side may have become too heavy (an insert on the left, a
// delete on the right) by at most one key.
func balanceL[K, V any](k K, v V, l, r *node[K, V]) *node[K, V] {
	if delta*(r.sz()+1) >= l.sz()+1 {
		return mk(k, v, l, r)
	}
	if l.right.sz()+1 < gamma*(l.left.sz()+1) { // single rotation right
		return mk(l.key, l.val, l.left, mk(k, v, l.right, r))
	}
	lr := l.right // double rotation
	return mk(lr.key, lr.val, mk(l.key, l.val, l.left, lr.left), mk(k, v, lr.right, r))
}

// balanceR is balanceL's mirror image.
func balanceR[K, V any](k K, v V, l, r *node[K, V]) *node[K, V] {
	if delta*(l.sz()+1) >= r.sz()+1 {
		return mk(k, v, l, r)
	}
	if r.left.sz()+1 < gamma*(r.right.sz()+1) { // single rotation left
		return mk(r.key, r.val, mk(k, v, l, r.left), r.right)
	}
	rl := r.left // double rotation
	return mk(rl.key, rl.val, mk(k, v, l, rl.left), mk(r.key, r.val, rl.right, r.right))
}

// glue joins the two subtrees of a removed node, which were balanced with each other.
func glue[K, V any](l, r *node[K, V]) *node[K, V] {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.size > r.size:
		k, v, rest := deleteMax(l)
		return balanceR(k, v, rest, r)
	}
	k, v, rest := deleteMin(r)
	return balanceL(k, v, l, rest)
}

func deleteMin[K, V any](n *node[K, V]) (K, V, *node[K, V]) {
	if n.left == nil {
		return n.key, n.val, n.right
	}
	k, v, l := deleteMin(n.left)
	return k, v, balanceR(n.key, n.val, l, n.right)
}

func deleteMax[K, V any](n *node[K, V]) (K, V, *node[K, V]) {
	if n.right == nil {
		return n.key, n.val, n.left
	}
	k, v, r := deleteMax(n.right)
	return k, v, balanceL(n.key, n.val, n.left, r)
}

// All yields every key and value in ascending order.
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) { m.root.each(yield) }
}

func (n *node[K, V]) each(yield func(K, V) bool) bool {
	for n != nil {
		if !n.left.each(yield) || !yield(n.key, n.val) {
			return false
		}
		n = n.right
	}
	return true
}

// Backward yields every key and value in descending order.
func (m Map[K, V]) Backward() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) { m.root.eachBack(yield) }
}

func (n *node[K, V]) eachBack(yield func(K, V) bool) bool {
	for n != nil {
		if !n.right.eachBack(yield) || !yield(n.key, n.val) {
			return false
		}
		n = n.left
	}
	return true
}

// From yields the keys at or after k, in ascending order, with their values.
func (m Map[K, V]) From(k K) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) { m.from(m.root, k, yield) }
}

func (m Map[K, V]) from(n *node[K, V], k K, yield func(K, V) bool) bool {
	for n != nil {
		if m.cmp(k, n.key) > 0 {
			n = n.right
			continue
		}
		return m.from(n.left, k, yield) && yield(n.key, n.val) && n.right.each(yield)
	}
	return true
}

// Down yields the keys at or before k, in descending order, with their values.
func (m Map[K, V]) Down(k K) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) { m.down(m.root, k, yield) }
}

func (m Map[K, V]) down(n *node[K, V], k K, yield func(K, V) bool) bool {
	for n != nil {
		if m.cmp(k, n.key) < 0 {
			n = n.left
			continue
		}
		return m.down(n.right, k, yield) && yield(n.key, n.val) && n.left.eachBack(yield)
	}
	return true
}

// Rank is the number of keys before k: with Rank(hi)-Rank(lo), how many keys a range holds,
// in O(log n).
func (m Map[K, V]) Rank(k K) int {
	r := 0
	for n := m.root; n != nil; {
		if m.cmp(k, n.key) <= 0 {
			n = n.left
			continue
		}
		r += n.left.sz() + 1
		n = n.right
	}
	return r
}

// Ceil returns the first key at or after k, and its value.
func (m Map[K, V]) Ceil(k K) (key K, v V, ok bool) {
	for key, v := range m.From(k) {
		return key, v, true
	}
	return key, v, false
}

// Floor returns the last key at or before k, and its value.
func (m Map[K, V]) Floor(k K) (key K, v V, ok bool) {
	for key, v := range m.Down(k) {
		return key, v, true
	}
	return key, v, false
}

// Min returns the first key and its value.
func (m Map[K, V]) Min() (key K, v V, ok bool) {
	for key, v := range m.All() {
		return key, v, true
	}
	return key, v, false
}

// Max returns the last key and its value.
func (m Map[K, V]) Max() (key K, v V, ok bool) {
	for key, v := range m.Backward() {
		return key, v, true
	}
	return key, v, false
}

// Change is one difference between two maps: the key, and its value in each (ok says whether
// the map holds the key).
type Change[K, V any] struct {
	Key      K
	Before   V
	After    V
	InBefore bool
	InAfter  bool
}

// Diff calls fn for each key whose value differs between before and after (same says whether
// two values are equal), in ascending order: present in one only, or in both with values that
// are not the same. It stops when fn returns false. Subtrees the two maps share are skipped
// without being visited, so Diff of two versions of one map costs O(d log n) for d differences.
// Both maps must be ordered by the same comparison.
func Diff[K, V any](before, after Map[K, V], same func(a, b V) bool, fn func(Change[K, V]) bool) {
	a, b := walk[K, V]{}, walk[K, V]{}
	a.push(before.root)
	b.push(after.root)
	for len(a.s) > 0 || len(b.s) > 0 {
		ta, tb := a.top(), b.top()
		aSub, bSub := ta != nil && !ta.single, tb != nil && !tb.single
		switch {
		case aSub && bSub:
			if ta.n == tb.n { // shared: nothing in it differs
				a.pop()
				b.pop()
				continue
			}
			// A subtree can hold the other only when it is larger: open the larger one, both
			// when they are as large (then neither holds the other).
			sa, sb := ta.n.size, tb.n.size
			if sa >= sb {
				a.open()
			}
			if sb >= sa {
				b.open()
			}
			continue
		case aSub:
			a.open()
			continue
		case bSub:
			b.open()
			continue
		}
		var c Change[K, V]
		switch {
		case ta == nil:
			c = Change[K, V]{Key: tb.n.key, After: tb.n.val, InAfter: true}
			b.pop()
		case tb == nil:
			c = Change[K, V]{Key: ta.n.key, Before: ta.n.val, InBefore: true}
			a.pop()
		default:
			switch o := before.cmp(ta.n.key, tb.n.key); {
			case o < 0:
				c = Change[K, V]{Key: ta.n.key, Before: ta.n.val, InBefore: true}
				a.pop()
			case o > 0:
				c = Change[K, V]{Key: tb.n.key, After: tb.n.val, InAfter: true}
				b.pop()
			default:
				a.pop()
				b.pop()
				if ta.n == tb.n || same(ta.n.val, tb.n.val) {
					continue
				}
				c = Change[K, V]{Key: ta.n.key, Before: ta.n.val, After: tb.n.val, InBefore: true, InAfter: true}
			}
		}
		if !fn(c) {
			return
		}
	}
}

// walk is an in-order walk of a tree as a stack of what is left: whole subtrees, and single
// nodes whose left subtree is done.
type walk[K, V any] struct{ s []step[K, V] }

type step[K, V any] struct {
	n      *node[K, V]
	single bool // the node itself, without its subtrees
}

func (w *walk[K, V]) push(n *node[K, V]) {
	if n != nil {
		w.s = append(w.s, step[K, V]{n: n})
	}
}

func (w *walk[K, V]) top() *step[K, V] {
	if len(w.s) == 0 {
		return nil
	}
	t := w.s[len(w.s)-1]
	return &t
}

func (w *walk[K, V]) pop() { w.s = w.s[:len(w.s)-1] }

// open replaces the subtree on top by its right subtree, its node and its left subtree.
func (w *walk[K, V]) open() {
	n := w.s[len(w.s)-1].n
	w.pop()
	w.push(n.right)
	w.s = append(w.s, step[K, V]{n: n, single: true})
	w.push(n.left)
}
