package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
)

// Part is the state of one service kept outside this package (contacts, chat, …): a
// copy-on-write table of immutable entries, each with its digest, and a counter for the ids the
// service hands out. The kernel does the rest for every part alike: forks share the table until
// one side writes, the state hash covers it, Diff lists its changed keys, and every write is an
// Action of the history.
//
// A Part value is declared once, by its service, and identifies the part in every state. A state
// holds only the parts that were ever written; an absent part reads as empty and hashes as
// absent, so a state that never touches a service hashes as it did before the service existed.
type Part struct {
	Name  string // unique: orders the parts in the hash and names them in Diff ("contacts")
	Entry string // what one entry is, for the history and for reports ("contact")
	// Indexes are the other orders the service reads the part in (see Index), kept with it.
	Indexes []*Index
}

// Index is a second order of a part's entries, kept by the kernel with the part, so that a
// service can walk the messages of one conversation by time, or the contacts of one manager,
// without reading the part: Keys says under which keys an entry is found in it (none: it is
// not), and the entries under one key follow in natural order of their part keys. Keys must
// depend on the entry alone. An index is not content: it changes neither the state hash nor
// the diff, and forks share it as they share the part (a write changes O(k log n) of its
// nodes, for k keys).
type Index struct {
	Name string
	Keys func(e Entry) []string
	// Refs makes the index hold only the part keys of its entries: a write that keeps the
	// entry's keys in it changes nothing in it, and reading it looks every entry up in the
	// part, in O(log n). For an index of many keys per entry (the words of a text).
	Refs bool
}

// Entry is one immutable value of a part. Digest is its canonical hash (see Digest); it must
// cover everything a reader can see, so that a change of the entry changes the state hash.
type Entry interface {
	Digest() [32]byte
}

// partTable is one version of a part's content: its entries by key, in natural order, and
// their digests.
type partTable struct {
	items pmap.Map[string, *partItem]
	next  int64
	sum   digestSum
	idx   []pmap.Map[ixKey, *partItem] // by Part.Indexes; a nil item in an index of Refs
}

// ixKey is an entry's place in an index: its key there, then its key in the part.
type ixKey struct{ k, key string }

func compareIx(a, b ixKey) int {
	if c := strings.Compare(a.k, b.k); c != 0 {
		return c
	}
	return NaturalCompare(a.key, b.key)
}

// reindex moves the entry at key from its places in the indexes of p as before to its places
// as after (nil: none); before is nil for a new entry. The slice of indexes is shared with
// forks, so it is replaced, never written.
func (t *partTable) reindex(p *Part, o *pmap.Owner, key string, before, after *partItem) {
	if len(p.Indexes) == 0 {
		return
	}
	t.idx = slices.Clone(t.idx)
	for j, x := range p.Indexes {
		var was, now []string
		if before != nil {
			was = x.Keys(before.e)
		}
		if after != nil {
			now = x.Keys(after.e)
		}
		for _, k := range was {
			if !slices.Contains(now, k) {
				t.idx[j].Delete(o, ixKey{k, key})
			}
		}
		for _, k := range now {
			switch {
			case !x.Refs:
				t.idx[j].Set(o, ixKey{k, key}, after)
			case !slices.Contains(was, k):
				t.idx[j].Set(o, ixKey{k, key}, nil)
			}
		}
	}
}

type partItem struct {
	e Entry
	d [32]byte // e.Digest()
}

// partState is a state's handle on one part.
type partState struct {
	p *Part
	t partTable
}

func (s *State) partIndex(p *Part) int {
	for i := range s.parts {
		if s.parts[i].p == p {
			return i
		}
	}
	return -1
}

func (s *State) table(p *Part) (partTable, bool) {
	if i := s.partIndex(p); i >= 0 {
		return s.parts[i].t, true
	}
	return partTable{}, false
}

// writePart changes part p of s with change, creating the part on first use. The slice of parts
// is shared with forks, so it is replaced, never written.
func (s *State) writePart(p *Part, change func(t *partTable)) {
	i := s.partIndex(p)
	parts := slices.Clone(s.parts)
	if i < 0 {
		if p.Name == "" {
			panic("workspace: a Part needs a name")
		}
		for _, q := range s.parts {
			if q.p.Name == p.Name {
				panic("workspace: two parts named " + p.Name)
			}
		}
		t := partTable{items: pmap.New[string, *partItem](NaturalCompare)}
		for range p.Indexes {
			t.idx = append(t.idx, pmap.New[ixKey, *partItem](compareIx))
		}
		parts = append(parts, partState{p: p, t: t})
		slices.SortFunc(parts, func(a, b partState) int { return strings.Compare(a.p.Name, b.p.Name) })
		i = slices.IndexFunc(parts, func(ps partState) bool { return ps.p == p })
	}
	change(&parts[i].t)
	s.parts = parts
}

func partDigest(key string, it *partItem) entryDigest { return digestOf('p', key, &it.d, "") }

// PartGet returns the entry at key of part p.
func (s *State) PartGet(p *Part, key string) (Entry, bool) {
	t, ok := s.table(p)
	if !ok {
		return nil, false
	}
	it, ok := t.items.Get(key)
	if !ok {
		return nil, false
	}
	return it.e, true
}

// PartKeys returns the keys of part p in natural order (see NaturalCompare).
func (s *State) PartKeys(p *Part) []string {
	out := []string{}
	for k := range s.PartEntries(p, "") {
		out = append(out, k)
	}
	return out
}

// PartEntries yields the keys of part p from key from on ("": from the first), in natural
// order, with their entries; a service stops when it has what it needs.
func (s *State) PartEntries(p *Part, from string) iter.Seq2[string, Entry] {
	return func(yield func(string, Entry) bool) {
		t, ok := s.table(p)
		if !ok {
			return
		}
		for k, it := range t.items.From(from) {
			if !yield(k, it.e) {
				return
			}
		}
	}
}

// PartEntriesBack yields the keys of part p at or before key to ("": from the last), in
// reverse natural order, with their entries.
func (s *State) PartEntriesBack(p *Part, to string) iter.Seq2[string, Entry] {
	return func(yield func(string, Entry) bool) {
		t, ok := s.table(p)
		if !ok {
			return
		}
		all := t.items.Backward()
		if to != "" {
			all = t.items.Down(to)
		}
		for k, it := range all {
			if !yield(k, it.e) {
				return
			}
		}
	}
}

// PartIndex yields the entries of part p whose keys in its index x lie in [lo, hi) (hi "": no
// end), in the order of the index (back: the reverse), with those keys: an entry with two keys
// in the range is yielded twice. As with PartEntries, the state must not change while it
// yields. PrefixEnd(prefix) is the hi of the keys that start with prefix, and k+"\x00" that of
// the key k alone.
func (s *State) PartIndex(p *Part, x *Index, lo, hi string, back bool) iter.Seq2[string, Entry] {
	return func(yield func(string, Entry) bool) {
		r := s.indexRange(p, x, lo, hi, back)
		if r.t == nil {
			return
		}
		m := r.t.idx[r.i]
		all := m.From(ixKey{k: lo}) // these walk on the goroutine's stack: no allocation
		switch {
		case back && hi == "":
			all = m.Backward()
		case back:
			all = m.Down(ixKey{k: hi})
		}
		for k, it := range all {
			e, ok := r.entry(k, it)
			if !ok || !yield(k.k, e) {
				return
			}
		}
	}
}

// indexRange is a range of keys of an index of a part, as PartIndex and IndexWalk walk it.
type indexRange struct {
	t      *partTable // nil: the part is absent
	i      int        // the index
	lo, hi string
	back   bool
}

func (s *State) indexRange(p *Part, x *Index, lo, hi string, back bool) indexRange {
	r := indexRange{i: indexOf(p, x), lo: lo, hi: hi, back: back}
	if t, ok := s.table(p); ok {
		r.t = &t
	}
	return r
}

// entry is the entry at k in the index, whose item is it; ok is false when k is past the range
// (in the direction of the walk).
func (r indexRange) entry(k ixKey, it *partItem) (Entry, bool) {
	if r.back && k.k < r.lo || !r.back && r.hi != "" && k.k >= r.hi {
		return nil, false
	}
	if it == nil { // an index of Refs
		it, _ = r.t.items.Get(k.key)
	}
	return it.e, true
}

// IndexWalk is the walk of PartIndex one entry at a time, for a reader that merges several.
type IndexWalk struct {
	r  indexRange
	it *pmap.Iter[ixKey, *partItem] // nil: the walk is over
}

// PartIndexWalk starts the walk of PartIndex(p, x, lo, hi, back).
func (s *State) PartIndexWalk(p *Part, x *Index, lo, hi string, back bool) *IndexWalk {
	w := &IndexWalk{r: s.indexRange(p, x, lo, hi, back)}
	if w.r.t == nil {
		return w
	}
	m := w.r.t.idx[w.r.i]
	switch {
	case !back:
		w.it = m.IterFrom(ixKey{k: lo})
	case hi == "":
		w.it = m.IterBackward()
	default:
		w.it = m.IterDown(ixKey{k: hi}) // no entry has the empty part key, so hi itself is not there
	}
	return w
}

// Next returns the next entry of the walk and its key in the index; ok is false at its end.
func (w *IndexWalk) Next() (k string, e Entry, ok bool) {
	if w.it == nil {
		return "", nil, false
	}
	key, it, ok := w.it.Next()
	if ok {
		e, ok = w.r.entry(key, it)
	}
	if !ok {
		w.it = nil
		return "", nil, false
	}
	return key.k, e, true
}

// PartIndexLen is the number of keys in [lo, hi) of index x of part p (as PartIndex yields
// them), in O(log n).
func (s *State) PartIndexLen(p *Part, x *Index, lo, hi string) int {
	t, ok := s.table(p)
	if !ok {
		return 0
	}
	m := t.idx[indexOf(p, x)]
	if hi == "" {
		return m.Len() - m.Rank(ixKey{k: lo})
	}
	return m.Count(ixKey{k: lo}, ixKey{k: hi})
}

// PrefixEnd is the first string after every string that starts with prefix, as the end of a
// range of PartIndex: "" (no end) when there is none (prefix is empty or all 0xff bytes).
func PrefixEnd(prefix string) string {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] < 0xff {
			return prefix[:i] + string([]byte{prefix[i] + 1})
		}
	}
	return ""
}

func indexOf(p *Part, x *Index) int {
	i := slices.Index(p.Indexes, x)
	if i < 0 {
		panic("workspace: index " + x.Name + " is not an index of part " + p.Name)
	}
	return i
}

// PartLen is the number of entries of part p.
func (s *State) PartLen(p *Part) int {
	t, _ := s.table(p)
	return t.items.Len()
}

// PartCounter is the last number NextNumber handed out for part p (0: none yet).
func (s *State) PartCounter(p *Part) int64 {
	t, _ := s.table(p)
	return t.next
}

// NextNumber advances the id counter of part p and returns its new value (1, 2, …). The counter
// is part of the state hash, like the id counters of mail and calendar.
func (s *State) NextNumber(p *Part) (int64, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	var n int64
	s.writePart(p, func(t *partTable) {
		t.next++
		n = t.next
	})
	return n, nil
}

// PartPut sets the entry at key of part p, and records the action op ("add", "update", …) in
// the history with the entry before and after.
func (s *State) PartPut(p *Part, key, op string, e Entry) error {
	if key == "" {
		return fmt.Errorf("%s: an empty key", p.Name)
	}
	if e == nil {
		return fmt.Errorf("%s: a nil entry", p.Name)
	}
	if err := s.begin(); err != nil {
		return err
	}
	it := &partItem{e: e, d: e.Digest()}
	var old *partItem
	var had bool
	s.writePart(p, func(t *partTable) {
		if old, had = t.items.Set(s.owner(), key, it); had {
			t.sum.sub(partDigest(key, old))
		}
		t.sum.add(partDigest(key, it))
		t.reindex(p, s.owner(), key, old, it)
	})
	a := Action{Kind: p.Entry, Op: op, Key: key, after: e}
	if had {
		a.before = old.e
	}
	s.record(a)
	return nil
}

// PartRemove removes the entry at key of part p (an error when there is none) and records the
// action op in the history.
func (s *State) PartRemove(p *Part, key, op string) error {
	old, had := s.PartGet(p, key)
	if !had {
		return fmt.Errorf("no such %s: %s", p.Entry, key)
	}
	if err := s.begin(); err != nil {
		return err
	}
	s.writePart(p, func(t *partTable) {
		if it, ok := t.items.Delete(s.owner(), key); ok {
			t.sum.sub(partDigest(key, it))
			t.reindex(p, s.owner(), key, it, nil)
		}
	})
	s.record(Action{Kind: p.Entry, Op: op, Key: key, before: old})
	return nil
}

// empty reports whether the table reads as a part that was never written.
func (t *partTable) empty() bool { return t.items.Len() == 0 && t.next == 0 }

// Digest is the canonical hash of a sequence of fields, for Entry.Digest: each field is tagged
// with its type and length-prefixed, so no two different sequences share an encoding. Fields may
// be string, []string, int, int64, bool, or [32]byte (a nested digest); anything else panics.
func Digest(label string, fields ...any) [32]byte {
	b := make([]byte, 0, 128)
	b = appendStr(b, label)
	for _, f := range fields {
		switch x := f.(type) {
		case string:
			b = append(b, 's')
			b = appendStr(b, x)
		case []string:
			b = append(b, 'l')
			b = appendStrs(b, x)
		case int:
			b = append(b, 'i')
			b = binary.AppendVarint(b, int64(x))
		case int64:
			b = append(b, 'i')
			b = binary.AppendVarint(b, x)
		case bool:
			b = append(b, 'b')
			b = appendBool(b, x)
		case [32]byte:
			b = append(b, 'h')
			b = append(b, x[:]...)
		default:
			panic(fmt.Sprintf("workspace.Digest: field of type %T", f))
		}
	}
	return sha256.Sum256(b)
}

// PartChanges is what changed in one part between two states.
type PartChanges struct {
	Part *Part
	Section
}

// diffParts lists the parts present in either state, in name order, with their changes.
func diffParts(before, after *State) []PartChanges {
	var all []*Part
	for _, ps := range before.parts {
		all = append(all, ps.p)
	}
	for _, ps := range after.parts {
		if before.partIndex(ps.p) < 0 {
			all = append(all, ps.p)
		}
	}
	slices.SortFunc(all, func(a, b *Part) int { return strings.Compare(a.Name, b.Name) })
	var out []PartChanges
	for _, p := range all {
		b, _ := before.table(p)
		a, _ := after.table(p)
		empty := pmap.New[string, *partItem](NaturalCompare)
		if b.items.Len() == 0 {
			b.items = empty
		}
		if a.items.Len() == 0 {
			a.items = empty
		}
		sec := diffMap(b.items, a.items, func(x, y *partItem) bool { return x.d == y.d }, nil)
		out = append(out, PartChanges{Part: p, Section: sec})
	}
	return out
}
