package workspace

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typical builds the state the benchmarks use: 50 files of about 1 KB, 20 mails, 10 events and
// 30 records.
func typical(tb testing.TB) *State {
	tb.Helper()
	ws := New(t0, 7)
	fs := ws.Files()
	body := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 18)
	for i := 0; i < 50; i++ {
		if err := fs.Write(fmt.Sprintf("/dir%d/file%02d.txt", i%5, i), body+fmt.Sprint(i)); err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < 20; i++ {
		_, err := ws.Mail().Deliver(Delivery{
			Sender: fmt.Sprintf("p%d@acme.example", i), Subject: fmt.Sprintf("subject %d", i),
			Body: body[:300], Date: fmt.Sprintf("2026-01-0%dT%02d:00:00Z", 1+i%4, i),
			Labels: []string{"work"}, Read: i%3 == 0,
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < 10; i++ {
		_, err := ws.Calendar().Add(Event{Title: fmt.Sprintf("meeting %d", i),
			Start: fmt.Sprintf("2026-01-%02dT10:00:00Z", 6+i), End: fmt.Sprintf("2026-01-%02dT11:00:00Z", 6+i),
			Attendees: []string{"a@acme.example", "b@acme.example"}})
		if err != nil {
			tb.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		_, err := ws.DB().Insert([]string{"tickets", "orders", "crm"}[i%3], jsonv.NewObject(
			"title", fmt.Sprintf("record %d", i), "amount", int64(i*100), "tags", []jsonv.Value{"a", "b"}))
		if err != nil {
			tb.Fatal(err)
		}
	}
	return ws
}

func TestNewIsEmpty(t *testing.T) {
	ws := New(t0, 0)
	assert.False(t, ws.Frozen())
	assert.Equal(t, []string{}, ws.Files().Walk("/"))
	assert.Equal(t, []Message{}, ws.Mail().Messages(Filter{}))
	evs, err := ws.Calendar().Events("", "", "")
	require.NoError(t, err)
	assert.Equal(t, []Event{}, evs)
	assert.Equal(t, []string{}, ws.DB().Collections())
	assert.True(t, strings.HasPrefix(ws.Hash(), "sha256:"))
	assert.Len(t, ws.Hash(), len("sha256:")+64)
	assert.Equal(t, ws.Hash(), New(t0, 99).Hash(), "the seed is not part of the hash")
	assert.NotEqual(t, ws.Hash(), New(t0.Add(time.Second), 0).Hash(), "the clock is")
}

func TestForkIsolation(t *testing.T) {
	parent := typical(t)
	ph := parent.Hash()
	child := parent.Fork()
	assert.Equal(t, ph, child.Hash())

	// child writes: parent unchanged
	require.NoError(t, child.Files().Write("/dir0/file00.txt", "changed"))
	require.NoError(t, child.Files().Remove("/dir1"))
	_, err := child.Mail().Mark("m1", boolp(true), []string{"x"})
	require.NoError(t, err)
	_, err = child.Mail().Send([]string{"a@b"}, nil, "s", "b", nil)
	require.NoError(t, err)
	require.NoError(t, child.Calendar().Remove("e1"))
	_, err = child.DB().Update("tickets", "tickets-1", jsonv.NewObject("title", "changed"))
	require.NoError(t, err)
	_, err = child.DB().Insert("new", jsonv.NewObject())
	require.NoError(t, err)
	require.NoError(t, child.Clock().Advance("1h"))
	require.NoError(t, child.Mail().SetAddress("other@x"))

	assert.Equal(t, ph, parent.Hash())
	assert.Equal(t, ph, typical(t).Hash())
	got, _ := parent.Files().Read("/dir0/file00.txt")
	assert.NotEqual(t, "changed", got)
	assert.True(t, parent.Files().Exists("/dir1"))
	m, _ := parent.Mail().Get("m1")
	assert.Equal(t, []string{"work"}, m.Labels)
	_, ok := parent.Mail().Get("m21")
	assert.False(t, ok)
	_, ok = parent.Calendar().Get("e1")
	assert.True(t, ok)
	r, _ := parent.DB().Get("tickets", "tickets-1")
	assert.Equal(t, "record 0", must(r.Get("title")))
	assert.Equal(t, []string{"crm", "orders", "tickets"}, parent.DB().Collections())
	assert.Equal(t, "me@example.com", parent.Mail().Address())
	assert.Equal(t, t0, parent.Clock().Now())
	assert.NotEqual(t, ph, child.Hash())

	// parent writes after the fork: child unchanged
	child2 := parent.Fork()
	c2h := child2.Hash()
	require.NoError(t, parent.Files().Write("/new.txt", "n"))
	_, err = parent.DB().Update("tickets", "tickets-1", jsonv.NewObject("title", "parent"))
	require.NoError(t, err)
	_, err = parent.Mail().Move("m2", "archive")
	require.NoError(t, err)
	_, err = parent.Calendar().Add(Event{Title: "t", Start: "2026-02-01T10:00:00Z", End: "2026-02-01T11:00:00Z"})
	require.NoError(t, err)
	assert.Equal(t, c2h, child2.Hash())
	assert.False(t, child2.Files().Exists("/new.txt"))
	r, _ = child2.DB().Get("tickets", "tickets-1")
	assert.Equal(t, "record 0", must(r.Get("title")))

	// fork of a fork
	grand := child.Fork()
	gh := grand.Hash()
	require.NoError(t, grand.Files().Write("/g.txt", "g"))
	_, err = grand.DB().Update("tickets", "tickets-1", jsonv.NewObject("title", "grand"))
	require.NoError(t, err)
	assert.False(t, child.Files().Exists("/g.txt"))
	r, _ = child.DB().Get("tickets", "tickets-1")
	assert.Equal(t, "changed", must(r.Get("title")))
	require.NoError(t, child.Files().Write("/c.txt", "c"))
	assert.False(t, grand.Files().Exists("/c.txt"))
	assert.NotEqual(t, gh, grand.Hash())

	// a second write to the same section after the clone goes in place, still isolated
	require.NoError(t, grand.Files().Write("/g2.txt", "g"))
	_, err = grand.DB().Update("tickets", "tickets-1", jsonv.NewObject("title", "grand2"))
	require.NoError(t, err)
	r, _ = child.DB().Get("tickets", "tickets-1")
	assert.Equal(t, "changed", must(r.Get("title")))
}

func TestFrozen(t *testing.T) {
	ws := typical(t)
	ws.Freeze()
	assert.True(t, ws.Frozen())
	h := ws.Hash()
	fs, mb, c, d := ws.Files(), ws.Mail(), ws.Calendar(), ws.DB()
	errs := []error{
		fs.Write("/x", "x"), fs.Remove("/dir0"), fs.Move("/dir0", "/y"), fs.Mkdir("/z"),
		mb.SetAddress("a@b"), ws.Clock().Set("2026-02-01T00:00:00Z"), ws.Clock().Advance("1h"),
		c.Remove("e1"), d.Remove("tickets", "tickets-1"),
	}
	_, err := mb.Deliver(Delivery{Sender: "a@b"})
	errs = append(errs, err)
	_, err = mb.Send([]string{"a@b"}, nil, "", "", nil)
	errs = append(errs, err)
	_, err = mb.Reply("m1", "", false, nil, nil)
	errs = append(errs, err)
	_, err = mb.Forward("m1", []string{"a@b"}, nil, "")
	errs = append(errs, err)
	_, err = mb.Mark("m1", boolp(true), nil)
	errs = append(errs, err)
	_, err = mb.Move("m1", "x")
	errs = append(errs, err)
	_, err = c.Add(Event{Title: "t", Start: "2026-02-01T10:00:00Z", End: "2026-02-01T11:00:00Z"})
	errs = append(errs, err)
	_, err = c.Update("e1", EventPatch{Title: strp("x")})
	errs = append(errs, err)
	_, err = d.Insert("c", jsonv.NewObject())
	errs = append(errs, err)
	_, err = d.Update("tickets", "tickets-1", jsonv.NewObject("a", 1))
	errs = append(errs, err)
	_, err = ws.Rand().Int(1, 6)
	errs = append(errs, err)
	_, err = ws.Rand().IntN(6)
	errs = append(errs, err)
	for i, err := range errs {
		assert.ErrorIs(t, err, ErrFrozen, "mutation %d", i)
	}
	assert.Equal(t, h, ws.Hash())
	// reading still works
	_, err = fs.Read("/dir0/file00.txt")
	assert.NoError(t, err)
	assert.Len(t, mb.Messages(Filter{}), 20)

	child := ws.Fork()
	assert.False(t, child.Frozen())
	require.NoError(t, child.Files().Write("/x", "x"))
	assert.Equal(t, h, ws.Hash())
}

func TestForkFrozenConcurrently(t *testing.T) {
	base := typical(t)
	base.Freeze()
	h := base.Hash()
	var wg sync.WaitGroup
	hashes := make([]string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				c := base.Fork()
				assert.Equal(t, h, c.Hash())
				assert.NoError(t, c.Files().Write(fmt.Sprintf("/g%d.txt", g), fmt.Sprint(i)))
				_, err := c.Mail().Mark("m1", boolp(true), []string{fmt.Sprint(g)})
				assert.NoError(t, err)
				_, err = c.DB().Update("tickets", "tickets-1", jsonv.NewObject("g", int64(g)))
				assert.NoError(t, err)
				assert.NoError(t, c.Calendar().Remove("e2"))
				_, err = c.Rand().IntN(10)
				assert.NoError(t, err)
				gc := c.Fork()
				assert.NoError(t, gc.Files().Remove("/dir0"))
				assert.True(t, c.Files().Exists("/dir0"))
				_ = base.Hash()
				_ = Diff(base, gc)
				hashes[g] = c.Hash()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, h, base.Hash())
	assert.Equal(t, h, typical(t).Hash())
	for g := 1; g < 8; g++ {
		assert.NotEqual(t, hashes[0], hashes[g])
	}
}

func TestHash(t *testing.T) {
	// files written in a different order give the same hash
	a, b := newWS(), newWS()
	require.NoError(t, a.Files().Write("/x/1.txt", "1"))
	require.NoError(t, a.Files().Write("/y.txt", "y"))
	require.NoError(t, a.Files().Mkdir("/e"))
	require.NoError(t, b.Files().Mkdir("/e"))
	require.NoError(t, b.Files().Write("/y.txt", "old"))
	require.NoError(t, b.Files().Write("/y.txt", "y"))
	require.NoError(t, b.Files().Write("/x/1.txt", "1"))
	assert.Equal(t, a.Hash(), b.Hash())

	// equal after undoing a change
	c := a.Fork()
	require.NoError(t, c.Files().Write("/z", ""))
	assert.NotEqual(t, a.Hash(), c.Hash())
	require.NoError(t, c.Files().Remove("/z"))
	assert.Equal(t, a.Hash(), c.Hash())

	// a file and an empty folder are not the same, nor is a moved file
	f1, f2 := newWS(), newWS()
	require.NoError(t, f1.Files().Mkdir("/a"))
	require.NoError(t, f2.Files().Write("/a", ""))
	assert.NotEqual(t, f1.Hash(), f2.Hash())
	f3 := newWS()
	require.NoError(t, f3.Files().Write("/a/b", ""))
	f4 := newWS()
	require.NoError(t, f4.Files().Write("/a/b", ""))
	require.NoError(t, f4.Files().Move("/a/b", "/a/c"))
	assert.NotEqual(t, f3.Hash(), f4.Hash())

	// every change moves the hash
	base := typical(t)
	base.Freeze()
	seen := map[string]string{base.Hash(): "base"}
	changes := map[string]func(s *State) error{
		"write":     func(s *State) error { return s.Files().Write("/dir0/file00.txt", "x") },
		"new file":  func(s *State) error { return s.Files().Write("/new", "") },
		"mkdir":     func(s *State) error { return s.Files().Mkdir("/empty") },
		"rm":        func(s *State) error { return s.Files().Remove("/dir0/file00.txt") },
		"mv":        func(s *State) error { return s.Files().Move("/dir0/file00.txt", "/dir0/file00b.txt") },
		"address":   func(s *State) error { return s.Mail().SetAddress("x@y") },
		"read flag": func(s *State) error { _, err := s.Mail().Mark("m2", boolp(true), nil); return err },
		"labels":    func(s *State) error { _, err := s.Mail().Mark("m1", nil, []string{"work", "x"}); return err },
		"folder":    func(s *State) error { _, err := s.Mail().Move("m1", "archive"); return err },
		"deliver":   func(s *State) error { _, err := s.Mail().Deliver(Delivery{Sender: "a@b"}); return err },
		"event":     func(s *State) error { _, err := s.Calendar().Update("e1", EventPatch{Location: strp("x")}); return err },
		"event rm":  func(s *State) error { return s.Calendar().Remove("e1") },
		"record":    func(s *State) error { _, err := s.DB().Update("crm", "crm-1", jsonv.NewObject("x", nil)); return err },
		"record int": func(s *State) error {
			_, err := s.DB().Update("crm", "crm-1", jsonv.NewObject("amount", 200.0))
			return err
		},
		"record rm":  func(s *State) error { return s.DB().Remove("crm", "crm-1") },
		"insert":     func(s *State) error { _, err := s.DB().Insert("crm", jsonv.NewObject()); return err },
		"collection": func(s *State) error { _, err := s.DB().Insert("z", jsonv.NewObject("id", "a")); return err },
		"clock":      func(s *State) error { return s.Clock().Advance("1s") },
	}
	for name, change := range changes {
		s := base.Fork()
		require.NoError(t, change(s), name)
		h := s.Hash()
		prev, dup := seen[h]
		assert.False(t, dup, "%s gives the same hash as %s", name, prev)
		seen[h] = name
	}

	// counters are part of the hash: deliver then remove by moving is not possible, but two
	// collections emptied differently are
	d1, d2 := newWS(), newWS()
	_, _ = d1.DB().Insert("c", jsonv.NewObject())
	require.NoError(t, d1.DB().Remove("c", "c-1"))
	_, _ = d2.DB().Insert("c", jsonv.NewObject("id", "x"))
	require.NoError(t, d2.DB().Remove("c", "x"))
	assert.NotEqual(t, d1.Hash(), d2.Hash())

	// db insertion order is observable, so it is hashed
	o1, o2 := newWS(), newWS()
	_, _ = o1.DB().Insert("c", jsonv.NewObject("id", "a"))
	_, _ = o1.DB().Insert("c", jsonv.NewObject("id", "b"))
	_, _ = o2.DB().Insert("c", jsonv.NewObject("id", "b"))
	_, _ = o2.DB().Insert("c", jsonv.NewObject("id", "a"))
	assert.NotEqual(t, o1.Hash(), o2.Hash())

	// the hash does not depend on the path of forks
	x := typical(t)
	y := typical(t).Fork().Fork()
	assert.Equal(t, x.Hash(), y.Hash())
	require.NoError(t, x.Files().Write("/q", "q"))
	require.NoError(t, y.Files().Write("/q", "q"))
	assert.Equal(t, x.Hash(), y.Hash())
}

// hashStates are states that exercise every part of the state hash: files and folders, mail in
// several folders, events, collections with removals, a part, the clock.
func hashStates(t *testing.T) map[string]*State {
	t.Helper()
	out := map[string]*State{"empty": New(t0, 0), "typical": typical(t)}
	s := typical(t).Fork()
	require.NoError(t, s.Files().Mkdir("/empty/folder"))
	require.NoError(t, s.Files().Move("/dir1", "/moved/dir1"))
	require.NoError(t, s.Files().Remove("/dir2/file02.txt"))
	_, err := s.Mail().Move("m3", "archive")
	require.NoError(t, err)
	_, err = s.Mail().Mark("m10", boolp(true), []string{"x", "y"})
	require.NoError(t, err)
	_, err = s.Mail().Send([]string{"a@b.example"}, nil, "hi", "body", nil)
	require.NoError(t, err)
	require.NoError(t, s.Calendar().Remove("e2"))
	_, err = s.Calendar().Update("e3", EventPatch{Title: strp("moved")})
	require.NoError(t, err)
	require.NoError(t, s.DB().Remove("orders", "orders-2"))
	_, err = s.DB().Insert("orders", jsonv.NewObject("id", "orders-2", "back", true))
	require.NoError(t, err)
	_, err = s.DB().Update("crm", "crm-1", jsonv.NewObject("amount", 7.5))
	require.NoError(t, err)
	require.NoError(t, s.PartPut(notesPart, "n2", "add", note{"two"}))
	require.NoError(t, s.PartPut(notesPart, "n10", "add", note{"ten"}))
	_, err = s.NextNumber(notesPart)
	require.NoError(t, err)
	require.NoError(t, s.Clock().Advance("90m"))
	out["changed"] = s
	return out
}

// The canonical encodings must not change by accident: replays compare these hashes. Format 1
// is pinned to the hashes the engine gave before format 2 (the same states, hashed by that
// engine), so that old traces replay.
func TestHashPinned(t *testing.T) {
	t.Parallel()
	want := map[int]map[string]string{
		HashFormat1: {
			"changed": "sha256:2df46005d8db2c5dc3130a586debeb844fb0082703844530a41f03aaab8939b1",
			"empty":   "sha256:cd61d9f969168788866601b17258cc02d4bba13e03b79a4e9e30d8579ecba93c",
			"typical": "sha256:bf7ea67bc5d953dcc516aaf871f20ba3cc8dcc06e5294b39d0709ccdab202059",
		},
		HashFormat2: {
			"changed": "sha256:80c4d1c25f49d6b7296c4100c31043144e2a7f5ab2c447ee37fa4320d089b3c4",
			"empty":   "sha256:5bdd7aca41482c7a9f11967301974af104d59eff2afa3e0977f7232999d16633",
			"typical": "sha256:b9d99ab4743f2a45b4bbdd21764d34c432e3a3e6780569cc6adf26968eb5e4c2",
		},
	}
	for name, st := range hashStates(t) {
		for format, hashes := range want {
			h := st.WithHashFormat(format)
			assert.Equal(t, hashes[name], h.Hash(), "format %d, %s", format, name)
			assert.Equal(t, h.Hash(), h.Fork().Hash(), "a fork keeps the format")
			assert.Equal(t, format, h.Fork().HashFormat())
		}
		assert.Equal(t, want[HashFormat][name], st.Hash())
	}
}

func TestDiff(t *testing.T) {
	base := typical(t)
	require.NoError(t, base.Files().Mkdir("/keep"))
	base.Freeze()
	empty := Diff(base, base.Fork())
	assert.True(t, empty.Empty())
	assert.Equal(t, Section{Added: []string{}, Changed: []string{}, Removed: []string{}}, empty.Files)

	s := base.Fork()
	fs := s.Files()
	require.NoError(t, fs.Write("/dir0/file00.txt", "changed"))
	require.NoError(t, fs.Write("/dir0/file05.txt", base.Files().mustRead("/dir0/file05.txt"))) // same content
	require.NoError(t, fs.Write("/n2.txt", ""))
	require.NoError(t, fs.Write("/n10.txt", ""))
	require.NoError(t, fs.Remove("/dir1"))
	require.NoError(t, fs.Mkdir("/empty")) // folders alone are not listed
	require.NoError(t, fs.Remove("/keep"))
	mb := s.Mail()
	_, _ = mb.Mark("m11", boolp(true), nil)
	_, _ = mb.Mark("m9", nil, []string{"x"})
	_, _ = mb.Move("m2", "archive")
	_, _ = mb.Mark("m4", boolp(true), nil) // m4 is read already
	_, _ = mb.Send([]string{"a@b"}, nil, "s", "", nil)
	_, _ = mb.Send([]string{"a@b"}, nil, "s", "", nil)
	c := s.Calendar()
	_ = c.Remove("e10")
	_ = c.Remove("e2")
	_, _ = c.Update("e3", EventPatch{Title: strp("moved")})
	_, _ = c.Add(Event{Title: "n", Start: "2026-03-01T10:00:00Z", End: "2026-03-01T11:00:00Z"})
	d := s.DB()
	_, _ = d.Update("crm", "crm-10", jsonv.NewObject("title", "x"))
	_, _ = d.Update("crm", "crm-2", jsonv.NewObject("title", "record 5")) // crm-2 holds record 5 already
	_ = d.Remove("tickets", "tickets-10")
	_ = d.Remove("tickets", "tickets-2")
	_, _ = d.Insert("new", jsonv.NewObject())
	require.NoError(t, s.Clock().Advance("1h"))

	ch := Diff(base, s)
	assert.Equal(t, Section{
		Added:   []string{"/n2.txt", "/n10.txt"},
		Changed: []string{"/dir0/file00.txt"},
		Removed: []string{"/dir1/file01.txt", "/dir1/file06.txt", "/dir1/file11.txt", "/dir1/file16.txt", "/dir1/file21.txt", "/dir1/file26.txt", "/dir1/file31.txt", "/dir1/file36.txt", "/dir1/file41.txt", "/dir1/file46.txt"},
	}, ch.Files)
	assert.Equal(t, Section{Added: []string{"m21", "m22"}, Changed: []string{"m2", "m9", "m11"}, Removed: []string{}}, ch.Mail)
	assert.Equal(t, Section{Added: []string{"e11"}, Changed: []string{"e3"}, Removed: []string{"e2", "e10"}}, ch.Calendar)
	assert.Equal(t, Section{Added: []string{"new/new-1"}, Changed: []string{"crm/crm-10"}, Removed: []string{"tickets/tickets-2", "tickets/tickets-10"}}, ch.DB)
	assert.False(t, ch.Empty())

	// the other way round
	back := Diff(s, base)
	assert.Equal(t, ch.Mail.Added, back.Mail.Removed)
	assert.Equal(t, ch.DB.Removed, back.DB.Added)
}

func (fs *Files) mustRead(p string) string {
	c, err := fs.Read(p)
	if err != nil {
		panic(err)
	}
	return c
}

func TestNaturalCompare(t *testing.T) {
	in := []string{"m10", "m9", "m1", "bookings-10", "bookings-2", "a", "", "m01", "m1a", "x100y2", "x100y10", "x99"}
	slices.SortFunc(in, NaturalCompare)
	assert.Equal(t, []string{"", "a", "bookings-2", "bookings-10", "m1", "m1a", "m01", "m9", "m10", "x99", "x100y2", "x100y10"}, in)
	assert.Equal(t, 0, NaturalCompare("m1", "m1"))
}

func TestRand(t *testing.T) {
	draw := func(ws *State, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			v, err := ws.Rand().Int(1, 6)
			require.NoError(t, err)
			out[i] = v
		}
		return out
	}
	a, b := New(t0, 42), New(t0, 42)
	da := draw(a, 100)
	assert.Equal(t, da, draw(b, 100), "same seed, same draws")
	assert.NotEqual(t, da, draw(New(t0, 43), 100))
	for _, v := range da {
		assert.True(t, v >= 1 && v <= 6)
	}
	assert.Contains(t, da, int64(1), "lo is drawn")
	assert.Contains(t, da, int64(6), "hi is drawn")

	// a fork continues the same sequence, and the parent is not moved by the child
	p := New(t0, 5)
	draw(p, 3)
	c := p.Fork()
	next := draw(p, 10)
	assert.Equal(t, next, draw(c, 10))
	c2 := p.Fork()
	draw(c2, 5)
	assert.Equal(t, draw(p.Fork(), 3), draw(p, 3))

	_, err := a.Rand().Int(5, 4)
	assert.EqualError(t, err, "empty range: lo 5 is greater than hi 4")
	v, err := a.Rand().Int(3, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(3), v)
	_, err = a.Rand().Int(-1<<63, 1<<63-1)
	require.NoError(t, err)
	_, err = a.Rand().IntN(0)
	assert.Error(t, err)
	n, err := a.Rand().IntN(1)
	require.NoError(t, err)
	assert.Equal(t, 0, n)

	// draws do not change the state hash
	h := a.Hash()
	draw(a, 3)
	assert.Equal(t, h, a.Hash())

	// pinned: draws must not change between releases
	r := New(t0, 1)
	got := []int{}
	for i := 0; i < 8; i++ {
		n, _ := r.Rand().IntN(100)
		got = append(got, n)
	}
	assert.Equal(t, []int{62, 40, 95, 42, 71, 56, 41, 11}, got)
}
