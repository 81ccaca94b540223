package validate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/stdlib/claims"
)

// The claims probes read the reference's prose with the claims module, as verifiers do, and act
// where a verifier depends on it:
//
//   - blind-to-claim (this file): a false statement made in the reference's prose (a rival value
//     added in a sentence of its own, the value hedged or offered with a conditional alternative,
//     two values swapped, another party named, a status turned into its antonym, a denial turned
//     into an assertion) must fail;
//   - blind-to-reply (this file): a reply to the user that misreports the work must fail;
//   - blind-to-side-effect (mutate_state.go): another field of a changed entry changed too, a
//     message sent in a turn where the task does not allow it, a wrong version written first;
//   - brittle-verifier (mutate_fair.go): the same work in other words (other formats of each
//     value, clauses split, the old value named as the old one, a closing remark, a heading, a
//     delete and re-create, a reply to another message of the thread) must pass.
//
// Where they act: the statements the oracle's verifiers checked with the claims module
// (episode.Result.Claims: their text, value and cues), and the values the reference's prose
// asserts that no statement covers (a verifier of regular expressions). An attack on a value no
// statement covers is reported only when that value matters to the verifier: the same text with
// the value simply replaced fails.
const (
	claimRuns = 12 // blind-to-claim
	replyRuns = 2  // blind-to-reply
	stateRuns = 6  // the blind-to-side-effect attacks of mutate_state.go
	fairRuns  = 9  // the brittle-verifier rewrites of mutate_fair.go
)

// place is where a text of the reference sits: a string argument of one of its state-changing
// calls, or its reply of a turn.
type place struct {
	rc   *refCall // nil for a reply
	arg  string
	turn int
}

func (p place) text(o *oracleRun) string {
	if p.rc == nil {
		return o.replies[p.turn]
	}
	return argString(o.calls[p.rc.turn][p.rc.idx].Args, p.arg)
}

func (p place) describe(o *oracleRun) string {
	if p.rc == nil {
		return fmt.Sprintf("the reference's reply of turn %d", p.turn)
	}
	return fmt.Sprintf("argument %q of the reference's call %s", p.arg, callString(p.rc.c))
}

// with is the oracle's calls and replies with the text at every place replaced.
func with(o *oracleRun, ps []place, text string) ([][]episode.ScriptedCall, []string) {
	calls, replies := copyCalls(o.calls), append([]string(nil), o.replies...)
	for _, p := range ps {
		if p.rc == nil {
			replies[p.turn] = text
			continue
		}
		cur := calls[p.rc.turn][p.rc.idx]
		calls[p.rc.turn][p.rc.idx] = episode.ScriptedCall{Name: cur.Name, Args: setArg(cur.Args, []any{p.arg}, text, false)}
	}
	return calls, replies
}

// placesOf finds the places that hold text exactly.
func placesOf(o *oracleRun, text string) []place {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var out []place
	for _, rc := range refCalls(o) {
		if !rc.c.Changed {
			continue
		}
		for _, m := range rc.c.Args.Members {
			if s, ok := m.Value.(string); ok && s == text {
				rc := rc
				out = append(out, place{rc: &rc, arg: m.Key, turn: rc.turn})
			}
		}
	}
	for t, r := range o.replies {
		if r == text {
			out = append(out, place{turn: t})
		}
	}
	return out
}

// claimTarget is one value of the reference's prose a probe acts on.
type claimTarget struct {
	places  []place
	text    string
	opt     claims.Options
	claim   claims.Claim // the asserted value (states), or the denial (denies)
	about   []string
	fn      string          // "states", "denies", or "" for a value no statement of the verifier covers
	checked bool            // the value is known to matter to the verifier
	avoid   map[string]bool // the values the statement expects: never a rival
	values  []claims.Value  // the statement's values (for a statement of several, the swap is tried too)
}

func (t *claimTarget) where(o *oracleRun) string { return t.places[0].describe(o) }

// readOptions are the options the reader gets for a text of the reference that no verifier read:
// the task's region and time zone, the oracle's clock, and the names of its final state.
func readOptions(o *oracleRun) claims.Options {
	if o.readOpt == nil {
		now, _ := time.Parse(time.RFC3339, o.res.Final.Clock().NowString())
		o.readOpt = &claims.Options{Region: o.p.Task.Region, Location: o.p.Task.Location, Written: now,
			Names: episode.WorkspaceNames(o.res.Final)}
	}
	return *o.readOpt
}

// claimTargets lists the values to act on: those of the verifiers' statements first (in the order
// they were checked), then up to four values each that the reference's prose asserts and no
// statement covers.
func claimTargets(o *oracleRun) []*claimTarget {
	var out []*claimTarget
	seen := map[string]bool{}
	key := func(text string, c claims.Claim) string { return fmt.Sprintf("%d/%d/%s", c.Start, c.End, text) }
	for _, u := range o.res.Claims {
		if !u.Verdict.OK || u.Verdict.Support == nil || u.Fn == "states_only" {
			continue
		}
		ps := placesOf(o, u.Text)
		k := key(u.Text, *u.Verdict.Support)
		if len(ps) == 0 || seen[k] {
			continue
		}
		seen[k] = true
		avoid := map[string]bool{}
		for _, v := range u.Values {
			avoid[v.String()] = true
			for _, f := range strings.Fields(v.String()) {
				avoid[f] = true // the day and the time of a date with a time
			}
		}
		out = append(out, &claimTarget{places: ps, text: u.Text, opt: u.Options, claim: *u.Verdict.Support, about: u.About, fn: u.Fn, checked: true, avoid: avoid, values: u.Values})
	}
	// the values the statements on a text expect are never made its rivals
	avoidOf := map[string]map[string]bool{}
	for _, t := range out {
		if avoidOf[t.text] == nil {
			avoidOf[t.text] = map[string]bool{}
		}
		for v := range t.avoid {
			avoidOf[t.text][v] = true
		}
	}
	opt := readOptions(o)
	for _, it := range proseItems(o) {
		text := it.text(o)
		ps := placesOf(o, text)
		n := 0
		for _, c := range claims.Read(text, opt).Claims() {
			if n >= 4 {
				break
			}
			if c.Stance != claims.Asserted || c.Kind == claims.Name || c.Kind == claims.Email || c.Kind == claims.ID || c.Role == "end" || avoidOf[text][c.Value] {
				continue
			}
			if c.Kind == claims.Status && !predicated(text, c) {
				continue // "open orders", "111 free": a word of a noun phrase, not a statement of a status
			}
			k := key(text, c)
			if seen[k] {
				continue
			}
			seen[k] = true
			n++
			out = append(out, &claimTarget{places: ps, text: text, opt: opt, claim: c, avoid: avoidOf[text]})
		}
	}
	return out
}

// predicated reports whether a status word is said of something ("INV-2041 is approved",
// "Approved:", "status: closed") rather than part of a noun phrase ("the open orders").
func predicated(text string, c claims.Claim) bool {
	before := strings.TrimRight(text[:c.Start], " \t")
	if before == "" || strings.HasSuffix(before, "\n") || strings.HasSuffix(before, ":") || strings.HasSuffix(before, "(") {
		return true
	}
	i := strings.LastIndexAny(before, " \t\n")
	last := strings.ToLower(before[i+1:])
	switch last {
	case "is", "are", "was", "were", "been", "be", "being", "now", "got", "get", "gets", "stays", "remains", "still", "already", "not":
		return true
	}
	return false
}

// rivalPool gathers values of each kind from what the agent saw in the oracle episode (user
// messages and tool results), in order of first appearance: the rivals the attacks use.
type rivalPool struct {
	byKind map[claims.Kind][]claims.Claim
	seen   map[string]bool
	owners map[string]bool // kind/entity: a party the agent saw with a value of that kind
}

func newRivalPool(o *oracleRun, opt claims.Options) *rivalPool {
	p := &rivalPool{byKind: map[claims.Kind][]claims.Claim{}, seen: map[string]bool{}, owners: map[string]bool{}}
	add := func(s string) {
		for _, c := range claims.Read(s, opt).Claims() {
			if c.Entity != "" {
				p.owners[string(c.Kind)+"/"+c.Entity] = true
			}
			k := string(c.Kind) + "/" + c.Value
			if p.seen[k] || c.Role == "end" {
				continue
			}
			p.seen[k] = true
			p.byKind[c.Kind] = append(p.byKind[c.Kind], c)
		}
	}
	for _, tr := range o.res.Turns {
		add(tr.User)
	}
	for _, c := range o.res.Calls {
		if !c.Succeeded() {
			continue
		}
		walkStrings(c.Result(), 0, add)
	}
	return p
}

// walkStrings calls fn with every string of a JSON value (to a depth of 8, at most 256 strings),
// and with each object's plain members as one line ("name: Tulpen BV, cutoff: 16:15"), so that
// the values of a record are read as its own.
func walkStrings(v jsonv.Value, depth int, fn func(string)) {
	if depth > 8 {
		return
	}
	if x, ok := v.(*jsonv.Object); ok {
		var b strings.Builder
		for i, m := range x.Members {
			if i >= 64 {
				break
			}
			var s string
			switch y := m.Value.(type) {
			case string:
				if len(y) > 200 {
					continue
				}
				s = y
			case int64:
				s = strconv.FormatInt(y, 10)
			case float64:
				s = strconv.FormatFloat(y, 'f', -1, 64)
			default:
				continue
			}
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(m.Key + ": " + s)
		}
		if b.Len() > 0 {
			fn(b.String() + ".")
		}
	}
	switch x := v.(type) {
	case string:
		if len(x) <= 64<<10 {
			fn(x)
		}
	case []jsonv.Value:
		for i, e := range x {
			if i >= 256 {
				return
			}
			walkStrings(e, depth+1, fn)
		}
	case *jsonv.Object:
		for i, m := range x.Members {
			if i >= 256 {
				return
			}
			walkStrings(m.Value, depth+1, fn)
		}
	}
}

// rival is another value of c's kind: one the agent saw, else one made up in c's style; never
// one of avoid (the values a statement expects).
func (p *rivalPool) rival(c claims.Claim, opt claims.Options, avoid map[string]bool) string {
	if c.Kind == claims.Status {
		// another pole of the same axis, never a status of another axis
		return claims.Rival(c, opt)
	}
	d := claims.Read("", opt)
	for _, r := range p.byKind[c.Kind] {
		if r.Value == c.Value || avoid[r.Value] || r.Text == "" || !d.Interchangeable(c, r) {
			continue
		}
		if c.Kind == claims.Date && len(r.Value) != 10 {
			continue // a weekday without a clock
		}
		if s := claims.Restyle(c, r.Value); s != "" {
			return s // written like the value it rivals
		}
		return r.Text
	}
	return claims.Rival(c, opt)
}

// owns reports whether the agent saw a value of kind k bound to the party key.
func (p *rivalPool) owns(key string, k claims.Kind) bool {
	return p.owners[string(k)+"/"+key]
}

// textAttack is one false statement made of a text: the new text and what the edit did.
type textAttack struct {
	what string
	text string
}

// attacks lists the false statements a target's text can be made to say, in the order they are
// tried: for a value a statement covers, a rival sentence and another party (the edits a
// statement without the right cues lets through); for a value no statement covers, also the
// hedge, the conditional alternative and the swap; for a status, its antonym; for a denial, the
// negation removed.
func attacks(t *claimTarget, pool *rivalPool) []textAttack {
	text, c := t.text, t.claim
	d := claims.Read(text, t.opt)
	var out []textAttack
	add := func(what, nt string) {
		if nt != text && nt != "" {
			out = append(out, textAttack{what, nt})
		}
	}
	if t.fn == "denies" {
		if c.TriggerStart >= 0 && c.TriggerEnd <= len(text) {
			trig := text[c.TriggerStart:c.TriggerEnd]
			repl := undoNegation(trig)
			add(fmt.Sprintf("the denial made an assertion (%q → %q)", trig, repl), tidySpaces(text[:c.TriggerStart]+repl+text[c.TriggerEnd:]))
		}
		return out
	}
	rival := pool.rival(c, t.opt, t.avoid)
	a, b := d.SentenceOf(c)
	if rival != "" && c.Start >= a && c.End <= b {
		sent := text[a:b]
		ns := sent[:c.Start-a] + rival + sent[c.End-a:]
		sep := " "
		switch {
		case b == len(text) && strings.Contains(text, "\n") || b < len(text) && text[b] == '\n':
			sep = "\n" // a line of its own: a list item, a table row, a heading
		case !strings.ContainsAny(sent[len(sent)-1:], ".!?"):
			sep = ". "
		}
		add(fmt.Sprintf("a sentence added after it that asserts %s instead: %q", rival, ns), text[:b]+sep+ns+text[b:])
	}
	// another party: the name the value is bound to, replaced in its sentence by another of its
	// class, when the verifier's statement does not name a party of that class
	// A person is not attacked for a day or a time: the people beside a meeting's day attend it,
	// they do not own it ("we confirm Tuesday 20 January, with Mehmet").
	if c.Entity != "" && t.fn == "states" && !namesAny(d, t.about) &&
		!(d.NameClassOf(c.Entity) == claims.Person && (c.Kind == claims.Date || c.Kind == claims.Time)) {
		for _, n := range d.Claims() {
			if n.Kind != claims.Name || n.Value != c.Entity || n.Sentence != c.Sentence {
				continue
			}
			// only a party the agent saw with a value of this kind of its own: the ETA of another
			// shipment, not the store manager the ETA was told to
			for _, o := range d.Entities(d.NameClassOf(c.Entity), c.Entity) {
				if pool.owns(o, c.Kind) {
					other := shortName(o, d)
					add(fmt.Sprintf("%q replaced by %q (another party)", n.Text, other), text[:n.Start]+other+text[n.End:])
					break
				}
			}
			break
		}
	}
	if c.Kind == claims.Status {
		if o := claims.OtherPoles(c); len(o) > 0 {
			add(fmt.Sprintf("%q turned into %q", c.Text, o[0]), text[:c.Start]+o[0]+text[c.End:])
		}
	}
	if (t.fn == "" || len(t.values) > 1) && rival != "" {
		add(fmt.Sprintf("%q hedged with a rival: %q", c.Text, c.Text+" or "+rival), text[:c.Start]+c.Text+" or "+rival+text[c.End:])
		if c.Start >= a && c.End <= b {
			// a fallback in a sentence of its own: the value stays asserted, the rival is offered on a condition
			sent := text[a:b]
			ns := "If needed, " + lowerFirst(sent[:c.Start-a]+rival+sent[c.End-a:])
			add(fmt.Sprintf("a conditional fallback added after it: %q", ns), text[:b]+" "+ns+text[b:])
		}
		for _, m := range d.Claims() {
			if d.Interchangeable(c, m) && m.Value != c.Value && m.Stance == claims.Asserted && m.Start != c.Start && m.Role == c.Role &&
				(t.fn == "" || pairs(t.values) || m.Entity != "" && c.Entity != "" && m.Entity != c.Entity) {
				x, y := c, m
				if y.Start < x.Start {
					x, y = y, x
				}
				add(fmt.Sprintf("%q and %q swapped", x.Text, y.Text), text[:x.Start]+y.Text+text[x.End:y.Start]+x.Text+text[y.End:])
				break
			}
		}
	}
	return out
}

// namesAny reports whether a statement's cues name a known name or an id: it is bound to a party
// already.
func namesAny(d *claims.Doc, about []string) bool {
	for _, a := range about {
		if d.NameKey(a) != "" || len(claims.Read(a, claims.Options{}).Claims()) == 1 && claims.Read(a, claims.Options{}).Claims()[0].Kind == claims.ID {
			return true
		}
	}
	return false
}

// pairs reports whether a statement's values are dates with times: a swap of two times between
// their days is a false statement it should see.
func pairs(vs []claims.Value) bool {
	for _, v := range vs {
		if strings.Contains(v.String(), " ") && v.Kind == claims.Date {
			return true
		}
	}
	return false
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// shortName is how a text names a known name: a company without its article and legal suffix
// when the reader knows it so, else the name.
func shortName(key string, d *claims.Doc) string {
	ws := strings.Fields(key)
	if len(ws) > 2 && d.NameKey(ws[1]) == key {
		return ws[1]
	}
	return key
}

// undoNegation is the assertion a negation trigger stood for: "can't" → "can", "not" → "".
func undoNegation(trig string) string {
	l := strings.ToLower(trig)
	for _, p := range [][2]string{{"can't", "can"}, {"cannot", "can"}, {"won't", "will"}, {"don't", "do"}, {"doesn't", "does"},
		{"didn't", "did"}, {"isn't", "is"}, {"aren't", "are"}, {"wasn't", "was"}, {"weren't", "were"}, {"hasn't", "has"},
		{"haven't", "have"}, {"shouldn't", "should"}, {"unable to", "able to"}, {"not able to", "able to"}, {"is not", "is"},
		{"are not", "are"}, {"was not", "was"}, {"does not", "does"}, {"did not", "did"}, {"will not", "will"}, {"has not", "has"}} {
		if strings.ReplaceAll(l, "’", "'") == p[0] {
			return p[1]
		}
	}
	return ""
}

// tidySpaces collapses the double spaces an edit leaves.
func tidySpaces(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return strings.ReplaceAll(s, " .", ".")
}

// checkClaims raises blind-to-claim where a false statement made in the reference's prose still
// passes. The attacks of all targets are tried in turns (the first of each, then the second of
// each) within claimRuns runs; a target stops at its first finding. An attack that passes on a
// value no statement covers is confirmed by one more run: with the value simply replaced by the
// rival, the episode must fail (else the verifier ignores the value, which blind-to-content
// reports).
func (v *taskCheck) checkClaims(o *oracleRun) {
	targets := claimTargets(o)
	if len(targets) == 0 {
		return
	}
	pool := newRivalPool(o, readOptions(o))
	type state struct {
		t    *claimTarget
		as   []textAttack
		next int
		done bool
	}
	var ss []*state
	for _, t := range targets {
		if as := attacks(t, pool); len(as) > 0 {
			ss = append(ss, &state{t: t, as: as})
		}
	}
	reported := map[string]bool{}
	budget := claimRuns
	for budget > 0 {
		progressed := false
		for _, s := range ss {
			if budget == 0 {
				break
			}
			if s.done || s.next >= len(s.as) || reported[s.t.text] {
				continue
			}
			progressed = true
			budget--
			a := s.as[s.next]
			s.next++
			if caught(o, s.t.text, a.text) {
				budget++ // a statement the verifier checks on this text fails on the edit: no run needed
				continue
			}
			calls, replies := with(o, s.t.places, a.text)
			r := v.replay(o, "blind-to-claim", calls, replies)
			if r.Err != nil || !r.Passed || !allSucceeded(r) {
				continue
			}
			if !s.t.checked {
				if budget == 0 {
					break
				}
				budget--
				rival := pool.rival(s.t.claim, s.t.opt, s.t.avoid)
				sub := s.t.text[:s.t.claim.Start] + rival + s.t.text[s.t.claim.End:]
				calls, replies := with(o, s.t.places, sub)
				if rs := v.replay(o, "blind-to-claim", calls, replies); rival == "" || rs.Err != nil || rs.Passed || !allSucceeded(rs) {
					s.done = true // the verifier does not check this value at all
					continue
				}
			}
			s.done = true
			reported[s.t.text] = true
			advice := "check the statement with claims.states(text, value, about = [label, party]), which fails on a rival, a hedge, a condition, a swap and another party"
			if s.t.fn == "denies" {
				advice = "check the denial with claims.denies(text, value, about = [...]), which fails when the text asserts it anywhere"
			} else if s.t.fn == "states" {
				advice = fmt.Sprintf("the statement claims.states(…, %q, about = %s) does not name what tells the edit apart: add the party and the label to about", s.t.claim.Value, aboutList(s.t.about))
			}
			d := dsl.NewDiag("blind-to-claim", fmt.Sprintf("turn %d: the episode still passes (%s) when %s states something false: %s (it asserted %s %s); %s",
				s.t.places[0].turn, passedScore(r), s.t.where(o), a.what, s.t.claim.Kind, quoteShort(s.t.claim.Text), advice))
			if rc := s.t.places[0].rc; rc != nil && rc.c.Pos.IsValid() {
				d = d.At(rc.c.Pos)
			}
			v.add(d)
		}
		if !progressed {
			break
		}
	}
}

// caught reports whether a statement the oracle's verifiers checked on text (and found true)
// is false on the edited text: the verifier reads that text with the claims module and the edit
// breaks what it reads, so a run would fail. (A verifier that checks a statement and ignores the
// answer is found by blind-to-content, which changes the value itself.)
func caught(o *oracleRun, text, edited string) bool {
	for _, u := range o.res.Claims {
		if u.Text != text || !u.Verdict.OK {
			continue
		}
		st := &claims.Statement{Fn: u.Fn, Values: u.Values, Kind: u.Kind, About: u.About}
		if !st.Check(claims.Read(edited, u.Options)).OK {
			return true
		}
	}
	return false
}

func aboutList(about []string) string {
	if len(about) == 0 {
		return "None"
	}
	var q []string
	for _, a := range about {
		q = append(q, fmt.Sprintf("%q", a))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// checkReply raises blind-to-reply where the reference's reply of a turn, replaced by one that
// misreports the work, still passes: every value it asserts replaced by another of its kind (a
// status by its antonym), or, when it asserts none, a report that nothing was done. The last turn
// first, then the first; at most replyRuns runs.
func (v *taskCheck) checkReply(o *oracleRun) {
	if len(o.replies) == 0 {
		return
	}
	turns := []int{len(o.replies) - 1}
	if len(o.replies) > 1 {
		turns = append(turns, 0)
	}
	opt := readOptions(o)
	pool := newRivalPool(o, opt)
	budget := replyRuns
	for _, turn := range turns {
		if budget == 0 {
			return
		}
		reply := o.replies[turn]
		if strings.TrimSpace(reply) == "" {
			continue
		}
		lie, what := misreport(reply, opt, pool)
		if caught(o, reply, lie) {
			continue // the verifier reads the reply, and what it reads catches the lie
		}
		budget--
		r := v.replay(o, "blind-to-reply", o.calls, withReply(o, turn, lie))
		if r.Err == nil && r.Passed && allSucceeded(r) {
			v.add(dsl.NewDiag("blind-to-reply", fmt.Sprintf("turn %d: the episode still passes (%s) when the reference's reply %s is replaced by one that misreports the work (%s): %s; nobody reads what the agent tells its user: check the facts the reply must report with claims.states(ep.reply, …) (ep.replies[%d] in a turn's verifier)",
				turn, passedScore(r), quoteShort(reply), what, quoteShort(lie), turn)))
			return
		}
	}
}

// misreport is a reply that tells the user something false about the same work: its asserted
// values replaced by rivals and its statuses by their antonyms; a reply that asserts none says
// nothing was done.
func misreport(reply string, opt claims.Options, pool *rivalPool) (string, string) {
	d := claims.Read(reply, opt)
	var edits []claims.Claim
	var repl []string
	for _, c := range d.Claims() {
		if c.Stance != claims.Asserted || c.Kind == claims.Name || c.Kind == claims.Email || c.Kind == claims.ID {
			continue
		}
		r := pool.rival(c, opt, nil)
		if c.Kind == claims.Status {
			if o := claims.OtherPoles(c); len(o) > 0 {
				r = o[0]
			}
		}
		if r == "" {
			continue
		}
		edits = append(edits, c)
		repl = append(repl, r)
	}
	if len(edits) == 0 {
		return "I could not do it: nothing was done, and nothing was sent or changed.", "a report that nothing was done"
	}
	var b strings.Builder
	last := 0
	for i, c := range edits {
		if c.Start < last {
			continue
		}
		b.WriteString(reply[last:c.Start])
		b.WriteString(repl[i])
		last = c.End
	}
	b.WriteString(reply[last:])
	return b.String(), fmt.Sprintf("%d value%s changed", len(edits), plural(len(edits)))
}
