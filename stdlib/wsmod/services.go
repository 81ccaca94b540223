package wsmod

import (
	"slices"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"github.com/coworkenv/coworkenv/workspace/services"
	"go.starlark.net/starlark"
)

// The services of package services that bring their own script binding (service.Method
// tables) become objects of ws: ws.<name> after ws.db, with their members, their keyword of
// ws.unexpected and their field of ws.diff().

// scripted lists the services with a binding, in the order of services.All; the object of
// scripted[i] is at index numKinds+i.
var scripted = func() []*service.Service {
	var out []*service.Service
	for _, s := range services.All {
		if s.WS != nil {
			out = append(out, s)
		}
	}
	return out
}()

// withServices returns the root members with one member per scripted service after ws.db,
// and the services' keywords added to ws.unexpected. It appends the services' types to types.
func withServices(root []*member) []*member {
	var objs []*member
	for _, s := range scripted {
		k := len(types)
		types = append(types, newType("ws."+s.ScriptName(), methods(s.WS)))
		objs = append(objs, &member{name: s.ScriptName(), obj: k, get: objAttr(k), doc: s.Doc})
	}
	at := slices.IndexFunc(root, func(m *member) bool { return m.name == "db" }) + 1
	out := slices.Concat(root[:at], objs, root[at:])
	for _, m := range out {
		if m.name == "unexpected" {
			m.params = slices.Clone(m.params)
			for _, s := range scripted {
				m.params = append(m.params, param{s.Name, "[]"})
			}
		}
	}
	return out
}

// methods turns a service's method table into members.
func methods(ms []service.Method) []*member {
	out := make([]*member, len(ms))
	for i, m := range ms {
		if m.Set != nil {
			out[i] = &member{name: m.Name, doc: m.Doc,
				get: func(o *object) (starlark.Value, error) { return m.Call(o.ws.st, nil) },
				set: func(o *object, v starlark.Value) error { return m.Set(o.ws.st, v) }}
			continue
		}
		ps := make([]param, len(m.Params))
		for j, p := range m.Params {
			ps[j] = param{p.Name, p.Default}
		}
		out[i] = &member{name: m.Name, params: ps, ret: m.Ret, doc: m.Doc, write: m.Write,
			call: func(c *call) (starlark.Value, error) {
				v, err := m.Call(c.w.st, c)
				return v, c.wrap(err)
			}}
	}
	return out
}

// unexpectedPart judges an action of the agent on a service's part, given the keys the
// verifier allowed for that service ("" when allowed).
func unexpectedPart(c *call, act workspace.Action) (string, bool) {
	for i, s := range scripted {
		if s.Part == nil || s.Part.Entry != act.Kind {
			continue
		}
		allowed := c.strList(unexpectedFixed+i, true)
		if s.Judge != nil {
			return s.Judge(allowed, act), true
		}
		if slices.Contains(allowed, act.Key) || slices.Contains(allowed, "*") {
			return "", true
		}
		return act.Op + " " + act.Kind + " " + act.Key, true
	}
	return "", false
}

// partValue converts an entry of a service's part for scripts.
func partValue(e workspace.Entry) starlark.Value {
	for _, s := range scripted {
		if s.Value != nil {
			if v := s.Value(e); v != nil {
				return v
			}
		}
	}
	return starlark.None
}

// The arguments of a call, as service methods read them (service.Args).

func (c *call) Absent(i int) bool                { return c.absent(i) }
func (c *call) Value(i int) starlark.Value       { return c.args[i] }
func (c *call) Str(i int) string                 { return c.str(i) }
func (c *call) OptStr(i int, def string) string  { return c.optStr(i, def) }
func (c *call) OptBool(i int) *bool              { return c.optBool(i) }
func (c *call) Int(i int) int64                  { return c.int64(i) }
func (c *call) StrList(i int, one bool) []string { return c.strList(i, one) }
func (c *call) Fail(format string, args ...any)  { c.fail(format, args...) }
func (c *call) Done() error                      { return c.done() }

var _ service.Args = (*call)(nil)
