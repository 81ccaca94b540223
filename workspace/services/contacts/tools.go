package contacts

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// The agent's tools, group "contacts". The company directory is read-only for the agent; it
// adds to, changes and deletes only contacts of the personal address book.

const group = "contacts"

const idDesc = "Contact id, like \"c3\", as given by contacts_search or contacts_list."

var sourceParam = tools.Param{Name: "source", Type: tools.TypeString, Enum: []jsonv.Value{Directory, Personal},
	Description: "Keep only the company directory (\"directory\") or the user's personal address book (\"personal\")."}

// personalFields are the optional text parameters of contacts_add and contacts_update.
var personalFields = []struct{ name, desc string }{
	{"email", "Email address."},
	{"phone", "Phone number, as the person gives it."},
	{"role", "Job title, like \"account manager\"."},
	{"team", "Team or department."},
	{"company", "Company the person works for."},
	{"location", "City, site or office."},
	{"notes", "Free notes."},
}

func personalParams(first ...tools.Param) []tools.Param {
	ps := first
	for _, f := range personalFields {
		ps = append(ps, tools.Opt(f.name, tools.TypeString, f.desc, nil))
	}
	return ps
}

var agentTools = []*tools.Tool{
	{
		Name:  "contacts_search",
		Group: group,
		Description: "Find people in the company directory and the user's personal address book the way you would ask a colleague: " +
			"by part of a name or nickname, role, team, company, location or email, in any combination (\"greta dispatch\", " +
			"\"fleet planner hamburg\"), or part of a phone number. Case and accents do not matter and every word must match; notes are searched only when nothing else matches. Returns the best matches first " +
			"as summaries {id, name, role, team, company, location, email, source}; contacts_get gives the phone, the manager, " +
			"the direct reports and the notes. " + tools.ListingDoc,
		Params: []tools.Param{
			tools.Req("query", tools.TypeString, "Words to look for, like \"Greta dispatch\" or \"finance controller\"."),
			tools.Opt("team", tools.TypeString, "Keep only people whose team or department matches this.", nil),
			sourceParam,
			tools.Opt("limit", tools.TypeInteger, "Largest number of contacts to return (1 to 50).", int64(10)),
		},
		Run: searchTool,
	},
	{
		Name:  "contacts_get",
		Group: group,
		Description: "Read one contact in full: id, name, email, phone, role, team, company, location, source, aliases, notes, " +
			"manager ({id, name, role, email}, or null) and reports (the people they manage, [{id, name, role}]). " +
			"Follow manager to find who someone reports to.",
		Params: []tools.Param{tools.Req("id", tools.TypeString, idDesc)},
		Run:    getTool,
	},
	{
		Name:  "contacts_list",
		Group: group,
		Description: "List contacts, sorted by name, as summaries {id, name, role, team, company, location, email, source}, " +
			"optionally only those of a team, a location, a company or a source (each filter matches words, ignoring case). " + tools.ListingDoc,
		Params: []tools.Param{
			tools.Opt("team", tools.TypeString, "Team or department, like \"Dispatch\".", nil),
			tools.Opt("location", tools.TypeString, "City, site or office, like \"Antwerp\".", nil),
			tools.Opt("company", tools.TypeString, "Company, like a customer's name.", nil),
			sourceParam,
			tools.Opt("limit", tools.TypeInteger, "Largest number of contacts to return (1 to 200).", int64(50)),
		},
		Run: listTool,
	},
	{
		Name:  "contacts_add",
		Group: group,
		Description: "Add a person to the user's personal address book (the company directory cannot be changed). " +
			"Returns the new contact, as contacts_get.",
		Params: personalParams(tools.Req("name", tools.TypeString, "Full name.")),
		Run:    addTool,
	},
	{
		Name:  "contacts_update",
		Group: group,
		Description: "Change a contact of the user's personal address book: only the fields given change (\"\" clears one). " +
			"Contacts of the company directory are read-only. Returns the updated contact, as contacts_get.",
		Params: personalParams(tools.Req("id", tools.TypeString, idDesc), tools.Opt("name", tools.TypeString, "New full name.", nil)),
		Run:    updateTool,
	},
	{
		Name:        "contacts_delete",
		Group:       group,
		Description: "Delete a contact of the user's personal address book (the company directory cannot be changed). Returns {\"ok\": true}.",
		Params:      []tools.Param{tools.Req("id", tools.TypeString, idDesc)},
		Run:         deleteTool,
	},
}

// summary is a contact in a listing.
func summary(c *Contact) *jsonv.Object {
	return jsonv.NewObject("id", c.ID, "name", c.Name, "role", c.Role, "team", c.Team, "company", c.Company,
		"location", c.Location, "email", c.Email, "source", c.Source)
}

// summaries is the listing of cs, the first of total contacts, at most limits.ListItems.
func summaries(cs []*Contact, total int) jsonv.Value {
	out := []jsonv.Value{}
	for _, c := range cs {
		out = append(out, summary(c))
	}
	return tools.Listing(out, total, false, "contacts", "add words to the query, or a filter")
}

// full is a contact as contacts_get shows it, with its manager and direct reports.
func full(st *workspace.State, c *Contact) *jsonv.Object {
	var mgr jsonv.Value
	if m, ok := Get(st, c.Manager); ok && c.Manager != "" {
		mgr = jsonv.NewObject("id", m.ID, "name", m.Name, "role", m.Role, "email", m.Email)
	}
	reps := []jsonv.Value{}
	for _, r := range reports(st, c.ID) {
		reps = append(reps, jsonv.NewObject("id", r.ID, "name", r.Name, "role", r.Role))
	}
	al := make([]jsonv.Value, len(c.Aliases))
	for i, a := range c.Aliases {
		al[i] = a
	}
	return jsonv.NewObject("id", c.ID, "name", c.Name, "email", c.Email, "phone", c.Phone, "role", c.Role, "team", c.Team,
		"company", c.Company, "location", c.Location, "source", c.Source, "aliases", al, "notes", c.Notes,
		"manager", mgr, "reports", reps)
}

func limitArg(args *jsonv.Object, hi int64) (int64, error) {
	n := tools.ArgInt(args, "limit")
	if n < 1 || n > hi {
		return 0, fmt.Errorf("argument \"limit\": must be between 1 and %d, got %d", hi, n)
	}
	return n, nil
}

func searchTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	limit, err := limitArg(args, 50)
	if err != nil {
		return nil, err
	}
	q := tools.ArgStr(args, "query")
	if len(queryWords(q)) == 0 {
		return nil, fmt.Errorf("argument \"query\": give a name, role, team or place to look for; contacts_list lists a whole team")
	}
	cs, err := search(st, q, filter{team: tools.ArgStr(args, "team"), source: tools.ArgStr(args, "source")}, nil)
	if err != nil {
		return nil, err
	}
	total := int(min(limit, int64(len(cs))))
	return summaries(cs[:min(total, limits.ListItems)], total), nil
}

func contact(st *workspace.State, id string) (*Contact, error) {
	c, ok := Get(st, id)
	if !ok {
		return nil, fmt.Errorf("no contact %s: ids come from contacts_search or contacts_list", id)
	}
	return c, nil
}

// personal returns contact id when the agent may change it.
func personal(st *workspace.State, id string) (*Contact, error) {
	c, err := contact(st, id)
	if err != nil {
		return nil, err
	}
	if c.Source != Personal {
		return nil, fmt.Errorf("contact %s is in the company directory, which is read-only: only contacts of the personal address book can be changed or deleted", c.label())
	}
	return c, nil
}

func getTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	c, err := contact(st, tools.ArgStr(args, "id"))
	if err != nil {
		return nil, err
	}
	return full(st, c), nil
}

func listTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	limit, err := limitArg(args, 200)
	if err != nil {
		return nil, err
	}
	f := filter{team: tools.ArgStr(args, "team"), location: tools.ArgStr(args, "location"), company: tools.ArgStr(args, "company"), source: tools.ArgStr(args, "source")}
	return summaries(list(st, f, limit)), nil
}

// setPersonal sets the fields given in args on c.
func setPersonal(c *Contact, args *jsonv.Object) {
	if v, ok := tools.ArgStrOK(args, "name"); ok {
		c.Name = v
	}
	for _, f := range personalFields {
		if v, ok := tools.ArgStrOK(args, f.name); ok {
			setField(c, f.name, v, nil)
		}
	}
}

// personalDup finds the personal contact with address email, if any.
func personalDup(st *workspace.State, email string) *Contact {
	if email = strings.TrimSpace(email); email == "" {
		return nil
	}
	for c := range under(st, emailIndex, foldKey(email)) {
		if c.Source == Personal {
			return c
		}
	}
	return nil
}

func addTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	c := &Contact{Source: Personal}
	setPersonal(c, args)
	if d := personalDup(st, c.Email); d != nil {
		return nil, fmt.Errorf("%s is already in the personal address book as %s: use contacts_update to change it", strings.TrimSpace(c.Email), d.label())
	}
	if _, err := addAll(st, []*Contact{c}, nil, nil); err != nil {
		return nil, err
	}
	return full(st, c), nil
}

func updateTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	old, err := personal(st, tools.ArgStr(args, "id"))
	if err != nil {
		return nil, err
	}
	c := old.clone()
	setPersonal(c, args)
	if err := normalize(c); err != nil {
		return nil, err
	}
	if c.Digest() == old.Digest() {
		return nil, fmt.Errorf("nothing to change: give at least one field with a new value")
	}
	if err := update(st, c); err != nil {
		return nil, err
	}
	return full(st, c), nil
}

func deleteTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	c, err := personal(st, tools.ArgStr(args, "id"))
	if err != nil {
		return nil, err
	}
	if err := remove(st, c.ID); err != nil {
		return nil, err
	}
	return jsonv.NewObject("ok", true), nil
}
