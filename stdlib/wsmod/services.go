package wsmod

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/budget"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starargs"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"github.com/coworkenv/coworkenv/workspace/services"
	"go.starlark.net/starlark"
)

// The services of package services become objects of ws: ws.<name> for each, in the order of
// services.All and before ws.clock, with their members (service.Method tables), their keywords
// of ws.unexpected, their values in ws.history and their field of ws.diff(). The object of
// services.All[i] is at index numKinds+i.

// withServices returns the root members with one member per service first, and the services'
// keywords added to ws.unexpected. It appends the services' types to types.
func withServices(root []*member) []*member {
	objs := make([]*member, len(services.All))
	for i, s := range services.All {
		k := len(types)
		types = append(types, newType("ws."+s.ScriptName(), methods(s.WS)))
		objs[i] = &member{name: s.ScriptName(), obj: k, get: objAttr(k), doc: s.ScriptDoc()}
	}
	out := slices.Concat(objs, root)
	for _, m := range out {
		if m.name == "unexpected" {
			m.params = slices.Clone(m.params)
			var docs []string
			for _, k := range keywords {
				m.params = append(m.params, starargs.Opt(k.Name, starlark.NewList(nil)))
				if k.Doc != "" {
					docs = append(docs, k.Name+" "+k.Doc)
				}
			}
			m.doc = unexpectedHead + strings.Join(docs, "; ") + unexpectedTail
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
		ps := make([]starargs.Param, len(m.Params))
		for j, p := range m.Params {
			ps[j] = param(p)
		}
		out[i] = &member{name: m.Name, params: ps, ret: m.Ret, doc: m.Doc, write: m.Write,
			call: func(c *call) (starlark.Value, error) {
				v, err := m.Call(c.w.st, c)
				if err != nil && err != c.err { // the errors of Args already name the method
					err = c.wrap(err)
				}
				return v, err
			}}
	}
	return out
}

// param is the parameter a service declares: its default, written in Starlark ("[]", `"/"`,
// "None"), becomes the value the signature shows; "" makes it required. The methods read the
// arguments left out as absent (service.Args), so the binder does not fill the default in.
func param(p service.Param) starargs.Param {
	if p.Default == "" {
		return starargs.Req(p.Name)
	}
	v, err := starlark.Eval(&starlark.Thread{Name: "default"}, p.Name, p.Default, nil)
	if err != nil {
		panic(fmt.Sprintf("wsmod: default of %s: %v", p.Name, err))
	}
	return starargs.Opt(p.Name, v)
}

// keyword is one keyword parameter of ws.unexpected: keyword kw of service svc (an index in
// services.All).
type keyword struct {
	service.Keyword
	svc, kw int
}

// keywords are the keyword parameters of ws.unexpected, in the order of its signature (see
// service.Service.Keywords): the order the parameters have always had.
var keywords = func() []keyword {
	var out []keyword
	for i, s := range services.All {
		for j, k := range s.UnexpectedKeywords() {
			out = append(out, keyword{k, i, j})
		}
	}
	withPart := func(k keyword) int {
		if services.All[k.svc].Part != nil {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b keyword) int { return cmp.Or(withPart(a)-withPart(b), a.kw-b.kw) })
	return out
}()

// serviceOf returns the index in services.All of the service whose history actions are of kind;
// -1 when there is none.
func serviceOf(kind string) int {
	return slices.IndexFunc(services.All, func(s *service.Service) bool { return s.HasKind(kind) })
}

// unexpectedFn is ws.unexpected, a member of the root: each service judges the agent's actions
// on it by the lists given for its keywords.
func unexpectedFn(c *call) (starlark.Value, error) {
	allowed := make([][][]string, len(services.All))
	for j, k := range keywords {
		if allowed[k.svc] == nil {
			allowed[k.svc] = make([][]string, len(services.All[k.svc].UnexpectedKeywords()))
		}
		allowed[k.svc][k.kw] = c.strList(j, true)
	}
	if err := c.done(); err != nil {
		return nil, err
	}
	var out []string
	for _, act := range c.w.st.History(c.w.initial) {
		if act.Actor != workspace.ActorAgent {
			continue
		}
		i := serviceOf(act.Kind)
		if i < 0 {
			continue
		}
		s := judge(services.All[i], allowed[i], act)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return starconv.Strings(out), nil
}

// judge says in words why the agent's action act on service s is not allowed ("" when it is).
func judge(s *service.Service, allowed [][]string, act workspace.Action) string {
	if s.Judge != nil {
		return s.Judge(allowed, act)
	}
	if slices.Contains(allowed[0], act.Key) || slices.Contains(allowed[0], "*") {
		return ""
	}
	return act.Op + " " + act.Kind + " " + act.Key
}

// entryValue converts the entry of an action of kind (before or after) for scripts.
func entryValue(kind string, e any) starlark.Value {
	if i := serviceOf(kind); i >= 0 && services.All[i].Value != nil {
		if v := services.All[i].Value(e); v != nil {
			return v
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
func (c *call) Kwargs() []starlark.Tuple         { return c.kw }
func (c *call) Fail(format string, args ...any)  { c.fail(format, args...) }
func (c *call) Done() error                      { return c.done() }
func (c *call) Charge(n int) error               { return budget.Charge(c.th, uint64(max(n, 0))) }

func (c *call) StrListOf(name string, v starlark.Value, one bool) []string {
	return c.strListOf(name, v, one)
}

// Sub binds the items of d as the keyword arguments of a call of method, a method of the same
// object, by that method's table; what names the call in its errors ("message 3").
func (c *call) Sub(method, what string, d *starlark.Dict) (service.Args, error) {
	m := c.obj.byName[method]
	if m == nil || m.call == nil {
		panic("wsmod: " + c.obj.name + " has no method " + method)
	}
	kwargs := make([]starlark.Tuple, 0, d.Len())
	for _, kv := range d.Items() {
		if _, ok := kv[0].(starlark.String); !ok {
			return nil, fmt.Errorf("%s: got a %s key, want the name of a parameter of %s", what, kv[0].Type(), m.full)
		}
		kwargs = append(kwargs, kv)
	}
	sub := &call{w: c.w, th: c.th, obj: c.obj, fn: what}
	if err := sub.bind(m, nil, kwargs); err != nil {
		return nil, err
	}
	return sub, nil
}

// Dict returns argument i, which must be a dict.
func (c *call) Dict(i int) *starlark.Dict {
	d, ok := c.args[i].(*starlark.Dict)
	if !ok {
		c.wrongType(i, "dict")
	}
	return d
}

// Fields converts the keyword arguments collected by a "**" parameter to an object.
func (c *call) Fields() *jsonv.Object {
	o := &jsonv.Object{Members: make([]jsonv.Member, 0, len(c.kw))}
	for _, kv := range c.kw {
		name := string(kv[0].(starlark.String))
		v, err := starconv.ToJSON(kv[1])
		if err != nil {
			c.fail("for parameter %s: %v", name, err)
			return nil
		}
		o.Members = append(o.Members, jsonv.Member{Key: name, Value: v})
	}
	return o
}

var _ service.Args = (*call)(nil)
