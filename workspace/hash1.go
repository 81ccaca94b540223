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
	fh := s.fs.sum1()
	b = append(b, fh[:]...)
	mh := sum1ByID(s.mail.byID.All(), "mail", func(e *msgEntry) *[32]byte { return &e.sum })
	b = append(b, mh[:]...)
	b = appendStr(b, s.mail.address)
	b = appendUint(b, uint64(s.mail.next))
	ch := sum1ByID(s.cal.byID.All(), "calendar", func(e *eventEntry) *[32]byte { return &e.sum })
	b = append(b, ch[:]...)
	b = appendUint(b, uint64(s.cal.next))
	dh := s.db.sum1()
	b = append(b, dh[:]...)
	for _, ps := range s.parts {
		if ps.t.empty() {
			continue
		}
		h := ps.t.sum1(ps.p.Name)
		b = append(b, h[:]...)
	}
	b = appendInt(b, s.clock.Unix())
	b = appendInt(b, int64(s.clock.Nanosecond()))
	return sha256.Sum256(b)
}

// sum1 hashes the files and folders: each path in byte order (the map's order), with the file's
// digest or a mark for a folder.
func (f *fsSec) sum1() [32]byte {
	b := make([]byte, 0, 16+f.t.Len()*64)
	b = appendStr(b, "files")
	b = appendUint(b, uint64(f.t.Len()))
	for p, e := range f.t.All() {
		b = appendStr(b, p)
		if e != nil {
			b = append(b, 'f')
			b = append(b, e.sum[:]...)
		} else {
			b = append(b, 'd')
		}
	}
	return sha256.Sum256(b)
}

// sum1ByID hashes messages or events under a label: their number, then each id and digest in
// byte order of the ids.
func sum1ByID[E any](all func(yield func(string, E) bool), label string, digest func(E) *[32]byte) [32]byte {
	type kv struct {
		k string
		d *[32]byte
	}
	var items []kv
	for k, e := range all {
		items = append(items, kv{k, digest(e)})
	}
	slices.SortFunc(items, func(a, b kv) int { return strings.Compare(a.k, b.k) })
	b := make([]byte, 0, 16+len(items)*40)
	b = appendStr(b, label)
	b = appendUint(b, uint64(len(items)))
	for _, it := range items {
		b = appendStr(b, it.k)
		b = append(b, it.d[:]...)
	}
	return sha256.Sum256(b)
}

// sum1 hashes the collections by name, each with its counter and its records in insertion order.
func (d *dbSec) sum1() [32]byte {
	b := make([]byte, 0, 16+d.colls.Len()*48)
	b = appendStr(b, "db")
	b = appendUint(b, uint64(d.colls.Len()))
	for name, c := range d.colls.All() {
		b = appendStr(b, name)
		cb := make([]byte, 0, 16+c.byID.Len()*40)
		cb = appendUint(cb, uint64(c.next))
		cb = appendUint(cb, uint64(c.byID.Len()))
		for _, r := range c.bySeq.All() {
			cb = appendStr(cb, r.id())
			cb = append(cb, r.sum[:]...)
		}
		cs := sha256.Sum256(cb)
		b = append(b, cs[:]...)
	}
	return sha256.Sum256(b)
}

// sum1 hashes a part: its name, counter, then each key and entry digest, the keys in byte
// order (format 1 sorted them so, whatever order the part's listings use).
func (t *partTable) sum1(name string) [32]byte {
	var keys []string
	for k := range t.items.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 32+len(keys)*48)
	b = appendStr(b, name)
	b = appendInt(b, t.next)
	b = appendUint(b, uint64(len(keys)))
	for _, k := range keys {
		it, _ := t.items.Get(k)
		b = appendStr(b, k)
		b = append(b, it.d[:]...)
	}
	return sha256.Sum256(b)
}
