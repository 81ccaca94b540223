// Package wsmod is the workspace value `ws` that task scripts receive (docs/reference.md): a
// Starlark view of a *workspace.State.
//
//	ws.fs        write, read, exists, list, walk, remove, move, mkdir, glob
//	ws.mail      address (read and write), deliver, get, messages, folders
//	ws.calendar  add, get, events, update, remove
//	ws.db        insert, get, find, all, update, remove, collections
//	ws.clock     now, set, advance
//	ws.rand      int, choice, shuffle, sample
//	ws.initial   read-only view of the state after setup (when Options.Initial is set)
//	ws.diff()    what changed since ws.initial (or against another state)
//	ws.history   the episode's actions since ws.initial: actions, sent, versions, touched
//	ws.unexpected(...)  the agent's changes the arguments do not allow
//	ws.reference read-only view of the state the reference solution leaves (verifiers)
//
// ws.fs, ws.mail, ws.calendar, ws.db and the objects of the other services (ws.contacts,
// ws.chat, …) are made from the services' declarations in services.All (see services.go); the
// rest is about the workspace as a whole and is written here.
//
// Where Options.Initial is nil, ws.initial and ws.diff are not listed by dir(ws) (hasattr is
// False) and reading them is an error that says they exist in verifiers.
//
// Reference documents every member; it is generated from the same tables that define the
// members (one table per object), so the documentation cannot drift from the implementation.
//
// # Values
//
// Every value handed to a script is fresh: messages and events are structs (see mail.MessageValue
// and calendar.EventValue) holding new lists, db records are new dicts, listings are new lists. A
// script may change them freely; the state changes only through the methods. None given for an
// optional argument means the argument is absent.
//
// # Errors
//
// The arguments are bound by the binder of every builtin (package starargs), whose errors name
// the method ("ws.fs.read: missing required argument path"); conversion errors name the method
// and the parameter ("ws.mail.deliver: for parameter sender: got int, want string"); errors of the workspace are prefixed with the method's name
// ("ws.fs.read: no such file: /x"). A read-only ws (Options.ReadOnly) refuses every mutation,
// including the draws of ws.rand (they move the random source) and setting ws.mail.address:
// "ws.fs.write: the workspace is read-only in a verifier". The methods of ws.initial are named
// "ws.initial.fs.read" and so on in errors.
//
// # Cost
//
// New makes one allocation: the objects ws.fs, ws.mail, … live inside the root value. Reading a
// method (ws.fs.read) allocates one small bound-method value; ws.initial allocates a new view
// each time it is read.
//
// Every method charges the work it does to the calling script's step budget (package budget,
// the same budget as dsl.Charge): a list it returns costs one step per element, a method that
// looks at entries it does not return (ws.db.find, ws.db.count, ws.mail.messages, …) one step
// per entry looked at, and the bulk methods (ws.db.insert_many, ws.db.load, ws.fs.write_many,
// ws.mail.deliver_many) one step per entry plus one per KiB of it, as they go. A script that
// seeds 100,000 entries with them stays well within the default budget; one that lists a large
// section in a loop runs out of steps, not on.
package wsmod

import (
	"errors"
	"fmt"

	"github.com/coworkenv/coworkenv/internal/budget"
	"github.com/coworkenv/coworkenv/workspace"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Options configure a ws value.
type Options struct {
	// ReadOnly makes every mutation an error (verifiers, user functions).
	ReadOnly bool
	// Reason completes the read-only error: "in a verifier" gives
	// "ws.fs.write: the workspace is read-only in a verifier".
	Reason string
	// Initial, when set, is the state right after setup: ws.initial is a read-only view of it
	// and ws.diff() compares the state with it.
	Initial *workspace.State
	// Reference, when set (verifiers), gives the state ws.reference views: the one the
	// reference solution leaves.
	Reference func() (*workspace.State, error)
}

// object kinds: the index of each object in wsValue.objs and of its type in types.
const (
	kRoot = iota
	kClock
	kRand
	kHistory
	numKinds
	// maxObjects bounds the objects of ws: those above, then one per service of package
	// services (ws.fs, ws.mail, …, ws.contacts, ws.chat), from index numKinds on.
	maxObjects = numKinds + 12
)

// wsValue holds one view of a state and all of its objects, so New allocates once.
type wsValue struct {
	st       *workspace.State
	readOnly bool
	reason   string
	initial  *workspace.State // nil: no ws.initial, no ws.diff
	// reference is Options.Reference
	reference func() (*workspace.State, error)
	isView    bool // this is ws.initial
	objs      [maxObjects]object
}

// object is ws itself or one of ws.fs, ws.mail, …: a Starlark value whose members come from
// its type's table.
type object struct {
	ws *wsValue
	t  *objectType
}

// New returns the ws value for s. It is cheap: one allocation.
func New(s *workspace.State, opts Options) starlark.Value {
	w := &wsValue{st: s, readOnly: opts.ReadOnly, reason: opts.Reason, initial: opts.Initial, reference: opts.Reference}
	w.init()
	return &w.objs[kRoot]
}

func (w *wsValue) init() {
	for i := range types {
		w.objs[i] = object{ws: w, t: types[i]}
	}
}

// newView returns ws.initial: a read-only view of s without initial and diff.
func newView(s *workspace.State) *object {
	w := &wsValue{st: s, readOnly: true, isView: true}
	w.init()
	return &w.objs[kRoot]
}

var (
	_ starlark.HasAttrs    = (*object)(nil)
	_ starlark.HasSetField = (*object)(nil)
	_ starlark.Callable    = (*boundMethod)(nil)
	_ starlark.Comparable  = (*boundMethod)(nil)
)

// name is how the object is written in a script: "ws.fs", or "ws.initial.fs" in the view.
func (o *object) name() string {
	if o.ws.isView {
		return o.t.viewName
	}
	return o.t.name
}

func (o *object) String() string        { return "<" + o.name() + ">" }
func (o *object) Type() string          { return o.t.name }
func (o *object) Freeze()               {}
func (o *object) Truth() starlark.Bool  { return true }
func (o *object) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: %s", o.t.name) }

// Attr returns an attribute or a bound method; (nil, nil) when there is no such member.
func (o *object) Attr(name string) (starlark.Value, error) {
	m := o.t.byName[name]
	if m == nil || (m.noView && o.ws.isView) {
		return nil, nil
	}
	if m.noView && o.ws.initial == nil {
		return nil, o.ws.wrap(m.full, errNoInitial)
	}
	if m.get != nil {
		return m.get(o)
	}
	return &boundMethod{o: o, m: m}, nil
}

// AttrNames returns the member names, sorted. initial and diff are listed only where there is
// an initial state (so hasattr(ws, "initial") tells), though reading them elsewhere gives an
// error that explains.
func (o *object) AttrNames() []string {
	if o.ws.isView || o.ws.initial == nil {
		return o.t.viewAttrNames
	}
	return o.t.attrNames
}

// SetField writes a settable attribute (ws.mail.address).
func (o *object) SetField(name string, v starlark.Value) error {
	m := o.t.byName[name]
	if m == nil || (m.noView && o.ws.isView) {
		return starlark.NoSuchAttrError(fmt.Sprintf("%s has no .%s field", o.name(), name))
	}
	if m.set == nil {
		return fmt.Errorf("cannot set %s.%s", o.name(), name)
	}
	fn := m.fullName(o.ws.isView)
	if o.ws.readOnly {
		return o.ws.readOnlyErr(fn)
	}
	if err := m.set(o, v); err != nil {
		return o.ws.wrap(fn, err)
	}
	return nil
}

// readOnlyErr is the error of a mutation of a read-only ws.
func (w *wsValue) readOnlyErr(fn string) error {
	switch {
	case w.isView:
		return fmt.Errorf("%s: ws.initial is read-only (it is the state right after setup)", fn)
	case w.reason != "":
		return fmt.Errorf("%s: the workspace is read-only %s", fn, w.reason)
	}
	return fmt.Errorf("%s: the workspace is read-only", fn)
}

// wrap prefixes an error of the workspace with the method's name.
func (w *wsValue) wrap(fn string, err error) error {
	if errors.Is(err, workspace.ErrFrozen) {
		return w.readOnlyErr(fn)
	}
	return fmt.Errorf("%s: %v", fn, err)
}

// boundMethod is a method of an object, as read by ws.fs.write.
type boundMethod struct {
	o *object
	m *member
}

func (b *boundMethod) Name() string { return b.m.fullName(b.o.ws.isView) }
func (b *boundMethod) String() string {
	return "<built-in method " + b.m.name + " of " + b.o.name() + " value>"
}
func (b *boundMethod) Type() string         { return "builtin_function_or_method" }
func (b *boundMethod) Freeze()              {}
func (b *boundMethod) Truth() starlark.Bool { return true }
func (b *boundMethod) Hash() (uint32, error) {
	return starlark.String(b.Name()).Hash()
}

// CompareSameType makes two reads of the same method of the same object equal, as in Python.
func (b *boundMethod) CompareSameType(op syntax.Token, y starlark.Value, _ int) (bool, error) {
	c := y.(*boundMethod)
	eq := b.o == c.o && b.m == c.m
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("%s %s %s not implemented", b.Type(), op, c.Type())
}

// CallInternal checks the read-only flag, binds the arguments by the member's parameter table
// and runs the implementation. A list it returns costs a step per element (see Cost).
func (b *boundMethod) CallInternal(th *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	w := b.o.ws
	c := &call{w: w, th: th, obj: b.o.t, fn: b.Name()}
	if b.m.write && w.readOnly {
		return nil, w.readOnlyErr(c.fn)
	}
	if err := c.bind(b.m, args, kwargs); err != nil {
		return nil, err
	}
	v, err := b.m.call(c)
	if err != nil {
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	if v == nil {
		v = starlark.None
	}
	if l, ok := v.(*starlark.List); ok {
		if err := budget.Charge(th, uint64(l.Len())); err != nil {
			return nil, c.wrap(err)
		}
	}
	return v, nil
}
