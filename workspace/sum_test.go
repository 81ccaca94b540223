package workspace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomChange makes one random change of any kind to s; it may fail (a missing entry), as an
// agent's call may.
func randomChange(r *rand.Rand, s *State) {
	name := func(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, r.IntN(n)) }
	dir := "/" + name("d", 4) + "/" + name("s", 3)
	switch r.IntN(14) {
	case 0, 1:
		_ = s.Files().Write(dir+"/"+name("f", 6), name("content ", 5))
	case 2:
		_ = s.Files().Remove(dir + "/" + name("f", 6))
	case 3:
		_ = s.Files().Remove("/" + name("d", 4))
	case 4:
		_ = s.Files().Move(dir, "/"+name("d", 4)+"/"+name("moved", 3))
	case 5:
		_ = s.Files().Mkdir(dir + "/" + name("empty", 2))
	case 6:
		_, _ = s.Mail().Deliver(Delivery{Sender: name("p", 5) + "@x.example", Subject: name("s", 9),
			Date: fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+r.IntN(9)), Folder: name("f", 3)})
	case 7:
		_, _ = s.Mail().Move(name("m", 20), name("f", 3))
	case 8:
		_, _ = s.Mail().Mark(name("m", 20), boolp(r.IntN(2) == 0), []string{name("l", 3)})
	case 9:
		_, _ = s.Calendar().Add(Event{Title: name("t", 5), Start: fmt.Sprintf("2026-01-%02dT10:00:00Z", 1+r.IntN(9)),
			End: fmt.Sprintf("2026-01-%02dT10:00:00Z", 10+r.IntN(9))})
	case 10:
		_ = s.Calendar().Remove(name("e", 10))
	case 11:
		_, _ = s.DB().Insert(name("c", 2), jsonv.NewObject("id", name("r", 15), "v", int64(r.IntN(3))))
	case 12:
		if r.IntN(2) == 0 {
			_ = s.DB().Remove(name("c", 2), name("r", 15))
		} else {
			_, _ = s.DB().Update(name("c", 2), name("r", 15), jsonv.NewObject("v", int64(r.IntN(3))))
		}
	case 13:
		if r.IntN(3) == 0 {
			_ = s.PartRemove(notesPart, name("n", 12), "remove")
		} else {
			_ = s.PartPut(notesPart, name("n", 12), "add", note{name("t", 3)})
		}
	}
}

// recount computes every sum and count of s from scratch.
func recount(s *State) (fs, mail, cal digestSum, files, bytes int, colls map[string]digestSum, parts map[string]digestSum) {
	for p, e := range s.fs.t.All() {
		fs.add(fsDigest(p, e))
		if e != nil {
			files++
			bytes += len(e.content)
		}
	}
	for _, e := range s.mail.byID.All() {
		mail.add(e.digest())
	}
	for _, e := range s.cal.byID.All() {
		cal.add(e.digest())
	}
	colls = map[string]digestSum{}
	for name, c := range s.db.colls.All() {
		var sum digestSum
		prev := ""
		for _, r := range c.bySeq.All() {
			sum.add(recordDigest(r, prev))
			prev = r.id()
		}
		colls[name] = sum
	}
	parts = map[string]digestSum{}
	for _, ps := range s.parts {
		var sum digestSum
		for k, it := range ps.t.items.All() {
			sum.add(partDigest(k, it))
		}
		parts[ps.p.Name] = sum
	}
	return
}

// naiveDiff compares two states by what their readers list.
func naiveDiff(a, b *State) Changes {
	files := func(s *State) map[string]string {
		out := map[string]string{}
		for _, p := range s.Files().Walk("/") {
			out[p], _ = s.Files().Read(p)
		}
		return out
	}
	mail := func(s *State) map[string]string {
		out := map[string]string{}
		for _, m := range s.Mail().Messages(Filter{}) {
			out[m.ID] = fmt.Sprint(m)
		}
		return out
	}
	cal := func(s *State) map[string]string {
		out := map[string]string{}
		es, _ := s.Calendar().Events("", "", "")
		for _, e := range es {
			out[e.ID] = fmt.Sprint(e)
		}
		return out
	}
	db := func(s *State) map[string]string {
		out := map[string]string{}
		for _, c := range s.DB().Collections() {
			for _, r := range s.DB().All(c) {
				id, _ := r.Get("id")
				out[c+"/"+id.(string)] = jsonv.MustEncode(r)
			}
		}
		return out
	}
	notes := func(s *State) map[string]string {
		out := map[string]string{}
		for _, k := range s.PartKeys(notesPart) {
			e, _ := s.PartGet(notesPart, k)
			out[k] = fmt.Sprint(e)
		}
		return out
	}
	section := func(x, y map[string]string) Section {
		s := emptySection()
		for k, v := range x {
			if w, ok := y[k]; !ok {
				s.Removed = append(s.Removed, k)
			} else if v != w {
				s.Changed = append(s.Changed, k)
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				s.Added = append(s.Added, k)
			}
		}
		sortSection(&s)
		return s
	}
	ch := Changes{Files: section(files(a), files(b)), Mail: section(mail(a), mail(b)), Calendar: section(cal(a), cal(b)), DB: section(db(a), db(b))}
	if len(a.parts)+len(b.parts) > 0 {
		ch.Parts = []PartChanges{{Part: notesPart, Section: section(notes(a), notes(b))}}
	}
	return ch
}

// Through random changes on chains of forks, every incrementally kept sum and count equals the
// one computed from scratch, Diff equals a comparison of everything the states list, and the
// states forked on the way keep their content and hash.
func TestSumsAndDiffsFollowRandomChanges(t *testing.T) {
	t.Parallel()
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 99))
		base := New(t0, 1)
		for range 200 {
			randomChange(r, base)
		}
		base.Freeze()
		type kept struct {
			s    *State
			hash string
		}
		var versions []kept
		s := base.Fork()
		for step := range 400 {
			if step%40 == 0 {
				versions = append(versions, kept{s, s.Hash()})
				// the state goes on in a fork, and a sibling fork of it changes too: neither
				// changes the other nor the state they came from
				sibling := s.Fork()
				s = s.Fork()
				for range 10 {
					randomChange(r, sibling)
				}
			}
			randomChange(r, s)
			if step%20 != 0 {
				continue
			}
			fs, mail, cal, files, bytes, colls, parts := recount(s)
			require.Equal(t, fs, s.fs.sum, "seed %d step %d: files", seed, step)
			require.Equal(t, [2]int{files, bytes}, [2]int{s.fs.files, s.fs.bytes})
			require.Equal(t, mail, s.mail.sum)
			require.Equal(t, cal, s.cal.sum)
			for name, c := range s.db.colls.All() {
				require.Equal(t, colls[name], c.sum, "collection %s", name)
			}
			for _, ps := range s.parts {
				require.Equal(t, parts[ps.p.Name], ps.t.sum)
			}
			require.Equal(t, naiveDiff(base, s), Diff(base, s), "seed %d step %d", seed, step)
			require.Equal(t, naiveDiff(s, base), Diff(s, base))
		}
		for i, v := range versions {
			v.s.hash.Store(nil)
			assert.Equal(t, v.hash, v.s.Hash(), "version %d", i)
			if i > 0 {
				require.Equal(t, naiveDiff(versions[i-1].s, v.s), Diff(versions[i-1].s, v.s))
			}
		}
	}
}

// Two histories that end with the same records in the same order hash the same, though the
// numbers the records were kept by differ; the same records in another order do not.
func TestRecordHashFollowsOrderNotNumbers(t *testing.T) {
	t.Parallel()
	ins := func(s *State, ids ...string) {
		for _, id := range ids {
			_, err := s.DB().Insert("c", jsonv.NewObject("id", id))
			require.NoError(t, err)
		}
	}
	a, b, c := New(t0, 0), New(t0, 0), New(t0, 0)
	ins(a, "x", "y", "z")
	ins(b, "w", "x", "q", "y", "z")
	require.NoError(t, b.DB().Remove("c", "w"))
	require.NoError(t, b.DB().Remove("c", "q"))
	assert.Equal(t, a.Hash(), b.Hash())
	ins(c, "x", "z", "y")
	assert.NotEqual(t, a.Hash(), c.Hash())
	assert.Equal(t, []string{"x", "y", "z"}, recordIDs(b.DB().All("c")))
}

func recordIDs(rs []*jsonv.Object) []string {
	var out []string
	for _, r := range rs {
		id, _ := r.Get("id")
		out = append(out, id.(string))
	}
	return out
}

// The same content written in any order hashes the same, and the hash of a state is the same in
// every run: the states of two runs of the same changes are equal.
func TestHashIndependentOfOrder(t *testing.T) {
	t.Parallel()
	paths := make([]string, 300)
	for i := range paths {
		paths[i] = fmt.Sprintf("/d%d/f%d", i%7, i)
	}
	hashes := map[string]bool{}
	for seed := range uint64(5) {
		order := slices.Clone(paths)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		s := New(t0, 0)
		for _, p := range order {
			require.NoError(t, s.Files().Write(p, p))
			require.NoError(t, s.PartPut(notesPart, p, "add", note{p}))
		}
		hashes[s.Hash()] = true
	}
	assert.Len(t, hashes, 1)
}

// Many goroutines fork one frozen state and change their forks at once (run with -race): each
// ends with the hash and diff that the same changes give alone, and the frozen state is intact.
func TestConcurrentForksOfAFrozenState(t *testing.T) {
	t.Parallel()
	base := New(t0, 1)
	r := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		randomChange(r, base)
	}
	base.Freeze()
	baseHash := base.Hash()
	run := func(seed uint64) (string, Changes) {
		s := base.Fork()
		r := rand.New(rand.NewPCG(seed, 1))
		for range 100 {
			randomChange(r, s)
		}
		return s.Hash(), Diff(base, s)
	}
	const n = 8
	type result struct {
		hash string
		diff Changes
	}
	want := make([]result, n)
	for i := range want {
		want[i].hash, want[i].diff = run(uint64(i))
	}
	got := make([]result, n)
	done := make(chan int)
	for i := range n {
		go func() {
			got[i].hash, got[i].diff = run(uint64(i))
			done <- i
		}()
	}
	for range n {
		<-done
	}
	assert.Equal(t, want, got)
	base.hash.Store(nil)
	assert.Equal(t, baseHash, base.Hash())
}
