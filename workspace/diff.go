package workspace

import (
	"cmp"
	"slices"

	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
)

// Section lists what changed in one part of the workspace. Each list is sorted in natural
// order (see NaturalCompare).
type Section struct{ Added, Changed, Removed []string }

// Changes is what changed between two states: the sections of this package, and the parts of
// the services kept outside it (present in either state, in name order).
type Changes struct {
	Files, Mail, Calendar, DB Section
	Parts                     []PartChanges
}

// Diff returns what changed from before to after: file paths (files only; a folder shows
// through the files it holds), message ids, event ids and db "collection/id" keys. An entry is
// changed when it exists in both with a different value (for mail that includes the folder, the
// read flag and the labels). Neither state is changed. What the two states share (the states
// of one episode share everything they did not write) is not looked at: a diff costs
// O(d log n) for d differences.
func Diff(before, after *State) Changes {
	var ch Changes
	ch.Files = diffMap(before.fs.t, after.fs.t, func(a, b *fileEntry) bool { return a == b || a != nil && b != nil && a.sum == b.sum },
		func(e *fileEntry) bool { return e != nil })
	ch.Mail = diffMap(before.mail.byID, after.mail.byID, func(a, b *msgEntry) bool { return a.sum == b.sum }, nil)
	ch.Calendar = diffMap(before.cal.byID, after.cal.byID, func(a, b *eventEntry) bool { return a.sum == b.sum }, nil)
	ch.DB = emptySection()
	empty := newCollection()
	pmap.Diff(before.db.colls, after.db.colls, func(a, b *collection) bool { return a == b }, func(c pmap.Change[string, *collection]) bool {
		b, a := c.Before, c.After
		if !c.InBefore {
			b = empty
		}
		if !c.InAfter {
			a = empty
		}
		d := diffMap(b.byID, a.byID, func(x, y *record) bool { return x.sum == y.sum }, nil)
		for _, id := range d.Added {
			ch.DB.Added = append(ch.DB.Added, c.Key+"/"+id)
		}
		for _, id := range d.Changed {
			ch.DB.Changed = append(ch.DB.Changed, c.Key+"/"+id)
		}
		for _, id := range d.Removed {
			ch.DB.Removed = append(ch.DB.Removed, c.Key+"/"+id)
		}
		return true
	})
	sortSection(&ch.DB)
	ch.Parts = diffParts(before, after)
	return ch
}

// diffMap lists the keys whose entries differ between two versions of a section (same says
// whether two entries are equal), skipping what the versions share; entry, when not nil, says
// which entries are listed at all (files, not folders).
func diffMap[V any](before, after pmap.Map[string, V], same func(a, b V) bool, entry func(V) bool) Section {
	s := emptySection()
	pmap.Diff(before, after, same, func(c pmap.Change[string, V]) bool {
		inB := c.InBefore && (entry == nil || entry(c.Before))
		inA := c.InAfter && (entry == nil || entry(c.After))
		switch {
		case inB && inA:
			s.Changed = append(s.Changed, c.Key)
		case inB:
			s.Removed = append(s.Removed, c.Key)
		case inA:
			s.Added = append(s.Added, c.Key)
		}
		return true
	})
	sortSection(&s)
	return s
}

// Empty reports whether c lists no change.
func (c Changes) Empty() bool {
	for _, s := range []Section{c.Files, c.Mail, c.Calendar, c.DB} {
		if !s.Empty() {
			return false
		}
	}
	for _, p := range c.Parts {
		if !p.Empty() {
			return false
		}
	}
	return true
}

// Empty reports whether s lists no change.
func (s Section) Empty() bool { return len(s.Added)+len(s.Changed)+len(s.Removed) == 0 }

// Part returns the changes of part p (empty when neither state holds it).
func (c Changes) Part(p *Part) Section {
	for _, pc := range c.Parts {
		if pc.Part == p {
			return pc.Section
		}
	}
	return emptySection()
}

func emptySection() Section {
	return Section{Added: []string{}, Changed: []string{}, Removed: []string{}}
}

func sortSection(s *Section) {
	slices.SortFunc(s.Added, NaturalCompare)
	slices.SortFunc(s.Changed, NaturalCompare)
	slices.SortFunc(s.Removed, NaturalCompare)
}

// NaturalCompare orders strings so that runs of digits compare as numbers: "m2" < "m10",
// "bookings-2" < "bookings-10". Other bytes compare as bytes. Numbers equal in value with
// different leading zeros put the shorter first; it is a total order.
func NaturalCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			i, j := digitRun(a), digitRun(b)
			na, nb := trimZeros(a[:i]), trimZeros(b[:j])
			if len(na) != len(nb) {
				return cmp.Compare(len(na), len(nb))
			}
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			if i != j {
				return cmp.Compare(i, j)
			}
			a, b = a[i:], b[j:]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitRun(s string) int {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
