// Package chat is the chat service: team chat like Slack, with channels and direct messages.
//
// A channel ("#dispatch") has a topic and members; a direct-message conversation ("@dana.berg",
// or "@dana.berg,@lars.olsen" for a group) is between the user and the people it names, and
// exists once a message is in it. People are known by their handles ("dana.berg"); the user's
// own handle is ws.chat.handle. A message has an id ("cm1", "cm2", … from the part's counter),
// its conversation, sender, text, time (the virtual clock's), the thread it replies in (the id
// of the thread's first message), reactions (emoji → sorted people), mentions ("@handle" in the
// text) and an edited flag.
//
// The part holds three kinds of entry under namespaced keys: channels under their name
// ("#dispatch"), messages under their id ("cm4") and the user's handle under "user". Every post,
// edit, reaction and deletion is an action of the history, so a verifier finds a message the
// agent posted and then deleted (ws.chat.posted, ws.unexpected(chat = [...])). Scripts see
// ws.chat (script.go); the agent gets the chat_* tools (tools.go).
package chat

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
)

// Part is the state of the service.
var Part = &workspace.Part{Name: "chat", Entry: "chat message", Indexes: []*workspace.Index{byTime, byConv, byThread, byMention, byPerson}}

// Service declares the service (registered in package services).
var Service = &service.Service{
	Name:  "chat",
	Entry: Part.Entry,
	Doc: "Team chat like Slack: channels (\"#dispatch\", with a topic and members) and direct messages between the user and " +
		"one or more people (\"@dana.berg\", \"@dana.berg,@lars.olsen\"). People are known by their handles; the user's own is " +
		"ws.chat.handle. Messages have an id (\"cm1\", …), a conversation, a sender, a text, a time from the virtual clock, " +
		"the thread they reply in, reactions (emoji → people), mentions (\"@handle\") and an edited flag. The agent lists " +
		"conversations, reads channels and threads, searches, sees its mentions, posts (also in threads and direct " +
		"messages), reacts, and edits or deletes its own messages.",
	Part:  Part,
	WS:    wsMethods,
	Tools: agentTools,
	Setup: setupText,
	Value: value,
	Judge: judge,
	Probe: func(st *workspace.State) error {
		if err := setChannel(st, "#probe", ptr("probe"), []string{"probe"}); err != nil {
			return err
		}
		_, err := post(st, draft{conv: "#probe", sender: "probe", text: "x"})
		return err
	},
}

// DefaultHandle is the user's handle until a script sets ws.chat.handle.
const DefaultHandle = "me"

// Keys of the part that are not messages.
const userKey = "user"

// Ops of the history.
const (
	opCreate  = "create"  // a channel
	opUpdate  = "update"  // a channel's topic or members
	opSet     = "set"     // the user's handle
	opPost    = "post"    // a message
	opEdit    = "edit"    // a message's text
	opReact   = "react"   // a reaction added
	opUnreact = "unreact" // a reaction taken back
	opRemove  = "remove"  // a message deleted
)

// Channel is a channel. It is immutable once stored.
type Channel struct {
	Name    string   // "#dispatch"
	Topic   string   // one line
	Members []string // handles, sorted
}

// Digest covers every field.
func (c *Channel) Digest() [32]byte {
	return workspace.Digest("chat channel", c.Name, c.Topic, c.Members)
}

// Reaction is one emoji on a message and the people who gave it.
type Reaction struct {
	Emoji  string
	People []string // sorted
}

// Message is one chat message. It is immutable once stored: a change stores a new value.
type Message struct {
	ID        string
	Conv      string // "#dispatch", "@dana.berg" or "@dana.berg,@lars.olsen"
	Sender    string // a handle
	Text      string
	TS        string     // RFC 3339
	Thread    string     // the id of the thread's first message; "" for a message of the conversation itself
	Mentions  []string   // handles (and "here", "channel", "everyone"), sorted
	Reactions []Reaction // sorted by emoji
	Edited    bool
	at        int64 // TS in Unix seconds, for ordering
}

// Digest covers every field a reader can see.
func (m *Message) Digest() [32]byte {
	fields := []any{m.ID, m.Conv, m.Sender, m.Text, m.TS, m.Thread, m.Mentions, m.Edited, len(m.Reactions)}
	for _, r := range m.Reactions {
		fields = append(fields, r.Emoji, r.People)
	}
	return workspace.Digest("chat message", fields...)
}

func (m *Message) clone() *Message {
	c := *m
	c.Mentions = slices.Clone(m.Mentions)
	c.Reactions = slices.Clone(m.Reactions)
	return &c
}

// number is the number in the id (cm12 → 12).
func (m *Message) number() int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(m.ID, idPrefix), 10, 64)
	return n
}

const idPrefix = "cm"

// user is the entry of the user's handle.
type user struct{ Handle string }

func (u *user) Digest() [32]byte { return workspace.Digest("chat user", u.Handle) }

func ptr[T any](v T) *T { return &v }

// --- names -------------------------------------------------------------------------------------

var handleRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`)

// handle checks and normalizes a person's handle: "@Dana.Berg" → "dana.berg".
func handle(h string) (string, error) {
	n := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(h), "@"))
	if !handleRe.MatchString(n) {
		return "", fmt.Errorf("%q is not a handle (letters, digits, \".\", \"_\" and \"-\", like \"dana.berg\")", h)
	}
	return n, nil
}

func handles(hs []string) ([]string, error) {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		n, err := handle(h)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// channelName checks and normalizes a channel's name: "Dispatch" or "#Dispatch" → "#dispatch".
func channelName(name string) (string, error) {
	n := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "#"))
	if !handleRe.MatchString(n) {
		return "", fmt.Errorf("%q is not a channel name (letters, digits, \".\", \"_\" and \"-\", like \"#dispatch\")", name)
	}
	return "#" + n, nil
}

// dmName is the name of the direct-message conversation between me and people: "@a,@b",
// sorted, without me.
func dmName(people []string, me string) (string, error) {
	hs, err := handles(people)
	if err != nil {
		return "", err
	}
	hs = slices.DeleteFunc(hs, func(h string) bool { return h == me })
	if len(hs) == 0 {
		return "", errors.New("a direct message needs someone other than you")
	}
	return "@" + strings.Join(hs, ",@"), nil
}

// dmPeople are the people of a direct-message conversation, without the user.
func dmPeople(conv string) []string {
	return strings.Split(strings.TrimPrefix(conv, "@"), ",@")
}

func isDM(conv string) bool { return strings.HasPrefix(conv, "@") }

var idRe = regexp.MustCompile(`^` + idPrefix + `[0-9]+$`)

// normalKey normalizes a key a verifier allows (judge): conversation names as stored ("Dispatch"
// is "#dispatch"); message ids, "reactions" and "*" as given.
func normalKey(k string) string {
	k = strings.TrimSpace(k)
	switch {
	case k == "*" || k == "reactions" || idRe.MatchString(k):
		return k
	case strings.HasPrefix(k, "@"):
		if n, err := dmName(strings.Split(k, ","), ""); err == nil {
			return n
		}
	default:
		if n, err := channelName(k); err == nil {
			return n
		}
	}
	return k
}

// mentionRe finds "@handle" not inside a mail address.
var mentionRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.@-])@([A-Za-z0-9][A-Za-z0-9._-]*)`)

// mentionsIn returns the handles text mentions, sorted: "@Dana.Berg," gives "dana.berg".
func mentionsIn(text string) []string {
	var out []string
	for _, m := range mentionRe.FindAllStringSubmatch(text, -1) {
		h := strings.ToLower(strings.TrimRight(m[1], "._-"))
		if h == "" || strings.Trim(h, "0123456789") == "" || slices.Contains(out, h) {
			continue
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// broadcast mentions reach every member of a channel.
var broadcast = []string{"channel", "everyone", "here"}

// emoji normalizes a reaction: ":+1:" → "+1", "Eyes" → "eyes".
func emoji(e string) (string, error) {
	n := strings.ToLower(strings.Trim(strings.TrimSpace(e), ":"))
	if n == "" || strings.ContainsAny(n, " \t\n:") {
		return "", fmt.Errorf("%q is not an emoji: give its name, like \"eyes\", \"+1\" or \"white_check_mark\"", e)
	}
	return n, nil
}

// --- reading -----------------------------------------------------------------------------------

// The indexes of the part: every message under a key that ends in its time (stamp), so that
// the messages under one prefix follow in the order people read them, by time and then by the
// number in the id (the part's natural order of ids). A reader walks the messages it needs from
// the newest or the oldest and stops when it has enough.
var (
	// byTime holds every message: the whole chat.
	byTime = messageIndex("time", func(m *Message) []string { return []string{""} })
	// byConv holds every message under its conversation: conv + "\x00" + "0" for a message of
	// the conversation itself, + "1" for a reply in a thread.
	byConv = messageIndex("conversation", func(m *Message) []string {
		if m.Thread == "" {
			return []string{m.Conv + topTail}
		}
		return []string{m.Conv + replyTail}
	})
	// byThread holds the replies under the id of their thread's first message. It is read
	// mostly to count them: an index of references, which a reaction or an edit leaves alone.
	byThread = refs(messageIndex("thread", func(m *Message) []string {
		if m.Thread == "" {
			return nil
		}
		return []string{m.Thread + "\x00"}
	}))
	// byMention holds every message under each handle it mentions.
	byMention = messageIndex("mention", func(m *Message) []string { return under(m.Mentions) })
	// byPerson holds the people chat knows: the members of each channel (under "handle\x00"),
	// the sender of each message and the people of each direct message (with its stamp). It is
	// read mostly to count them: an index of references.
	byPerson = &workspace.Index{Name: "person", Refs: true, Keys: func(e workspace.Entry) []string {
		switch x := e.(type) {
		case *Channel:
			return under(x.Members)
		case *Message:
			people := []string{x.Sender}
			if isDM(x.Conv) {
				people = append(people, dmPeople(x.Conv)...)
			}
			return stamped(x, under(people))
		}
		return nil
	}}
)

// The tails of a conversation's key in byConv.
const (
	topTail   = "\x00" + "0"
	replyTail = "\x00" + "1"
)

// refs makes x an index of references (workspace.Index.Refs).
func refs(x *workspace.Index) *workspace.Index {
	x.Refs = true
	return x
}

// messageIndex is an index of messages only, under the prefixes keys gives and their stamp.
func messageIndex(name string, keys func(m *Message) []string) *workspace.Index {
	return &workspace.Index{Name: name, Keys: func(e workspace.Entry) []string {
		if m, ok := e.(*Message); ok {
			return stamped(m, keys(m))
		}
		return nil
	}}
}

// under makes each handle a prefix of keys: "dana.berg" → "dana.berg\x00". Handles hold no
// "\x00", so the prefix of one is never that of another.
func under(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h + "\x00"
	}
	return out
}

// stamped appends m's stamp to each prefix.
func stamped(m *Message, prefixes []string) []string {
	for i := range prefixes {
		prefixes[i] += stamp(m.at)
	}
	return prefixes
}

// stamp is a time that sorts as bytes in the order of times: 8 bytes, big-endian, sign flipped.
func stamp(at int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(at)^1<<63)
	return string(b[:])
}

// view reads the chat of one state for one call.
type view struct {
	st *workspace.State
	me string
}

func read(st *workspace.State) *view {
	v := &view{st: st, me: DefaultHandle}
	if e, ok := st.PartGet(Part, userKey); ok {
		if u, ok := e.(*user); ok {
			v.me = u.Handle
		}
	}
	return v
}

// channels are the channels, by name.
func (v *view) channels() []*Channel {
	var out []*Channel
	for k, e := range v.st.PartEntries(Part, "#") {
		if !strings.HasPrefix(k, "#") { // every channel's key starts with "#", and no other's
			break
		}
		if c, ok := e.(*Channel); ok {
			out = append(out, c)
		}
	}
	return out
}

func (v *view) channel(name string) *Channel {
	e, _ := v.st.PartGet(Part, name)
	c, _ := e.(*Channel)
	return c
}

func (v *view) message(id string) *Message {
	e, _ := v.st.PartGet(Part, id)
	m, _ := e.(*Message)
	return m
}

// walk yields the messages under prefix in index x, oldest first (back: newest first).
func (v *view) walk(x *workspace.Index, prefix string, back bool) iter.Seq[*Message] {
	return func(yield func(*Message) bool) {
		next := v.cursor(x, prefix, back)
		for m := next(); m != nil && yield(m); m = next() {
		}
	}
}

// cursor starts the walk of the messages under prefix in index x.
func (v *view) cursor(x *workspace.Index, prefix string, back bool) func() *Message {
	w := v.st.PartIndexWalk(Part, x, prefix, workspace.PrefixEnd(prefix), back)
	return func() *Message {
		for _, e, ok := w.Next(); ok; _, e, ok = w.Next() {
			if m, ok := e.(*Message); ok {
				return m
			}
		}
		return nil
	}
}

// count is the number of keys under prefix in index x.
func (v *view) count(x *workspace.Index, prefix string) int {
	return v.st.PartIndexLen(Part, x, prefix, workspace.PrefixEnd(prefix))
}

// all yields every message, oldest first (back: newest first).
func (v *view) all(back bool) iter.Seq[*Message] { return v.walk(byTime, "", back) }

// inConv yields the messages of a conversation, its threads' replies included, oldest first
// (back: newest first).
func (v *view) inConv(conv string, back bool) iter.Seq[*Message] {
	return func(yield func(*Message) bool) {
		merge(back, v.cursor(byConv, conv+topTail, back), v.cursor(byConv, conv+replyTail, back))(yield)
	}
}

// order is the order people read messages in: by time, then by the number in the id.
func order(a, b *Message) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.number(), b.number()))
}

// merge yields the messages of the cursors (each returns its messages in order, back: in
// reverse order, then nil) in one order; a message that two of them return comes once. It
// walks the cursors: what it returns is walked once, right away.
func merge(back bool, cursors ...func() *Message) iter.Seq[*Message] {
	return func(yield func(*Message) bool) {
		heads := make([]*Message, len(cursors))
		for i, c := range cursors {
			heads[i] = c()
		}
		var last *Message
		for {
			i := -1
			for j, m := range heads {
				if m == nil {
					continue
				}
				if i < 0 {
					i = j
					continue
				}
				if c := order(m, heads[i]); back && c > 0 || !back && c < 0 {
					i = j
				}
			}
			if i < 0 {
				return
			}
			m := heads[i]
			heads[i] = cursors[i]()
			if m == last {
				continue
			}
			if last = m; !yield(m) {
				return
			}
		}
	}
}

// replies counts the replies in the thread that m starts.
func (v *view) replies(m *Message) int { return v.count(byThread, m.ID+"\x00") }

// knows reports whether chat knows the handle p: the user, a member of a channel, a sender or
// one of the people of a direct message.
func (v *view) knows(p string) bool { return p == v.me || v.count(byPerson, p+"\x00") > 0 }

// dms are the direct-message conversations that hold a message, by name.
func (v *view) dms() []string {
	var out []string
	for lo, end := "@", workspace.PrefixEnd("@"); ; {
		conv := ""
		for k := range v.st.PartIndex(Part, byConv, lo, end, false) {
			conv = k[:strings.IndexByte(k, 0)]
			break
		}
		if conv == "" {
			break
		}
		out = append(out, conv)
		lo = conv + "\x01" // past every key of conv
	}
	slices.SortFunc(out, workspace.NaturalCompare)
	return out
}

// members are the people in a conversation: a channel's members, or the user and the people of
// a direct message.
func (v *view) members(conv string) []string {
	if isDM(conv) {
		out := append([]string{v.me}, dmPeople(conv)...)
		slices.Sort(out)
		return out
	}
	if c := v.channel(conv); c != nil {
		return c.Members
	}
	return []string{}
}

// mentionsMe reports whether m mentions the user: by handle, or with a broadcast in a channel
// the user is a member of.
func (v *view) mentionsMe(m *Message) bool {
	if m.Sender == v.me {
		return false
	}
	if slices.Contains(m.Mentions, v.me) {
		return true
	}
	if isDM(m.Conv) || !slices.Contains(v.members(m.Conv), v.me) {
		return false
	}
	for _, b := range broadcast {
		if slices.Contains(m.Mentions, b) {
			return true
		}
	}
	return false
}

// conv resolves the name of a conversation as the agent or a script gives it: "#dispatch" (also
// "dispatch" when that channel exists), "@dana.berg" or "@dana.berg,@lars.olsen". A channel must
// exist; a direct message need not yet.
func (v *view) conv(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case strings.HasPrefix(name, "@"):
		return dmName(strings.Split(name, ","), v.me)
	case strings.HasPrefix(name, "#"):
		n, err := channelName(name)
		if err != nil {
			return "", err
		}
		if v.channel(n) == nil {
			return "", fmt.Errorf("there is no channel %s; %s", n, v.known())
		}
		return n, nil
	}
	if n, err := channelName(name); err == nil && v.channel(n) != nil {
		return n, nil
	}
	return "", fmt.Errorf("there is no channel %q: channels start with \"#\" and direct messages with \"@\" (\"@dana.berg\"); %s", name, v.known())
}

// known lists the conversations, for errors.
func (v *view) known() string {
	var names []string
	for _, c := range v.channels() {
		names = append(names, c.Name)
	}
	names = append(names, v.dms()...)
	if len(names) == 0 {
		return "there are no channels yet"
	}
	return "the conversations are " + strings.Join(names, ", ")
}

func (v *view) get(id string) (*Message, error) {
	m := v.message(strings.TrimSpace(id))
	if m == nil {
		return nil, fmt.Errorf("there is no chat message %q: message ids look like \"cm4\" and are shown by chat_read, chat_search and chat_mentions", id)
	}
	return m, nil
}

// --- writing -----------------------------------------------------------------------------------

// setHandle sets the user's handle.
func setHandle(st *workspace.State, h string) error {
	n, err := handle(h)
	if err != nil {
		return err
	}
	return st.PartPut(Part, userKey, opSet, &user{Handle: n})
}

// setChannel creates a channel, or changes the topic and the members given (nil: kept).
func setChannel(st *workspace.State, name string, topic *string, members []string) error {
	n, err := channelName(name)
	if err != nil {
		return err
	}
	c, op := &Channel{Name: n, Members: []string{}}, opCreate
	if e, ok := st.PartGet(Part, n); ok {
		c, op = ptr(*e.(*Channel)), opUpdate
	}
	if topic != nil {
		c.Topic = *topic
	}
	if members != nil {
		if c.Members, err = handles(members); err != nil {
			return err
		}
	}
	return st.PartPut(Part, n, op, c)
}

// draft is a message to post.
type draft struct {
	conv, sender, text, thread string
	at                         string    // RFC 3339; "": the clock's now
	mentions                   *[]string // nil: parsed from the text
	known                      bool      // a direct message must be with people chat knows (the agent's posts)
}

// post stores a new message and returns it.
func post(st *workspace.State, d draft) (*Message, error) {
	v := read(st)
	conv, err := v.conv(d.conv)
	if err != nil {
		return nil, err
	}
	sender, err := handle(d.sender)
	if err != nil {
		return nil, fmt.Errorf("sender: %v", err)
	}
	if strings.TrimSpace(d.text) == "" {
		return nil, errors.New("the message is empty: give its text")
	}
	if err := checkText(d.text); err != nil {
		return nil, err
	}
	if isDM(conv) {
		people := dmPeople(conv)
		if sender != v.me && !slices.Contains(people, sender) {
			return nil, fmt.Errorf("%s is not in the direct message %s (between %s and %s)", sender, conv, v.me, strings.Join(people, ", "))
		}
		if d.known {
			for _, p := range people {
				if !v.knows(p) {
					return nil, fmt.Errorf("nobody in this chat has the handle %q; the members of the channels (chat_list_channels) are the people you can message", p)
				}
			}
		}
	}
	thread := ""
	if d.thread != "" {
		parent, err := v.get(d.thread)
		if err != nil {
			return nil, fmt.Errorf("thread: %v", err)
		}
		if parent.Conv != conv {
			return nil, fmt.Errorf("message %s is in %s, not in %s: post the reply in %s", parent.ID, parent.Conv, conv, parent.Conv)
		}
		thread = cmp.Or(parent.Thread, parent.ID)
	}
	ts := st.Clock().NowString()
	if d.at != "" {
		if ts, _, err = timefmt.Normalize(d.at); err != nil {
			return nil, err
		}
	}
	t, _ := timefmt.Parse(ts)
	mentions := mentionsIn(d.text)
	if d.mentions != nil {
		if mentions, err = handles(*d.mentions); err != nil {
			return nil, fmt.Errorf("mentions: %v", err)
		}
	}
	n, err := st.NextNumber(Part)
	if err != nil {
		return nil, err
	}
	m := &Message{ID: idPrefix + strconv.FormatInt(n, 10), Conv: conv, Sender: sender, Text: d.text, TS: ts,
		Thread: thread, Mentions: mentions, Reactions: []Reaction{}, at: t.Unix()}
	return m, st.PartPut(Part, m.ID, opPost, m)
}

// checkText refuses a message text over limits.ChatText.
func checkText(text string) error {
	if len(text) > limits.ChatText {
		return fmt.Errorf("the text is %d bytes, over the %s limit of a chat message", len(text), limits.Bytes(limits.ChatText))
	}
	return nil
}

// edit replaces the text of a message (its mentions are read again) and marks it edited.
func edit(st *workspace.State, m *Message, text string) (*Message, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("the new text is empty: to take a message back, delete it")
	}
	if err := checkText(text); err != nil {
		return nil, err
	}
	c := m.clone()
	c.Text, c.Mentions, c.Edited = text, mentionsIn(text), true
	return c, st.PartPut(Part, c.ID, opEdit, c)
}

// react adds (or, with remove, takes back) the reaction of who to a message.
func react(st *workspace.State, m *Message, e, who string, remove bool) (*Message, error) {
	e, err := emoji(e)
	if err != nil {
		return nil, err
	}
	c := m.clone()
	i := slices.IndexFunc(c.Reactions, func(r Reaction) bool { return r.Emoji == e })
	has := i >= 0 && slices.Contains(c.Reactions[i].People, who)
	switch {
	case remove && !has:
		return nil, fmt.Errorf("%s has no :%s: reaction from %s", m.ID, e, who)
	case !remove && has:
		return m, nil // reacting twice changes nothing
	case remove:
		people := slices.DeleteFunc(slices.Clone(c.Reactions[i].People), func(p string) bool { return p == who })
		if len(people) == 0 {
			c.Reactions = slices.Delete(c.Reactions, i, i+1)
		} else {
			c.Reactions[i].People = people
		}
		return c, st.PartPut(Part, c.ID, opUnreact, c)
	case i >= 0:
		people := append(slices.Clone(c.Reactions[i].People), who)
		slices.Sort(people)
		c.Reactions[i].People = people
	default:
		c.Reactions = append(c.Reactions, Reaction{Emoji: e, People: []string{who}})
		slices.SortFunc(c.Reactions, func(a, b Reaction) int { return strings.Compare(a.Emoji, b.Emoji) })
	}
	return c, st.PartPut(Part, c.ID, opReact, c)
}

// remove deletes a message and the replies of the thread it starts.
func remove(st *workspace.State, v *view, m *Message) error {
	var replies []string // read before the part changes
	for r := range v.walk(byThread, m.ID+"\x00", false) {
		replies = append(replies, r.ID)
	}
	if err := st.PartRemove(Part, m.ID, opRemove); err != nil {
		return err
	}
	for _, id := range replies {
		if err := st.PartRemove(Part, id, opRemove); err != nil {
			return err
		}
	}
	return nil
}

// --- judging and the setup text ----------------------------------------------------------------

// judge says why an action of the agent is not allowed by the keys of ws.unexpected(chat =
// [...]): a conversation ("#dispatch", "@dana.berg") allows posting, replying, reacting, editing
// and deleting in it; a message id allows reacting to it and editing it and, for a thread's first
// message, replying in that thread; "reactions" allows reactions anywhere; "*" allows everything.
func judge(keys [][]string, a workspace.Action) string {
	allowed := keys[0]
	ok := map[string]bool{}
	for _, k := range allowed {
		ok[normalKey(k)] = true
	}
	if ok["*"] {
		return ""
	}
	e, _ := a.After().(workspace.Entry)
	if e == nil {
		e, _ = a.Before().(workspace.Entry)
	}
	switch x := e.(type) {
	case *Message:
		where := x.Conv
		if x.Thread != "" {
			where = "the thread of " + x.Thread + " in " + x.Conv
		}
		inConv := ok[x.Conv] || x.Thread != "" && ok[x.Thread]
		switch a.Op {
		case opPost:
			if inConv {
				return ""
			}
			return fmt.Sprintf("posted %s in %s", x.ID, where)
		case opReact, opUnreact:
			if inConv || ok[x.ID] || ok["reactions"] {
				return ""
			}
			verb := map[string]string{opReact: "reacted :%s: to %s in %s", opUnreact: "took back :%s: from %s in %s"}[a.Op]
			return fmt.Sprintf(verb, changedEmoji(a), x.ID, where)
		case opRemove:
			if inConv {
				return ""
			}
			return fmt.Sprintf("deleted %s in %s", x.ID, where)
		default:
			if inConv || ok[x.ID] {
				return ""
			}
			return fmt.Sprintf("edited %s in %s", x.ID, where)
		}
	case *Channel:
		if ok[x.Name] {
			return ""
		}
		return "changed channel " + x.Name
	}
	return "changed the chat handle"
}

// changedEmoji is the emoji whose people a reaction action changed.
func changedEmoji(a workspace.Action) string {
	people := func(v any) map[string]string {
		out := map[string]string{}
		if m, ok := v.(*Message); ok {
			for _, r := range m.Reactions {
				out[r.Emoji] = strings.Join(r.People, ",")
			}
		}
		return out
	}
	before, after := people(a.Before()), people(a.After())
	var diff []string
	for e, p := range after {
		if before[e] != p {
			diff = append(diff, e)
		}
	}
	for e := range before {
		if _, ok := after[e]; !ok {
			diff = append(diff, e)
		}
	}
	slices.Sort(diff)
	if len(diff) == 0 {
		return "?"
	}
	return diff[0]
}

// setupText is what a reader of a task's setup sees of the chat.
func setupText(st *workspace.State) string {
	if st.PartLen(Part) == 0 {
		return ""
	}
	v := read(st)
	var b strings.Builder
	fmt.Fprintf(&b, "chat handle %s\n", v.me)
	for _, c := range v.channels() {
		fmt.Fprintf(&b, "chat channel %s members %s\n%s\n", c.Name, strings.Join(c.Members, ", "), c.Topic)
	}
	for m := range v.all(false) {
		fmt.Fprintf(&b, "chat %s %s %s %s", m.ID, m.Conv, m.TS, m.Sender)
		if m.Thread != "" {
			b.WriteString(" in thread " + m.Thread)
		}
		if m.Edited {
			b.WriteString(" (edited)")
		}
		b.WriteString("\n" + m.Text + "\n")
		for _, r := range m.Reactions {
			fmt.Fprintf(&b, "reaction :%s: %s\n", r.Emoji, strings.Join(r.People, ", "))
		}
	}
	return b.String()
}
