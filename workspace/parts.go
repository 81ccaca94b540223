package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
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
}

// Entry is one immutable value of a part. Digest is its canonical hash (see Digest); it must
// cover everything a reader can see, so that a change of the entry changes the state hash.
type Entry interface {
	Digest() [32]byte
}

// partTable is one version of a part's content. It is never changed once shared: a state that
// does not own it clones it before writing.
type partTable struct {
	items map[string]Entry
	sums  map[string][32]byte
	next  int64
	h     *hashCell
}

// partState is a state's handle on one part.
type partState struct {
	p     *Part
	t     *partTable
	owned bool
}

func (s *State) partIndex(p *Part) int {
	for i := range s.parts {
		if s.parts[i].p == p {
			return i
		}
	}
	return -1
}

func (s *State) table(p *Part) *partTable {
	if i := s.partIndex(p); i >= 0 {
		return s.parts[i].t
	}
	return nil
}

// ownPart makes the part's table this state's own before a write, creating it on first use;
// keysChanged says whether the write adds or removes a key.
func (s *State) ownPart(p *Part, keysChanged bool) *partTable {
	i := s.partIndex(p)
	if i < 0 {
		if p.Name == "" {
			panic("workspace: a Part needs a name")
		}
		for _, q := range s.parts {
			if q.p.Name == p.Name {
				panic("workspace: two parts named " + p.Name)
			}
		}
		t := &partTable{items: map[string]Entry{}, sums: map[string][32]byte{}, h: newCell()}
		s.parts = append(slices.Clone(s.parts), partState{p: p, t: t, owned: true})
		slices.SortFunc(s.parts, func(a, b partState) int { return strings.Compare(a.p.Name, b.p.Name) })
		return t
	}
	ps := &s.parts[i]
	if !ps.owned {
		old := ps.t
		ps.t = &partTable{items: maps.Clone(old.items), sums: maps.Clone(old.sums), next: old.next, h: old.h.next(keysChanged)}
		ps.owned = true
	} else {
		ps.t.h.reset(keysChanged)
	}
	return ps.t
}

// PartGet returns the entry at key of part p.
func (s *State) PartGet(p *Part, key string) (Entry, bool) {
	t := s.table(p)
	if t == nil {
		return nil, false
	}
	e, ok := t.items[key]
	return e, ok
}

// PartKeys returns the keys of part p in natural order (see NaturalCompare).
func (s *State) PartKeys(p *Part) []string {
	t := s.table(p)
	if t == nil {
		return []string{}
	}
	return slices.Clone(t.sortedKeys())
}

// PartLen is the number of entries of part p.
func (s *State) PartLen(p *Part) int {
	if t := s.table(p); t != nil {
		return len(t.items)
	}
	return 0
}

// PartCounter is the last number NextNumber handed out for part p (0: none yet).
func (s *State) PartCounter(p *Part) int64 {
	if t := s.table(p); t != nil {
		return t.next
	}
	return 0
}

// NextNumber advances the id counter of part p and returns its new value (1, 2, …). The counter
// is part of the state hash, like the id counters of mail and calendar.
func (s *State) NextNumber(p *Part) (int64, error) {
	if err := s.begin(); err != nil {
		return 0, err
	}
	t := s.ownPart(p, false)
	t.next++
	return t.next, nil
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
	old, had := s.PartGet(p, key)
	t := s.ownPart(p, !had)
	t.items[key] = e
	t.sums[key] = e.Digest()
	a := Action{Kind: p.Entry, Op: op, Key: key, after: e}
	if had {
		a.before = old
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
	t := s.ownPart(p, true)
	delete(t.items, key)
	delete(t.sums, key)
	s.record(Action{Kind: p.Entry, Op: op, Key: key, before: old})
	return nil
}

func (t *partTable) sortedKeys() []string {
	return t.h.sortedKeys(func() []string {
		k := slices.Collect(maps.Keys(t.items))
		slices.SortFunc(k, NaturalCompare)
		return k
	})
}

// sum hashes the table: name, counter, then each key and entry digest in natural key order.
// sortedKeys sorts with NaturalCompare, a total order, so the order is canonical.
func (t *partTable) sum(name string) [32]byte {
	if h := t.h.get(); h != nil {
		return *h
	}
	keys := t.sortedKeys()
	b := make([]byte, 0, 32+len(keys)*48)
	b = appendStr(b, name)
	b = appendInt(b, t.next)
	b = appendUint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendStr(b, k)
		d := t.sums[k]
		b = append(b, d[:]...)
	}
	h := sha256.Sum256(b)
	t.h.put(h)
	return h
}

// empty reports whether the table reads as a part that was never written.
func (t *partTable) empty() bool { return len(t.items) == 0 && t.next == 0 }

// appendParts adds the parts that hold something to a state's canonical encoding, in name order.
func (s *State) appendParts(b []byte) []byte {
	for _, ps := range s.parts {
		if ps.t.empty() {
			continue
		}
		h := ps.t.sum(ps.p.Name)
		b = append(b, h[:]...)
	}
	return b
}

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
	var out []PartChanges
	seen := map[*Part]bool{}
	var all []*Part
	for _, ps := range before.parts {
		if !seen[ps.p] {
			seen[ps.p] = true
			all = append(all, ps.p)
		}
	}
	for _, ps := range after.parts {
		if !seen[ps.p] {
			seen[ps.p] = true
			all = append(all, ps.p)
		}
	}
	slices.SortFunc(all, func(a, b *Part) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range all {
		b, a := before.table(p), after.table(p)
		var sec Section
		switch {
		case b != nil && a != nil && sameVersion(b.h, a.h):
			sec = emptySection()
		default:
			var bs, as map[string][32]byte
			if b != nil {
				bs = b.sums
			}
			if a != nil {
				as = a.sums
			}
			sec = diffMaps(bs, as, func(x, y [32]byte) bool { return x == y })
		}
		out = append(out, PartChanges{Part: p, Section: sec})
	}
	return out
}
