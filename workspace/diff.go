package workspace

import (
	"cmp"
	"slices"
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
// read flag and the labels). Neither state is changed.
func Diff(before, after *State) Changes {
	var ch Changes
	if !sameVersion(before.fs.h, after.fs.h) {
		ch.Files = diffMaps(before.fs.files, after.fs.files, func(a, b *fileEntry) bool { return a.sum == b.sum })
	} else {
		ch.Files = emptySection()
	}
	if !sameVersion(before.mail.h, after.mail.h) {
		ch.Mail = diffMaps(before.mail.items, after.mail.items, func(a, b *msgEntry) bool { return a.sum == b.sum })
	} else {
		ch.Mail = emptySection()
	}
	if !sameVersion(before.cal.h, after.cal.h) {
		ch.Calendar = diffMaps(before.cal.items, after.cal.items, func(a, b *eventEntry) bool { return a.sum == b.sum })
	} else {
		ch.Calendar = emptySection()
	}
	ch.DB = emptySection()
	if !sameVersion(before.db.h, after.db.h) {
		names := map[string]bool{}
		for n := range before.db.colls {
			names[n] = true
		}
		for n := range after.db.colls {
			names[n] = true
		}
		for n := range names {
			var b, a map[string]*record
			if c := before.db.colls[n]; c != nil {
				b = c.recs
			}
			if c := after.db.colls[n]; c != nil {
				a = c.recs
			}
			d := diffMaps(b, a, func(x, y *record) bool { return x.sum == y.sum })
			for _, id := range d.Added {
				ch.DB.Added = append(ch.DB.Added, n+"/"+id)
			}
			for _, id := range d.Changed {
				ch.DB.Changed = append(ch.DB.Changed, n+"/"+id)
			}
			for _, id := range d.Removed {
				ch.DB.Removed = append(ch.DB.Removed, n+"/"+id)
			}
		}
		sortSection(&ch.DB)
	}
	ch.Parts = diffParts(before, after)
	return ch
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

func diffMaps[E any](before, after map[string]E, same func(a, b E) bool) Section {
	s := emptySection()
	kept := 0
	for k, b := range before {
		a, ok := after[k]
		switch {
		case !ok:
			s.Removed = append(s.Removed, k)
			continue
		case !same(b, a):
			s.Changed = append(s.Changed, k)
		}
		kept++
	}
	if kept < len(after) { // some key of after is new
		for k := range after {
			if _, ok := before[k]; !ok {
				s.Added = append(s.Added, k)
			}
		}
	}
	sortSection(&s)
	return s
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
