package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
)

// ErrFrozen is returned by every mutating method of a frozen state.
var ErrFrozen = errors.New("the workspace is read-only")

// DefaultAddress is the mailbox address of a new state.
const DefaultAddress = "me@example.com"

// hashFormat names the canonical encoding; it changes whenever the encoding does.
const hashFormat = "coworkenv-state/1"

// hashCell caches the hash of one version of a section, and the section's sorted keys. It is
// shared by the states that share that version and replaced when a state clones the section,
// so what it holds always belongs to the content every holder sees. Frozen states read it from
// many goroutines. The sorted keys outlive content changes that keep the key set (a file
// rewritten, a message marked), so hashing after such a change sorts nothing.
type hashCell struct {
	v    atomic.Pointer[[32]byte]
	keys atomic.Pointer[[]string] // sorted, never changed once stored
}

func (c *hashCell) get() *[32]byte { return c.v.Load() }
func (c *hashCell) put(h [32]byte) { c.v.Store(&h) }
func newCell() *hashCell           { return &hashCell{} }

// reset drops the cached hash, and the sorted keys when the key set changed.
func (c *hashCell) reset(keysChanged bool) {
	c.v.Store(nil)
	if keysChanged {
		c.keys.Store(nil)
	}
}

// next returns the cell for a fresh clone of the section: empty, but with the sorted keys when
// the key set is about to stay the same.
func (c *hashCell) next(keysChanged bool) *hashCell {
	n := newCell()
	if !keysChanged {
		n.keys.Store(c.keys.Load())
	}
	return n
}

// sortedKeys returns the cached sorted keys, or makes them with collect and caches them.
func (c *hashCell) sortedKeys(collect func() []string) []string {
	if k := c.keys.Load(); k != nil {
		return *k
	}
	k := collect()
	slices.Sort(k)
	c.keys.Store(&k)
	return k
}

func sameVersion(a, b *hashCell) bool { return a == b }

// State is one workspace. The zero value is not usable: make one with New or Fork.
type State struct {
	frozen bool
	clock  time.Time
	rng    rand.PCG
	fs     fsSec
	mail   mailSec
	cal    calSec
	db     dbSec
	// parts are the sections of services kept outside this package (parts.go), sorted by name;
	// only those ever written are here.
	parts []partState
	hash  atomic.Pointer[string]
	// hist is the history of actions (history.go); actor and turn stamp new ones. None of the
	// three is part of the content or the hash.
	hist  *histNode
	actor string
	turn  int
}

// New returns an empty workspace whose clock reads start and whose random source is seeded
// with seed.
func New(start time.Time, seed int64) *State {
	s := &State{clock: start.UTC(), turn: -1}
	s.rng = *rand.NewPCG(uint64(seed), pcgStream)
	s.fs = fsSec{files: map[string]*fileEntry{}, dirs: map[string]struct{}{}, owned: true, h: newCell()}
	s.mail = mailSec{entrySet: newEntrySet[*msgEntry](), address: DefaultAddress}
	s.cal = calSec{entrySet: newEntrySet[*eventEntry]()}
	s.db = dbSec{colls: map[string]*collection{}, owned: true, mine: map[string]bool{}, h: newCell()}
	return s
}

// Fork returns a new, writable state with the same content, clock and random-source position.
// It copies no entry and no map. Forking a frozen state writes nothing to it and is safe from
// many goroutines at once; forking a writable state makes both sides clone a section on their
// next write to it.
func (s *State) Fork() *State {
	c := &State{clock: s.clock, rng: s.rng, fs: s.fs, mail: s.mail, cal: s.cal, db: s.db, hist: s.hist, actor: s.actor, turn: s.turn}
	c.fs.owned, c.mail.owned, c.cal.owned, c.db.owned, c.db.mine = false, false, false, false, nil
	if len(s.parts) > 0 {
		c.parts = slices.Clone(s.parts)
		for i := range c.parts {
			c.parts[i].owned = false
		}
	}
	if h := s.hash.Load(); h != nil {
		c.hash.Store(h)
	}
	if !s.frozen {
		s.fs.owned, s.mail.owned, s.cal.owned, s.db.owned, s.db.mine = false, false, false, false, nil
		for i := range s.parts {
			s.parts[i].owned = false
		}
	}
	return c
}

// Freeze makes the state read-only for good.
func (s *State) Freeze() { s.frozen = true }

// Frozen reports whether Freeze was called.
func (s *State) Frozen() bool { return s.frozen }

// Files is the file system of s.
func (s *State) Files() *Files { return (*Files)(s) }

// Mail is the mailbox of s.
func (s *State) Mail() *Mail { return (*Mail)(s) }

// Calendar is the calendar of s.
func (s *State) Calendar() *Calendar { return (*Calendar)(s) }

// DB is the record store of s.
func (s *State) DB() *DB { return (*DB)(s) }

// Clock is the virtual clock of s.
func (s *State) Clock() *Clock { return (*Clock)(s) }

// Rand is the random source of s.
func (s *State) Rand() *Rand { return (*Rand)(s) }

// begin is called by every mutation before it changes anything: it refuses a frozen state and
// drops the cached state hash.
func (s *State) begin() error {
	if s.frozen {
		return ErrFrozen
	}
	s.hash.Store(nil)
	return nil
}

// Hash returns "sha256:<hex>" of the canonical encoding of the state (see the package doc).
// Equal content gives equal hashes, whatever order it was built in, except where the order is
// itself observable (ids assigned in order, db insertion order).
func (s *State) Hash() string {
	if h := s.hash.Load(); h != nil {
		return *h
	}
	b := make([]byte, 0, 256)
	b = appendStr(b, hashFormat)
	fh, mh, ch, dh := s.fs.sum(), s.mail.sum("mail"), s.cal.sum("calendar"), s.db.sum()
	b = append(b, fh[:]...)
	b = append(b, mh[:]...)
	b = appendStr(b, s.mail.address)
	b = appendUint(b, uint64(s.mail.next))
	b = append(b, ch[:]...)
	b = appendUint(b, uint64(s.cal.next))
	b = append(b, dh[:]...)
	b = s.appendParts(b)
	b = appendInt(b, s.clock.Unix())
	b = appendInt(b, int64(s.clock.Nanosecond()))
	sum := sha256.Sum256(b)
	str := "sha256:" + hex.EncodeToString(sum[:])
	s.hash.Store(&str)
	return str
}

// Canonical encoding helpers: every variable-length item is length-prefixed, so no two
// different sequences of items encode the same.

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendStrs(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

func appendUint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendInt(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// entrySet is a copy-on-write map of immutable entries, each with its own hash, and the cached
// hash of the whole set. Forks share the map until one of them writes (own).
type entrySet[E interface{ digest() *[32]byte }] struct {
	items map[string]E
	owned bool
	h     *hashCell
}

func newEntrySet[E interface{ digest() *[32]byte }]() entrySet[E] {
	return entrySet[E]{items: map[string]E{}, owned: true, h: newCell()}
}

// own makes the map this state's own before a write; keysChanged says whether the write adds or
// removes a key (the sorted keys are then recomputed).
func (e *entrySet[E]) own(keysChanged bool) {
	if !e.owned {
		e.items = maps.Clone(e.items)
		e.owned = true
		e.h = e.h.next(keysChanged)
		return
	}
	e.h.reset(keysChanged)
}

// sum hashes the set under a label: its size, then each key and entry hash in key order.
func (e *entrySet[E]) sum(label string) [32]byte {
	if h := e.h.get(); h != nil {
		return *h
	}
	ids := e.h.sortedKeys(func() []string { return slices.Collect(maps.Keys(e.items)) })
	b := make([]byte, 0, 16+len(ids)*40)
	b = appendStr(b, label)
	b = appendUint(b, uint64(len(ids)))
	for _, id := range ids {
		b = appendStr(b, id)
		b = append(b, e.items[id].digest()[:]...)
	}
	h := sha256.Sum256(b)
	e.h.put(h)
	return h
}

func (e *msgEntry) digest() *[32]byte   { return &e.sum }
func (e *eventEntry) digest() *[32]byte { return &e.sum }
