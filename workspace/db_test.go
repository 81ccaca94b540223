package workspace

import (
	"math"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func obj(kv ...any) *jsonv.Object { return jsonv.NewObject(kv...) }

func enc(v jsonv.Value) string { return jsonv.MustEncode(v) }

func encAll(os []*jsonv.Object) string {
	vs := make([]jsonv.Value, len(os))
	for i, o := range os {
		vs[i] = o
	}
	return jsonv.MustEncode(vs)
}

func TestDBInsertGet(t *testing.T) {
	d := newWS().DB()
	id, err := d.Insert("bookings", obj("id", "bookings-1", "room", "Tejo"))
	require.NoError(t, err)
	assert.Equal(t, "bookings-1", id)
	id, err = d.Insert("bookings", obj("room", "Douro"))
	require.NoError(t, err)
	assert.Equal(t, "bookings-2", id, "automatic ids skip ids already taken")
	id, err = d.Insert("bookings", obj("id", nil, "room", "Mondego"))
	require.NoError(t, err)
	assert.Equal(t, "bookings-3", id)
	id, err = d.Insert("tickets", obj("title", "x"))
	require.NoError(t, err)
	assert.Equal(t, "tickets-1", id, "counters are per collection")

	r, ok := d.Get("bookings", "bookings-2")
	require.True(t, ok)
	assert.Equal(t, `{"id":"bookings-2","room":"Douro"}`, enc(r), "an assigned id comes first")
	r, _ = d.Get("bookings", "bookings-3")
	assert.Equal(t, `{"id":"bookings-3","room":"Mondego"}`, enc(r), "a null id is replaced in place")
	r.Set("room", "changed")
	r, _ = d.Get("bookings", "bookings-3")
	assert.Equal(t, "Mondego", must(r.Get("room")), "Get returns a copy")
	_, ok = d.Get("bookings", "nope")
	assert.False(t, ok)
	_, ok = d.Get("nope", "x")
	assert.False(t, ok)

	// the stored record is a copy of the one given
	in := obj("tags", []jsonv.Value{"a"}, "n", 3)
	id, err = d.Insert("misc", in)
	require.NoError(t, err)
	in.Set("tags", "changed")
	r, _ = d.Get("misc", id)
	assert.Equal(t, `{"id":"misc-1","tags":["a"],"n":3}`, enc(r))

	_, err = d.Insert("bookings", obj("id", "bookings-1"))
	assert.EqualError(t, err, "bookings already has a record bookings-1")
	_, err = d.Insert("bookings", obj("id", int64(7)))
	assert.EqualError(t, err, "record id must be a string, not integer")
	_, err = d.Insert("bookings", obj("id", ""))
	assert.EqualError(t, err, "record id is empty")
	_, err = d.Insert("", obj())
	assert.EqualError(t, err, "collection name is empty")
	_, err = d.Insert("a/b", obj())
	assert.EqualError(t, err, `collection name "a/b" contains "/"`)
	_, err = d.Insert("x", nil)
	assert.EqualError(t, err, "record is null")
	_, err = d.Insert("x", obj("v", math.NaN()))
	assert.EqualError(t, err, "record: v: NaN is not a JSON number")
	_, err = d.Insert("x", obj("v", struct{}{}))
	assert.EqualError(t, err, "record: v: a struct {} is not a JSON value")
	assert.Equal(t, []string{"bookings", "misc", "tickets"}, d.Collections())

	// explicit ids after automatic ones; removal does not give the number back
	require.NoError(t, d.Remove("bookings", "bookings-3"))
	id, _ = d.Insert("bookings", obj())
	assert.Equal(t, "bookings-4", id)
}

func must(v jsonv.Value, _ bool) jsonv.Value { return v }

func TestDBFindAllUpdateRemove(t *testing.T) {
	d := newWS().DB()
	for _, r := range []*jsonv.Object{
		obj("id", "T-3", "status", "open", "prio", int64(1)),
		obj("id", "T-1", "status", "closed", "prio", 1.0),
		obj("id", "T-2", "status", "open"),
	} {
		_, err := d.Insert("tickets", r)
		require.NoError(t, err)
	}
	assert.Equal(t, `[{"id":"T-3","status":"open","prio":1},{"id":"T-1","status":"closed","prio":1.0},{"id":"T-2","status":"open"}]`, encAll(d.All("tickets")), "insertion order")
	assert.Equal(t, "[]", encAll(d.All("nope")))
	assert.Equal(t, "[]", encAll(d.Find("nope", obj("a", 1))))
	assert.Equal(t, []string{"T-3", "T-2"}, idsOf(d.Find("tickets", obj("status", "open"))))
	assert.Equal(t, []string{"T-3", "T-1"}, idsOf(d.Find("tickets", obj("prio", int64(1)))), "1 equals 1.0")
	assert.Equal(t, []string{"T-2"}, idsOf(d.Find("tickets", obj("prio", nil))), "a missing field equals null")
	assert.Equal(t, []string{"T-3"}, idsOf(d.Find("tickets", obj("status", "open", "prio", 1.0))))
	assert.Equal(t, []string{"T-3", "T-1", "T-2"}, idsOf(d.Find("tickets", obj())))

	r, err := d.Update("tickets", "T-2", obj("status", "closed", "owner", "ana", "prio", nil, "id", "T-2"))
	require.NoError(t, err)
	assert.Equal(t, `{"id":"T-2","status":"closed","owner":"ana","prio":null}`, enc(r), "update adds fields and stores null")
	r.Set("owner", "changed")
	got, _ := d.Get("tickets", "T-2")
	assert.Equal(t, "ana", must(got.Get("owner")))

	_, err = d.Update("tickets", "T-2", obj("id", "T-9"))
	assert.EqualError(t, err, "cannot change the id of tickets/T-2")
	_, err = d.Update("tickets", "T-9", obj())
	assert.EqualError(t, err, "no record T-9 in tickets")
	_, err = d.Update("nope", "T-9", obj())
	assert.EqualError(t, err, "no record T-9 in nope")

	require.NoError(t, d.Remove("tickets", "T-3"))
	assert.Equal(t, []string{"T-1", "T-2"}, idsOf(d.All("tickets")))
	assert.EqualError(t, d.Remove("tickets", "T-3"), "no record T-3 in tickets")
	require.NoError(t, d.Remove("tickets", "T-1"))
	require.NoError(t, d.Remove("tickets", "T-2"))
	assert.Equal(t, []string{"tickets"}, d.Collections(), "an emptied collection stays")
	assert.Equal(t, []string{}, newWS().DB().Collections())
}

func idsOf(os []*jsonv.Object) []string {
	out := []string{}
	for _, o := range os {
		id, _ := o.Get("id")
		out = append(out, id.(string))
	}
	return out
}

func TestNormalize(t *testing.T) {
	v, err := Normalize(obj("a", 1, "b", []string{"x"}, "c", []jsonv.Value{int(2), obj("d", (*jsonv.Object)(nil))}))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1,"b":["x"],"c":[2,{"d":null}]}`, enc(v))
	_, err = Normalize([]jsonv.Value{math.Inf(1)})
	assert.Error(t, err)
}
