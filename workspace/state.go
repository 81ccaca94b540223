package workspace

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/bits"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
)

// ErrFrozen is returned by every mutating method of a frozen state.
var ErrFrozen = errors.New("the workspace is read-only")

// DefaultAddress is the mailbox address of a new state.
const DefaultAddress = "me@example.com"

// Hash formats: the definition of the state hash. HashFormat is the one Hash gives; a state made
// by WithHashFormat(HashFormat1) hashes as the engine did before, for the replay of old traces.
const (
	// HashFormat1 hashed the sorted list of every section's keys and entry digests: O(n) after
	// every write.
	HashFormat1 = 1
	// HashFormat2 combines each section's entry digests in an order-independent sum kept up to
	// date by every write: O(1) after a write (see the package doc).
	HashFormat2 = 2
	HashFormat  = HashFormat2
)

// hashLabel names the canonical encoding of each hash format.
var hashLabel = [...]string{HashFormat1: "coworkenv-state/1", HashFormat2: "coworkenv-state/2"}

// State is one workspace. The zero value is not usable: make one with New or Fork.
//
// Every section is a persistent sorted map (package pmap) whose nodes never change: a fork
// copies the State struct and shares every node, and a write makes O(log n) new nodes along one
// path. Nothing a state shares is ever written, so a frozen state can be read and forked from
// many goroutines at once.
type State struct {
	frozen bool
	clock  time.Time
	rng    rand.PCG
	// fs, mail and cal are section headers (their maps, sums and counters), shared with forks and
	// never written once shared: a write goes to a copy the state owns (own, fsw, mailw, calw),
	// made at its first write to the section since it was forked. Keeping them out of line keeps
	// a State, and so a fork, small.
	fs   *fsSec
	mail *mailSec
	cal  *calSec
	own  uint8 // the headers this state owns: ownFS | ownMail | ownCal
	db   dbSec
	// tok marks the tree nodes this state made since it was last forked, which it may change in
	// place (pmap.Owner); nil until its first write. A fork drops it on both sides, so nodes
	// that two states share are never changed.
	tok *pmap.Owner
	// parts are the sections of services kept outside this package (parts.go), sorted by name;
	// only those ever written are here. The slice is shared with forks: a write replaces it.
	parts []partState
	hash  atomic.Pointer[string]
	// format is the hash format of Hash; 0 is HashFormat.
	format int
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
	fs, mail, cal := newFsSec(), newMailSec(), newCalSec()
	s.fs, s.mail, s.cal, s.own = &fs, &mail, &cal, ownFS|ownMail|ownCal
	s.db = newDBSec()
	return s
}

const (
	ownFS = 1 << iota
	ownMail
	ownCal
)

// fsw, mailw and calw return the header of their section to write: the state's own.
func (s *State) fsw() *fsSec     { return owned(s, ownFS, &s.fs) }
func (s *State) mailw() *mailSec { return owned(s, ownMail, &s.mail) }
func (s *State) calw() *calSec   { return owned(s, ownCal, &s.cal) }

// owned makes *h, the header of section bit, the state's own: a copy at the first write since
// the state was forked.
func owned[T any](s *State, bit uint8, h **T) *T {
	if s.own&bit == 0 {
		c := **h
		*h = &c
		s.own |= bit
	}
	return *h
}

// Fork returns a new, writable state with the same content, clock and random-source position.
// It copies no entry and no node: O(1). Forking a frozen state writes nothing to it, so it may
// be forked from many goroutines at once; forking a writable state makes both sides copy a
// section header at their next write to the section.
func (s *State) Fork() *State {
	c := &State{clock: s.clock, rng: s.rng, fs: s.fs, mail: s.mail, cal: s.cal, db: s.db, parts: s.parts,
		format: s.format, hist: s.hist, actor: s.actor, turn: s.turn}
	if h := s.hash.Load(); h != nil {
		c.hash.Store(h)
	}
	if !s.frozen {
		s.own, s.tok = 0, nil
	}
	return c
}

// owner returns the owner of the nodes this state makes (see tok).
func (s *State) owner() *pmap.Owner {
	if s.tok == nil {
		s.tok = pmap.NewOwner()
	}
	return s.tok
}

// WithHashFormat returns a state with the content of s (sharing it, as Fork does) whose Hash,
// and the Hash of every state forked from it, follows format (HashFormat1 or HashFormat2): the
// replay of a trace recorded with an older format checks its hashes the old way. The state is
// frozen when s is.
func (s *State) WithHashFormat(format int) *State {
	if format != HashFormat1 && format != HashFormat2 {
		panic("workspace: unknown hash format")
	}
	c := s.Fork()
	c.hash.Store(nil)
	c.format = format
	if format == HashFormat {
		c.format = 0
	}
	c.frozen = s.frozen
	return c
}

// HashFormat is the hash format of s (HashFormat unless set by WithHashFormat).
func (s *State) HashFormat() int {
	if s.format == 0 {
		return HashFormat
	}
	return s.format
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
// itself observable (ids assigned in order, db insertion order). It costs O(1) after a write, in
// HashFormat2: O(1) per section, per collection of ws.db and per part.
func (s *State) Hash() string {
	if h := s.hash.Load(); h != nil {
		return *h
	}
	var sum [32]byte
	if s.HashFormat() == HashFormat1 {
		sum = s.hash1()
	} else {
		sum = s.hash2()
	}
	str := "sha256:" + hex.EncodeToString(sum[:])
	s.hash.Store(&str)
	return str
}

// hash2 is the state hash of HashFormat2: each section's size and sum of entry digests (with
// its counter and the mailbox address), each collection of ws.db by name, each part that holds
// something by name, and the clock.
func (s *State) hash2() [32]byte {
	b := make([]byte, 0, 512)
	b = appendStr(b, hashLabel[HashFormat2])
	b = s.fs.sum.append(b, s.fs.t.Len())
	b = s.mail.sum.append(b, s.mail.byID.Len())
	b = appendStr(b, s.mail.address)
	b = appendUint(b, uint64(s.mail.next))
	b = s.cal.sum.append(b, s.cal.byID.Len())
	b = appendUint(b, uint64(s.cal.next))
	b = appendUint(b, uint64(s.db.colls.Len()))
	for name, c := range s.db.colls.All() {
		b = appendStr(b, name)
		b = appendUint(b, uint64(c.next))
		b = c.sum.append(b, c.byID.Len())
	}
	for _, ps := range s.parts {
		if ps.t.empty() {
			continue
		}
		b = appendStr(b, ps.p.Name)
		b = appendInt(b, ps.t.next)
		b = ps.t.sum.append(b, ps.t.items.Len())
	}
	b = appendInt(b, s.clock.Unix())
	b = appendInt(b, int64(s.clock.Nanosecond()))
	return sha256.Sum256(b)
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

// digestSum is a multiset hash of a section: the sum, modulo 2^512, of one SHA-512 digest per
// entry (of its key, its content's digest and, for records, its place in the insertion order).
// The sum does not depend on the order of the entries, and a write changes it by subtracting
// the digest of what it replaces and adding the digest of what it stores: O(1), where hashing a
// sorted list of every entry was O(n). This is the incremental hash AdHash (Bellare and
// Micciancio). Two different sections with the same sum do not happen by accident; building
// them on purpose takes millions of entries chosen together (Wagner's generalized birthday
// attack needs about 2^22 of them, and 2^45 work, for 512 bits), which is why the sum has 512
// bits and not 256.
type digestSum [8]uint64

// entryDigest is what a digestSum adds up: a SHA-512 digest.
type entryDigest = [64]byte

func (s *digestSum) add(d entryDigest) {
	var c uint64
	for i := range s {
		s[i], c = bits.Add64(s[i], binary.LittleEndian.Uint64(d[8*i:]), c)
	}
}

func (s *digestSum) sub(d entryDigest) {
	var c uint64
	for i := range s {
		s[i], c = bits.Sub64(s[i], binary.LittleEndian.Uint64(d[8*i:]), c)
	}
}

// append adds the number of entries and the sum to a canonical encoding.
func (s *digestSum) append(b []byte, n int) []byte {
	b = appendUint(b, uint64(n))
	for _, w := range s {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// digestOf is the digest of one entry for a digestSum: its kind, key, content digest (none for
// a folder) and, for records, the key of the record inserted before it.
func digestOf(kind byte, key string, content *[32]byte, prev string) entryDigest {
	var buf [160]byte
	b := append(buf[:0], kind)
	b = appendStr(b, key)
	if content != nil {
		b = append(b, content[:]...)
	}
	b = appendStr(b, prev)
	return sha512.Sum512(b)
}
