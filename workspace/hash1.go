package workspace

import (
	"crypto/sha256"
	"slices"
	"strings"
)

// The state hash of HashFormat1, the definition before the incremental hash: kept so that traces
// recorded with it replay with their hashes checked (WithHashFormat). It hashes the sorted list
// of every section's keys and entry digests: O(n log n) per hash, which only the replay of an
// old trace pays.

func (s *State) hash1() [32]byte {
	b := make([]byte, 0, 256)
	b = appendStr(b, hashLabel[HashFormat1])
	fh := sum1(appendStr(nil, "files"), s.fs.t.Len(), func(yield func(string, []byte) bool) {
		for p, e := range s.fs.t.All() { // byte order
			mark := []byte{'d'}
			if e != nil {
				mark = append([]byte{'f'}, e.sum[:]...)
			}
			if !yield(p, mark) {
				return
			}
		}
	})
	b = append(b, fh[:]...)
	mh := sum1ByID(s.mail.byID.All(), appendStr(nil, "mail"), func(e *msgEntry) *[32]byte { return &e.sum })
	b = append(b, mh[:]...)
	b = appendStr(b, s.mail.address)
	b = appendUint(b, uint64(s.mail.next))
	ch := sum1ByID(s.cal.byID.All(), appendStr(nil, "calendar"), func(e *eventEntry) *[32]byte { return &e.sum })
	b = append(b, ch[:]...)
	b = appendUint(b, uint64(s.cal.next))
	dh := sum1(appendStr(nil, "db"), s.db.colls.Len(), func(yield func(string, []byte) bool) {
		for name, c := range s.db.colls.All() { // each collection: its counter, its records in insertion order
			h := sum1(appendUint(nil, uint64(c.next)), c.byID.Len(), func(yield func(string, []byte) bool) {
				for _, r := range c.bySeq.All() {
					if !yield(r.id(), r.sum[:]) {
						return
					}
				}
			})
			if !yield(name, h[:]) {
				return
			}
		}
	})
	b = append(b, dh[:]...)
	for _, ps := range s.parts {
		if ps.t.empty() {
			continue
		}
		h := sum1ByID(ps.t.items.All(), appendInt(appendStr(nil, ps.p.Name), ps.t.next), func(it *partItem) *[32]byte { return &it.d })
		b = append(b, h[:]...)
	}
	b = appendInt(b, s.clock.Unix())
	b = appendInt(b, int64(s.clock.Nanosecond()))
	return sha256.Sum256(b)
}

// sum1 hashes a head, then the number of entries and each entry: its key and what follows it.
func sum1(head []byte, n int, entries func(yield func(key string, rest []byte) bool)) [32]byte {
	b := appendUint(head, uint64(n))
	for k, rest := range entries {
		b = appendStr(b, k)
		b = append(b, rest...)
	}
	return sha256.Sum256(b)
}

// sum1ByID hashes messages, events or a part's entries after a head: each id and digest in byte
// order of the ids (format 1 sorted them so, whatever order the listings use).
func sum1ByID[E any](all func(yield func(string, E) bool), head []byte, digest func(E) *[32]byte) [32]byte {
	type kv struct {
		k string
		d *[32]byte
	}
	var items []kv
	for k, e := range all {
		items = append(items, kv{k, digest(e)})
	}
	slices.SortFunc(items, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	return sum1(head, len(items), func(yield func(string, []byte) bool) {
		for _, it := range items {
			if !yield(it.k, it.d[:]) {
				return
			}
		}
	})
}
