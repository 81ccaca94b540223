package dsl

import (
	"fmt"
	"github.com/coworkenv/coworkenv/stdlib/claims"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// The models inside a task: simulated_user() declares a user who answers the agent within its
// turn, judge() asks a judge in a verifier. Both name a deterministic stand-in that answers when
// no model is given; the engine (runtime/episode) decides who answers and records it.

// MaxSimRounds bounds simulated_user(rounds = ...): the answers a user gives within one turn.
const MaxSimRounds = 100

// SimUserValue is the Starlark value returned by simulated_user().
type SimUserValue struct {
	sim       *SimUser
	opening   string
	openingFn starlark.Callable
}

func (v *SimUserValue) String() string       { return "<simulated_user>" }
func (v *SimUserValue) Type() string         { return "simulated_user" }
func (v *SimUserValue) Freeze()              {}
func (v *SimUserValue) Truth() starlark.Bool { return true }
func (v *SimUserValue) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable type: simulated_user")
}

// declare makes the user the one of turn t: the opening is its message.
func (v *SimUserValue) declare(t *Turn) {
	t.User, t.UserFn, t.Sim = v.opening, v.openingFn, v.sim
}

func builtinSimulatedUser(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	s := &SimUser{Pos: callerPos(thread)}
	v := &SimUserValue{sim: s}
	var err error
	if v.opening, v.openingFn, err = userArg(a, "opening", "string or function (ws, ep)"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name, why string
		dst       *string
	}{{"persona", "say who the user is", &s.Persona}, {"goal", "say what the user wants from the turn", &s.Goal}} {
		if *f.dst, err = a.Str(f.name); err != nil {
			return nil, err
		}
		if strings.TrimSpace(*f.dst) == "" {
			return nil, a.Errorf(f.name, "is empty; %s", f.why)
		}
	}
	if s.DoneWhen, err = a.Str("done_when"); err != nil {
		return nil, err
	}
	d, ok := a.Value("facts").(*starlark.Dict)
	if !ok {
		return nil, a.TypeErr("facts", a.Value("facts"), "dict of str -> str")
	}
	for _, kv := range d.Items() {
		k, ok := kv[0].(starlark.String)
		if !ok {
			return nil, a.Errorf("facts", "key %s: got %s, want string", kv[0], kv[0].Type())
		}
		if strings.TrimSpace(string(k)) == "" {
			return nil, a.Errorf("facts", "a key is empty; name what the user knows")
		}
		val, ok := kv[1].(starlark.String)
		if !ok {
			return nil, a.Errorf("facts", "%s: got %s, want string", k, kv[1].Type())
		}
		s.Facts = append(s.Facts, Fact{Key: string(k), Value: string(val)})
	}
	rounds, err := a.Int("rounds")
	if err != nil {
		return nil, err
	}
	if rounds < 1 || rounds > MaxSimRounds {
		return nil, a.Errorf("rounds", "%d is not between 1 and %d", rounds, MaxSimRounds)
	}
	s.Rounds = int(rounds)
	if s.StandIn, err = a.Fn("stand_in", 2, "(said, round)"); err != nil {
		return nil, err
	}
	return v, nil
}

func builtinJudge(thread *starlark.Thread, a *Args) (starlark.Value, error) {
	c := collectorOf(thread)
	if c == nil || c.Judge == nil {
		return nil, fmt.Errorf("judge: only allowed inside a verifier")
	}
	q := JudgeQuery{Pos: callerPos(thread)}
	var err error
	if q.Text, err = a.Str("text"); err != nil {
		return nil, err
	}
	if q.Rubric, err = a.Str("rubric"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(q.Rubric) == "" {
		return nil, a.Errorf("rubric", "is empty; say what the text must do to pass")
	}
	if q.StandIn, err = a.Fn("stand_in", 1, "(text)"); err != nil {
		return nil, err
	}
	cl, err := a.List("claims")
	if err != nil {
		return nil, err
	}
	for i, v := range cl {
		st, ok := v.(*claims.Statement)
		if !ok {
			return nil, a.Errorf("claims", "element %d: got %s, want a statement (claims.state, claims.deny or claims.state_only)", i, v.Type())
		}
		q.Claims = append(q.Claims, st)
	}
	if q.StandIn == nil && len(q.Claims) == 0 {
		return nil, a.Errorf("stand_in", "is missing: give a stand_in(text) or the claims the text must make")
	}
	w, err := a.Float("weight")
	if err != nil {
		return nil, err
	}
	if w < 0 {
		return nil, a.Errorf("weight", "%v is negative", w)
	}
	v, err := c.Judge(thread, q)
	if err != nil {
		return nil, err
	}
	c.Items = append(c.Items, CheckItem{Kind: "check", Message: JudgeMessage(q.Rubric, v.Reason), Weight: w, Passed: v.Passed, Turn: c.Turn, Pos: q.Pos})
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"passed": starlark.Bool(v.Passed),
		"score":  starlark.Float(v.Score),
		"reason": starlark.String(v.Reason),
	}), nil
}

// JudgeMessage is the message of the item a judge() call records: "judge: " and the rubric's
// first line (cut at 80 characters), then ": " and the reason on one line when there is one.
func JudgeMessage(rubric, reason string) string {
	title, _, _ := strings.Cut(strings.TrimSpace(rubric), "\n")
	msg := "judge: " + shorten(strings.TrimSpace(title), 80)
	if r := strings.Join(strings.Fields(reason), " "); r != "" {
		msg += ": " + r
	}
	return msg
}

// shorten cuts s after n characters, with "…" for the rest.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return strings.TrimRight(s[:i], " ") + "…"
}

// StandInVerdict reads what a judge's stand-in returned: a bool, or a tuple (bool, reason).
func StandInVerdict(v starlark.Value) (passed bool, reason string, err error) {
	switch x := v.(type) {
	case starlark.Bool:
		return bool(x), "", nil
	case starlark.Tuple:
		if len(x) == 2 {
			b, ok1 := x[0].(starlark.Bool)
			r, ok2 := x[1].(starlark.String)
			if ok1 && ok2 {
				return bool(b), string(r), nil
			}
		}
		types := make([]string, len(x))
		for i, e := range x {
			types[i] = e.Type()
		}
		return false, "", fmt.Errorf("returned a tuple (%s), want bool or (bool, str)", strings.Join(types, ", "))
	}
	return false, "", fmt.Errorf("returned %s, want bool or (bool, str)", v.Type())
}
