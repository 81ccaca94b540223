package wsmod

import (
	"fmt"

	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"go.starlark.net/starlark"
)

var mailMembers = []*member{
	{name: "address",
		get: func(o *object) (starlark.Value, error) { return str(o.ws.st.Mail().Address()), nil },
		set: func(o *object, v starlark.Value) error {
			s, ok := v.(starlark.String)
			if !ok {
				return fmt.Errorf("got %s, want string", v.Type())
			}
			return o.ws.st.Mail().SetAddress(string(s))
		},
		doc: "The address of the mailbox's owner (default \"me@example.com\"), readable and settable: ws.mail.address = \"sam@acme.example\". Sent mail goes out from it, and deliver's to defaults to it. Setting it on a read-only ws is an error."},
	{name: "deliver", write: true, ret: "string", call: deliverFn,
		params: []param{{"sender", ""}, {"subject", ""}, {"body", ""}, {"to", "None"}, {"cc", "[]"},
			{"date", "None"}, {"folder", `"inbox"`}, {"attachments", "{}"}, {"read", "False"},
			{"labels", "[]"}, {"in_reply_to", "None"}},
		doc: "Puts a message into the mailbox and returns its id (\"m1\", \"m2\", …). to and cc take one address or a list; to defaults to [ws.mail.address]. date (RFC 3339) defaults to the clock's now. The folder is created when it is new. attachments maps file names to contents (strings), kept in dict order. A message with in_reply_to joins the thread of that message when it exists; otherwise it starts its own thread."},
	{name: "get", params: []param{{"id", ""}}, ret: "struct | None",
		call: func(c *call) (starlark.Value, error) {
			id := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			m, ok := c.w.st.Mail().Get(id)
			if !ok {
				return starlark.None, nil
			}
			return MessageValue(m), nil
		},
		doc: "Returns message id as a struct with id, sender, to, cc, subject, body, date, folder, read, labels, thread, in_reply_to (None when the message answers nothing) and attachments (the file names), or None when there is no such message."},
	{name: "messages", ret: "list", call: messagesFn,
		params: []param{{"folder", "None"}, {"sender", "None"}, {"to", "None"}, {"subject", "None"},
			{"unread", "None"}, {"label", "None"}},
		doc: "Returns the messages (structs, as ws.mail.get) that match every filter given, oldest first (by date, then by the number in the id: m9 before m10). folder matches exactly; sender exactly, ignoring case; to matches an address in to or cc, exactly, ignoring case; subject is a substring, ignoring case; unread=True keeps unread messages and unread=False read ones; label keeps messages with that label."},
	{name: "folders", ret: "list",
		call: func(c *call) (starlark.Value, error) {
			return starconv.Strings(c.w.st.Mail().Folders()), nil
		},
		doc: "Returns the names of the folders that hold at least one message, sorted."},
}

func deliverFn(c *call) (starlark.Value, error) {
	d := workspace.Delivery{
		Sender:    c.str(0),
		Subject:   c.str(1),
		Body:      c.str(2),
		To:        c.strList(3, true),
		Cc:        c.strList(4, true),
		Date:      c.optStr(5, ""),
		Folder:    c.optStr(6, "inbox"),
		Labels:    c.strList(9, false),
		InReplyTo: c.optStr(10, ""),
	}
	if r := c.optBool(8); r != nil {
		d.Read = *r
	}
	if !c.absent(7) {
		dict, ok := c.args[7].(*starlark.Dict)
		if !ok {
			c.badType(7, c.args[7], "dict")
		} else {
			d.Attachments = make([]workspace.Attachment, 0, dict.Len())
			for _, kv := range dict.Items() {
				k, ok1 := kv[0].(starlark.String)
				v, ok2 := kv[1].(starlark.String)
				if !ok1 || !ok2 {
					c.fail("for parameter attachments: got a %s: %s item, want string: string (file name: content)", kv[0].Type(), kv[1].Type())
					break
				}
				d.Attachments = append(d.Attachments, workspace.Attachment{Name: string(k), Content: string(v)})
			}
		}
	}
	if err := c.done(); err != nil {
		return nil, err
	}
	id, err := c.w.st.Mail().Deliver(d)
	if err != nil {
		return nil, c.wrap(err)
	}
	return str(id), nil
}

func messagesFn(c *call) (starlark.Value, error) {
	f := workspace.Filter{
		Folder:  c.optStr(0, ""),
		Sender:  c.optStr(1, ""),
		To:      c.optStr(2, ""),
		Subject: c.optStr(3, ""),
		Unread:  c.optBool(4),
		Label:   c.optStr(5, ""),
	}
	if err := c.done(); err != nil {
		return nil, err
	}
	ms := c.w.st.Mail().Messages(f)
	out := make([]starlark.Value, len(ms))
	for i, m := range ms {
		out[i] = MessageValue(m)
	}
	return starlark.NewList(out), nil
}
