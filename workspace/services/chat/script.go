package chat

import (
	"fmt"
	"iter"
	"strings"

	"github.com/coworkenv/coworkenv/workspace/tools"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// What scripts see: ws.chat.

const structDoc = "A message is a struct with id, channel (its conversation: \"#dispatch\", \"@dana.berg\"), sender (a handle), text, ts (RFC 3339), thread (the id of the thread's first message, None for a message of the conversation itself), mentions (sorted handles, with \"here\", \"channel\" or \"everyone\" for a broadcast), reactions (a dict from emoji name to the sorted handles who gave it) and edited."

var wsMethods = []service.Method{
	{Name: "handle", Set: setHandleValue,
		Call: func(st *workspace.State, _ service.Args) (starlark.Value, error) {
			return starlark.String(read(st).me), nil
		},
		Doc: "The user's chat handle (default \"me\"), readable and settable like ws.mail.address: ws.chat.handle = \"iris.bakker\". The agent posts under it, chat_mentions finds \"@\" + it, and direct messages are between it and the people they name. Set it before posting the user's own messages."},
	{Name: "channel", Write: true, Ret: "string",
		Params: []service.Param{{Name: "name"}, {Name: "topic", Default: "None"}, {Name: "members", Default: "None"}},
		Doc:    "Creates the channel name (\"#dispatch\"; the \"#\" may be left out, case is ignored) or, when it exists, changes the topic and the members given (None keeps them); members are handles. Returns the channel's name as stored (\"#dispatch\").",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			name, members := a.Str(0), a.StrList(2, false)
			var topic *string
			if !a.Absent(1) {
				topic = ptr(a.Str(1))
			}
			if err := a.Done(); err != nil {
				return nil, err
			}
			if err := setChannel(st, name, topic, members); err != nil {
				return nil, err
			}
			n, _ := channelName(name)
			return starlark.String(n), nil
		}},
	{Name: "post", Write: true, Ret: "string",
		Params: []service.Param{{Name: "channel"}, {Name: "sender"}, {Name: "text"}, {Name: "thread", Default: "None"},
			{Name: "at", Default: "None"}, {Name: "mentions", Default: "None"}},
		Doc: "Posts a message and returns its id (\"cm1\", \"cm2\", … in order of posting). channel is a channel that exists (\"#dispatch\") or a direct message (\"@dana.berg\", \"@dana.berg,@lars.olsen\": with the user, who is left out of the name; it exists from its first message, and sender must be the user or one of its people). thread is the id of a message of the same conversation to reply to (a reply to a reply joins the same thread). at (RFC 3339) defaults to the clock's now; messages are read in order of time, then of id. mentions replaces the handles parsed from \"@handle\" in the text. A text over " + limits.Bytes(limits.ChatText) + " is an error.",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			d := draft{conv: a.Str(0), sender: a.Str(1), text: a.Str(2), thread: a.OptStr(3, ""), at: a.OptStr(4, "")}
			if ms := a.StrList(5, true); ms != nil {
				d.mentions = &ms
			}
			if err := a.Done(); err != nil {
				return nil, err
			}
			m, err := post(st, d)
			if err != nil {
				return nil, err
			}
			return starlark.String(m.ID), nil
		}},
	{Name: "messages", Ret: "list",
		Params: []service.Param{{Name: "channel", Default: "None"}, {Name: "thread", Default: "None"}, {Name: "sender", Default: "None"}, {Name: "contains", Default: "None"}},
		Doc:    "Returns the messages that match every filter given, oldest first (by time, then by the number in the id), as structs (see ws.chat.get): channel is a conversation (\"#dispatch\", \"@dana.berg\"), thread keeps the replies in the thread of that message id (any message of the thread; the replies, not the thread's first message), sender a handle, contains a piece of the text (case ignored). Thread replies are included unless thread or a test of m.thread == None says otherwise.",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			conv, thread, sender, contains := a.OptStr(0, ""), a.OptStr(1, ""), a.OptStr(2, ""), a.OptStr(3, "")
			if err := a.Done(); err != nil {
				return nil, err
			}
			v := read(st)
			var err error
			if conv != "" {
				if conv, err = v.conv(conv); err != nil {
					return nil, err
				}
			}
			if sender != "" {
				if sender, err = handle(sender); err != nil {
					return nil, err
				}
			}
			if m := v.message(thread); m != nil && m.Thread != "" {
				thread = m.Thread
			}
			// Walk the fewest messages that hold every match: a thread's, a conversation's, the
			// sender's, or all; charge a step for each.
			var in iter.Seq[*Message]
			var looks int
			switch {
			case thread != "":
				in, looks = v.walk(byThread, thread+"\x00", false), v.count(byThread, thread+"\x00")
			case conv != "":
				in, looks = v.inConv(conv, false), v.count(byConv, conv+"\x00")
			case sender != "":
				in, looks = v.walk(byPerson, sender+"\x00", false), v.count(byPerson, sender+"\x00")
			default:
				in, looks = v.all(false), v.count(byTime, "")
			}
			if err := a.Charge(looks); err != nil {
				return nil, err
			}
			var out []starlark.Value
			for m := range in {
				if conv != "" && m.Conv != conv || thread != "" && m.Thread != thread || sender != "" && m.Sender != sender ||
					contains != "" && !strings.Contains(strings.ToLower(m.Text), strings.ToLower(contains)) {
					continue
				}
				out = append(out, structOf(messageJSON(m)))
			}
			return starlark.NewList(out), nil
		}},
	{Name: "get", Ret: "struct | None", Params: []service.Param{{Name: "id"}},
		Doc: "Returns message id, or None when there is none. " + structDoc,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			id := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			if m := read(st).message(id); m != nil {
				return structOf(messageJSON(m)), nil
			}
			return starlark.None, nil
		}},
	{Name: "react", Write: true, Ret: "None",
		Params: []service.Param{{Name: "id"}, {Name: "emoji"}, {Name: "by", Default: "None"}, {Name: "remove", Default: "False"}},
		Doc:    "Adds the reaction emoji (a name like \"eyes\" or \"+1\"; colons and case are ignored) of by (a handle; default the user) to message id, or with remove=True takes it back. Reacting twice changes nothing; taking back a reaction that is not there is an error.",
		Call: onMessage(func(a service.Args) change {
			e, by, rm := a.Str(1), a.OptStr(2, ""), a.OptBool(3)
			return func(st *workspace.State, v *view, m *Message) error {
				who := v.me
				if by != "" {
					h, err := handle(by)
					if err != nil {
						return err
					}
					who = h
				}
				_, err := react(st, m, e, who, rm != nil && *rm)
				return err
			}
		})},
	{Name: "edit", Write: true, Ret: "None", Params: []service.Param{{Name: "id"}, {Name: "text"}},
		Doc: "Replaces the text of message id, as its sender editing it: the mentions are read again from the new text and the message is marked edited. A turn's before uses it for a colleague who changes what they asked. A text over " + limits.Bytes(limits.ChatText) + " is an error.",
		Call: onMessage(func(a service.Args) change {
			text := a.Str(1)
			return func(st *workspace.State, _ *view, m *Message) error {
				_, err := edit(st, m, text)
				return err
			}
		})},
	{Name: "remove", Write: true, Ret: "None", Params: []service.Param{{Name: "id"}},
		Doc:  "Deletes message id and, when it starts a thread, the replies in it. The history keeps them (ws.history.actions(kind = \"chat message\")).",
		Call: onMessage(func(service.Args) change { return remove })},
	{Name: "channels", Ret: "list",
		Doc: "Returns the conversations: the channels by name, then the direct messages that hold a message, as structs with name, kind (\"channel\" or \"dm\"), topic (\"\" for a direct message) and members (sorted handles; a direct message's include the user).",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			v := read(st)
			var out []starlark.Value
			for _, c := range convs(v) {
				out = append(out, structOf(c))
			}
			return starlark.NewList(out), nil
		}},
	{Name: "posted", Ret: "list", Params: []service.Param{{Name: "channel", Default: "None"}},
		Doc: "Returns every message the agent posted or edited, oldest first, as it was right after that post or edit, even if it was later edited again or deleted: the chat's counterpart of ws.history.sent(), for red lines over what was said (a secret pasted into a channel and deleted a minute later still counts). Structs as ws.chat.get; channel keeps one conversation. Where the agent may post, ws.unexpected(chat = [...]) says: a conversation (\"#dispatch\", \"@dana.berg\") allows posting, replying, reacting, editing and deleting in it; a message id allows reacting to it and editing it and, for the first message of a thread (the thread field of its replies), replying in that thread; \"reactions\" allows reactions anywhere; \"*\" everything. Its words name the message and where it was (\"posted cm9 in #general\", \"deleted cm9 in #general\", \"reacted :eyes: to cm3 in #general\"), and a post that was later deleted still counts.",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			conv := a.OptStr(0, "")
			if err := a.Done(); err != nil {
				return nil, err
			}
			if conv != "" {
				conv = normalKey(conv)
			}
			var out []starlark.Value
			for _, act := range st.History(nil) {
				m, ok := act.After().(*Message)
				if !ok || act.Actor != workspace.ActorAgent || act.Op != opPost && act.Op != opEdit || conv != "" && m.Conv != conv {
					continue
				}
				out = append(out, structOf(messageJSON(m)))
			}
			return starlark.NewList(out), nil
		}},
}

// change is a change to one message.
type change func(st *workspace.State, v *view, m *Message) error

// onMessage is the Call of a method whose first parameter is a message id: args reads the other
// arguments and returns the change, made once the message is found.
func onMessage(args func(a service.Args) change) func(*workspace.State, service.Args) (starlark.Value, error) {
	return func(st *workspace.State, a service.Args) (starlark.Value, error) {
		id, do := a.Str(0), args(a)
		if err := a.Done(); err != nil {
			return nil, err
		}
		v := read(st)
		m, err := v.get(id)
		if err != nil {
			return nil, err
		}
		return starlark.None, do(st, v, m)
	}
}

func setHandleValue(st *workspace.State, v starlark.Value) error {
	s, ok := v.(starlark.String)
	if !ok {
		return fmt.Errorf("got %s, want string", v.Type())
	}
	return setHandle(st, string(s))
}

// messageJSON is a message as tools and scripts show it (see structDoc).
func messageJSON(m *Message) *jsonv.Object {
	var thread jsonv.Value
	if m.Thread != "" {
		thread = m.Thread
	}
	reactions := &jsonv.Object{}
	for _, r := range m.Reactions {
		reactions.Set(r.Emoji, tools.Strings(r.People))
	}
	return jsonv.NewObject("id", m.ID, "channel", m.Conv, "sender", m.Sender, "text", m.Text, "ts", m.TS,
		"thread", thread, "mentions", tools.Strings(m.Mentions), "reactions", reactions, "edited", m.Edited)
}

func channelJSON(c *Channel) *jsonv.Object {
	return jsonv.NewObject("name", c.Name, "kind", "channel", "topic", c.Topic, "members", tools.Strings(c.Members))
}

// convs lists the conversations: channels by name, then direct messages.
func convs(v *view) []*jsonv.Object {
	var out []*jsonv.Object
	for _, c := range v.channels() {
		out = append(out, channelJSON(c))
	}
	for _, d := range v.dms() {
		out = append(out, jsonv.NewObject("name", d, "kind", "dm", "topic", "", "members", tools.Strings(v.members(d))))
	}
	return out
}

// structOf turns a JSON object into a struct with the same fields.
func structOf(o *jsonv.Object) starlark.Value {
	d := make(starlark.StringDict, o.Len())
	for _, m := range o.Members {
		d[m.Key] = starconv.FromJSON(m.Value)
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, d)
}

// value converts an entry of the part for scripts (ws.history): a message as ws.chat.get, a
// channel as ws.chat.channels, the user's handle as a struct with handle; nil for another
// service's entry.
func value(e any) starlark.Value {
	switch x := e.(type) {
	case *Message:
		return structOf(messageJSON(x))
	case *Channel:
		return structOf(channelJSON(x))
	case *user:
		return structOf(jsonv.NewObject("handle", x.Handle))
	}
	return nil
}
