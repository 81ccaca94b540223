// Package contacts is the contacts service: the user's address book and the company directory.
//
// A contact is one person (or a shared desk such as "Facilities") with a name, a work address,
// a phone, a role, a team, a manager (another contact's id), a company, a location, other
// names people use for them (aliases), free notes, and a source: "directory" for the company
// directory, which the agent may only read, or "personal" for the user's own address book,
// which the agent may also add to, change and prune. Scripts see ws.contacts (script.go); the
// agent gets the contacts_* tools (tools.go). Search works the way a colleague looks someone up
// (search.go): "greta dispatch" finds Greta in the dispatch team, "dispatchers" finds the
// dispatchers, and contacts_get shows a contact's manager and direct reports.
package contacts

import (
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
)

// Part is the state of the service: contacts by id.
var Part = &workspace.Part{Name: "contacts", Entry: "contact", Indexes: []*workspace.Index{nameIndex, emailIndex, managerIndex, wordIndex}}

// The indexes of the part, so that a call reads the contacts it needs rather than the book.
var (
	// nameIndex orders the contacts as listings show them: by folded name, then by id.
	nameIndex = contactIndex("name", false, func(c *Contact) []string { return []string{fold(c.Name)} })
	// emailIndex and managerIndex hold the contacts under their address and their manager's id, in
	// the form of foldKey: the keys of two contacts are alike when strings.EqualFold says so.
	emailIndex   = contactIndex("email", false, func(c *Contact) []string { return foldKeys(c.Email) })
	managerIndex = contactIndex("manager", false, func(c *Contact) []string { return foldKeys(c.Manager) })
	// wordIndex holds each contact under every word search reads of it (search.go).
	wordIndex = contactIndex("word", true, searchWords)
)

// contactIndex is an index of contacts under the keys keys gives (see workspace.Index for refs).
func contactIndex(name string, refs bool, keys func(c *Contact) []string) *workspace.Index {
	return &workspace.Index{Name: name, Refs: refs, Keys: func(e workspace.Entry) []string {
		if c, ok := e.(*Contact); ok {
			return keys(c)
		}
		return nil
	}}
}

// foldKey is s in a form that two strings share exactly when strings.EqualFold says they are
// equal: each rune the smallest of the runes it equals when case is folded (an invalid byte is
// U+FFFD, as for EqualFold).
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// foldKeys is the key of s in emailIndex or managerIndex: none when s is empty.
func foldKeys(s string) []string {
	if s == "" {
		return nil
	}
	return []string{foldKey(s)}
}

// under yields the contacts under key in index x (its foldKey in emailIndex and managerIndex), in
// natural id order.
func under(st *workspace.State, x *workspace.Index, key string) iter.Seq[*Contact] {
	return contactsOf(st.PartIndex(Part, x, key, key+"\x00", false))
}

// contactsOf yields the contacts of entries.
func contactsOf(entries iter.Seq2[string, workspace.Entry]) iter.Seq[*Contact] {
	return func(yield func(*Contact) bool) {
		for _, e := range entries {
			if c, ok := e.(*Contact); ok && !yield(c) {
				return
			}
		}
	}
}

// Sources of a contact.
const (
	Directory = "directory" // the company directory: read-only for the agent
	Personal  = "personal"  // the user's own address book
)

// Service declares the service (registered in package services).
var Service = &service.Service{
	Name:  "contacts",
	Entry: Part.Entry,
	Doc: "The company directory and the user's personal address book: people (and shared desks) with id (\"c1\", …), " +
		"name, work email, phone, role, team, manager (another contact's id), company, location, aliases, notes and " +
		"source (\"directory\" or \"personal\"). The agent searches them by partial name, role, team, company or " +
		"location, follows a contact's manager and reports, and may add to and change only the personal address book. " +
		"In verifiers, ws.unexpected(contacts = [...]) allows the agent to change or delete those contact ids, \"new\" to add contacts, \"*\" anything.",
	Part:  Part,
	WS:    wsMethods,
	Tools: agentTools,
	Setup: setupText,
	Value: value,
	Judge: judge,
	Probe: func(st *workspace.State) error {
		_, err := Add(st, []*Contact{{Name: "Probe Person", Email: "probe@example.com", Source: Personal}})
		return err
	},
}

// Contact is one entry of the part. It is immutable once stored: writes store a new value.
type Contact struct {
	ID       string
	Name     string   // full name, as the person writes it
	Email    string   // work address ("" when unknown)
	Phone    string   // as written, e.g. "+31 10 555 0142"
	Role     string   // job title: "dispatcher", "customer service lead"
	Team     string   // team or department: "Dispatch", "Finance"
	Manager  string   // the id of the manager's contact ("" when none)
	Company  string   // employer: "Verdant Freight", or a customer's or supplier's name
	Location string   // site or office: "Antwerp", "Rotterdam HQ"
	Source   string   // Directory or Personal
	Notes    string   // free text
	Aliases  []string // other names: nicknames, former names, a desk's other names
}

// textFields name the text fields of a contact, in the order of its struct.
var textFields = []string{"name", "email", "phone", "role", "team", "manager", "company", "location", "source", "notes"}

// Digest covers every field a reader can see.
func (c *Contact) Digest() [32]byte {
	return workspace.Digest("contact", c.ID, c.Name, c.Email, c.Phone, c.Role, c.Team, c.Manager,
		c.Company, c.Location, c.Source, c.Notes, c.Aliases)
}

// text returns the text field called name ("name", "email", …, "notes"), or nil.
func (c *Contact) text(name string) *string {
	switch name {
	case "name":
		return &c.Name
	case "email":
		return &c.Email
	case "phone":
		return &c.Phone
	case "role":
		return &c.Role
	case "team":
		return &c.Team
	case "manager":
		return &c.Manager
	case "company":
		return &c.Company
	case "location":
		return &c.Location
	case "source":
		return &c.Source
	case "notes":
		return &c.Notes
	}
	return nil
}

// size is the number of bytes of c's text.
func (c *Contact) size() int {
	n := len(c.ID)
	for _, f := range textFields {
		n += len(*c.text(f))
	}
	for _, a := range c.Aliases {
		n += len(a)
	}
	return n
}

// clone returns a copy that may be changed before it is stored.
func (c *Contact) clone() *Contact {
	d := *c
	d.Aliases = slices.Clone(c.Aliases)
	return &d
}

// Get returns contact id of st.
func Get(st *workspace.State, id string) (*Contact, bool) {
	e, ok := st.PartGet(Part, id)
	if !ok {
		return nil, false
	}
	c, ok := e.(*Contact)
	return c, ok
}

// All returns every contact of st in natural id order (c2 before c10).
func All(st *workspace.State) []*Contact {
	keys := st.PartKeys(Part)
	out := make([]*Contact, 0, len(keys))
	for _, k := range keys {
		if c, ok := Get(st, k); ok {
			out = append(out, c)
		}
	}
	return out
}

// reports returns the contacts whose manager is id, in natural id order.
func reports(st *workspace.State, id string) []*Contact {
	var out []*Contact
	for c := range under(st, managerIndex, foldKey(id)) {
		if c.Manager == id {
			out = append(out, c)
		}
	}
	return out
}

// label names a contact in messages: "c3 (Greta Vogel)".
func (c *Contact) label() string { return c.ID + " (" + c.Name + ")" }

// validID reports whether a script-given id can name a contact: a letter or digit, then letters,
// digits, ".", "_" or "-", at most 64 characters.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && strings.ContainsRune("._-", r)
		if !ok {
			return false
		}
	}
	return true
}

// validEmail is a loose check: one "@" with text on both sides and no white space.
func validEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && at < len(s)-1 && strings.Count(s, "@") == 1 && !strings.ContainsAny(s, " \t\n<>,;")
}

// normalize trims the fields of c, in place, and checks those that do not depend on the rest of
// the book.
func normalize(c *Contact) error {
	for _, n := range textFields {
		f := c.text(n)
		*f = strings.TrimSpace(*f)
	}
	var al []string
	for _, a := range c.Aliases {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(al, a) {
			al = append(al, a)
		}
	}
	c.Aliases = al
	switch {
	case c.Name == "":
		return fmt.Errorf("a contact needs a name")
	case c.Email != "" && !validEmail(c.Email):
		return fmt.Errorf("%q is not an email address", c.Email)
	case c.Source != Directory && c.Source != Personal:
		return fmt.Errorf("source %q is not %q or %q", c.Source, Directory, Personal)
	}
	return nil
}

// book is a view of the contacts with pending changes on top, for checks that span several
// contacts (unique addresses, managers that exist, no management cycles).
type book struct {
	st      *workspace.State
	pending map[string]*Contact   // new or changed contacts by id
	emails  map[string][]*Contact // the pending contacts by the foldKey of their address
}

func newBook(st *workspace.State) *book {
	return &book{st: st, pending: map[string]*Contact{}, emails: map[string][]*Contact{}}
}

// put makes c, whose address does not change any more, a pending contact.
func (b *book) put(c *Contact) {
	b.pending[c.ID] = c
	if c.Email != "" {
		k := foldKey(c.Email)
		b.emails[k] = append(b.emails[k], c)
	}
}

func (b *book) get(id string) (*Contact, bool) {
	if c, ok := b.pending[id]; ok {
		return c, true
	}
	return Get(b.st, id)
}

// byEmail returns the contacts with address email (case ignored), in natural id order.
func (b *book) byEmail(email string) []*Contact {
	k := foldKey(email)
	var out []*Contact
	for c := range under(b.st, emailIndex, k) {
		if _, ok := b.pending[c.ID]; !ok {
			out = append(out, c)
		}
	}
	out = append(out, b.emails[k]...)
	slices.SortFunc(out, func(x, y *Contact) int { return workspace.NaturalCompare(x.ID, y.ID) })
	return out
}

// resolveManager turns a manager given as an id or as the address of a contact into an id.
func (b *book) resolveManager(ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	if _, ok := b.get(ref); ok {
		return ref, nil
	}
	if strings.Contains(ref, "@") {
		switch cs := b.byEmail(ref); len(cs) {
		case 0:
		case 1:
			return cs[0].ID, nil
		default:
			var dir []*Contact
			for _, c := range cs {
				if c.Source == Directory {
					dir = append(dir, c)
				}
			}
			if len(dir) == 1 {
				return dir[0].ID, nil
			}
			return "", fmt.Errorf("manager %q: several contacts have that address; give the id", ref)
		}
	}
	return "", fmt.Errorf("manager %q: no contact has that id or address", ref)
}

// check checks c against the rest of the book: a unique address within its source, a manager
// that exists and is not c itself or one of the people c manages.
func (b *book) check(c *Contact) error {
	if c.Email != "" {
		for _, o := range b.byEmail(c.Email) {
			if o.ID != c.ID && o.Source == c.Source {
				return fmt.Errorf("%s is already the address of %s in the %s", c.Email, o.label(), sourceName(c.Source))
			}
		}
	}
	seen := map[string]bool{c.ID: true}
	for m := c.Manager; m != ""; {
		if seen[m] {
			return fmt.Errorf("manager %s of %s: that would make a management cycle", c.Manager, c.label())
		}
		seen[m] = true
		mc, ok := b.get(m)
		if !ok {
			return fmt.Errorf("manager %q: no such contact", m)
		}
		m = mc.Manager
	}
	return nil
}

func sourceName(source string) string {
	if source == Personal {
		return "personal address book"
	}
	return "company directory"
}

// addAll adds contacts in one go: each is checked against the book and the others first, so
// that either all are added or none. A contact's ID may be empty (an id "c<n>" is assigned);
// its Manager may be an id or the address of a contact of the book or of the batch. refs, when
// not nil, holds for each contact a name for errors ("contact 3"). charge, when not nil, is
// given a step per contact as each is given its id and as each is checked, then a step per
// contact before they are stored, so that a huge batch stops at the caller's step budget (or
// its deadline) as it goes, and is stored whole or not at all. It returns the ids.
func addAll(st *workspace.State, cs []*Contact, refs []string, charge func(int) error) ([]string, error) {
	step := func() error {
		if charge == nil {
			return nil
		}
		return charge(1)
	}
	b := newBook(st)
	where := func(i int, err error) error {
		if refs != nil {
			return fmt.Errorf("%s: %v", refs[i], err)
		}
		return err
	}
	given := map[string]bool{}
	for i, c := range cs {
		if err := normalize(c); err != nil {
			return nil, where(i, err)
		}
		if c.ID != "" {
			if !validID(c.ID) {
				return nil, where(i, fmt.Errorf("id %q: use letters, digits, \".\", \"_\" and \"-\"", c.ID))
			}
			if _, ok := Get(st, c.ID); ok || given[c.ID] {
				return nil, where(i, fmt.Errorf("id %s is taken", c.ID))
			}
			given[c.ID] = true
		}
	}
	// Ids first, so that managers can refer to contacts of the batch: "c<n>" from the part's
	// counter, skipping ids taken. The counter moves only once everything has been checked.
	counter := st.PartCounter(Part)
	n := counter
	for _, c := range cs {
		if err := step(); err != nil {
			return nil, err
		}
		for c.ID == "" {
			n++
			id := "c" + strconv.FormatInt(n, 10)
			if _, ok := Get(st, id); !ok && !given[id] {
				c.ID, given[id] = id, true
			}
		}
		b.put(c)
	}
	for i, c := range cs {
		m, err := b.resolveManager(c.Manager)
		if err != nil {
			return nil, where(i, err)
		}
		c.Manager = m
	}
	for i, c := range cs {
		if err := step(); err != nil {
			return nil, err
		}
		if err := b.check(c); err != nil {
			return nil, where(i, err)
		}
	}
	for ; counter < n; counter++ {
		if _, err := st.NextNumber(Part); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(cs))
	if charge != nil {
		if err := charge(len(cs)); err != nil {
			return nil, err
		}
	}
	for i, c := range cs {
		if err := st.PartPut(Part, c.ID, "add", c); err != nil {
			return nil, err
		}
		ids[i] = c.ID
	}
	return ids, nil
}

// Add adds contacts as ws.contacts.add_many does (see addAll) and returns their ids: the Go
// API for tests and benchmarks. The contacts given are stored as they are: do not change them
// afterwards.
func Add(st *workspace.State, cs []*Contact) ([]string, error) { return addAll(st, cs, nil, nil) }

// update stores the changed contact c (same id as an existing one) after checking it.
func update(st *workspace.State, c *Contact) error {
	if err := normalize(c); err != nil {
		return err
	}
	b := newBook(st)
	m, err := b.resolveManager(c.Manager)
	if err != nil {
		return err
	}
	c.Manager = m
	b.put(c)
	if err := b.check(c); err != nil {
		return err
	}
	return st.PartPut(Part, c.ID, "update", c)
}

// remove deletes contact id; a contact that still manages others cannot go.
func remove(st *workspace.State, id string) error {
	c, ok := Get(st, id)
	if !ok {
		return fmt.Errorf("no contact %s", id)
	}
	if rs := reports(st, id); len(rs) > 0 {
		names := make([]string, len(rs))
		for i, r := range rs {
			names[i] = r.label()
		}
		return fmt.Errorf("%s is the manager of %s: give them another manager first", c.label(), strings.Join(names, ", "))
	}
	return st.PartRemove(Part, id, "remove")
}

// setupText is the canonical text of the contacts for the setup summary.
func setupText(st *workspace.State) string {
	var b strings.Builder
	for _, c := range All(st) {
		b.WriteString("contact " + c.ID + " " + c.Source + " " + c.Name)
		if c.Email != "" {
			b.WriteString(" <" + c.Email + ">")
		}
		for _, f := range []struct{ k, v string }{{"phone", c.Phone}, {"role", c.Role}, {"team", c.Team}, {"manager", c.Manager},
			{"company", c.Company}, {"location", c.Location}, {"aliases", strings.Join(c.Aliases, ", ")}} {
			if f.v != "" {
				b.WriteString("; " + f.k + " " + f.v)
			}
		}
		b.WriteString("\n")
		if c.Notes != "" {
			b.WriteString(c.Notes + "\n")
		}
	}
	return b.String()
}

// judge says why an action of the agent on a contact is not allowed by the keys given to
// ws.unexpected(contacts = [...]): contact ids, "new" for contacts the agent adds, "*" for any.
func judge(keys [][]string, a workspace.Action) string {
	allowed := keys[0]
	if slices.Contains(allowed, "*") || slices.Contains(allowed, a.Key) || a.Op == "add" && slices.Contains(allowed, "new") {
		return ""
	}
	name := ""
	for _, e := range []any{a.After(), a.Before()} {
		if c, ok := e.(*Contact); ok {
			name = " (" + c.Name + ")"
			break
		}
	}
	verb := map[string]string{"add": "added", "update": "changed", "remove": "removed"}[a.Op]
	if verb == "" {
		verb = a.Op
	}
	return verb + " contact " + a.Key + name
}
