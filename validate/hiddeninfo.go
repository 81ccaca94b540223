package validate

import (
	"fmt"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
	"path"
	"regexp"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/coworkenv/coworkenv/workspace"
)

// checkHiddenInfo raises hidden-info where the reference passes an identifier no agent could
// have seen before that call.
//
// It reads the passing oracle episode call by call; nothing is run again. The rules:
//
// Identifiers. In the arguments of each call (nested objects and arrays walked) a string value
// is looked at when it is, as a whole, one of:
//
//   - a mail address: local@domain, also "Name <local@domain>", or a list of those separated by
//     commas or semicolons;
//   - the id of a message, an event or a db record: of the state after setup, of the final state,
//     or given under "id" in a result of the episode. Numbers, dates and times are never taken for
//     ids (an agent computes them);
//   - a path: a string starting with "/" in a path-typed argument (path, src, dst and attachments
//     of the built-in tools; an argument of a task-defined tool named path, file, folder, dir, src
//     or dst, or ending in _path, _file, _folder or _dir), or one that names a file or folder of
//     the state after setup or of the final state.
//
// Prose (a body, a description) is not searched for identifiers. Calls that hit an injected
// fault are skipped (their retry passes the same arguments). An id that did not exist after
// setup is not looked at in a call of a task-defined tool that changed the state: that call may
// have created it under an id the agent chose.
//
// Seen. An identifier passed in call i is fair when any of these holds:
//
//  1. It is in what the agent has seen before call i: the answers a simulated user gave before
//     it (the facts the persona holds are unseen until asked), the system prompt a model is given
//     (modelagent.DefaultSystemPrompt: the user's address and the time after setup), the task's
//     tool schemas (names, descriptions, enums, defaults), the user message of every turn up to
//     call i's and the replies of the turns before, the result or error of every earlier call
//     (faulted ones too), and the one-word string values of earlier calls' arguments, faulted
//     attempts aside (the agent knows the ids, addresses and paths it typed; prose it wrote, like
//     a mail body, is left out so that it cannot launder a value).
//  2. The task's tools reach it in the workspace, whether or not the reference looked: every
//     message id when mail_list or mail_read is a tool (mail_read alone can read m1, m2, … in
//     turn: ids are documented and numbered), every event id when calendar_list is, every file
//     and folder of the state after setup when fs_list or fs_search is; the text, after setup, of
//     the messages (senders and subjects with mail_list or mail_read, the rest with mail_read),
//     of the files (with fs_search, or fs_read and fs_list), of the events (with calendar_list),
//     and, with task-defined tools, of the db records some result of the episode shows without
//     being asked for them by id.
//     A record id is reached when some result of the episode shows it and the call did not pass
//     it. Text that appears later (mail, files, events and records added or changed by a
//     `before` or by the reference) does not count here, as it may only echo what the reference
//     wrote (a colleague's answer quoting the reference's mail), with one exception: mail that a
//     `before` of a later turn delivers is reached from that turn on (see delivered).
//  3. A later call of the same turn, made on the same state (the state hash before it equals the
//     one before call i) and not given the identifier, shows it in its result: the agent could
//     have made that call first.
//
// Matching ignores case and looks for whole tokens: "m4" is not seen inside "m42", nor
// "bo@x.example" inside "jbo@x.example" or "bo@x.example.org"; JSON is decoded first. An id is
// also seen when each of its parts (runs of letters and digits) is a seen or reached word: "DC
// Tilburg" gives dc-tilburg, "VF 88401" gives VF-88401. A mail address is also fair when it
// follows a seen pattern: a seen or reached address has the same domain and a local part of the
// same shape, and every part of its local part (split at ".", "_", "-", "+") is a seen or reached
// word: greta.vogel@verdant.example, once "Greta Vogel" and iris.bakker@verdant.example are
// known, is what an agent would write.
//
// Paths, new ones included. A path is seen when it occurs whole (also without its leading "/"),
// when it is reached (rule 2), or when its folder is seen and its base name is: it occurs whole,
// or each of its parts with a letter (split at anything but letters and digits) is a seen word
// (parts made of digits only are years, months and counters an agent computes). "/" is always
// seen. New paths the reference creates follow the same rule on purpose: an agent names a new file
// from its instructions ("save it as q3.md in /reports", "reports/YYYY-MM-summary.json"), so a
// new path is fair when its folder and the words of its name were given or found, and a name
// made of words found nowhere is the reference's own invention, which a verifier checking it
// would hold against every other agent.
//
// Naming rules. A path is also seen when it follows a naming rule in seen or reached text (a
// README the reference read, a tool's description): a token that ends with the extension of the
// path's name and holds placeholders, YYYY, YY, MM and DD for that many digits (a run of letters
// of its own: "report-YYYYMMDD.md", not "reportYYYYMMDD.md") and <word> or {word} for seen words
// (joined by "-" or "_"; parts made of digits only are free, as in a name), the rest literal.
// "Q<quarter>-<client>.md" gives Q4-kaasmakers.md once "Kaasmakers" is seen, "report-v<n>.md"
// gives report-v3.md, which the words alone do not; the folder above the rule's segments is known
// by the rule for paths (ruleKnown). The diagnostic's advice, newPathAdvice, says the same.
//
// One diagnostic is given per distinct identifier, at the first call that passes it.
func (v *taskCheck) checkHiddenInfo(o *oracleRun) {
	h := newHiddenInfo(o.p, o.res)
	for _, f := range h.findings() {
		c := f.call
		var msg string
		if f.kind == kindNewPath {
			msg = fmt.Sprintf("turn %d: the reference's call %s passes %s = %q (the path of a new file or folder), whose name no agent could have known before that call: "+
				"neither the prompt, a user turn, the tool schemas, an earlier result of the episode nor a file the task's tools reach gives it; "+
				newPathAdvice,
				c.Turn, callString(c), f.where, f.value)
		} else {
			msg = fmt.Sprintf("turn %d: the reference's call %s passes %s = %q (%s), which no agent could have seen before that call: "+
				"it is not in the prompt, a user turn, the user's address, the tool schemas or an earlier result of the episode, and the task's tools do not show it; "+
				"give it in the prompt or a user turn, or make it discoverable through a tool (a file, a directory record, a mail) and have the reference look it up there first",
				c.Turn, callString(c), f.where, f.value, f.kind)
		}
		d := dsl.NewDiag("hidden-info", msg)
		if c.Pos.IsValid() {
			d = d.At(c.Pos)
		}
		v.add(d)
	}
}

// Descriptions of ids.
const (
	descMessage = "a message id"
	descEvent   = "an event id"
)

// hiddenFinding is one identifier passed unseen.
type hiddenFinding struct {
	call  *episode.Call
	where string // `argument "to"[0]`
	value string
	kind  string // "a mail address", "a message id", ..., or kindNewPath
}

const (
	kindAddress = "address"
	kindID      = "id"
	kindPath    = "path"
	// kindNewPath describes a path that names nothing after setup
	kindNewPath = "new path"
)

// ident is one identifier in a call's arguments.
type ident struct {
	kind  string // kindAddress, kindID or kindPath
	value string // the address, id or path as passed (an address without its display name)
	where string // `argument "to"[0]`
}

// hiddenInfo holds what the check needs of a task and its oracle episode.
type hiddenInfo struct {
	task  *dsl.Task
	res   *episode.Result
	base  *workspace.State
	final *workspace.State
	// ids maps an id (lower case) to its description (descMessage, ...); baseIDs holds the
	// ids that exist after setup.
	ids     map[string]string
	baseIDs map[string]bool
	system  string
	// per call of res.Calls: the result (or error) as text, the one-word argument values, and the
	// state hash before the call
	results []*seenText
	words   []*seenText
	before  []string
	// reach is the workspace text after setup the task's tools show (rule 2); listMail,
	// listEvents and listFiles say which ids and paths they list; shown memoizes isShown.
	reach                           *seenText
	listMail, listEvents, listFiles bool
	shown                           map[string]bool
	// laterMail is, per turn, the text of mail delivered since setup that the tools reach by
	// then (nil: none)
	laterMail []*seenText
	// allResults is the text of every result, to rule ids out quickly
	allResults string
}

func newHiddenInfo(p *episode.Prepared, res *episode.Result) *hiddenInfo {
	h := &hiddenInfo{task: p.Task, res: res, base: p.Base, final: res.Final, ids: map[string]string{}, baseIDs: map[string]bool{}, shown: map[string]bool{}}
	h.system = modelagent.SystemPromptOf("", p)
	h.addStateIDs(p.Base, true)
	if res.Final != nil {
		h.addStateIDs(res.Final, false)
	}
	for i, c := range res.Calls {
		r := &seenText{}
		if c.IsError {
			r.add(c.Error)
		} else if v, err := jsonv.DecodeString(c.Content); err == nil {
			r.addJSON(v)
			h.addResultIDs(v)
		} else {
			r.add(c.Content)
		}
		w := &seenText{}
		w.addWords(c.Args)
		h.results = append(h.results, r)
		h.words = append(h.words, w)
		switch {
		case i > 0 && res.Calls[i-1].Turn == c.Turn:
			h.before = append(h.before, res.Calls[i-1].State)
		case c.Turn < len(res.Turns):
			h.before = append(h.before, res.Turns[c.Turn].StateBefore)
		default:
			h.before = append(h.before, "")
		}
	}
	all := &seenText{}
	for _, r := range h.results {
		all.b.WriteString(r.b.String())
	}
	h.allResults = all.b.String()
	h.buildReach()
	return h
}

func (h *hiddenInfo) addID(id, kind string, base bool) {
	if id == "" || !idLike(id) {
		return
	}
	k := strings.ToLower(id)
	if _, ok := h.ids[k]; !ok {
		h.ids[k] = kind
	}
	if base {
		h.baseIDs[k] = true
	}
}

func (h *hiddenInfo) addStateIDs(s *workspace.State, base bool) {
	for _, m := range s.Mail().Messages(workspace.Filter{}) {
		h.addID(m.ID, descMessage, base)
	}
	if evs, err := s.Calendar().Events("", "", ""); err == nil {
		for _, e := range evs {
			h.addID(e.ID, descEvent, base)
		}
	}
	db := s.DB()
	for _, coll := range db.Collections() {
		for _, r := range db.All(coll) {
			if id, ok := r.Get("id"); ok {
				if s, ok := id.(string); ok {
					h.addID(s, fmt.Sprintf("the id of record %s/%s", coll, s), base)
				}
			}
		}
	}
}

// addResultIDs notes the string "id" members of the objects in a result.
func (h *hiddenInfo) addResultIDs(v jsonv.Value) {
	jsonv.Walk(v, func(key string, v jsonv.Value) {
		if s, ok := v.(string); ok && key == "id" {
			h.addID(s, "an id", false)
		}
	})
}

// isShown reports whether some successful call of the episode shows id in its result without
// having been given it.
func (h *hiddenInfo) isShown(id string) bool {
	k := strings.ToLower(id)
	if v, ok := h.shown[k]; ok {
		return v
	}
	v := false
	if containsWord(h.allResults, k) {
		for i, c := range h.res.Calls {
			if !c.IsError && h.results[i].has(kindID, k) && !h.words[i].has(kindID, k) {
				v = true
				break
			}
		}
	}
	h.shown[k] = v
	return v
}

// buildReach collects the workspace text after setup that the task's tools show (rule 2).
func (h *hiddenInfo) buildReach() {
	has := func(name string) bool {
		s, ok := h.task.Tool(name)
		return ok && s.Builtin
	}
	// mail_read alone reaches every message too: ids are documented and numbered (m1, m2, …)
	h.listMail = has("mail_list") || has("mail_read")
	h.listEvents = has("calendar_list")
	h.listFiles = has("fs_list") || has("fs_search")
	addMail := func(r *seenText, m workspace.Message) {
		r.add(m.Sender)
		r.add(m.Subject)
		if !has("mail_read") {
			return
		}
		r.add(strings.Join(m.To, "\n"))
		r.add(strings.Join(m.Cc, "\n"))
		r.add(m.Body)
		for _, a := range m.Attachments {
			r.add(a.Name)
			if has("mail_save_attachment") && has("fs_read") {
				r.add(a.Content)
			}
		}
	}
	r := &seenText{}
	if h.listMail {
		for _, m := range h.base.Mail().Messages(workspace.Filter{}) {
			addMail(r, m)
		}
		h.laterMail = h.delivered(addMail)
	}
	if h.listFiles && (has("fs_search") || has("fs_read")) {
		fs := h.base.Files()
		for _, p := range fs.Walk("/") {
			if c, err := fs.Read(p); err == nil {
				r.add(c)
			}
		}
	}
	if h.listEvents {
		if evs, err := h.base.Calendar().Events("", "", ""); err == nil {
			for _, e := range evs {
				r.add(e.Title)
				r.add(strings.Join(e.Attendees, "\n"))
				r.add(e.Location)
				r.add(e.Description)
			}
		}
	}
	taskTools := false
	for _, s := range h.task.Tools {
		taskTools = taskTools || !s.Builtin
	}
	db := h.base.DB()
	for _, coll := range db.Collections() {
		if !taskTools {
			break // only task-defined tools read records
		}
		for _, rec := range db.All(coll) {
			if id, ok := rec.Get("id"); ok {
				if s, ok := id.(string); ok && h.isShown(s) {
					r.addJSON(rec)
				}
			}
		}
	}
	h.reach = r
}

// delivered is, per turn, the text of the mail delivered since setup that the tools reach in
// that turn: messages of the final state that were not there after setup, not sent from the
// user's address, and dated no later than the turn's start (the time after setup plus the turns'
// advances), for the turns from the first later turn that has a `before` on. The first turn gets
// none: such mail could only be an answer to what the reference did in it.
func (h *hiddenInfo) delivered(add func(*seenText, workspace.Message)) []*seenText {
	out := make([]*seenText, len(h.task.Turns))
	if h.final == nil {
		return out
	}
	user := strings.ToLower(h.base.Mail().Address())
	start := h.base.Clock().Now()
	anyBefore := false
	for t, turn := range h.task.Turns {
		start = start.Add(turn.Advance)
		if t == 0 {
			continue
		}
		anyBefore = anyBefore || turn.Before != nil
		if !anyBefore {
			continue
		}
		r := &seenText{}
		for _, m := range h.final.Mail().Messages(workspace.Filter{}) {
			if _, ok := h.base.Mail().Get(m.ID); ok || strings.ToLower(m.Sender) == user {
				continue
			}
			if d, err := timefmt.Parse(m.Date); err != nil || d.After(start) {
				continue
			}
			add(r, m)
		}
		out[t] = r
	}
	return out
}

var (
	numberRE = regexp.MustCompile(`^[+-]?[0-9][0-9.,_ ]*$`)
	dateRE   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}`)
	timeRE   = regexp.MustCompile(`^[0-9]{1,2}:[0-9]{2}`)
)

// idLike reports whether s can be taken for an id: not a number, a date or a time, which an
// agent computes rather than finds.
func idLike(s string) bool {
	return !numberRE.MatchString(s) && !dateRE.MatchString(s) && !timeRE.MatchString(s)
}

// findings walks the oracle's calls in order and returns the identifiers passed unseen, one per
// distinct value.
func (h *hiddenInfo) findings() []hiddenFinding {
	seen := &seenText{}
	seen.add(h.system)
	for _, t := range h.task.Tools {
		seen.addJSON(t.Schema())
	}
	turnsAdded := 0
	reported := map[string]bool{}
	// the exchanges with simulated users, in order: what the persona told is seen from then on
	// (the facts it holds are unseen until asked)
	var asks []*episode.UserAsk
	for _, t := range h.res.Turns {
		asks = append(asks, t.Asks...)
	}
	var out []hiddenFinding
	for i, c := range h.res.Calls {
		for turnsAdded <= c.Turn && turnsAdded < len(h.res.Turns) {
			if turnsAdded > 0 {
				seen.add(h.res.Turns[turnsAdded-1].Reply)
			}
			seen.add(h.res.Turns[turnsAdded].User)
			turnsAdded++
		}
		for len(asks) > 0 && asks[0].Calls <= i && asks[0].Turn <= c.Turn {
			seen.add(asks[0].Content)
			asks = asks[1:]
		}
		if !c.Fault {
			spec, _ := h.task.Tool(c.Name)
			for _, id := range h.identifiers(spec, c.Args) {
				key := id.kind + "\x00" + strings.ToLower(id.value)
				if reported[key] {
					continue
				}
				if id.kind == kindID && !h.baseIDs[strings.ToLower(id.value)] && spec != nil && !spec.Builtin && c.Changed {
					continue // possibly created by this very call, under an id the agent chose
				}
				if h.fair(id, i, seen) {
					continue
				}
				reported[key] = true
				out = append(out, hiddenFinding{call: c, where: id.where, value: id.value, kind: h.describe(id)})
			}
		}
		if !c.Fault { // a faulted attempt's arguments are its retry's, checked with it
			seen.b.WriteString(h.words[i].b.String())
		}
		seen.b.WriteString(h.results[i].b.String())
	}
	return out
}

// fair reports whether identifier id, passed in call i, is seen (rule 1), reached (rule 2) or
// shown by a later call of the same turn on the same state (rule 3).
func (h *hiddenInfo) fair(id ident, i int, seen *seenText) bool {
	texts := []*seenText{seen, h.reach}
	if c := h.res.Calls[i]; c.Turn < len(h.laterMail) && h.laterMail[c.Turn] != nil {
		texts = append(texts, h.laterMail[c.Turn])
	}
	switch id.kind {
	case kindID:
		k := strings.ToLower(id.value)
		desc := h.ids[k]
		if anyHas(texts, kindID, id.value) || wordsSeen(texts, id.value, false) || h.isShown(id.value) ||
			desc == descMessage && h.listMail || desc == descEvent && h.listEvents {
			return true
		}
	case kindAddress:
		if anyHas(texts, kindAddress, id.value) || inferable(texts, id.value) {
			return true
		}
	case kindPath:
		var reached func(string) bool
		if h.listFiles {
			reached = h.base.Files().Exists
		}
		if pathKnown(texts, workspace.CleanPath(id.value), reached, 0) {
			return true
		}
	}
	c := h.res.Calls[i]
	for r := i + 1; r < len(h.res.Calls) && h.res.Calls[r].Turn == c.Turn; r++ {
		if h.before[r] != h.before[i] || h.res.Calls[r].IsError || h.words[r].has(id.kind, id.value) {
			continue
		}
		if h.results[r].has(id.kind, id.value) {
			return true
		}
	}
	return false
}

// pathKnown: p (clean) is "/", is reached (reached may be nil), occurs whole (also without its
// leading "/"), or its folder is known and its base name is seen.
func pathKnown(texts []*seenText, p string, reached func(string) bool, depth int) bool {
	if p == "/" || reached != nil && reached(p) {
		return true
	}
	if depth > 64 {
		return false
	}
	lp := strings.ToLower(p)
	rel := lp[1:]
	for _, t := range texts {
		s := t.b.String()
		if containsToken(s, lp, pathLeft, wideRight) || strings.Contains(rel, "/") && containsToken(s, rel, relLeft, wideRight) {
			return true
		}
	}
	if nameSeen(texts, path.Base(lp)) && pathKnown(texts, path.Dir(p), reached, depth+1) {
		return true
	}
	return ruleKnown(texts, p, reached, depth)
}

// newPathAdvice is how the hidden-info diagnostic of a new path says to make its name known: what
// pathKnown and ruleKnown accept.
const newPathAdvice = "give the name in the prompt or a user turn, or make it discoverable through a tool (a file, a directory record, a mail): " +
	"the path itself, or its folder and the words of its name, or a naming rule the reference reads first, " +
	"such as \"reports/YYYY-MM-summary.md\" or \"<client>-summary.md\" in a README " +
	"(YYYY, YY, MM and DD stand for that many digits, <word> or {word} for seen words)"

// maxRule bounds the length of a naming rule, in bytes.
const maxRule = 200

// ruleKnown reports whether clean path p follows a naming rule stated in texts. A rule is a token
// of the text (a run of characters up to white space, a quote, a backtick, a bracket, a comma, a
// semicolon, a colon, "*", "=" or "|", at most maxRule bytes) that ends with the extension of p's
// base name (a non-empty one) and holds a placeholder: a run of letters that is made of YYYY, YY,
// MM and DD only (a run of as many digits each: "yyyymmdd" is 8 digits), or <word> or {word}
// (one or more runs of letters and digits joined by "-" or "_", each a seen word or made of digits
// only, as in a name). The rest of the rule is literal. Its segments (split at "/") match p's last
// segments one for one, ignoring case; the folder above them is then known by pathKnown's rule,
// and is "/" when the rule starts with "/".
func ruleKnown(texts []*seenText, p string, reached func(string) bool, depth int) bool {
	lp := strings.ToLower(p)
	ext := path.Ext(lp)
	if ext == "" || ext == "." || depth > 64 {
		return false
	}
	memo := &ruleMemo{compiled: map[string]*regexp.Regexp{}, known: map[string]bool{}}
	for _, t := range texts {
		s := t.b.String()
		for from := 0; ; {
			i := strings.Index(s[from:], ext)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			j := i + len(ext)
			if j < len(s) && wideRight(s, j) {
				continue // a longer extension or name
			}
			k := i
			for k > 0 && i-k < maxRule && !ruleStop(s[k-1]) {
				k--
			}
			if k > 0 && !ruleStop(s[k-1]) {
				continue // longer than a rule
			}
			if tok := s[k:j]; mayHoldPlaceholder(tok) && ruleMatches(texts, tok, p, reached, depth, memo) {
				return true
			}
		}
	}
	return false
}

// mayHoldPlaceholder is a quick test of whether a token can be a naming rule.
func mayHoldPlaceholder(tok string) bool {
	return strings.ContainsAny(tok, "<{") || strings.Contains(tok, "yy") || strings.Contains(tok, "mm") || strings.Contains(tok, "dd")
}

// ruleStop reports whether byte c ends a naming rule (see ruleKnown).
func ruleStop(c byte) bool {
	return strings.IndexByte(" \t\n\r\"'`()[],;:*=|", c) >= 0
}

var (
	// placeholderRE finds the placeholders of a naming rule (in lower case): <word>, {word}, or a
	// run of letters to be checked by dateRunRE
	placeholderRE = regexp.MustCompile(`<[\p{L}\p{N}_-]{1,40}>|\{[\p{L}\p{N}_-]{1,40}\}|\p{L}+`)
	dateRunRE     = regexp.MustCompile(`^(yyyy|yy|mm|dd)+$`)
	datePartRE    = regexp.MustCompile(`yyyy|yy|mm|dd`)
)

// ruleMatches reports whether rule, a token of seen text, is a naming rule (see ruleKnown) that
// the clean path p follows.
func ruleMatches(texts []*seenText, rule, p string, reached func(string) bool, depth int, memo *ruleMemo) bool {
	rule = strings.TrimPrefix(rule, "./")
	abs := strings.HasPrefix(rule, "/")
	rs := strings.Split(strings.TrimPrefix(rule, "/"), "/")
	segs := strings.Split(p[1:], "/")
	if len(rs) > len(segs) || abs && len(rs) != len(segs) {
		return false
	}
	tail := strings.ToLower(strings.Join(segs[len(segs)-len(rs):], "/"))
	var re strings.Builder
	re.WriteString("^")
	holders := 0
	literal := func(s string) bool { // a literal part, which the tail must hold
		re.WriteString(regexp.QuoteMeta(s))
		return strings.Contains(tail, s)
	}
	for n, seg := range rs {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		if n > 0 {
			re.WriteString("/")
		}
		last := 0
		for _, m := range placeholderRE.FindAllStringIndex(seg, -1) {
			ph := seg[m[0]:m[1]]
			var part string
			switch {
			case ph[0] == '<' || ph[0] == '{':
				part = `([\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)*)`
			case dateRunRE.MatchString(ph):
				for _, d := range datePartRE.FindAllString(ph, -1) {
					part += fmt.Sprintf("[0-9]{%d}", len(d))
				}
			default:
				continue // a literal word
			}
			holders++
			if !literal(seg[last:m[0]]) {
				return false
			}
			re.WriteString(part)
			last = m[1]
		}
		if !literal(seg[last:]) {
			return false
		}
	}
	re.WriteString("$")
	if holders == 0 {
		return false
	}
	x, ok := memo.compiled[re.String()]
	if !ok {
		x, _ = regexp.Compile(re.String())
		memo.compiled[re.String()] = x
	}
	if x == nil {
		return false
	}
	m := x.FindStringSubmatch(tail)
	if m == nil {
		return false
	}
	for _, w := range m[1:] {
		if !memo.once("w"+w, func() bool { return wordsSeen(texts, w, true) }) {
			return false
		}
	}
	dir := "/" + strings.Join(segs[:len(segs)-len(rs)], "/")
	return memo.once("d"+dir, func() bool { return pathKnown(texts, dir, reached, depth+1) })
}

// ruleMemo is what ruleKnown has worked out for one path: the rules' expressions by source, and
// whether a placeholder's value ("w" and the value) or a folder ("d" and the path) is known.
type ruleMemo struct {
	compiled map[string]*regexp.Regexp
	known    map[string]bool
}

// once returns f's result for key, calling f only the first time.
func (m *ruleMemo) once(key string, f func() bool) bool {
	v, ok := m.known[key]
	if !ok {
		v = f()
		m.known[key] = v
	}
	return v
}

// nameSeen reports whether a base name occurs whole, or each of its parts with a letter is a
// seen word.
func nameSeen(texts []*seenText, name string) bool {
	for _, t := range texts {
		if containsToken(t.b.String(), name, pathLeft, wideRight) {
			return true
		}
	}
	return wordsSeen(texts, name, true)
}

var partRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// wordsSeen reports whether s has parts (runs of letters and digits) and each is a seen word;
// with digitsFree, parts made of digits only need not be seen (years, months, counters).
func wordsSeen(texts []*seenText, s string, digitsFree bool) bool {
	parts := partRE.FindAllString(s, -1)
	for _, part := range parts {
		if digitsFree && strings.Trim(part, "0123456789") == "" {
			continue
		}
		if !anyHas(texts, kindID, part) {
			return false
		}
	}
	return len(parts) > 0
}

// inferable reports whether an address follows a seen pattern: a seen address has the same
// domain and a local part of the same shape (the same separators in the same order, as in
// iris.bakker and greta.vogel), and each part of the local part is a seen word.
func inferable(texts []*seenText, addr string) bool {
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 {
		return false
	}
	local, domain := strings.ToLower(addr[:at]), strings.ToLower(addr[at+1:])
	shape := localShape(local)
	found := false
	for _, t := range texts {
		s := t.b.String()
		for from := 0; !found; {
			i := strings.Index(s[from:], "@"+domain)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if j := i + 1 + len(domain); j < len(s) && wideRight(s, j) {
				continue // a longer domain
			}
			k := i
			for k > 0 && addrLeft(s[k-1]) {
				k--
			}
			if k < i && localShape(s[k:i]) == shape {
				found = true
			}
		}
	}
	return found && wordsSeen(texts, local, false)
}

// localShape is the separators of a local part in order: "." for iris.bakker, "" for orders.
func localShape(local string) string {
	var b strings.Builder
	for i := 0; i < len(local); i++ {
		if !isWordByte(local[i]) || local[i] == '_' {
			b.WriteByte(local[i])
		}
	}
	return b.String()
}

func anyHas(texts []*seenText, kind, value string) bool {
	for _, t := range texts {
		if t.has(kind, value) {
			return true
		}
	}
	return false
}

func (h *hiddenInfo) describe(id ident) string {
	switch id.kind {
	case kindAddress:
		return "a mail address"
	case kindPath:
		p := workspace.CleanPath(id.value)
		switch {
		case h.base.Files().IsFile(p):
			return "the path of a file"
		case h.base.Files().IsDir(p):
			return "the path of a folder"
		}
		return kindNewPath
	}
	return h.ids[strings.ToLower(id.value)]
}

// identifiers lists the identifiers in the arguments of a call to spec (nil for an unknown tool),
// in argument order.
func (h *hiddenInfo) identifiers(spec *dsl.ToolSpec, args *jsonv.Object) []ident {
	if args == nil {
		return nil
	}
	var out []ident
	for _, m := range args.Members {
		pathArg := spec != nil && pathParam(m.Key, spec.Builtin)
		h.walkArg(m.Value, fmt.Sprintf("argument %q", m.Key), pathArg, &out)
	}
	return out
}

func (h *hiddenInfo) walkArg(v jsonv.Value, where string, pathArg bool, out *[]ident) {
	switch x := v.(type) {
	case string:
		*out = append(*out, h.classify(x, where, pathArg)...)
	case []jsonv.Value:
		for i, e := range x {
			h.walkArg(e, fmt.Sprintf("%s[%d]", where, i), pathArg, out)
		}
	case *jsonv.Object:
		if x == nil {
			return
		}
		for _, m := range x.Members {
			h.walkArg(m.Value, fmt.Sprintf("%s[%q]", where, m.Key), pathArg || pathParam(m.Key, false), out)
		}
	}
}

// classify says which identifiers a string argument is: none, one, or several addresses.
func (h *hiddenInfo) classify(s, where string, pathArg bool) []ident {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil
	}
	if addrs := addressesIn(t); addrs != nil {
		out := make([]ident, len(addrs))
		for i, a := range addrs {
			out[i] = ident{kindAddress, a, where}
		}
		return out
	}
	if strings.HasPrefix(t, "/") {
		if t == "/" || strings.ContainsAny(t, "\n\t") {
			return nil
		}
		if pathArg || h.base.Files().Exists(t) || h.final != nil && h.final.Files().Exists(t) {
			return []ident{{kindPath, t, where}}
		}
		return nil
	}
	if _, ok := h.ids[strings.ToLower(t)]; ok {
		return []ident{{kindID, t, where}}
	}
	return nil
}

// pathParam reports whether an argument of this name holds paths: for built-in tools the path,
// src, dst and attachments arguments; for task-defined tools a name that says so.
func pathParam(name string, builtin bool) bool {
	if builtin {
		switch name {
		case "path", "src", "dst", "attachments":
			return true
		}
		return false
	}
	switch name {
	case "path", "paths", "file", "files", "folder", "dir", "directory", "src", "dst":
		return true
	}
	for _, suf := range []string{"_path", "_paths", "_file", "_folder", "_dir"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

var (
	addrRE      = regexp.MustCompile(`^[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$`)
	namedAddrRE = regexp.MustCompile(`^[^<>@]*<\s*([^<>\s]+)\s*>$`)
)

// addressesIn returns the mail addresses s is made of ("a@x.example", "Bo <bo@x.example>", or a
// list of those separated by commas or semicolons), or nil when s is anything else.
func addressesIn(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		part = strings.TrimSpace(part)
		if m := namedAddrRE.FindStringSubmatch(part); m != nil {
			part = m[1]
		}
		if !addrRE.MatchString(part) {
			return nil
		}
		out = append(out, part)
	}
	return out
}

// seenText is text an agent has seen, in lower case, pieces separated by a blank line.
type seenText struct {
	b strings.Builder
}

func (s *seenText) add(text string) {
	if text == "" {
		return
	}
	s.b.WriteString(strings.ToLower(text))
	s.b.WriteString("\n\n")
}

// addJSON adds the keys and scalar values of a decoded JSON value.
func (s *seenText) addJSON(v jsonv.Value) {
	jsonv.Walk(v, func(key string, v jsonv.Value) {
		s.add(key)
		switch x := v.(type) {
		case string:
			s.add(x)
		case *jsonv.Object, []jsonv.Value, nil:
		default:
			s.add(jsonv.MustEncode(x))
		}
	})
}

// addWords adds the string values of an agent's arguments that are one word (no white space):
// the ids, addresses and paths it typed, not its prose.
func (s *seenText) addWords(v jsonv.Value) {
	jsonv.Walk(v, func(_ string, v jsonv.Value) {
		if x, ok := v.(string); ok && !strings.ContainsAny(x, " \t\n\r") {
			s.add(x)
		}
	})
}

// has reports whether the text holds an identifier of the kind as a whole token (a path: the
// whole path, or its folder and base name by pathKnown's rule).
func (s *seenText) has(kind, value string) bool {
	text := s.b.String()
	v := strings.ToLower(strings.TrimSpace(value))
	switch kind {
	case kindAddress:
		return containsToken(text, v, addrLeft, wideRight)
	case kindPath:
		return pathKnown([]*seenText{s}, workspace.CleanPath(strings.TrimSpace(value)), nil, 0)
	}
	return containsWord(text, v)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// Boundary rules of containsToken: left(c) says whether byte c just before a match makes it part
// of something longer; right(text, j) the same of the text after the match, from index j.
type (
	leftRule  func(c byte) bool
	rightRule func(text string, j int) bool
)

// an id: \b semantics
func wordLeft(c byte) bool              { return isWordByte(c) }
func wordRight(text string, j int) bool { return isWordByte(text[j]) }

// an address: no local-part character before
func addrLeft(c byte) bool { return isWordByte(c) || strings.IndexByte(".%+-'", c) >= 0 }

// a path or a base name: no name character before ("/" is fine before a base name, which occurs
// inside other paths); a relative path: not the tail of a longer path either
func pathLeft(c byte) bool { return isWordByte(c) || c == '-' || c == '.' }
func relLeft(c byte) bool  { return pathLeft(c) || c == '/' }

// an address or a path: no name character after, and no "." that goes on with a name
// ("x.example" is not whole inside "x.example.org", but is at the end of a sentence)
func wideRight(text string, j int) bool {
	c := text[j]
	if isWordByte(c) || c == '-' {
		return true
	}
	return c == '.' && j+1 < len(text) && isWordByte(text[j+1])
}

// containsToken reports whether tok occurs in text with nothing before or after it that would
// make it part of a longer token, by the boundary rules left and right.
func containsToken(text, tok string, left leftRule, right rightRule) bool {
	if tok == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(text[from:], tok)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(tok)
		if (i == 0 || !left(text[i-1])) && (j == len(text) || !right(text, j)) {
			return true
		}
		from = i + 1
	}
}

// containsWord reports whether tok occurs in text as a whole word: a word character just before
// (after) it counts only when tok starts (ends) with one, as \b does.
func containsWord(text, tok string) bool {
	if tok == "" {
		return false
	}
	left, right := leftRule(wordLeft), rightRule(wordRight)
	if !isWordByte(tok[0]) {
		left = func(byte) bool { return false }
	}
	if !isWordByte(tok[len(tok)-1]) {
		right = func(string, int) bool { return false }
	}
	return containsToken(text, tok, left, right)
}
