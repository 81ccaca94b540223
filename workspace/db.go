package workspace

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
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

// collection is one version of a collection: it is never changed once stored in a dbSec, and a
// write stores a new one (its maps share all but one path with the old one's).
type collection struct {
	byID  pmap.Map[string, *record]
	bySeq pmap.Map[uint64, *record] // insertion order
	next  int                       // last automatic number given
	seq   uint64                    // next insertion number
	sum   digestSum
}

func newCollection() *collection {
	return &collection{byID: pmap.New[string, *record](strings.Compare), bySeq: pmap.New[uint64, *record](cmp.Compare[uint64])}
}

func (r *record) id() string {
	id, _ := r.obj.Get("id")
	return id.(string)
}

// recordDigest is the digest of r for the collection's sum: with the id of the record inserted
// before it ("" for the first), so that the sum covers the insertion order, which All and Find
// show, and not the numbers it is kept by.
func recordDigest(r *record, prev string) entryDigest { return digestOf('r', r.id(), &r.sum, prev) }

// neighbours returns the records inserted just before and just after the one numbered seq.
func (c *collection) neighbours(seq uint64) (prev, next *record) {
	if seq > 0 {
		_, prev, _ = c.bySeq.Floor(seq - 1)
	}
	_, next, _ = c.bySeq.Ceil(seq + 1)
	return prev, next
}

func idOf(r *record) string {
	if r == nil {
		return ""
	}
	return r.id()
}

// insert adds r, new, at the end of the insertion order; o is the writing state's owner of nodes,
// as for replace and remove.
func (c *collection) insert(o *pmap.Owner, r *record) {
	_, last, _ := c.bySeq.Max()
	r.seq = c.seq
	c.seq++
	c.byID.Set(o, r.id(), r)
	c.bySeq.Set(o, r.seq, r)
	c.sum.add(recordDigest(r, idOf(last)))
}

// replace puts r in the place of old, the record of the same id.
func (c *collection) replace(o *pmap.Owner, old, r *record) {
	prev, _ := c.neighbours(old.seq)
	r.seq = old.seq
	c.byID.Set(o, r.id(), r)
	c.bySeq.Set(o, r.seq, r)
	c.sum.sub(recordDigest(old, idOf(prev)))
	c.sum.add(recordDigest(r, idOf(prev)))
}

// remove takes r out; the record after it now follows the one before it.
func (c *collection) remove(o *pmap.Owner, r *record) {
	prev, next := c.neighbours(r.seq)
	c.byID.Delete(o, r.id())
	c.bySeq.Delete(o, r.seq)
	c.sum.sub(recordDigest(r, idOf(prev)))
	if next != nil {
		c.sum.sub(recordDigest(next, r.id()))
		c.sum.add(recordDigest(next, idOf(prev)))
	}
}

// dbSec holds the collections by name. A write replaces the collection it changes.
type dbSec struct {
	colls pmap.Map[string, *collection]
}

func newDBSec() dbSec { return dbSec{colls: pmap.New[string, *collection](strings.Compare)} }

func (d *dbSec) get(coll, id string) (*record, bool) {
	c, ok := d.colls.Get(coll)
	if !ok {
		return nil, false
	}
	return c.byID.Get(id)
}

// writable returns a copy of collection name (a new one when create is true and there is none)
// to change and then store with d.colls.Set; nil when it does not exist and create is false.
func (d *dbSec) writable(name string, create bool) *collection {
	c, ok := d.colls.Get(name)
	switch {
	case ok:
		cp := *c
		return &cp
	case create:
		return newCollection()
	}
	return nil
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
	existing, _ := s.db.colls.Get(coll)
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
			if _, taken := s.db.get(coll, id); !taken {
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
		if _, taken := s.db.get(coll, id); taken {
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
	c := s.db.writable(coll, true)
	if next > c.next {
		c.next = next
	}
	o := s.owner()
	c.insert(o, r)
	s.db.colls.Set(o, coll, c)
	s.record(Action{Kind: KindRecord, Op: "insert", Key: coll + "/" + id, after: r})
	return id, nil
}

// Get returns a copy of record id of collection coll.
func (d *DB) Get(coll, id string) (*jsonv.Object, bool) {
	r, ok := d.db.get(coll, id)
	if !ok {
		return nil, false
	}
	return jsonv.Clone(r.obj).(*jsonv.Object), true
}

// View returns record id of collection coll without copying it: it belongs to the state and
// must not be changed (a caller that converts it, to Starlark or to JSON text, copies it then).
func (d *DB) View(coll, id string) (*jsonv.Object, bool) {
	r, ok := d.db.get(coll, id)
	if !ok {
		return nil, false
	}
	return r.obj, true
}

// Has reports whether collection coll holds record id.
func (d *DB) Has(coll, id string) bool {
	_, ok := d.db.get(coll, id)
	return ok
}

// Find returns copies of the records of coll whose fields equal (jsonv.Equal) every field of
// eq, in insertion order. A field the record lacks equals only null. An unknown collection
// gives an empty list; a nil eq matches every record.
func (d *DB) Find(coll string, eq *jsonv.Object) []*jsonv.Object {
	out := []*jsonv.Object{}
	for r := range d.Scan(coll, eq) {
		out = append(out, jsonv.Clone(r).(*jsonv.Object))
	}
	return out
}

// Scan yields the records of coll whose fields equal every field of eq (as Find), in insertion
// order, without copying them: the caller must not change them. It stops when the caller does,
// so finding the first match, or counting, copies nothing.
func (d *DB) Scan(coll string, eq *jsonv.Object) iter.Seq[*jsonv.Object] {
	return func(yield func(*jsonv.Object) bool) {
		c, ok := d.db.colls.Get(coll)
		if !ok {
			return
		}
		for _, r := range c.bySeq.All() {
			if matches(r.obj, eq) && !yield(r.obj) {
				return
			}
		}
	}
}

// Count is the number of records of coll whose fields equal every field of eq (as Find): O(1)
// for a nil eq.
func (d *DB) Count(coll string, eq *jsonv.Object) int {
	if eq == nil || len(eq.Members) == 0 {
		if c, ok := d.db.colls.Get(coll); ok {
			return c.byID.Len()
		}
		return 0
	}
	n := 0
	for range d.Scan(coll, eq) {
		n++
	}
	return n
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
	old, ok := s.db.get(coll, id)
	if !ok {
		return nil, fmt.Errorf("no record %s in %s", id, coll)
	}
	nv, err := Normalize(fields)
	if err != nil {
		return nil, fmt.Errorf("fields: %v", err)
	}
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
		c := s.db.writable(coll, false)
		o := s.owner()
		c.replace(o, old, r)
		s.db.colls.Set(o, coll, c)
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
	old, ok := s.db.get(coll, id)
	if !ok {
		return fmt.Errorf("no record %s in %s", id, coll)
	}
	_ = s.begin()
	c := s.db.writable(coll, false)
	o := s.owner()
	c.remove(o, old)
	s.db.colls.Set(o, coll, c)
	s.record(Action{Kind: KindRecord, Op: "remove", Key: coll + "/" + id, before: old})
	return nil
}

// Collections returns the names of the collections, sorted.
func (d *DB) Collections() []string {
	out := []string{}
	for name := range d.db.colls.All() {
		out = append(out, name)
	}
	return out
}
