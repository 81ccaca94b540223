package chat

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// The agent's tools, group "chat". Results are JSON in a fixed order: conversations by name,
// messages oldest first.

const (
	msgShape  = "Each message is {id, channel, sender, text, ts, thread, replies, mentions, reactions, edited}: thread is the id of the thread's first message (null for a message of the channel itself), replies how many replies the thread it starts has, reactions maps an emoji name to the people who gave it."
	idDesc    = "Message id, like \"cm4\", as chat_read, chat_search and chat_mentions show it."
	convDesc  = "A channel, like \"#dispatch\", or a direct message: \"@dana.berg\" with one person, \"@dana.berg,@lars.olsen\" with several (chat_list_channels lists them)."
	limitDesc = "Largest number of messages to return (the newest ones)."
)

// listingDoc says what a listing of messages shows at once: the newest that fit.
var listingDoc = strings.Replace(tools.ListingDoc, "with the first items", "with the newest messages", 1)

var agentTools = []*tools.Tool{
	{Name: "chat_list_channels", Group: "chat",
		Description: "List the chat conversations: the channels, then your direct messages. Returns {you, conversations}: you is your own handle; " +
			"each conversation is {name, kind (\"channel\" or \"dm\"), topic, members (handles), member (whether you are in it), messages (how many), last (time of the newest message, or null)}.",
		Run: listChannels},
	{Name: "chat_read", Group: "chat",
		Description: "Read a channel or direct message: its newest messages, oldest first, without the replies inside threads. " +
			"To read a thread, give thread = the id of a message in it: you get the thread's first message, then its replies. " + msgShape + " " + listingDoc,
		Params: []tools.Param{tools.Req("channel", tools.TypeString, convDesc), tools.Opt("thread", tools.TypeString, "Id of a message whose thread to read.", ""),
			tools.Opt("limit", tools.TypeInteger, limitDesc, int64(20))},
		Run: readConv},
	{Name: "chat_post", Group: "chat",
		Description: "Post a message as yourself in a channel or a direct message (a direct message to someone new starts the conversation). " +
			"With thread = a message id, the message is a reply in that message's thread (a reply to a reply joins the same thread). " +
			"Write \"@handle\" to mention someone. A message holds at most " + limits.Bytes(limits.ChatText) + ". Returns {id, channel, thread, ts}.",
		Params: []tools.Param{tools.Req("channel", tools.TypeString, convDesc), tools.Req("text", tools.TypeString, "The message, plain text."),
			tools.Opt("thread", tools.TypeString, "Id of the message to reply to in its thread; leave out to post in the channel itself.", "")},
		Run: postTool},
	{Name: "chat_search", Group: "chat",
		Description: "Search every channel and direct message (or one, with channel) for messages whose text or sender contains every word of query, case ignored; thread replies included. " +
			"Returns the newest matches, oldest first. " + msgShape + " " + listingDoc,
		Params: []tools.Param{tools.Req("query", tools.TypeString, "Words to look for."), tools.Opt("channel", tools.TypeString, "Search only this conversation.", ""),
			tools.Opt("limit", tools.TypeInteger, limitDesc, int64(20))},
		Run: search},
	{Name: "chat_mentions", Group: "chat",
		Description: "The messages that mention you: \"@\" and your handle, or @here, @channel or @everyone in a channel you are a member of. Returns the newest, oldest first. " + msgShape + " " + listingDoc,
		Params:      []tools.Param{tools.Opt("limit", tools.TypeInteger, limitDesc, int64(20))},
		Run:         mentions},
	{Name: "chat_react", Group: "chat",
		Description: "Add your emoji reaction to a message, or take it back with remove. Returns {id, reactions}.",
		Params: []tools.Param{tools.Req("message_id", tools.TypeString, idDesc),
			tools.Req("emoji", tools.TypeString, "Emoji name, like \"eyes\", \"+1\" or \"white_check_mark\" (colons are ignored)."),
			tools.Opt("remove", tools.TypeBoolean, "Take your reaction back instead.", false)},
		Run: reactTool},
	{Name: "chat_edit", Group: "chat",
		Description: "Replace the text of one of your own messages (at most " + limits.Bytes(limits.ChatText) + "); it shows as edited. Returns the message.",
		Params:      []tools.Param{tools.Req("message_id", tools.TypeString, idDesc), tools.Req("text", tools.TypeString, "The new text.")},
		Run:         editTool},
	{Name: "chat_delete", Group: "chat",
		Description: "Delete one of your own messages (not one whose thread has replies from others). Returns {ok, id}.",
		Params:      []tools.Param{tools.Req("message_id", tools.TypeString, idDesc)},
		Run:         deleteTool},
}

// newest keeps the first limit messages of back (the newest first), and of them no more than a
// listing shows, oldest first; total is how many limit keeps. count is how many messages back
// yields when that is known (-1: it is not), so that it stops at what the listing shows.
func newest(back iter.Seq[*Message], count int, limit int64) (kept []*Message, total int, err error) {
	if limit < 1 {
		return nil, 0, fmt.Errorf("argument \"limit\": must be at least 1, got %d", limit)
	}
	if count >= 0 {
		total = int(min(limit, int64(count)))
	}
	n := 0
	for m := range back {
		if count >= 0 && n >= min(total, limits.ListItems) || int64(n) >= limit {
			break
		}
		if n++; len(kept) < limits.ListItems {
			kept = append(kept, m)
		}
	}
	if count < 0 {
		total = n
	}
	slices.Reverse(kept)
	return kept, total, nil
}

// listing is the result of a tool that shows messages: the newest that fit (tools.Listing).
func (v *view) listing(ms []*Message, total int, narrow string) jsonv.Value {
	return tools.Listing(v.list(ms), total, true, "messages", narrow)
}

// list shows messages with their reply counts.
func (v *view) list(ms []*Message) []jsonv.Value {
	out := make([]jsonv.Value, len(ms))
	for i, m := range ms {
		o := messageJSON(m)
		o.Set("replies", int64(v.replies(m)))
		out[i] = o
	}
	return out
}

func listChannels(st *workspace.State, _ *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	out := []jsonv.Value{}
	for _, c := range convs(v) {
		name := tools.ArgStr(c, "name")
		var last jsonv.Value
		for m := range v.inConv(name, true) {
			last = m.TS
			break
		}
		c.Set("member", slices.Contains(v.members(name), v.me))
		c.Set("messages", int64(v.count(byConv, name+"\x00")))
		c.Set("last", last)
		out = append(out, c)
	}
	return jsonv.NewObject("you", v.me, "conversations", out), nil
}

func readConv(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	conv, err := v.conv(tools.ArgStr(args, "channel"))
	if err != nil {
		return nil, err
	}
	prefix := conv + topTail // the conversation's own messages
	var head *Message
	if id := tools.ArgStr(args, "thread"); id != "" {
		if head, err = v.get(id); err != nil {
			return nil, err
		}
		if head.Conv != conv {
			return nil, fmt.Errorf("message %s is in %s, not in %s", head.ID, head.Conv, conv)
		}
		if head.Thread != "" {
			if head = v.message(head.Thread); head == nil {
				return nil, fmt.Errorf("the first message of the thread of %s is gone", id)
			}
		}
		prefix = head.ID + "\x00" // the thread's replies
	}
	x := byConv
	if head != nil {
		x = byThread
	}
	ms, total, err := newest(v.walk(x, prefix, true), v.count(x, prefix), tools.ArgInt(args, "limit"))
	if err != nil {
		return nil, err
	}
	if head != nil {
		ms, total = append([]*Message{head}, ms...), total+1
	}
	return v.listing(ms, total, "give a smaller limit, or read a thread"), nil
}

func postTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	me := read(st).me
	m, err := post(st, draft{conv: tools.ArgStr(args, "channel"), sender: me, text: tools.ArgStr(args, "text"), thread: tools.ArgStr(args, "thread"), known: true})
	if err != nil {
		return nil, err
	}
	thread, _ := messageJSON(m).Get("thread")
	return jsonv.NewObject("id", m.ID, "channel", m.Conv, "thread", thread, "ts", m.TS), nil
}

func search(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	words := strings.Fields(strings.ToLower(tools.ArgStr(args, "query")))
	if len(words) == 0 {
		return nil, errors.New("argument \"query\": give at least one word to look for")
	}
	conv := tools.ArgStr(args, "channel")
	in := v.all(true)
	if conv != "" {
		var err error
		if conv, err = v.conv(conv); err != nil {
			return nil, err
		}
		in = v.inConv(conv, true)
	}
	matches := func(yield func(*Message) bool) {
		for m := range in {
			hay := strings.ToLower(m.Sender + " " + m.Text)
			if !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(hay, w) }) && !yield(m) {
				return
			}
		}
	}
	ms, total, err := newest(matches, -1, tools.ArgInt(args, "limit"))
	if err != nil {
		return nil, err
	}
	return v.listing(ms, total, "add words to the query, or give a channel"), nil
}

func mentions(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	ms, total, err := newest(v.mentioningMe(), -1, tools.ArgInt(args, "limit"))
	if err != nil {
		return nil, err
	}
	return v.listing(ms, total, "give a smaller limit"), nil
}

// mentioningMe yields the messages that mention the user, newest first: those that mention
// the user's handle or a broadcast, of which mentionsMe keeps the right ones.
func (v *view) mentioningMe() iter.Seq[*Message] {
	return func(yield func(*Message) bool) {
		cursors := []func() *Message{v.cursor(byMention, v.me+"\x00", true)}
		for _, b := range broadcast {
			if b != v.me {
				cursors = append(cursors, v.cursor(byMention, b+"\x00", true))
			}
		}
		for m := range merge(true, cursors...) {
			if v.mentionsMe(m) && !yield(m) {
				return
			}
		}
	}
}

func reactTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	m, err := v.get(tools.ArgStr(args, "message_id"))
	if err != nil {
		return nil, err
	}
	if m, err = react(st, m, tools.ArgStr(args, "emoji"), v.me, tools.ArgBool(args, "remove")); err != nil {
		return nil, err
	}
	reactions, _ := messageJSON(m).Get("reactions")
	return jsonv.NewObject("id", m.ID, "reactions", reactions), nil
}

// own returns a message of the user's, for edits and deletions.
func own(v *view, args *jsonv.Object, verb string) (*Message, error) {
	m, err := v.get(tools.ArgStr(args, "message_id"))
	if err != nil {
		return nil, err
	}
	if m.Sender != v.me {
		return nil, fmt.Errorf("%s was posted by %s, not by you (%s): you can only %s your own messages", m.ID, m.Sender, v.me, verb)
	}
	return m, nil
}

func editTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	m, err := own(v, args, "edit")
	if err != nil {
		return nil, err
	}
	if m, err = edit(st, m, tools.ArgStr(args, "text")); err != nil {
		return nil, err
	}
	return v.list([]*Message{m})[0], nil
}

func deleteTool(st *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	v := read(st)
	m, err := own(v, args, "delete")
	if err != nil {
		return nil, err
	}
	for r := range v.walk(byThread, m.ID+"\x00", false) {
		if r.Sender != v.me {
			return nil, fmt.Errorf("%s starts a thread with replies from others (%s is %s's); edit it instead", m.ID, r.ID, r.Sender)
		}
	}
	if err := remove(st, v, m); err != nil {
		return nil, err
	}
	return jsonv.NewObject("ok", true, "id", m.ID), nil
}
