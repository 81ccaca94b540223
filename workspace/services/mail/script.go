package mail

import (
	"fmt"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
)

// What scripts see: ws.mail.

var wsMethods = []service.Method{
	{Name: "address",
		Call: func(st *workspace.State, _ service.Args) (starlark.Value, error) {
			return starlark.String(st.Mail().Address()), nil
		},
		Set: func(st *workspace.State, v starlark.Value) error {
			s, ok := v.(starlark.String)
			if !ok {
				return fmt.Errorf("got %s, want string", v.Type())
			}
			return st.Mail().SetAddress(string(s))
		},
		Doc: "The address of the mailbox's owner (default \"me@example.com\"), readable and settable: ws.mail.address = \"sam@acme.example\". Sent mail goes out from it, and deliver's to defaults to it. Setting it on a read-only ws is an error."},
	{Name: "deliver", Write: true, Ret: "string", Call: deliver,
		Params: []service.Param{{Name: "sender"}, {Name: "subject"}, {Name: "body"}, {Name: "to", Default: "None"}, {Name: "cc", Default: "[]"},
			{Name: "date", Default: "None"}, {Name: "folder", Default: `"inbox"`}, {Name: "attachments", Default: "{}"}, {Name: "read", Default: "False"},
			{Name: "labels", Default: "[]"}, {Name: "in_reply_to", Default: "None"}},
		Doc: "Puts a message into the mailbox and returns its id (\"m1\", \"m2\", …). to and cc take one address or a list; to defaults to [ws.mail.address]. date (RFC 3339) defaults to the clock's now. The folder is created when it is new. attachments maps file names to contents (strings), kept in dict order. A body over " + limits.Bytes(limits.MailBody) + ", an attachment over " + limits.Bytes(limits.Attachment) + " or attachments over " + limits.Bytes(limits.Attachments) + " together are an error. A message with in_reply_to joins the thread of that message when it exists; otherwise it starts its own thread."},
	{Name: "get", Params: []service.Param{{Name: "id"}}, Ret: "struct | None",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			id := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			m, ok := st.Mail().Get(id)
			if !ok {
				return starlark.None, nil
			}
			return MessageValue(m), nil
		},
		Doc: "Returns message id as a struct with id, sender, to, cc, subject, body, date, folder, read, labels, thread, in_reply_to (None when the message answers nothing) and attachments (the file names), or None when there is no such message."},
	{Name: "messages", Ret: "list", Call: messages,
		Params: []service.Param{{Name: "folder", Default: "None"}, {Name: "sender", Default: "None"}, {Name: "to", Default: "None"}, {Name: "subject", Default: "None"},
			{Name: "unread", Default: "None"}, {Name: "label", Default: "None"}},
		Doc: "Returns the messages (structs, as ws.mail.get) that match every filter given, oldest first (by date, then by the number in the id: m9 before m10). folder matches exactly; sender exactly, ignoring case; to matches an address in to or cc, exactly, ignoring case; subject is a substring, ignoring case; unread=True keeps unread messages and unread=False read ones; label keeps messages with that label."},
	{Name: "folders", Ret: "list",
		Call: func(st *workspace.State, _ service.Args) (starlark.Value, error) {
			return starconv.Strings(st.Mail().Folders()), nil
		},
		Doc: "Returns the names of the folders that hold at least one message, sorted."},
}

func deliver(st *workspace.State, a service.Args) (starlark.Value, error) {
	d := workspace.Delivery{
		Sender:    a.Str(0),
		Subject:   a.Str(1),
		Body:      a.Str(2),
		To:        a.StrList(3, true),
		Cc:        a.StrList(4, true),
		Date:      a.OptStr(5, ""),
		Folder:    a.OptStr(6, "inbox"),
		Labels:    a.StrList(9, false),
		InReplyTo: a.OptStr(10, ""),
	}
	if r := a.OptBool(8); r != nil {
		d.Read = *r
	}
	if !a.Absent(7) {
		if dict := a.Dict(7); dict != nil {
			d.Attachments = make([]workspace.Attachment, 0, dict.Len())
			for _, kv := range dict.Items() {
				k, ok1 := kv[0].(starlark.String)
				v, ok2 := kv[1].(starlark.String)
				if !ok1 || !ok2 {
					a.Fail("for parameter attachments: got a %s: %s item, want string: string (file name: content)", kv[0].Type(), kv[1].Type())
					break
				}
				d.Attachments = append(d.Attachments, workspace.Attachment{Name: string(k), Content: string(v)})
			}
		}
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	id, err := st.Mail().Deliver(d)
	if err != nil {
		return nil, err
	}
	return starlark.String(id), nil
}

func messages(st *workspace.State, a service.Args) (starlark.Value, error) {
	f := workspace.Filter{
		Folder:  a.OptStr(0, ""),
		Sender:  a.OptStr(1, ""),
		To:      a.OptStr(2, ""),
		Subject: a.OptStr(3, ""),
		Unread:  a.OptBool(4),
		Label:   a.OptStr(5, ""),
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	ms := st.Mail().Messages(f)
	out := make([]starlark.Value, len(ms))
	for i, m := range ms {
		out[i] = MessageValue(m)
	}
	return starlark.NewList(out), nil
}
