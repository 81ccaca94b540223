package jsonv

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
)

// Decoding an object of 200k keys builds its index once and then looks each key up in it: the
// work is linear in the keys (a scan per key was quadratic: 178 s for 200k keys).
func TestDecodeLargeObjectUsesOneIndex(t *testing.T) {
	const n = 200000
	data := objectJSON(n)
	before := indexBuilds.Load()
	v, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if builds := indexBuilds.Load() - before; builds != 1 {
		t.Fatalf("decoding %d keys built the index %d times, want once", n, builds)
	}
	o := v.(*Object)
	ix := o.idx.Load()
	if ix == nil || !ix.matches(o.Members) || len(ix.pos) != n {
		t.Fatalf("the decoded object has no index matching its %d members", n)
	}
	for i, m := range o.Members {
		if want := "key_" + strconv.Itoa(i); m.Key != want {
			t.Fatalf("member %d is %q, want %q", i, m.Key, want)
		}
		if got, ok := o.Get(m.Key); !ok || got != int64(i%100) {
			t.Fatalf("Get(%q) = %v, %v", m.Key, got, ok)
		}
	}
	if builds := indexBuilds.Load() - before; builds != 1 {
		t.Fatalf("looking up every key rebuilt the index (%d builds)", builds)
	}
	// Small objects never build one.
	if _, err := Decode(objectJSON(indexMin - 1)); err != nil {
		t.Fatal(err)
	}
	if builds := indexBuilds.Load() - before; builds != 1 {
		t.Fatalf("a %d-key object built an index", indexMin-1)
	}
}

// A repeated key keeps its first position and its last value, below and above the index
// threshold.
func TestDecodeDuplicateKeys(t *testing.T) {
	for _, n := range []int{3, indexMin - 1, indexMin, indexMin + 1, 500} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var b []byte
			b = append(b, '{')
			model := &refObject{}
			for i := 0; i < 3*n; i++ {
				if i > 0 {
					b = append(b, ',')
				}
				k := fmt.Sprintf("k%d", (i*7)%n) // every key three times, interleaved
				b = fmt.Appendf(b, "%q:%d", k, i)
				model.set(k, int64(i))
			}
			b = append(b, '}')
			v, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, v.(*Object), model, n)
		})
	}
}

// refObject is Object as it was before the index: linear scans, first member wins.
type refObject struct{ ms []Member }

func (r *refObject) find(k string) int {
	for i, m := range r.ms {
		if m.Key == k {
			return i
		}
	}
	return -1
}

func (r *refObject) set(k string, v Value) {
	if i := r.find(k); i >= 0 {
		r.ms[i].Value = v
		return
	}
	r.ms = append(r.ms, Member{k, v})
}

func (r *refObject) delete(k string) {
	if i := r.find(k); i >= 0 {
		r.ms = append(r.ms[:i:i], r.ms[i+1:]...)
	}
}

func checkAgainst(t *testing.T, o *Object, r *refObject, universe int) {
	t.Helper()
	if err := differs(o, r, universe); err != nil {
		t.Fatal(err)
	}
}

func differs(o *Object, r *refObject, universe int) error {
	if !slices.Equal(o.Members, r.ms) {
		return fmt.Errorf("members %v, want %v", o.Members, r.ms)
	}
	for k := 0; k < universe+2; k++ {
		key := "k" + strconv.Itoa(k)
		got, ok := o.Get(key)
		i := r.find(key)
		if ok != (i >= 0) || ok && got != r.ms[i].Value {
			return fmt.Errorf("Get(%q) = %v, %v; want the value of member %d", key, got, ok, i)
		}
	}
	return nil
}

// Set, Delete, Get and every direct change of Members that callers make (appending, also a
// repeated key; prepending; re-slicing; replacing the slice, also by one of the same length; reordering in place) give what
// linear scans give, on objects that grow and shrink across the index threshold.
func TestObjectIndexFollowsMembers(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for run := 0; run < 16; run++ {
		universe := []int{10, 40, 120, 400}[run%4]
		o, r := &Object{}, &refObject{}
		for step := 0; step < 2000; step++ {
			k := "k" + strconv.Itoa(rng.Intn(universe))
			v := int64(step)
			var op string
			switch x := rng.Intn(100); {
			case x < 45:
				op = "set"
				o.Set(k, v)
				r.set(k, v)
			case x < 65:
				op = "delete"
				o.Delete(k)
				r.delete(k)
			case x < 75:
				op = "append"
				o.Members = append(o.Members, Member{k, v})
				r.ms = append(r.ms, Member{k, v})
			case x < 80:
				op = "prepend"
				o.Members = append([]Member{{k, v}}, o.Members...)
				r.ms = append([]Member{{k, v}}, r.ms...)
			case x < 85:
				op = "truncate"
				n := rng.Intn(len(r.ms) + 1)
				o.Members = o.Members[:n]
				r.ms = r.ms[:n]
			case x < 88 && len(r.ms) > 0:
				op = "shift" // a new slice of the same length
				o.Members = append([]Member{{k, v}}, o.Members[:len(o.Members)-1]...)
				r.ms = append([]Member{{k, v}}, r.ms[:len(r.ms)-1]...)
			case x < 90:
				op = "replace"
				o.Members = slices.Clone(o.Members)
				r.ms = slices.Clone(r.ms)
			case x < 93:
				op = "reorder"
				rng.Shuffle(len(o.Members), func(i, j int) {
					o.Members[i], o.Members[j] = o.Members[j], o.Members[i]
					r.ms[i], r.ms[j] = r.ms[j], r.ms[i]
				})
			case x < 95:
				op = "clone"
				o = Clone(o).(*Object)
			default:
				op = "new"
				o, r = &Object{}, &refObject{}
			}
			// The key of the change first: a stale index shows on a miss before any hit repairs it.
			if got, ok := o.Get(k); ok != (r.find(k) >= 0) || ok && got != r.ms[r.find(k)].Value {
				t.Fatalf("run %d step %d, after %s %s: Get(%q) = %v, %v", run, step, op, k, k, got, ok)
			}
			if err := differs(o, r, universe); err != nil {
				t.Fatalf("run %d step %d, after %s %s: %v", run, step, op, k, err)
			}
		}
	}
}

// Equal of two large objects in different orders looks keys up through the index.
func TestEqualLargeObjects(t *testing.T) {
	a, b := &Object{}, &Object{}
	for i := 0; i < 5000; i++ {
		a.Set("k"+strconv.Itoa(i), int64(i))
	}
	for i := 4999; i >= 0; i-- {
		b.Members = append(b.Members, Member{"k" + strconv.Itoa(i), float64(i)})
	}
	if !Equal(a, b) {
		t.Fatal("not equal")
	}
	b.Set("k17", "x")
	if Equal(a, b) {
		t.Fatal("equal")
	}
	sort.Slice(b.Members, func(i, j int) bool { return b.Members[i].Key < b.Members[j].Key })
	if v, _ := b.Get("k17"); v != "x" {
		t.Fatalf("after sorting in place, k17 = %v", v)
	}
}

// Many goroutines may read one large object at once, the first lookups building its index
// (run with -race).
func TestConcurrentGet(t *testing.T) {
	o := &Object{}
	for i := 0; i < 1000; i++ {
		o.Members = append(o.Members, Member{"k" + strconv.Itoa(i), int64(i)})
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				if v, ok := o.Get("k" + strconv.Itoa(i)); !ok || v != int64(i) {
					t.Errorf("Get(k%d) = %v, %v", i, v, ok)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// An object cut short directly and grown back through Set to its old length, in the same array,
// does not use the index of its old members.
func TestTruncatedThenSetBack(t *testing.T) {
	o := &Object{}
	for i := 0; i < 40; i++ {
		o.Set("a"+strconv.Itoa(i), int64(i))
	}
	if _, ok := o.Get("a1"); !ok || o.idx.Load() == nil {
		t.Fatal("no index")
	}
	o.Members = o.Members[:10]
	for i := 0; i < 30; i++ {
		o.Set("b"+strconv.Itoa(i), int64(i))
	}
	if v, ok := o.Get("b29"); !ok || v != int64(29) {
		t.Fatalf("Get(b29) = %v, %v", v, ok)
	}
	if _, ok := o.Get("a20"); ok {
		t.Fatal("a20 is still there")
	}
}
