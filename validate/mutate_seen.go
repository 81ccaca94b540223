package validate

import (
	"path"
	"regexp"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
)

// What the agent has seen, for blind-to-content's swaps: the mail addresses, paths and ids of the
// user messages and of the results of earlier calls, in order of appearance, so that an id, an
// address or a path of the reference can be swapped for another of the same kind the agent could
// have picked by mistake.

// Kinds of swappable values.
const (
	swapAddress = "address"
	swapPath    = "path"
	swapID      = "id"
)

var (
	mAddrFull = regexp.MustCompile(`^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$`)
	mAddrAny  = regexp.MustCompile(`[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	mPathAny  = regexp.MustCompile(`/[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*/?`)
	mIDFull   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*$`)
	mIDAny    = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*`)
	mDigits   = regexp.MustCompile(`\d+`)
)

// swapKind says which kind of swappable value s is as a whole ("" for none), and its shape: the
// domain-free kind key that another value must share to replace it ("id:T-#" for "T-104",
// "path:.csv" for a CSV file, "path:/" for a folder).
func swapKind(s string, base *workspace.State) (kind, shape string) {
	switch {
	case mAddrFull.MatchString(s):
		return swapAddress, swapAddress
	case strings.HasPrefix(s, "/") && len(s) > 1 && !strings.ContainsAny(s, " \t\n"):
		return swapPath, pathShape(s, base)
	case len(s) <= 40 && mIDFull.MatchString(s) && strings.ContainsAny(s, "0123456789"):
		return swapID, "id:" + mDigits.ReplaceAllString(s, "#")
	}
	return "", ""
}

func pathShape(p string, base *workspace.State) string {
	c := workspace.CleanPath(p)
	if strings.HasSuffix(p, "/") || base.Files().IsDir(c) {
		return "path:/"
	}
	return "path:" + path.Ext(c)
}

type seenToken struct{ kind, shape, value string }

// seenTokens is what the agent has seen, in order; upto[i] is how many tokens were seen before
// call i of the oracle episode (an index of o.res.Calls).
type seenTokens struct {
	toks []seenToken
	have map[string]bool
	upto []int
	base *workspace.State
}

func newSeenTokens(o *oracleRun) *seenTokens {
	s := &seenTokens{have: map[string]bool{}, base: o.p.Base}
	turns := 0
	for _, c := range o.res.Calls {
		for turns <= c.Turn && turns < len(o.res.Turns) {
			s.addText(o.res.Turns[turns].User)
			turns++
		}
		s.upto = append(s.upto, len(s.toks))
		if !c.Succeeded() {
			continue
		}
		r := c.Result()
		s.addJSON(r)
		if c.Name == "fs_list" {
			// a listing names files relative to its folder
			dir := "/"
			if p, ok := c.Args.Get("path"); ok {
				if ps, ok := p.(string); ok {
					dir = workspace.CleanPath(ps)
				}
			}
			if names, ok := r.([]jsonv.Value); ok {
				for _, n := range names {
					if ns, ok := n.(string); ok {
						s.add(swapPath, strings.TrimSuffix(path.Join(dir, ns), "/")+map[bool]string{true: "/"}[strings.HasSuffix(ns, "/")])
					}
				}
			}
		}
	}
	return s
}

func (s *seenTokens) add(kind, value string) {
	var shape string
	switch kind {
	case swapAddress:
		shape = swapAddress
	case swapPath:
		shape = pathShape(value, s.base)
	case swapID:
		shape = "id:" + mDigits.ReplaceAllString(value, "#")
	}
	key := kind + "\x00" + strings.ToLower(value)
	if s.have[key] {
		return
	}
	s.have[key] = true
	s.toks = append(s.toks, seenToken{kind, shape, value})
}

func (s *seenTokens) addJSON(v jsonv.Value) {
	jsonv.Walk(v, func(_ string, v jsonv.Value) {
		if x, ok := v.(string); ok {
			s.addText(x)
		}
	})
}

// addText notes the addresses, paths and ids of a text.
func (s *seenTokens) addText(t string) {
	if t == "" {
		return
	}
	if k, _ := swapKind(t, s.base); k != "" {
		s.add(k, t)
		return
	}
	for _, m := range mAddrAny.FindAllString(t, -1) {
		s.add(swapAddress, m)
	}
	for _, m := range mPathAny.FindAllStringIndex(t, -1) {
		if p := runeBefore(t, m[0]); isAlnumRune(p) || strings.ContainsRune(":/.@~_-", p) {
			continue
		}
		if p := strings.TrimRight(t[m[0]:m[1]], "."); len(p) > 1 {
			s.add(swapPath, p)
		}
	}
	for _, m := range mIDAny.FindAllStringIndex(t, -1) {
		a, b := m[0], m[1]
		tok := t[a:b]
		if len(tok) > 40 || !strings.ContainsAny(tok, "0123456789") {
			continue
		}
		if p := runeBefore(t, a); isAlnumRune(p) || strings.ContainsRune("_.@/-", p) {
			continue
		}
		if n := runeAt(t, b); isAlnumRune(n) || strings.ContainsRune("_@/", n) || (n == '.' || n == '-') && isAlnumRune(runeAfter(t, b)) {
			continue
		}
		s.add(swapID, tok)
	}
}

// swapFor returns the first value the agent had seen before call at (an index of o.res.Calls)
// that has the shape of value and differs from it and from every value in avoid (the user's
// address, the other elements of the same list) and that fair (when given) does not call as good
// as value; for an address, one of the same domain first.
func (s *seenTokens) swapFor(at int, kind, shape, value string, avoid []string, fair func(a, b string) bool) (string, bool) {
	n := len(s.toks)
	if at < len(s.upto) {
		n = s.upto[at]
	}
	ok := func(t seenToken) bool {
		if t.kind != kind || t.shape != shape || strings.EqualFold(t.value, value) {
			return false
		}
		if kind == swapPath && workspace.CleanPath(t.value) == workspace.CleanPath(value) {
			return false
		}
		for _, a := range avoid {
			if strings.EqualFold(t.value, a) {
				return false
			}
		}
		return fair == nil || !fair(value, t.value)
	}
	if kind == swapAddress {
		dom := strings.ToLower(value[strings.LastIndexByte(value, '@'):])
		for _, t := range s.toks[:n] {
			if ok(t) && strings.HasSuffix(strings.ToLower(t.value), dom) {
				return t.value, true
			}
		}
	}
	for _, t := range s.toks[:n] {
		if ok(t) {
			return t.value, true
		}
	}
	return "", false
}
