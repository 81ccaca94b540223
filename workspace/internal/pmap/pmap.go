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
// A writer that owns nodes may change them in place: Set and Delete take an Owner, mark the nodes
// they make with it, and reuse (rather than copy) the nodes on their path that it marks. A map
// that only its writer can reach (a state between two forks) so makes one node per insert, not a
// path of them. The writer must stop using the owner, and take a new one, as soon as another map
// may share its nodes (a fork): a node is changed only under the owner that made it, so nodes
// made before a fork are never changed again. A nil Owner copies every node on the path.
//
// Why not a B-tree with lazy copy-on-write (github.com/tidwall/btree)? Its Copy gives the source
// tree a new isolation id, a write to a tree it shares with many readers: a frozen state forked
// from many goroutines at once would race unless every read took the tree's lock. Its nodes are
// not reachable, so two versions cannot be compared by what they share. And its path copy after
// a fork is a few nodes of up to 63 items each: several kilobytes a write where this tree copies
// about 20 nodes of 64 bytes.
package pmap

import (
	"iter"
	"math/bits"
)

// Map is a sorted map from K to V. The zero Map is not usable: make one with New. A Map is a
// value: assigning it copies it in O(1), and the copy and the original change independently.
type Map[K, V any] struct {
	root *node[K, V]
	cmp  func(a, b K) int
}

type node[K, V any] struct {
	left, right *node[K, V]
	own         *Owner // the writer that may change the node in place; nil: none
	key         K
	val         V
	size        int
}

// Owner is a writer's mark on the nodes it may change in place (see the package doc).
type Owner struct{ _ byte } // not empty, so that every Owner has its own address

// NewOwner returns a new owner.
func NewOwner() *Owner { return new(Owner) }

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

// Set sets the value of k and returns the value it replaced, if any. o owns the nodes it makes
// and may change them in place later (nil: none).
func (m *Map[K, V]) Set(o *Owner, k K, v V) (old V, replaced bool) {
	m.root, old, replaced = m.insert(o, m.root, k, v)
	return old, replaced
}

func (m *Map[K, V]) insert(o *Owner, n *node[K, V], k K, v V) (*node[K, V], V, bool) {
	if n == nil {
		var zero V
		return &node[K, V]{size: 1, key: k, val: v, own: o}, zero, false
	}
	switch c := m.cmp(k, n.key); {
	case c < 0:
		l, old, rep := m.insert(o, n.left, k, v)
		if rep {
			return mk(o, n, n.key, n.val, l, n.right), old, true
		}
		return balanceL(o, n, n.key, n.val, l, n.right), old, false
	case c > 0:
		r, old, rep := m.insert(o, n.right, k, v)
		if rep {
			return mk(o, n, n.key, n.val, n.left, r), old, true
		}
		return balanceR(o, n, n.key, n.val, n.left, r), old, false
	}
	old := n.val
	return mk(o, n, n.key, v, n.left, n.right), old, true
}

// Delete removes k and returns its value, if it was there. o is as for Set.
func (m *Map[K, V]) Delete(o *Owner, k K) (old V, ok bool) {
	m.root, old, ok = m.remove(o, m.root, k)
	return old, ok
}

func (m *Map[K, V]) remove(o *Owner, n *node[K, V], k K) (*node[K, V], V, bool) {
	if n == nil {
		var zero V
		return nil, zero, false
	}
	switch c := m.cmp(k, n.key); {
	case c < 0:
		l, old, ok := m.remove(o, n.left, k)
		if !ok {
			return n, old, false
		}
		return balanceR(o, n, n.key, n.val, l, n.right), old, true
	case c > 0:
		r, old, ok := m.remove(o, n.right, k)
		if !ok {
			return n, old, false
		}
		return balanceL(o, n, n.key, n.val, n.left, r), old, true
	}
	old := n.val // before glue may reuse n
	return glue(o, n, n.left, n.right), old, true
}

// The balance of a weight-balanced tree with weights size+1: neither side of a node weighs more
// than delta times the other; a rotation is single when the inner grandchild weighs less than
// gamma times the outer one.
const (
	delta = 3
	gamma = 2
)

// mk makes the node of k and v over l and r: n itself when o owns it (n may be nil), else a new
// node that o owns. The arguments are read before n changes.
func mk[K, V any](o *Owner, n *node[K, V], k K, v V, l, r *node[K, V]) *node[K, V] {
	size := l.sz() + r.sz() + 1
	if o != nil && n != nil && n.own == o {
		n.left, n.right, n.key, n.val, n.size = l, r, k, v, size
		return n
	}
	return &node[K, V]{left: l, right: r, own: o, key: k, val: v, size: size}
}

// balanceL makes the node of k and v (n, or in its place) over l and r, when l may have become
// too heavy (an insert on the left, a delete on the right) by at most one key.
func balanceL[K, V any](o *Owner, n *node[K, V], k K, v V, l, r *node[K, V]) *node[K, V] {
	if delta*(r.sz()+1) >= l.sz()+1 {
		return mk(o, n, k, v, l, r)
	}
	if l.right.sz()+1 < gamma*(l.left.sz()+1) { // single rotation right
		inner := mk(o, n, k, v, l.right, r)
		return mk(o, l, l.key, l.val, l.left, inner)
	}
	lr := l.right // double rotation
	a := mk(o, l, l.key, l.val, l.left, lr.left)
	b := mk(o, n, k, v, lr.right, r)
	return mk(o, lr, lr.key, lr.val, a, b)
}

// balanceR is balanceL's mirror image.
func balanceR[K, V any](o *Owner, n *node[K, V], k K, v V, l, r *node[K, V]) *node[K, V] {
	if delta*(l.sz()+1) >= r.sz()+1 {
		return mk(o, n, k, v, l, r)
	}
	if r.left.sz()+1 < gamma*(r.right.sz()+1) { // single rotation left
		inner := mk(o, n, k, v, l, r.left)
		return mk(o, r, r.key, r.val, inner, r.right)
	}
	rl := r.left // double rotation
	a := mk(o, n, k, v, l, rl.left)
	b := mk(o, r, r.key, r.val, rl.right, r.right)
	return mk(o, rl, rl.key, rl.val, a, b)
}

// glue joins the two subtrees of a removed node n (which it may reuse), which were balanced with
// each other.
func glue[K, V any](o *Owner, n, l, r *node[K, V]) *node[K, V] {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.size > r.size:
		k, v, rest := deleteMax(o, l)
		return balanceR(o, n, k, v, rest, r)
	}
	k, v, rest := deleteMin(o, r)
	return balanceL(o, n, k, v, l, rest)
}

func deleteMin[K, V any](o *Owner, n *node[K, V]) (K, V, *node[K, V]) {
	if n.left == nil {
		return n.key, n.val, n.right
	}
	k, v, l := deleteMin(o, n.left)
	return k, v, balanceR(o, n, n.key, n.val, l, n.right)
}

func deleteMax[K, V any](o *Owner, n *node[K, V]) (K, V, *node[K, V]) {
	if n.right == nil {
		return n.key, n.val, n.left
	}
	k, v, r := deleteMax(o, n.right)
	return k, v, balanceL(o, n, n.key, n.val, n.left, r)
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

// Iter walks a map's keys in order one at a time (Next), with a stack of the nodes still to
// visit rather than a goroutine, for a reader that merges the walks of several maps. (From,
// Down and Backward walk on the goroutine's stack, which allocates nothing.)
type Iter[K, V any] struct {
	stack []*node[K, V]
	back  bool
}

// newIter makes a walk whose stack holds a path of the tree without growing: a weight-balanced
// tree of n keys is less than 2.5 log2(n+1) + 1 deep.
func (m Map[K, V]) newIter(back bool) *Iter[K, V] {
	return &Iter[K, V]{stack: make([]*node[K, V], 0, 5*bits.Len(uint(m.Len()))/2+2), back: back}
}

// IterFrom returns a walk of the keys at or after k, in ascending order.
func (m Map[K, V]) IterFrom(k K) *Iter[K, V] {
	it := m.newIter(false)
	for n := m.root; n != nil; {
		if m.cmp(k, n.key) <= 0 {
			it.stack = append(it.stack, n)
			n = n.left
		} else {
			n = n.right
		}
	}
	return it
}

// IterDown returns a walk of the keys at or before k, in descending order.
func (m Map[K, V]) IterDown(k K) *Iter[K, V] {
	it := m.newIter(true)
	for n := m.root; n != nil; {
		if m.cmp(k, n.key) >= 0 {
			it.stack = append(it.stack, n)
			n = n.right
		} else {
			n = n.left
		}
	}
	return it
}

// IterBackward returns a walk of every key in descending order.
func (m Map[K, V]) IterBackward() *Iter[K, V] {
	it := m.newIter(true)
	for n := m.root; n != nil; n = n.right {
		it.stack = append(it.stack, n)
	}
	return it
}

// Next returns the next key of the walk and its value; ok is false at its end.
func (it *Iter[K, V]) Next() (k K, v V, ok bool) {
	if len(it.stack) == 0 {
		return k, v, false
	}
	n := it.stack[len(it.stack)-1]
	it.stack = it.stack[:len(it.stack)-1]
	if it.back {
		for c := n.left; c != nil; c = c.right {
			it.stack = append(it.stack, c)
		}
	} else {
		for c := n.right; c != nil; c = c.left {
			it.stack = append(it.stack, c)
		}
	}
	return n.key, n.val, true
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

// Count is the number of keys in [lo, hi): Rank(hi)-Rank(lo) in one descent to where the two
// part, which for a narrow range is most of the way.
func (m Map[K, V]) Count(lo, hi K) int {
	for n := m.root; n != nil; {
		switch {
		case m.cmp(hi, n.key) <= 0: // the range is left of n
			n = n.left
		case m.cmp(lo, n.key) > 0: // right of n
			n = n.right
		default: // n is in it
			c := 1
			for l := n.left; l != nil; { // the keys at or after lo on the left
				if m.cmp(lo, l.key) <= 0 {
					c += 1 + l.right.sz()
					l = l.left
				} else {
					l = l.right
				}
			}
			for r := n.right; r != nil; { // and before hi on the right
				if m.cmp(hi, r.key) > 0 {
					c += 1 + r.left.sz()
					r = r.right
				} else {
					r = r.left
				}
			}
			return c
		}
	}
	return 0
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
