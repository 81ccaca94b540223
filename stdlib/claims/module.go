package claims

import (
	"fmt"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/starargs"
	"github.com/coworkenv/coworkenv/stdlib/timemod"
	"github.com/nyaruka/phonenumbers"
	"github.com/shopspring/decimal"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Env is what the module knows of the episode a script runs in. An episode sets it on the
// threads of its verifiers (SetEnv); without one, texts are read with no clock, no region and no
// names but those a call passes.
type Env struct {
	Region   string
	Location *time.Location
	// Now is the episode's virtual clock: a text given as a string was written now.
	Now func() time.Time
	// Names and IDs are the workspace's people, companies, places and identifiers (read once,
	// when first needed).
	Names func() []KnownName
	IDs   func() []string
	// Record, when set, is told every statement a script checks (the validator's probes act on
	// what the verifier depends on).
	Record func(Use)

	names []KnownName
	ids   []string
	idx   *index
	read  bool
}

// Use is one statement a script checked, and its verdict.
type Use struct {
	Fn      string // "states", "denies" or "states_only"
	Text    string
	Values  []Value
	Kind    Kind
	About   []string
	Options Options
	Verdict Verdict
}

const envKey = "coworkenv.claims.env"

// SetEnv sets the module's view of the episode on a thread.
func SetEnv(th *starlark.Thread, e *Env) { th.SetLocal(envKey, e) }

func envOf(th *starlark.Thread) *Env {
	e, _ := th.Local(envKey).(*Env)
	return e
}

// ValidRegion reports whether r is a region libphonenumber knows ("NL", "US").
func ValidRegion(r string) bool {
	_, ok := regions[strings.ToUpper(r)]
	return ok && len(r) == 2
}

var regions = func() map[string]bool {
	m := map[string]bool{}
	for r := range phonenumbers.GetSupportedRegions() {
		m[r] = true
	}
	return m
}()

// FuncDoc documents one member of the module.
type FuncDoc struct {
	Name      string
	Signature string
	Doc       string
}

type builtinFunc = func(th *starlark.Thread, fn string, a *call) (starlark.Value, error)

type member struct {
	name, ret, doc string
	params         starargs.Table
	fn             builtinFunc
}

var (
	req, opt = starargs.Req, starargs.Opt
	none     = starlark.None
	// the parameters every reading takes
	textParams = []starargs.Param{opt("names", none), opt("written", none)}
)

func params(ps ...starargs.Param) starargs.Table {
	return starargs.Table{Params: append(ps, textParams...)}
}

const textDoc = "`text` is a string, a mail message (its body, written at its date) or a chat message (its text, written at its time); None reads as an empty text. "
const aboutDoc = "`about` is a label or a name, or a list of them, that the value must be about (each may offer alternatives: `\"cut-off|deadline\"`); see docs/claims.md for how a value is bound to what it is about. "
const optsDoc = "`names` adds names to those of the workspace: a dict of name to `\"person\"`, `\"company\"`, `\"place\"` or `\"other\"`, or a list. `written` (RFC 3339) overrides when the text was written."

var table = []member{
	{name: "states", ret: "bool", fn: checker("states"),
		params: params(req("text"), req("value"), opt("about", none), opt("kind", none)),
		doc:    "Whether `text` asserts `value` about `about`, and asserts no other value of its kind about it. A rival value, the value hedged (\"probably\", \"14% or 13.5%\") or offered on a condition (\"or 16:15 if…\"), or the value denied fails it; a past mention of another value (\"moved from Thursday\"), a question and somebody else's words do not count. `value` is a string read like the text (\"14:30\", \"2026-01-15\", \"EUR 1,240.00\", \"13.5%\", \"18 pallets\", \"+31 10 555 0142\", \"approved\", a known name, an id; words that are no value are a phrase), a number, or a `time.time` (its day and time of day, in the task's time zone, both stated). `kind` forces a kind. " + textDoc + aboutDoc + optsDoc},
	{name: "states_only", ret: "bool", fn: checker("states_only"),
		params: params(req("text"), req("values"), opt("kind", none), opt("about", none)),
		doc:    "Whether every value of the kind of `values` (or `kind`) that `text` puts forward about `about` (asserted, hedged or conditional) is one of `values`. It holds for a text that states none: combine it with `claims.states` to require one. " + textDoc + aboutDoc + optsDoc},
	{name: "denies", ret: "bool", fn: checker("denies"),
		params: params(req("text"), req("value"), opt("about", none), opt("kind", none)),
		doc:    "Whether `text` denies `value` about `about` (\"not approved\", \"rejected\" for approved, \"I can't share it\" for the phrase \"share\") and asserts it nowhere about it. " + textDoc + aboutDoc + optsDoc},
	{name: "read", ret: "list", fn: readFn,
		params: params(req("text"), opt("kind", none)),
		doc:    "Every value `text` names (of `kind`, when given), in order, as structs with `kind`, `value` (the normal form: `\"2026-01-15\"`, `\"14:30\"`, `\"EUR 1240.00\"`, `\"13.5\"`, `\"18 pallet\"`, `\"+311825550231\"`, a status's pole, a name's key), `text` (as written), `stance` (`asserted`, `negated`, `hedged`, `conditional`, `question`, `past`, `reported`), `trigger` (the word that set it), `about` (the words it is about), `entity` (the name it is bound to, or \"\"), `role` (`start` or `end` of a range, or \"\") and `sentence` (its index). For statements the other functions do not make. " + textDoc + optsDoc},
	{name: "parse", ret: "struct", fn: parseFn,
		params: starargs.Table{Params: []starargs.Param{req("value"), opt("kind", none)}},
		doc:    "Reads one value as `claims.states` reads its `value`: a struct with `kind` and `value` (the normal form). Fails when a `kind` is given and the string holds none."},
	{name: "state", ret: "claims.statement", fn: statement("states"),
		params: starargs.Table{Params: []starargs.Param{req("value"), opt("about", none), opt("kind", none)}},
		doc:    "A statement a text must make, as `claims.states` checks it, for `judge(claims = [...])` or `s.holds(text)`. `str(s)` says it in words (what a judge model is told)."},
	{name: "state_only", ret: "claims.statement", fn: statement("states_only"),
		params: starargs.Table{Params: []starargs.Param{req("values"), opt("kind", none), opt("about", none)}},
		doc:    "A statement that no other value of the kind may be put forward, as `claims.states_only` checks it."},
	{name: "deny", ret: "claims.statement", fn: statement("denies"),
		params: starargs.Table{Params: []starargs.Param{req("value"), opt("about", none), opt("kind", none)}},
		doc:    "A denial a text must make, as `claims.denies` checks it."},
}

// Module is the Starlark module "claims".
var Module = &starlarkstruct.Module{Name: "claims", Members: buildMembers()}

// Reference documents every member of Module, then the statement type.
var Reference = buildReference()

func buildMembers() starlark.StringDict {
	d := make(starlark.StringDict, len(table))
	for i := range table {
		m := &table[i]
		if err := m.params.Check(); err != nil {
			panic("claims." + m.name + ": " + err.Error())
		}
		d[m.name] = starlark.NewBuiltin("claims."+m.name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			vals := make([]starlark.Value, len(m.params.Params))
			if _, err := m.params.Bind(b.Name(), vals, args, kwargs); err != nil {
				return nil, err
			}
			m.params.Defaults(vals)
			return guarded(b.Name(), func() (starlark.Value, error) {
				return m.fn(th, b.Name(), &call{fn: b.Name(), p: &m.params, vals: vals, th: th})
			})
		})
	}
	return d
}

// guarded runs a builtin's work and turns a panic of the reader into the script's error: a text
// that trips a bug in the reader fails the call that read it, never the process that runs the
// script (serve and validate run verifiers in process).
func guarded(name string, fn func() (starlark.Value, error)) (v starlark.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("%s: the reader failed on this text (a bug in coworkenv, please report it with the text): %v", name, r)
		}
	}()
	return fn()
}

func buildReference() []FuncDoc {
	var out []FuncDoc
	for _, m := range table {
		out = append(out, FuncDoc{Name: m.name, Signature: m.params.Signature("claims."+m.name, m.ret), Doc: m.doc})
	}
	out = append(out, FuncDoc{Name: "Statement.holds", Signature: "s.holds(text) -> bool",
		Doc: "Whether `text` makes the statement (`text` as for `claims.states`)."})
	return out
}

// call is one call's bound arguments.
type call struct {
	fn   string
	p    *starargs.Table
	vals []starlark.Value
	th   *starlark.Thread
}

func (c *call) arg(name string) starlark.Value {
	for i, p := range c.p.Params {
		if p.Name == name {
			return c.vals[i]
		}
	}
	panic("claims: no parameter " + name)
}

func (c *call) errorf(name, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", c.fn, name, fmt.Sprintf(format, args...))
}

// ---- reading the arguments ----

// text reads the `text` argument and when it was written.
func (c *call) text() (string, time.Time, error) {
	v := c.arg("text")
	var written time.Time
	var s string
	switch x := v.(type) {
	case starlark.NoneType:
	case starlark.String:
		s = string(x)
	case starlark.HasAttrs:
		body, _ := x.Attr("body")
		if body == nil {
			body, _ = x.Attr("text")
		}
		bs, ok := body.(starlark.String)
		if !ok {
			return "", written, c.errorf("text", "want a string or a message, not %s", v.Type())
		}
		s = string(bs)
		for _, f := range []string{"date", "ts"} {
			if at, _ := x.Attr(f); at != nil {
				if as, ok := at.(starlark.String); ok {
					if t, err := time.Parse(time.RFC3339, string(as)); err == nil {
						written = t
					}
				}
			}
		}
	default:
		return "", written, c.errorf("text", "want a string or a message, not %s", v.Type())
	}
	if w := c.arg("written"); w != none {
		t, err := timeArg(w)
		if err != nil {
			return "", written, c.errorf("written", "%v", err)
		}
		written = t
	}
	return s, written, nil
}

func timeArg(v starlark.Value) (time.Time, error) {
	switch x := v.(type) {
	case starlark.String:
		return time.Parse(time.RFC3339, string(x))
	case timemod.Time:
		return time.Time(x), nil
	}
	return time.Time{}, fmt.Errorf("want an RFC 3339 string or a time.time, not %s", v.Type())
}

// options builds the reader's options for a text written at written.
func (c *call) options(written time.Time) (Options, error) {
	var o Options
	e := envOf(c.th)
	if e != nil {
		o.Region, o.Location = e.Region, e.Location
		if written.IsZero() && e.Now != nil {
			written = e.Now()
		}
		if !e.read {
			e.read = true
			if e.Names != nil {
				e.names = e.Names()
			}
			if e.IDs != nil {
				e.ids = e.IDs()
			}
		}
		o.Names, o.IDs = e.names, e.ids
		if e.idx == nil {
			e.idx = indexOf(&o)
		}
		o.idx = e.idx
	}
	o.Written = written
	extra, err := c.names()
	if err != nil {
		return o, err
	}
	if len(extra) > 0 {
		o.Names = append(append([]KnownName(nil), extra...), o.Names...)
		o.idx = nil
	}
	return o, nil
}

func (c *call) names() ([]KnownName, error) {
	v := c.arg("names")
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case *starlark.Dict:
		var out []KnownName
		for _, kv := range x.Items() {
			k, ok1 := kv[0].(starlark.String)
			cl, ok2 := kv[1].(starlark.String)
			if !ok1 || !ok2 {
				return nil, c.errorf("names", "want a dict of str to str")
			}
			class := NameClass(cl)
			switch class {
			case Person, Company, Place, Other:
			default:
				return nil, c.errorf("names", "%q is no class (want person, company, place or other)", string(cl))
			}
			out = append(out, KnownName{Key: string(k), Class: class})
		}
		return out, nil
	case *starlark.List, starlark.Tuple:
		var out []KnownName
		it := starlark.Iterate(x)
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			s, ok := e.(starlark.String)
			if !ok {
				return nil, c.errorf("names", "want a list of strings, not a %s in it", e.Type())
			}
			out = append(out, KnownName{Key: string(s), Class: Other})
		}
		return out, nil
	}
	return nil, c.errorf("names", "want a dict or a list, not %s", v.Type())
}

func (c *call) kind() (Kind, error) {
	v := c.arg("kind")
	if v == none {
		return "", nil
	}
	s, ok := v.(starlark.String)
	if !ok || !validKind(Kind(s)) {
		return "", c.errorf("kind", "want one of %s, not %s", kindList(), v.String())
	}
	return Kind(s), nil
}

func (c *call) about() ([]string, error) {
	return stringsArg(c, "about")
}

func stringsArg(c *call, name string) ([]string, error) {
	v := c.arg(name)
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.String:
		return []string{string(x)}, nil
	case *starlark.List, starlark.Tuple:
		var out []string
		it := starlark.Iterate(x)
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			s, ok := e.(starlark.String)
			if !ok {
				return nil, c.errorf(name, "want strings, not a %s", e.Type())
			}
			out = append(out, string(s))
		}
		return out, nil
	}
	return nil, c.errorf(name, "want a string or a list of strings, not %s", v.Type())
}

// value reads one expected value.
func valueOf(v starlark.Value, kind Kind, o Options, errf func(string, ...any) error) (Value, error) {
	switch x := v.(type) {
	case starlark.String:
		val, err := ParseValue(string(x), kind, o)
		if err != nil {
			return Value{}, errf("%v", err)
		}
		return val, nil
	case starlark.Int:
		n, _ := x.Int64()
		if kind != "" && kind != Number {
			return ParseValue(x.String(), kind, o)
		}
		return NumberValue(decimal.NewFromInt(n)), nil
	case starlark.Float:
		if kind != "" && kind != Number {
			return ParseValue(decimal.NewFromFloat(float64(x)).String(), kind, o)
		}
		return NumberValue(decimal.NewFromFloat(float64(x))), nil
	case timemod.Time:
		return TimeValue(time.Time(x), o), nil
	}
	return Value{}, errf("want a string, a number or a time.time, not %s", v.Type())
}

// charge counts the work of reading a text against the script's step budget: one step per 16
// bytes (a reading is linear in the text's length).
func charge(th *starlark.Thread, text string) {
	th.Steps += uint64(len(text)/16 + 1)
}

// ---- the functions ----

// checker is the builtin that runs the statement fnName on a text.
func checker(fnName string) func(*starlark.Thread, string, *call) (starlark.Value, error) {
	return func(th *starlark.Thread, fn string, c *call) (starlark.Value, error) { return check(c, fnName) }
}

// check runs one statement on the call's text.
func check(c *call, fnName string) (starlark.Value, error) {
	text, written, err := c.text()
	if err != nil {
		return nil, err
	}
	o, err := c.options(written)
	if err != nil {
		return nil, err
	}
	st, err := statementOf(c, fnName, o)
	if err != nil {
		return nil, err
	}
	charge(c.th, text)
	return starlark.Bool(st.run(c.th, text, o).OK), nil
}

// statementOf reads a statement from a call's value(s), about and kind.
func statementOf(c *call, fnName string, o Options) (*Statement, error) {
	kind, err := c.kind()
	if err != nil {
		return nil, err
	}
	about, err := c.about()
	if err != nil {
		return nil, err
	}
	st := &Statement{Fn: fnName, Kind: kind, About: about}
	errf := func(name string) func(string, ...any) error {
		return func(f string, a ...any) error { return c.errorf(name, f, a...) }
	}
	if fnName == "states_only" {
		vs := c.arg("values")
		it := starlark.Iterate(vs)
		if it == nil {
			return nil, c.errorf("values", "want a list, not %s", vs.Type())
		}
		defer it.Done()
		var e starlark.Value
		for it.Next(&e) {
			v, err := valueOf(e, kind, o, errf("values"))
			if err != nil {
				return nil, err
			}
			st.Values = append(st.Values, v)
		}
		if kind == "" {
			if len(st.Values) == 0 {
				return nil, c.errorf("kind", "give a kind when values is empty")
			}
			st.Kind = st.Values[0].Kind
		}
		return st, nil
	}
	arg := c.arg("value")
	if l, ok := arg.(*starlark.List); ok && fnName == "states" {
		if l.Len() == 0 {
			return nil, c.errorf("value", "an empty list: give the values the text must state")
		}
		for i := 0; i < l.Len(); i++ {
			v, err := valueOf(l.Index(i), kind, o, errf("value"))
			if err != nil {
				return nil, err
			}
			st.Values = append(st.Values, v)
		}
		return st, nil
	}
	v, err := valueOf(arg, kind, o, errf("value"))
	if err != nil {
		return nil, err
	}
	st.Values = []Value{v}
	return st, nil
}

func readFn(th *starlark.Thread, fn string, c *call) (starlark.Value, error) {
	text, written, err := c.text()
	if err != nil {
		return nil, err
	}
	kind, err := c.kind()
	if err != nil {
		return nil, err
	}
	o, err := c.options(written)
	if err != nil {
		return nil, err
	}
	charge(th, text)
	var out []starlark.Value
	for _, cl := range Read(text, o).Claims() {
		if kind != "" && cl.Kind != kind {
			continue
		}
		out = append(out, claimValue(cl))
	}
	return starlark.NewList(out), nil
}

func claimValue(c Claim) starlark.Value {
	return starlarkstruct.FromStringDict(starlark.String("claim"), starlark.StringDict{
		"kind": starlark.String(c.Kind), "value": starlark.String(c.Value), "text": starlark.String(c.Text),
		"stance": starlark.String(c.Stance), "trigger": starlark.String(c.Trigger), "about": starlark.String(c.About),
		"entity": starlark.String(c.Entity), "role": starlark.String(c.Role), "per": starlark.String(c.Per), "sentence": starlark.MakeInt(c.Sentence),
	})
}

func parseFn(th *starlark.Thread, fn string, c *call) (starlark.Value, error) {
	kind, err := c.kind()
	if err != nil {
		return nil, err
	}
	o, err := (&call{fn: c.fn, th: th, p: &starargs.Table{Params: textParams}, vals: []starlark.Value{none, none}}).options(time.Time{})
	if err != nil {
		return nil, err
	}
	v, err := valueOf(c.arg("value"), kind, o, func(f string, a ...any) error { return c.errorf("value", f, a...) })
	if err != nil {
		return nil, err
	}
	return starlarkstruct.FromStringDict(starlark.String("value"), starlark.StringDict{
		"kind": starlark.String(v.Kind), "value": starlark.String(v.String()),
	}), nil
}

// statement is the builtin that makes the statement fnName a value.
func statement(fnName string) func(*starlark.Thread, string, *call) (starlark.Value, error) {
	return func(th *starlark.Thread, fn string, c *call) (starlark.Value, error) { return newStatement(c, fnName) }
}

func newStatement(c *call, fnName string) (starlark.Value, error) {
	o, err := (&call{fn: c.fn, th: c.th, p: &starargs.Table{Params: textParams}, vals: []starlark.Value{none, none}}).options(time.Time{})
	if err != nil {
		return nil, err
	}
	st, err := statementOf(c, fnName, o)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// ---- statements ----

// Statement is a statement a text must make: what claims.states, claims.denies and
// claims.states_only check, as a value (claims.state, claims.deny, claims.state_only) that a
// judge's stand-in checks and a judge model is told.
type Statement struct {
	Fn     string // "states", "denies", "states_only"
	Values []Value
	Kind   Kind
	About  []string
}

// Check checks the statement on a read text.
func (s *Statement) Check(d *Doc) Verdict {
	switch s.Fn {
	case "denies":
		return d.Denies(s.Values[0], s.About)
	case "states_only":
		return d.StatesOnly(s.Kind, s.Values, s.About)
	}
	return d.StatesAll(s.Values, s.About)
}

// run checks the statement on text and tells the episode's recorder.
func (s *Statement) run(th *starlark.Thread, text string, o Options) Verdict {
	v := s.Check(Read(text, o))
	if e := envOf(th); e != nil && e.Record != nil {
		e.Record(Use{Fn: s.Fn, Text: text, Values: s.Values, Kind: s.Kind, About: s.About, Options: o, Verdict: v})
	}
	return v
}

// Holds checks the statement on text with the thread's environment (for a judge's stand-in).
func (s *Statement) Holds(th *starlark.Thread, text string) (Verdict, error) {
	c := &call{fn: "holds", th: th, p: &starargs.Table{Params: textParams}, vals: []starlark.Value{none, none}}
	o, err := c.options(time.Time{})
	if err != nil {
		return Verdict{}, err
	}
	charge(th, text)
	return s.run(th, text, o), nil
}

// String says the statement in words, as a judge model is told it.
func (s *Statement) String() string {
	about := ""
	if len(s.About) > 0 {
		var q []string
		for _, a := range s.About {
			q = append(q, fmt.Sprintf("%q", a))
		}
		about = " about " + strings.Join(q, " and ")
	}
	switch s.Fn {
	case "denies":
		return fmt.Sprintf("The text denies %s%s, and does not state it anywhere%s.", valueWords(s.Values[0]), about, about)
	case "states_only":
		return fmt.Sprintf("Every %s the text puts forward%s is one of %s (none other, not even as an alternative or a condition).", kindName(s.Kind), about, valueList(s.Values))
	}
	v := s.Values[0]
	if len(s.Values) > 1 {
		return fmt.Sprintf("The text states each of %s%s, and no other value of their kinds%s: not as an alternative, a hedge or a condition (a past value named as past is fine).", valueList(s.Values), about, about)
	}
	if v.Kind == Phrase {
		return fmt.Sprintf("The text states %s%s, without denying or hedging it.", valueWords(v), about)
	}
	return fmt.Sprintf("The text states %s%s, and no other %s%s: not as an alternative, a hedge or a condition (a past value named as past is fine).", valueWords(v), about, kindName(v.Kind), about)
}

func valueWords(v Value) string {
	if v.Text != "" {
		return fmt.Sprintf("%q", v.Text)
	}
	return v.String()
}

func (s *Statement) Type() string          { return "claims.statement" }
func (s *Statement) Freeze()               {}
func (s *Statement) Truth() starlark.Bool  { return true }
func (s *Statement) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: claims.statement") }
func (s *Statement) AttrNames() []string   { return []string{"holds"} }
func (s *Statement) Attr(name string) (starlark.Value, error) {
	if name != "holds" {
		return nil, nil
	}
	return starlark.NewBuiltin("holds", func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		t := starargs.Table{Params: []starargs.Param{req("text")}}
		vals := make([]starlark.Value, 1)
		if _, err := t.Bind("holds", vals, args, kwargs); err != nil {
			return nil, err
		}
		c := &call{fn: "holds", th: th, p: &starargs.Table{Params: append([]starargs.Param{req("text")}, textParams...)}, vals: []starlark.Value{vals[0], none, none}}
		text, written, err := c.text()
		if err != nil {
			return nil, err
		}
		o, err := c.options(written)
		if err != nil {
			return nil, err
		}
		charge(th, text)
		return guarded("holds", func() (starlark.Value, error) { return starlark.Bool(s.run(th, text, o).OK), nil })
	}), nil
}
