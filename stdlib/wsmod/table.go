package wsmod

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/starargs"
	"go.starlark.net/starlark"
)

// member is one row of an object's table: an attribute (get, and set when writable) or a
// method (params and call). The same row builds the Starlark member, binds its arguments and
// gives its Reference entry.
type member struct {
	name   string
	params []starargs.Param // a method's parameters, in order
	ret    string           // what a method returns, for the signature: "string", "list", "None", …
	doc    string           // one paragraph
	write  bool             // the method changes the state: refused on a read-only ws
	noView bool             // absent from ws.initial, and not listed where there is no initial state
	obj    int              // an attribute that is one of the objects (kClock, …); 0 otherwise

	call func(c *call) (starlark.Value, error)
	get  func(o *object) (starlark.Value, error)
	set  func(o *object, v starlark.Value) error

	full, viewFull string         // "ws.fs.write", "ws.initial.fs.write"
	table          starargs.Table // params, as the binder and the signature read them
}

func (m *member) fullName(view bool) string {
	if view {
		return m.viewFull
	}
	return m.full
}

// signature is the member as Reference shows it, e.g. "ws.fs.list(dir=\"/\") -> list".
func (m *member) signature() string {
	if m.call == nil {
		return m.full
	}
	return m.table.Signature(m.full, m.ret)
}

// objectType is the table of one object.
type objectType struct {
	name, viewName           string // "ws.fs", "ws.initial.fs"
	members                  []*member
	byName                   map[string]*member
	attrNames, viewAttrNames []string
}

func newType(name string, members []*member) *objectType {
	t := &objectType{name: name, members: members, byName: map[string]*member{}}
	t.viewName = "ws.initial" + strings.TrimPrefix(name, "ws")
	for _, m := range members {
		if t.byName[m.name] != nil {
			panic("wsmod: duplicate member " + name + "." + m.name)
		}
		m.table = starargs.Table{Params: m.params}
		if err := m.table.Check(); err != nil {
			panic("wsmod: member " + name + "." + m.name + ": " + err.Error())
		}
		if m.table.Named() > maxParams {
			panic("wsmod: member " + name + "." + m.name + " has too many parameters")
		}
		if (m.call == nil) == (m.get == nil) {
			panic("wsmod: member " + name + "." + m.name + " must be a method or an attribute")
		}
		t.byName[m.name] = m
		m.full = name + "." + m.name
		m.viewFull = t.viewName + "." + m.name
		t.attrNames = append(t.attrNames, m.name)
		if !m.noView {
			t.viewAttrNames = append(t.viewAttrNames, m.name)
		}
	}
	slices.Sort(t.attrNames)
	slices.Sort(t.viewAttrNames)
	return t
}

// types holds the table of every object, indexed by kind. It is filled by init (a variable
// initializer would make an initialization cycle: the getter of ws.initial builds objects).
var types []*objectType

func init() {
	types = make([]*objectType, numKinds)
	types[kClock] = newType("ws.clock", clockMembers)
	types[kRand] = newType("ws.rand", randMembers)
	types[kHistory] = newType("ws.history", historyMembers)
	root := withServices(rootMembers) // appends the services' types
	types[kRoot] = newType("ws", root)
	if len(types) > maxObjects {
		panic("wsmod: too many services for maxObjects")
	}
	Reference = buildReference()
}

// FuncDoc documents one attribute or method of ws.
type FuncDoc struct {
	Name      string // e.g. "ws.mail.deliver"
	Signature string // e.g. "ws.fs.list(dir=\"/\") -> list"
	Doc       string // one paragraph
}

// Reference documents every attribute and method of ws, in a stable order: each attribute of
// ws, followed (for the objects) by the members of that object in their table's order. It is
// built from the same tables that define the members.
var Reference []FuncDoc

func buildReference() []FuncDoc {
	var out []FuncDoc
	for _, m := range types[kRoot].members {
		out = append(out, FuncDoc{Name: m.full, Signature: m.signature(), Doc: m.doc})
		if m.obj != 0 {
			for _, sub := range types[m.obj].members {
				out = append(out, FuncDoc{Name: sub.full, Signature: sub.signature(), Doc: sub.doc})
			}
		}
	}
	return out
}

// maxParams bounds the parameters of a method (deliver has 11).
const maxParams = 12

// call is one call of a method: its bound arguments and the first conversion error.
type call struct {
	w    *wsValue
	th   *starlark.Thread          // the caller's, whose step budget the method charges
	obj  *objectType               // the object whose method this is
	fn   string                    // full name, for errors
	args [maxParams]starlark.Value // by parameter position; nil when not given
	kw   []starlark.Tuple          // the keyword arguments collected by a "**" parameter
	ps   []starargs.Param
	err  error
}

// bind binds the arguments of a call of m (starargs.Table.Bind).
func (c *call) bind(m *member, args starlark.Tuple, kwargs []starlark.Tuple) (err error) {
	c.ps = m.params
	c.kw, err = m.table.Bind(c.fn, c.args[:], args, kwargs)
	return err
}

// fail records the first conversion error.
func (c *call) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(c.fn+": "+format, args...)
	}
}

// badType records "for parameter x: got int, want string".
func (c *call) badType(i int, v starlark.Value, want string) {
	c.fail("for parameter %s: got %s, want %s", c.ps[i].Name, v.Type(), want)
}

// wrap turns an error of the workspace into the method's error (nil stays nil).
func (c *call) wrap(err error) error {
	if err == nil {
		return nil
	}
	return c.w.wrap(c.fn, err)
}

// absent reports whether argument i was left out or given as None.
func (c *call) absent(i int) bool { return c.args[i] == nil || c.args[i] == starlark.None }

// str returns argument i, which must be a string.
func (c *call) str(i int) string {
	s, ok := c.args[i].(starlark.String)
	if !ok {
		c.wrongType(i, "string")
	}
	return string(s)
}

// wrongType records that argument i is missing or is not a want.
func (c *call) wrongType(i int, want string) {
	if c.args[i] == nil {
		c.fail("missing required argument %s", c.ps[i].Name)
	} else {
		c.badType(i, c.args[i], want)
	}
}

// optStr returns argument i, a string or None/absent (then def).
func (c *call) optStr(i int, def string) string {
	if c.absent(i) {
		return def
	}
	return c.str(i)
}

// optBool returns argument i, a bool or None/absent (then nil).
func (c *call) optBool(i int) *bool {
	if c.absent(i) {
		return nil
	}
	b, ok := c.args[i].(starlark.Bool)
	if !ok {
		c.badType(i, c.args[i], "bool")
		return nil
	}
	v := bool(b)
	return &v
}

// int64 returns argument i, an int that fits in 64 bits.
func (c *call) int64(i int) int64 {
	n, ok := c.args[i].(starlark.Int)
	if !ok {
		c.badType(i, c.args[i], "int")
		return 0
	}
	v, ok := n.Int64()
	if !ok {
		c.fail("for parameter %s: %s is out of range", c.ps[i].Name, n)
	}
	return v
}

// strList returns argument i, a list or tuple of strings; with one, a single string is a list
// of one. None/absent gives nil.
func (c *call) strList(i int, one bool) []string {
	if c.absent(i) {
		return nil
	}
	return c.strListOf(c.ps[i].Name, c.args[i], one)
}

func (c *call) strListOf(name string, v starlark.Value, one bool) []string {
	want := "list of strings"
	if one {
		want = "string or list of strings"
	}
	switch x := v.(type) {
	case starlark.String:
		if one {
			return []string{string(x)}
		}
	case *starlark.List, starlark.Tuple:
		seq := x.(starlark.Indexable)
		out := make([]string, seq.Len())
		for j := range out {
			s, ok := seq.Index(j).(starlark.String)
			if !ok {
				c.fail("for parameter %s: element %d: got %s, want string", name, j, seq.Index(j).Type())
				return nil
			}
			out[j] = string(s)
		}
		return out
	}
	c.fail("for parameter %s: got %s, want %s", name, v.Type(), want)
	return nil
}

// done returns the first conversion error.
func (c *call) done() error { return c.err }

// str is a starlark.String, as a Value.
func str(s string) starlark.Value { return starlark.String(s) }
