package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
)

// DB holds named collections of records for task-defined services. A record is a JSON object
// with a string "id", unique within its collection. Records go in and come out as deep copies.
//
// A collection exists from its first insert on, and stays (with its id counter) when its
// records are removed. Its records keep their insertion order, which All and Find follow and
// the state hash includes.
type DB State

type record struct {
	obj *jsonv.Object // never changed
	seq uint64        // insertion order
	sum [32]byte
}

type collection struct {
	recs map[string]*record
	next int    // last automatic number given
	seq  uint64 // next insertion number
	h    *hashCell
}

// clone copies the collection before a write; keysChanged says whether the write adds or
// removes a record (the cached insertion order is kept otherwise).
func (c *collection) clone(keysChanged bool) *collection {
	return &collection{recs: maps.Clone(c.recs), next: c.next, seq: c.seq, h: c.h.next(keysChanged)}
}

// orderedIDs returns the record ids in insertion order, cached in the hash cell's keys until
// the key set changes (an update keeps it).
func (c *collection) orderedIDs() []string {
	if k := c.h.keys.Load(); k != nil {
		return *k
	}
	rs := c.ordered()
	ids := make([]string, len(rs))
	for i, r := range rs {
		id, _ := r.obj.Get("id")
		ids[i] = id.(string)
	}
	c.h.keys.Store(&ids)
	return ids
}

// ordered returns the records in insertion order.
func (c *collection) ordered() []*record {
	rs := slices.Collect(maps.Values(c.recs))
	slices.SortFunc(rs, func(a, b *record) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	return rs
}

func (c *collection) sum() [32]byte {
	if h := c.h.get(); h != nil {
		return *h
	}
	ids := c.orderedIDs()
	b := make([]byte, 0, 16+len(ids)*40)
	b = appendUint(b, uint64(c.next))
	b = appendUint(b, uint64(len(ids)))
	for _, id := range ids {
		b = appendStr(b, id)
		b = append(b, c.recs[id].sum[:]...)
	}
	h := sha256.Sum256(b)
	c.h.put(h)
	return h
}

type dbSec struct {
	colls map[string]*collection
	owned bool            // colls is private to this state
	mine  map[string]bool // collections cloned by this state since it was last forked
	h     *hashCell
}

func (d *dbSec) sum() [32]byte {
	if h := d.h.get(); h != nil {
		return *h
	}
	names := slices.Collect(maps.Keys(d.colls))
	slices.Sort(names)
	b := make([]byte, 0, 16+len(names)*48)
	b = appendStr(b, "db")
	b = appendUint(b, uint64(len(names)))
	for _, n := range names {
		b = appendStr(b, n)
		cs := d.colls[n].sum()
		b = append(b, cs[:]...)
	}
	h := sha256.Sum256(b)
	d.h.put(h)
	return h
}

// writable returns collection name, private to this state, ready to be changed; nil when it
// does not exist and create is false.
// keysChanged says whether the write adds or removes a record.
func (d *dbSec) writable(name string, create, keysChanged bool) *collection {
	if !d.owned {
		d.colls = maps.Clone(d.colls)
		d.owned = true
		d.mine = map[string]bool{}
		d.h = newCell()
	} else {
		d.h.reset(true)
	}
	c := d.colls[name]
	switch {
	case c == nil:
		if !create {
			return nil
		}
		c = &collection{recs: map[string]*record{}, h: newCell()}
		d.colls[name] = c
		d.mine[name] = true
	case !d.mine[name]:
		c = c.clone(keysChanged)
		d.colls[name] = c
		d.mine[name] = true
	default:
		c.h.reset(keysChanged)
	}
	return c
}

func checkCollection(name string) error {
	if name == "" {
		return errors.New("collection name is empty")
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("collection name %q contains \"/\"", name)
	}
	return nil
}

// newRecord makes the stored form of obj: a normalised deep copy (see Normalize) and its hash.
func newRecord(obj *jsonv.Object, seq uint64) (*record, error) {
	enc, err := jsonv.Encode(obj)
	if err != nil {
		return nil, err
	}
	if len(enc) > limits.RecordSize {
		return nil, fmt.Errorf("record is %d bytes, over the %s limit of a record", len(enc), limits.Bytes(limits.RecordSize))
	}
	return &record{obj: obj, seq: seq, sum: sha256.Sum256(enc)}, nil
}

// Normalize returns a deep copy of v in jsonv's value model: int becomes int64, []string
// becomes []Value, and anything that is not JSON (other Go types, NaN, infinities) is an error.
func Normalize(v jsonv.Value) (jsonv.Value, error) {
	switch x := v.(type) {
	case nil, bool, int64, string:
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v is not a JSON number", x)
		}
		return x, nil
	case []string:
		out := make([]jsonv.Value, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case []jsonv.Value:
		out := make([]jsonv.Value, len(x))
		for i, e := range x {
			n, err := Normalize(e)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case *jsonv.Object:
		if x == nil {
			return nil, nil
		}
		out := &jsonv.Object{Members: make([]jsonv.Member, 0, len(x.Members))}
		for _, m := range x.Members {
			n, err := Normalize(m.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", m.Key, err)
			}
			out.Set(m.Key, n)
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %T is not a JSON value", v)
}

// Insert stores a copy of rec in collection coll (created when new) and returns its id. When
// rec has no "id" (or a null one) it gets "<coll>-<n>", n counting per collection from 1 and
// skipping ids already taken; the id then comes first in the record. An id that is not a
// string, is empty or is already taken is an error.
func (d *DB) Insert(coll string, rec *jsonv.Object) (string, error) {
	s := (*State)(d)
	if s.frozen {
		return "", ErrFrozen
	}
	if err := checkCollection(coll); err != nil {
		return "", err
	}
	if rec == nil {
		return "", errors.New("record is null")
	}
	nv, err := Normalize(rec)
	if err != nil {
		return "", fmt.Errorf("record: %v", err)
	}
	obj := nv.(*jsonv.Object)
	existing := s.db.colls[coll]
	idv, hasID := obj.Get("id")
	var id string
	next := 0
	if existing != nil {
		next = existing.next
	}
	switch x := idv.(type) {
	case nil:
		for {
			next++
			id = coll + "-" + strconv.Itoa(next)
			if existing == nil || existing.recs[id] == nil {
				break
			}
		}
		if hasID {
			obj.Set("id", id)
		} else {
			obj.Members = append([]jsonv.Member{{Key: "id", Value: id}}, obj.Members...)
		}
	case string:
		if x == "" {
			return "", errors.New("record id is empty")
		}
		id = x
		if existing != nil && existing.recs[id] != nil {
			return "", fmt.Errorf("%s already has a record %s", coll, id)
		}
	default:
		return "", fmt.Errorf("record id must be a string, not %s", jsonv.TypeName(idv))
	}
	r, err := newRecord(obj, 0)
	if err != nil {
		return "", err
	}
	_ = s.begin()
	c := s.db.writable(coll, true, true)
	if next > c.next {
		c.next = next
	}
	r.seq = c.seq
	c.seq++
	c.recs[id] = r
	s.record(Action{Kind: KindRecord, Op: "insert", Key: coll + "/" + id, after: r})
	return id, nil
}

// Get returns a copy of record id of collection coll.
func (d *DB) Get(coll, id string) (*jsonv.Object, bool) {
	c := d.db.colls[coll]
	if c == nil || c.recs[id] == nil {
		return nil, false
	}
	return jsonv.Clone(c.recs[id].obj).(*jsonv.Object), true
}

// Has reports whether collection coll holds record id.
func (d *DB) Has(coll, id string) bool {
	c := d.db.colls[coll]
	return c != nil && c.recs[id] != nil
}

// Find returns copies of the records of coll whose fields equal (jsonv.Equal) every field of
// eq, in insertion order. A field the record lacks equals only null. An unknown collection
// gives an empty list; a nil eq matches every record.
func (d *DB) Find(coll string, eq *jsonv.Object) []*jsonv.Object {
	c := d.db.colls[coll]
	out := []*jsonv.Object{}
	if c == nil {
		return out
	}
	for _, id := range c.orderedIDs() {
		if r := c.recs[id]; matches(r.obj, eq) {
			out = append(out, jsonv.Clone(r.obj).(*jsonv.Object))
		}
	}
	return out
}

func matches(obj, eq *jsonv.Object) bool {
	if eq == nil {
		return true
	}
	for _, m := range eq.Members {
		v, ok := obj.Get(m.Key)
		if !ok {
			if m.Value != nil {
				return false
			}
			continue
		}
		if !jsonv.Equal(v, m.Value) {
			return false
		}
	}
	return true
}

// All returns copies of every record of coll, in insertion order ([] for an unknown one).
func (d *DB) All(coll string) []*jsonv.Object { return d.Find(coll, nil) }

// Update sets the given fields of record id of coll (adding those it lacks; a null value stores
// null) and returns a copy of the record. Giving "id" a different value is an error.
func (d *DB) Update(coll, id string, fields *jsonv.Object) (*jsonv.Object, error) {
	s := (*State)(d)
	if s.frozen {
		return nil, ErrFrozen
	}
	c := s.db.colls[coll]
	if c == nil || c.recs[id] == nil {
		return nil, fmt.Errorf("no record %s in %s", id, coll)
	}
	nv, err := Normalize(fields)
	if err != nil {
		return nil, fmt.Errorf("fields: %v", err)
	}
	old := c.recs[id]
	obj := jsonv.Clone(old.obj).(*jsonv.Object)
	if f, _ := nv.(*jsonv.Object); f != nil {
		for _, m := range f.Members {
			if m.Key == "id" {
				if v, ok := m.Value.(string); !ok || v != id {
					return nil, fmt.Errorf("cannot change the id of %s/%s", coll, id)
				}
				continue
			}
			obj.Set(m.Key, m.Value)
		}
	}
	r, err := newRecord(obj, old.seq)
	if err != nil {
		return nil, err
	}
	if r.sum != old.sum {
		_ = s.begin()
		s.db.writable(coll, false, false).recs[id] = r
		s.record(Action{Kind: KindRecord, Op: "update", Key: coll + "/" + id, before: old, after: r})
	}
	return jsonv.Clone(obj).(*jsonv.Object), nil
}

// Remove deletes record id of coll.
func (d *DB) Remove(coll, id string) error {
	s := (*State)(d)
	if s.frozen {
		return ErrFrozen
	}
	c := s.db.colls[coll]
	if c == nil || c.recs[id] == nil {
		return fmt.Errorf("no record %s in %s", id, coll)
	}
	_ = s.begin()
	old := c.recs[id]
	delete(s.db.writable(coll, false, true).recs, id)
	s.record(Action{Kind: KindRecord, Op: "remove", Key: coll + "/" + id, before: old})
	return nil
}

// Collections returns the names of the collections, sorted.
func (d *DB) Collections() []string {
	out := slices.Collect(maps.Keys(d.db.colls))
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}
