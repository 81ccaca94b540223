// Package argstest checks a function written in Go against the signature its reference shows:
// the signature must list exactly the parameters the function's binder accepts, required
// exactly where the binder requires them, positional or keyword exactly as the binder takes
// them. Each module's tests run it over every member of its reference.
package argstest

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// Param is one parameter of a signature, as the reference shows it.
type Param struct {
	Name     string // without "**"
	Required bool
	PosOnly  bool // before "/"
	KwOnly   bool // after "*"
	Rest     bool // "**name"
}

// Parse reads the parameters of a signature: "name(a, b=1, /, *, c=None, **rest) -> ret". A
// signature without parentheses (an attribute) has none, and ok is false.
func Parse(sig string) (params []Param, ok bool, err error) {
	open := strings.IndexByte(sig, '(')
	if open < 0 {
		return nil, false, nil
	}
	parts, end, err := split(sig[open+1:])
	if err != nil {
		return nil, true, fmt.Errorf("%s: %v", sig, err)
	}
	if tail := sig[open+1+end+1:]; tail != "" && !strings.HasPrefix(tail, " -> ") {
		return nil, true, fmt.Errorf("%s: %q after the parameters", sig, tail)
	}
	kwOnly := false
	for _, part := range parts {
		switch {
		case part == "/":
			for i := range params {
				params[i].PosOnly = true
			}
			continue
		case part == "*":
			kwOnly = true
			continue
		}
		m := paramRE.FindStringSubmatch(part)
		if m == nil {
			return nil, true, fmt.Errorf("%s: parameter %q", sig, part)
		}
		params = append(params, Param{Name: m[2], Rest: m[1] != "", Required: m[1] == "" && m[3] == "", KwOnly: kwOnly && m[1] == ""})
	}
	return params, true, nil
}

var paramRE = regexp.MustCompile(`^(\*\*)?([A-Za-z_][A-Za-z0-9_]*)(=.+)?$`)

// split splits the parameter list s (up to its closing parenthesis, at end) at the commas that
// are outside strings and brackets.
func split(s string) (parts []string, end int, err error) {
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ')' && depth > 0:
			depth--
		case c == ')':
			if p := strings.TrimSpace(s[start:i]); p != "" {
				parts = append(parts, p)
			}
			return parts, i, nil
		case c == ',' && depth == 0:
			parts = append(parts, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return nil, 0, fmt.Errorf("no closing parenthesis")
}

// Call calls the function under test.
type Call func(args starlark.Tuple, kwargs []starlark.Tuple) error

// bindingErr matches the errors of the binder (starargs), in any function.
var bindingErr = regexp.MustCompile(`: (unexpected keyword argument|missing required argument|got \d+ positional argument|\S+: given twice)`)

// Check fails t unless call binds its arguments exactly as sig says. It passes None for every
// argument, so the calls fail later (a type error, say) or do little; only binding errors count.
func Check(t testing.TB, sig string, call Call) {
	t.Helper()
	params, ok, err := Parse(sig)
	if err != nil || !ok {
		t.Errorf("%s: not a function's signature (%v)", sig, err)
		return
	}
	none := starlark.None
	kw := func(name string) starlark.Tuple { return starlark.Tuple{starlark.String(name), none} }
	nones := func(n int) starlark.Tuple {
		out := make(starlark.Tuple, n)
		for i := range out {
			out[i] = none
		}
		return out
	}
	var keywords []string // the names a keyword argument binds to
	hasRest, maxPos := false, 0
	for _, p := range params {
		switch {
		case p.Rest:
			hasRest = true
		case p.PosOnly:
			maxPos++
		case p.KwOnly:
			keywords = append(keywords, p.Name)
		default:
			maxPos++
			keywords = append(keywords, p.Name)
		}
	}
	// every gives every parameter but omit: the positional-only ones by position (up to omit),
	// the others by keyword.
	every := func(omit string) (args starlark.Tuple, kwargs []starlark.Tuple) {
		stop := false
		for _, p := range params {
			switch {
			case p.Rest || p.Name == omit && !p.PosOnly:
			case p.PosOnly:
				stop = stop || p.Name == omit
				if !stop {
					args = append(args, none)
				}
			default:
				kwargs = append(kwargs, kw(p.Name))
			}
		}
		return args, kwargs
	}
	bound := func(what string, args starlark.Tuple, kwargs []starlark.Tuple) {
		t.Helper()
		if err := call(args, kwargs); err != nil && bindingErr.MatchString(err.Error()) {
			t.Errorf("%s: %s: %v", sig, what, err)
		}
	}
	refused := func(what string, want string, args starlark.Tuple, kwargs []starlark.Tuple) {
		t.Helper()
		err := call(args, kwargs)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %s: got %v, want an error with %q", sig, what, err, want)
		}
	}

	args, kwargs := every("")
	bound("every parameter at once", args, kwargs)
	if hasRest {
		bound("an unknown keyword goes to **", args, append(kwargs, kw("zzz")))
	} else {
		want := "none"
		if len(keywords) == 1 {
			want = keywords[0]
		} else if len(keywords) > 1 {
			want = "one of " + strings.Join(keywords, ", ")
		}
		refused("an unknown keyword", ": unexpected keyword argument zzz (want "+want+")", nil, []starlark.Tuple{kw("zzz")})
	}
	for _, p := range params {
		if p.Rest {
			continue
		}
		args, kwargs := every(p.Name)
		if p.Required {
			refused(p.Name+" left out", ": missing required argument "+p.Name, args, kwargs)
		} else if err := call(args, kwargs); err != nil && regexp.MustCompile(`: missing required argument `+regexp.QuoteMeta(p.Name)+`\b`).MatchString(err.Error()) {
			t.Errorf("%s: %s left out: %v", sig, p.Name, err)
		}
		switch {
		case p.PosOnly && hasRest:
			args, kwargs := every("")
			bound(p.Name+" by keyword goes to **", args, append(kwargs, kw(p.Name)))
		case p.PosOnly:
			refused(p.Name+" by keyword", ": unexpected keyword argument "+p.Name+" ("+p.Name+" is positional only)", nil, []starlark.Tuple{kw(p.Name)})
		case !p.KwOnly:
			refused(p.Name+" twice", ": "+p.Name+": given twice", nones(maxPos), []starlark.Tuple{kw(p.Name)})
		}
	}
	var kwOnly []starlark.Tuple
	for _, p := range params {
		if p.KwOnly {
			kwOnly = append(kwOnly, kw(p.Name))
		}
	}
	bound("every positional parameter by position", nones(maxPos), kwOnly)
	refused("one positional argument too many", fmt.Sprintf(": got %d positional argument", maxPos+1), nones(maxPos+1), nil)
}
