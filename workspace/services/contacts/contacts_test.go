package contacts_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services/contacts"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDigestCoversEveryField changes each field of a contact in turn: each change must change
// the digest.
func TestDigestCoversEveryField(t *testing.T) {
	base := contacts.Contact{ID: "c1", Name: "Greta Vogel", Aliases: []string{"Gretje"}}
	d0 := base.Digest()
	rt := reflect.TypeOf(base)
	for i := range rt.NumField() {
		c := base
		c.Aliases = []string{"Gretje"}
		f := reflect.ValueOf(&c).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"Gretje", "x"}))
		default:
			t.Fatalf("field %s of kind %s: extend this test", rt.Field(i).Name, f.Kind())
		}
		assert.NotEqual(t, d0, c.Digest(), "changing %s does not change the digest", rt.Field(i).Name)
	}
	// fields are length-prefixed: moving text from one field to the next changes the digest
	a := contacts.Contact{Name: "ab", Email: "c"}
	b := contacts.Contact{Name: "a", Email: "bc"}
	assert.NotEqual(t, a.Digest(), b.Digest())
}

// book seeds a state with a small company: a directory with a manager chain and a personal entry.
func book(t *testing.T) *workspace.State {
	t.Helper()
	st := workspace.New(start, 1)
	_, err := contacts.Add(st, []*contacts.Contact{
		{Name: "Ava Jansen", Email: "ava.jansen@verdant.example", Role: "operations director", Team: "Operations", Company: "Verdant Freight", Location: "Rotterdam", Source: contacts.Directory},
		{Name: "Mehmet Aydin", Email: "mehmet.aydin@verdant.example", Role: "dispatch lead", Team: "Dispatch", Manager: "c1", Company: "Verdant Freight", Location: "Antwerp", Source: contacts.Directory},
		{Name: "Greta Vogel", Email: "greta.vogel@verdant.example", Phone: "+32 3 555 0117", Role: "dispatcher", Team: "Dispatch", Manager: "c2", Company: "Verdant Freight", Location: "Antwerp", Source: contacts.Directory, Aliases: []string{"Gretje"}},
		{Name: "Greta Hoffmann", Email: "greta.hoffmann@verdant.example", Role: "customer service agent", Team: "Customer Service", Manager: "c1", Company: "Verdant Freight", Location: "Hamburg", Source: contacts.Directory},
		{Name: "Jonas Weber", Email: "jonas.weber@verdant.example", Role: "fleet planner", Team: "Fleet", Manager: "c1", Company: "Verdant Freight", Location: "Hamburg", Source: contacts.Directory},
		{Name: "Zoë Müller", Email: "zoe@kaasmakers.example", Role: "logistics buyer", Company: "De Kaasmakers", Location: "Gouda", Source: contacts.Personal, Notes: "Prefers calls before 10:00; asks for Greta in dispatch."},
	})
	require.NoError(t, err)
	return st
}

// toolOn runs one of the service's tools on st with args given as key, value pairs.
func toolOn(t *testing.T, st *workspace.State, name string, kv ...any) (jsonv.Value, error) {
	t.Helper()
	for _, tl := range contacts.Service.Tools {
		if tl.Name == name {
			return tl.Call(st, jsonv.NewObject(kv...))
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

func ids(v jsonv.Value) []string {
	var out []string
	for _, e := range v.([]jsonv.Value) {
		id, _ := e.(*jsonv.Object).Get("id")
		out = append(out, id.(string))
	}
	return out
}

func TestSearch(t *testing.T) {
	st := book(t)
	for _, tc := range []struct {
		query string
		args  []any
		want  []string
	}{
		{"Greta in dispatch", nil, []string{"c3"}},
		{"greta", nil, []string{"c4", "c3"}},       // both by name; then by name: Hoffmann before Vogel
		{"gre", nil, []string{"c4", "c3"}},         // a partial name
		{"GRETJE", nil, []string{"c3"}},            // an alias
		{"dispatchers", nil, []string{"c3", "c2"}}, // a close form of the role
		{"dispatch", nil, []string{"c3", "c2"}},    // the same score, then by name
		{"dispatch lead", nil, []string{"c2"}},
		{"greta dispatch", nil, []string{"c3"}},              // not Zoë, whose notes mention Greta in dispatch
		{"prefers calls", nil, []string{"c6"}},               // notes, when nothing else matches
		{"fleet planning hamburg", nil, []string{"c5"}},      // planning ~ planner
		{"zoe muller", nil, []string{"c6"}},                  // accents do not matter
		{"kaasmakers", nil, []string{"c6"}},                  // company
		{"0117", nil, []string{"c3"}},                        // part of a phone number
		{"greta.vogel@verdant.example", nil, []string{"c3"}}, // an address
		{"greta", []any{"team", "customer service"}, []string{"c4"}},
		{"greta", []any{"source", "personal"}, []string{"c6"}}, // notes match, at the lowest rank
		{"nobody", nil, nil},
		{"the team", nil, nil},
	} {
		args := append([]any{"query", tc.query}, tc.args...)
		res, err := toolOn(t, st, "contacts_search", args...)
		require.NoError(t, err, tc.query)
		assert.Equal(t, tc.want, ids(res), "query %q %v", tc.query, tc.args)
	}
	_, err := toolOn(t, st, "contacts_search", "query", " , ")
	assert.ErrorContains(t, err, "give a name, role, team or place")
	_, err = toolOn(t, st, "contacts_search", "query", "greta", "limit", int64(0))
	assert.ErrorContains(t, err, "between 1 and 50")
	res, err := toolOn(t, st, "contacts_search", "query", "verdant", "limit", int64(2))
	require.NoError(t, err)
	assert.Len(t, res, 2)
}

// TestToolResults pins the JSON the agent sees: deterministic, every field, in a fixed order.
func TestToolResults(t *testing.T) {
	st := book(t)
	res, err := toolOn(t, st, "contacts_search", "query", "greta dispatch")
	require.NoError(t, err)
	assert.Equal(t, `[{"id":"c3","name":"Greta Vogel","role":"dispatcher","team":"Dispatch","company":"Verdant Freight","location":"Antwerp","email":"greta.vogel@verdant.example","source":"directory"}]`, jsonv.MustEncode(res))

	res, err = toolOn(t, st, "contacts_get", "id", "c2")
	require.NoError(t, err)
	assert.Equal(t, `{"id":"c2","name":"Mehmet Aydin","email":"mehmet.aydin@verdant.example","phone":"","role":"dispatch lead","team":"Dispatch","company":"Verdant Freight","location":"Antwerp","source":"directory","aliases":[],"notes":"",`+
		`"manager":{"id":"c1","name":"Ava Jansen","role":"operations director","email":"ava.jansen@verdant.example"},"reports":[{"id":"c3","name":"Greta Vogel","role":"dispatcher"}]}`, jsonv.MustEncode(res))
	res, err = toolOn(t, st, "contacts_get", "id", "c1")
	require.NoError(t, err)
	mgr, _ := res.(*jsonv.Object).Get("manager")
	assert.Nil(t, mgr)
	reps, _ := res.(*jsonv.Object).Get("reports")
	assert.Equal(t, []string{"c2", "c4", "c5"}, ids(reps))
	_, err = toolOn(t, st, "contacts_get", "id", "c99")
	assert.EqualError(t, err, "no contact c99: ids come from contacts_search or contacts_list")

	res, err = toolOn(t, st, "contacts_list", "team", "dispatch")
	require.NoError(t, err)
	assert.Equal(t, []string{"c3", "c2"}, ids(res), "by name: Greta Vogel, Mehmet Aydin")
	res, err = toolOn(t, st, "contacts_list")
	require.NoError(t, err)
	assert.Equal(t, []string{"c1", "c4", "c3", "c5", "c2", "c6"}, ids(res), "sorted by name")
	res, err = toolOn(t, st, "contacts_list", "location", "hamburg", "limit", int64(1))
	require.NoError(t, err)
	assert.Equal(t, []string{"c4"}, ids(res))
	res, err = toolOn(t, st, "contacts_list", "source", "personal")
	require.NoError(t, err)
	assert.Equal(t, []string{"c6"}, ids(res))
	_, err = toolOn(t, st, "contacts_list", "source", "crm")
	assert.ErrorContains(t, err, `"crm" is not one of "directory", "personal"`)
}

// TestAgentWrites: the agent changes the personal address book only, and errors say what to do.
func TestAgentWrites(t *testing.T) {
	st := book(t)
	before := st.Hash()
	res, err := toolOn(t, st, "contacts_add", "name", " Ruben Dijkstra ", "email", "ruben@dekaasmakers.example", "company", "De Kaasmakers")
	require.NoError(t, err)
	o := res.(*jsonv.Object)
	id, _ := o.Get("id")
	src, _ := o.Get("source")
	name, _ := o.Get("name")
	assert.Equal(t, "c7", id)
	assert.Equal(t, "personal", src)
	assert.Equal(t, "Ruben Dijkstra", name, "fields are trimmed")
	assert.NotEqual(t, before, st.Hash())

	_, err = toolOn(t, st, "contacts_add", "name", "R. Dijkstra", "email", "RUBEN@dekaasmakers.example")
	assert.EqualError(t, err, "RUBEN@dekaasmakers.example is already in the personal address book as c7 (Ruben Dijkstra): use contacts_update to change it")
	_, err = toolOn(t, st, "contacts_add", "name", "Greta", "email", "greta.vogel@verdant.example")
	assert.NoError(t, err, "a personal entry may repeat a directory address")
	_, err = toolOn(t, st, "contacts_add", "name", "X", "email", "x at y")
	assert.EqualError(t, err, `"x at y" is not an email address`)
	_, err = toolOn(t, st, "contacts_add", "name", "X", "manager", "c1")
	assert.ErrorContains(t, err, `unknown argument "manager" (the arguments are: name, `)

	res, err = toolOn(t, st, "contacts_update", "id", "c7", "phone", "+31 182 555 010", "notes", "Quality claims.")
	require.NoError(t, err)
	phone, _ := res.(*jsonv.Object).Get("phone")
	assert.Equal(t, "+31 182 555 010", phone)
	_, err = toolOn(t, st, "contacts_update", "id", "c7", "phone", "+31 182 555 010")
	assert.EqualError(t, err, "nothing to change: give at least one field with a new value")
	_, err = toolOn(t, st, "contacts_update", "id", "c3", "phone", "1")
	assert.EqualError(t, err, "contact c3 (Greta Vogel) is in the company directory, which is read-only: only contacts of the personal address book can be changed or deleted")
	_, err = toolOn(t, st, "contacts_update", "id", "c7", "email", "zoe@kaasmakers.example")
	assert.EqualError(t, err, "zoe@kaasmakers.example is already the address of c6 (Zoë Müller) in the personal address book")
	_, err = toolOn(t, st, "contacts_delete", "id", "c1")
	assert.ErrorContains(t, err, "read-only")
	res, err = toolOn(t, st, "contacts_delete", "id", "c7")
	require.NoError(t, err)
	assert.Equal(t, `{"ok":true}`, jsonv.MustEncode(res))
	_, err = toolOn(t, st, "contacts_delete", "id", "c7")
	assert.ErrorContains(t, err, "no contact c7")
}

func TestServiceDeclaration(t *testing.T) {
	s := contacts.Service
	assert.Equal(t, "contacts", s.Name)
	assert.Same(t, contacts.Part, s.Part)
	var names []string
	for _, tl := range s.Tools {
		names = append(names, tl.Name)
		assert.Equal(t, "contacts", tl.Group)
		assert.True(t, tools.ValidName(tl.Name))
		assert.NotEmpty(t, tl.Description)
		jsonv.MustEncode(tl.Schema())
	}
	assert.Equal(t, []string{"contacts_search", "contacts_get", "contacts_list", "contacts_add", "contacts_update", "contacts_delete"}, names)
	for _, m := range s.WS {
		assert.NotEmpty(t, m.Doc, m.Name)
		assert.LessOrEqual(t, len(m.Params), 12, m.Name)
	}

	st := book(t)
	text := s.Setup(st)
	assert.Contains(t, text, "contact c3 directory Greta Vogel <greta.vogel@verdant.example>; phone +32 3 555 0117; role dispatcher; team Dispatch; manager c2; company Verdant Freight; location Antwerp; aliases Gretje\n")
	assert.Contains(t, text, "contact c6 personal Zoë Müller <zoe@kaasmakers.example>; role logistics buyer; company De Kaasmakers; location Gouda\nPrefers calls before 10:00; asks for Greta in dispatch.\n")
	assert.Equal(t, "", s.Setup(workspace.New(start, 1)))

	c, ok := contacts.Get(st, "c3")
	require.True(t, ok)
	v := s.Value(c)
	require.NotNil(t, v)
	assert.True(t, strings.Contains(v.String(), `name = "Greta Vogel"`), v.String())
	assert.Nil(t, s.Value(other{}), "an entry of another service")
}

type other struct{}

func (other) Digest() [32]byte { return workspace.Digest("other") }

// TestJudge: the words of ws.unexpected for the agent's changes of contacts.
func TestJudge(t *testing.T) {
	base := book(t)
	base.Freeze()
	st := base.Fork()
	st.SetActor(workspace.ActorAgent, 0)
	_, err := toolOn(t, st, "contacts_add", "name", "Ruben Dijkstra")
	require.NoError(t, err)
	_, err = toolOn(t, st, "contacts_update", "id", "c6", "notes", "")
	require.NoError(t, err)
	_, err = toolOn(t, st, "contacts_delete", "id", "c7")
	require.NoError(t, err)
	h := st.History(base)
	require.Len(t, h, 3)
	words := func(allowed ...string) []string {
		var out []string
		for _, a := range h {
			if s := contacts.Service.Judge([][]string{allowed}, a); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	assert.Equal(t, []string{"added contact c7 (Ruben Dijkstra)", "changed contact c6 (Zoë Müller)", "removed contact c7 (Ruben Dijkstra)"}, words())
	assert.Equal(t, []string{"changed contact c6 (Zoë Müller)"}, words("new", "c7"))
	assert.Equal(t, []string{"removed contact c7 (Ruben Dijkstra)"}, words("new", "c6"))
	assert.Empty(t, words("*"))
}

// TestForkIsolation: a fork's writes do not reach its base, and the diff names the ids.
func TestForkIsolation(t *testing.T) {
	base := book(t)
	base.Freeze()
	st := base.Fork()
	_, err := toolOn(t, st, "contacts_update", "id", "c6", "phone", "+31 182 555 000")
	require.NoError(t, err)
	c, _ := contacts.Get(base, "c6")
	assert.Equal(t, "", c.Phone)
	d := workspace.Diff(base, st)
	assert.Equal(t, []string{"c6"}, d.Part(contacts.Part).Changed)
	_, err = toolOn(t, base, "contacts_add", "name", "X")
	assert.Error(t, err, "a frozen state refuses writes")
}

// TestAddIsAllOrNothing: a batch with one bad contact stores nothing and leaves the id counter,
// so the state hash is as it was.
func TestAddIsAllOrNothing(t *testing.T) {
	st := book(t)
	h, n := st.Hash(), st.PartCounter(contacts.Part)
	_, err := contacts.Add(st, []*contacts.Contact{
		{Name: "A", Source: contacts.Personal},
		{Name: "B", Source: contacts.Personal, Manager: "nobody@x.example"},
	})
	require.ErrorContains(t, err, `manager "nobody@x.example": no contact has that id or address`)
	assert.Equal(t, h, st.Hash())
	assert.Equal(t, n, st.PartCounter(contacts.Part))

	// ids given by the script are skipped by the counter; a manager may be a later contact of the batch
	ids, err := contacts.Add(st, []*contacts.Contact{
		{Name: "A", Source: contacts.Personal, Manager: "b@x.example"},
		{ID: "c8", Name: "C", Source: contacts.Personal},
		{Name: "B", Email: "b@x.example", Source: contacts.Personal},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"c7", "c8", "c9"}, ids)
	a, _ := contacts.Get(st, "c7")
	assert.Equal(t, "c9", a.Manager)
	assert.Equal(t, int64(9), st.PartCounter(contacts.Part))
}
