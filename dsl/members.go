package dsl

import (
	"slices"
	"strings"

	"go.starlark.net/starlark"
)

// Member is one attribute or method of a Starlark value whose Go type is T. Its Func names it in
// full ("ep.called") and documents it; Get makes an attribute, Call a method (Func.Params then
// binds its arguments).
type Member[T any] struct {
	Func
	Get  func(recv T) starlark.Value
	Call func(recv T, thread *starlark.Thread, a *Args) (starlark.Value, error)
}

// Members is the one table of a value's attributes and methods: it answers Attr and AttrNames
// and gives the reference entries, so what a script can use and what the reference shows are
// the same list.
type Members[T any] struct {
	prefix string // "ep."
	list   []Member[T]
	names  []string // sorted
}

// NewMembers makes the table of the value called prefix ("ep"). Each member's name is written in
// full; a member outside prefix, a duplicate, a member both or neither attribute and method, or
// parameters starargs.Table.Check refuses are a bug, and panic.
func NewMembers[T any](prefix string, list ...Member[T]) *Members[T] {
	ms := &Members[T]{prefix: prefix + ".", list: list}
	for _, m := range list {
		name, ok := strings.CutPrefix(m.Name, ms.prefix)
		switch {
		case !ok:
			panic("dsl: member " + m.Name + " is not in " + prefix)
		case slices.Contains(ms.names, name):
			panic("dsl: duplicate member " + m.Name)
		case (m.Get == nil) == (m.Call == nil):
			panic("dsl: member " + m.Name + " must be an attribute or a method")
		case (m.Call != nil) != (m.Params != nil):
			panic("dsl: member " + m.Name + ": a method, and only a method, has Params")
		}
		if t := m.table(); t.Check() != nil {
			panic("dsl: member " + m.Name + ": " + t.Check().Error())
		}
		ms.names = append(ms.names, name)
	}
	slices.Sort(ms.names)
	return ms
}

// AttrNames lists the members' names, sorted.
func (ms *Members[T]) AttrNames() []string { return slices.Clone(ms.names) }

// Attr is the member called name of recv, or nil, nil when there is none.
func (ms *Members[T]) Attr(recv T, name string) (starlark.Value, error) {
	for i := range ms.list {
		m := &ms.list[i]
		if m.Name[len(ms.prefix):] != name {
			continue
		}
		if m.Get != nil {
			return m.Get(recv), nil
		}
		return m.Starlark(func(thread *starlark.Thread, a *Args) (starlark.Value, error) {
			return m.Call(recv, thread, a)
		}), nil
	}
	return nil, nil
}

// Funcs are the members in table order, for the reference.
func (ms *Members[T]) Funcs() []Func {
	out := make([]Func, len(ms.list))
	for i, m := range ms.list {
		out[i] = m.Func
	}
	return out
}
