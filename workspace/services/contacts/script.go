package contacts

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// The members of ws.contacts.

// fieldNames are the writable fields of a contact, in the order of add's parameters after
// name (and of the keys add_many accepts).
var fieldNames = []string{"email", "phone", "role", "team", "manager", "company", "location", "source", "notes", "aliases"}

// fieldParams are the parameters of update: every field, None meaning "leave as it is".
func fieldParams(def func(name string) string) []service.Param {
	ps := []service.Param{{Name: "name", Default: def("name")}}
	for _, n := range fieldNames {
		ps = append(ps, service.Param{Name: n, Default: def(n)})
	}
	return ps
}

// addDefaults are the defaults of add's parameters.
func addDefault(name string) string {
	switch name {
	case "name":
		return ""
	case "source":
		return `"directory"`
	case "aliases":
		return "[]"
	}
	return `""`
}

var wsMethods = []service.Method{
	{
		Name:   "add",
		Params: append(fieldParams(addDefault), service.Param{Name: "id", Default: "None"}),
		Ret:    "string",
		Write:  true,
		Doc: "Adds a contact and returns its id: \"c1\", \"c2\", … from the service's counter, or id when given (letters, digits, \".\", \"_\", \"-\"; an id taken is an error). " +
			"name is required; source is \"directory\" (the company directory, read-only for the agent) or \"personal\" (the user's own address book). " +
			"role is the job title (\"dispatcher\"), team the team or department (\"Dispatch\"), location the site or office, aliases other names people use (nicknames, a former name). " +
			"manager is the id of another contact, or the email of one (then stored as that contact's id). " +
			"Two contacts of the same source may not share an email (a personal entry may repeat a directory address, or keep an old one); a manager must exist and may not make a cycle.",
		Call: addFn,
	},
	{
		Name:   "add_many",
		Params: []service.Param{{Name: "contacts"}},
		Ret:    "list",
		Write:  true,
		Doc: "Adds a list of contacts at once and returns their ids, in order. Each is a dict with the keys of ws.contacts.add (\"name\" required, \"source\" \"directory\" unless given); " +
			"a manager may name a contact of the same list by its id or email, wherever it is in the list. Everything is checked first: an error adds none of them.",
		Call: addManyFn,
	},
	{
		Name:   "get",
		Params: []service.Param{{Name: "id"}},
		Ret:    "struct | None",
		Doc: "Returns contact id as a struct with id, name, email, phone, role, team, manager (an id, \"\" when none), company, location, source, notes and aliases (a list), " +
			"or None when there is no such contact.",
		Call: getFn,
	},
	{
		Name: "list",
		Params: []service.Param{{Name: "source", Default: "None"}, {Name: "team", Default: "None"}, {Name: "role", Default: "None"},
			{Name: "location", Default: "None"}, {Name: "company", Default: "None"}, {Name: "manager", Default: "None"},
			{Name: "email", Default: "None"}, {Name: "name", Default: "None"}},
		Ret: "list",
		Doc: "Returns the contacts (structs, as ws.contacts.get) whose fields equal every filter given, ignoring case and surrounding spaces, in id order (c2 before c10). " +
			"manager=\"c4\" lists c4's direct reports; email finds the directory entry and any personal entry with that address.",
		Call: listFn,
	},
	{
		Name:   "search",
		Params: []service.Param{{Name: "query"}, {Name: "team", Default: "None"}, {Name: "source", Default: "None"}, {Name: "limit", Default: "None"}},
		Ret:    "list",
		Doc: "Returns the contacts the agent's contacts_search finds for query, in its order (structs, as ws.contacts.get): every word of the query (case, accents and small words such as \"in\" or \"team\" ignored) " +
			"must start a word of the name, aliases, role, team, email, company or location, or share its stem (\"dispatchers\" finds a dispatcher); a word of four or more digits may be part of the phone number; notes count only when no contact matches otherwise. " +
			"Best matches first (name, then role and team, then the rest), then by name. " +
			"team keeps contacts whose team matches those words, source one source; limit keeps the first ones.",
		Call: searchFn,
	},
	{
		Name:   "update",
		Params: append([]service.Param{{Name: "id"}}, fieldParams(func(string) string { return "None" })...),
		Ret:    "struct",
		Write:  true,
		Doc: "Changes the given fields of contact id (a field given as None is left as it is; \"\" clears a text field) and returns the updated contact. " +
			"manager takes an id or an email, as in add. A missing contact, an email another contact of the same source has, or a manager that is missing or makes a cycle is an error, and then nothing changes.",
		Call: updateFn,
	},
	{
		Name:   "remove",
		Params: []service.Param{{Name: "id"}},
		Ret:    "None",
		Write:  true,
		Doc:    "Deletes contact id. A missing contact is an error, and so is one that still manages others (update their manager first).",
		Call:   removeFn,
	},
}

// value is a contact as scripts see it; nil for an entry of another service.
func value(e any) starlark.Value {
	c, ok := e.(*Contact)
	if !ok {
		return nil
	}
	al := make([]starlark.Value, len(c.Aliases))
	for i, a := range c.Aliases {
		al[i] = starlark.String(a)
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"id":       starlark.String(c.ID),
		"name":     starlark.String(c.Name),
		"email":    starlark.String(c.Email),
		"phone":    starlark.String(c.Phone),
		"role":     starlark.String(c.Role),
		"team":     starlark.String(c.Team),
		"manager":  starlark.String(c.Manager),
		"company":  starlark.String(c.Company),
		"location": starlark.String(c.Location),
		"source":   starlark.String(c.Source),
		"notes":    starlark.String(c.Notes),
		"aliases":  starlark.NewList(al),
	})
}

func values(cs []*Contact) starlark.Value {
	out := make([]starlark.Value, len(cs))
	for i, c := range cs {
		out[i] = value(c)
	}
	return starlark.NewList(out)
}

// setField sets one writable field of c by name.
func setField(c *Contact, name, v string, aliases []string) {
	if name == "aliases" {
		c.Aliases = aliases
	} else if f := c.text(name); f != nil {
		*f = v
	}
}

// fromArgs sets the fields given in a (parameters from offset on, in fieldParams order) on c.
func fromArgs(c *Contact, a service.Args, offset int, add bool) {
	names := append([]string{"name"}, fieldNames...)
	for i, n := range names {
		j := offset + i
		switch {
		case n == "name" && add:
			c.Name = a.Str(j)
		case a.Absent(j):
		case n == "aliases":
			setField(c, n, "", a.StrList(j, true))
		default:
			setField(c, n, a.Str(j), nil)
		}
	}
}

func addFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	c := &Contact{Source: Directory}
	fromArgs(c, a, 0, true)
	c.ID = a.OptStr(len(fieldNames)+1, "")
	if err := a.Done(); err != nil {
		return nil, err
	}
	ids, err := addAll(st, []*Contact{c}, nil, nil)
	if err != nil {
		return nil, err
	}
	return starlark.String(ids[0]), nil
}

func addManyFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	seq, ok := a.Value(0).(starlark.Indexable)
	if _, isStr := a.Value(0).(starlark.String); !ok || isStr {
		a.Fail("for parameter contacts: got %s, want a list of dicts", a.Value(0).Type())
		return nil, a.Done()
	}
	cs := make([]*Contact, seq.Len())
	refs := make([]string, seq.Len())
	for i := range cs {
		refs[i] = "contact " + strconv.Itoa(i)
		c, err := fromDict(seq.Index(i))
		if err != nil {
			a.Fail("%s: %v", refs[i], err)
			return nil, a.Done()
		}
		if err := a.Charge(1 + c.size()/1024); err != nil { // a step per contact and per KiB of it
			return nil, err
		}
		cs[i] = c
		if c.Name != "" {
			refs[i] += " (" + c.Name + ")"
		}
	}
	ids, err := addAll(st, cs, refs, a.Charge)
	if err != nil {
		return nil, err
	}
	out := make([]starlark.Value, len(ids))
	for i, id := range ids {
		out[i] = starlark.String(id)
	}
	return starlark.NewList(out), nil
}

// fromDict reads one contact of add_many.
func fromDict(v starlark.Value) (*Contact, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("got %s, want a dict", v.Type())
	}
	c := &Contact{Source: Directory}
	for _, kv := range d.Items() {
		k, ok := kv[0].(starlark.String)
		if !ok {
			return nil, fmt.Errorf("key %s is not a string", kv[0])
		}
		key := string(k)
		if key != "id" && key != "name" && !slices.Contains(fieldNames, key) {
			return nil, fmt.Errorf("unknown key %q (keys: id, name, %s)", key, strings.Join(fieldNames, ", "))
		}
		if kv[1] == starlark.None {
			continue
		}
		if key == "aliases" {
			al, err := stringList(kv[1])
			if err != nil {
				return nil, fmt.Errorf("aliases: %v", err)
			}
			c.Aliases = al
			continue
		}
		s, ok := kv[1].(starlark.String)
		if !ok {
			return nil, fmt.Errorf("%s: got %s, want string", key, kv[1].Type())
		}
		if key == "id" {
			c.ID = string(s)
		} else {
			setField(c, key, string(s), nil)
		}
	}
	return c, nil
}

func stringList(v starlark.Value) ([]string, error) {
	if s, ok := v.(starlark.String); ok {
		return []string{string(s)}, nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("got %s, want a list of strings", v.Type())
	}
	out := make([]string, seq.Len())
	for i := range out {
		s, ok := seq.Index(i).(starlark.String)
		if !ok {
			return nil, fmt.Errorf("item %d: got %s, want string", i, seq.Index(i).Type())
		}
		out[i] = string(s)
	}
	return out, nil
}

func getFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	id := a.Str(0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if c, ok := Get(st, id); ok {
		return value(c), nil
	}
	return starlark.None, nil
}

func listFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	names := []string{"source", "team", "role", "location", "company", "manager", "email", "name"}
	want := make([]string, len(names))
	for i := range names {
		want[i] = strings.TrimSpace(a.OptStr(i, ""))
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	// Walk the contacts of the manager or of the address when one is given, else all; charge
	// a step for each.
	var in iter.Seq[*Contact]
	var looks int
	switch i, j := slices.Index(names, "manager"), slices.Index(names, "email"); {
	case !a.Absent(i) && want[i] != "":
		in, looks = under(st, managerIndex, foldKey(want[i])), st.PartIndexLen(Part, managerIndex, foldKey(want[i]), foldKey(want[i])+"\x00")
	case !a.Absent(j) && want[j] != "":
		in, looks = under(st, emailIndex, foldKey(want[j])), st.PartIndexLen(Part, emailIndex, foldKey(want[j]), foldKey(want[j])+"\x00")
	default:
		in, looks = contactsOf(st.PartEntries(Part, "")), st.PartLen(Part)
	}
	if err := a.Charge(looks); err != nil {
		return nil, err
	}
	var out []*Contact
	for c := range in {
		keep := true
		for i, n := range names {
			if !a.Absent(i) && !strings.EqualFold(fieldOf(c, n), want[i]) {
				keep = false
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return values(out), nil
}

// fieldOf reads one text field of c by name.
func fieldOf(c *Contact, name string) string {
	if f := c.text(name); f != nil {
		return *f
	}
	return ""
}

func searchFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	q := a.Str(0)
	f := filter{team: a.OptStr(1, ""), source: a.OptStr(2, "")}
	limit := int64(-1)
	if !a.Absent(3) {
		if limit = a.Int(3); limit < 0 {
			a.Fail("for parameter limit: must not be negative, got %d", limit)
		}
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	cs, err := search(st, q, f, a.Charge)
	if err != nil {
		return nil, err
	}
	if limit >= 0 && int64(len(cs)) > limit {
		cs = cs[:limit]
	}
	return values(cs), nil
}

func updateFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	id := a.Str(0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	old, ok := Get(st, id)
	if !ok {
		return nil, fmt.Errorf("no contact %s", id)
	}
	c := old.clone()
	fromArgs(c, a, 1, false)
	if err := a.Done(); err != nil {
		return nil, err
	}
	if err := update(st, c); err != nil {
		return nil, err
	}
	return value(c), nil
}

func removeFn(st *workspace.State, a service.Args) (starlark.Value, error) {
	id := a.Str(0)
	if err := a.Done(); err != nil {
		return nil, err
	}
	return starlark.None, remove(st, id)
}
