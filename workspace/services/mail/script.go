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
	{Name: "deliver_many", Write: true, Ret: "list", Call: deliverMany, Params: []service.Param{{Name: "messages"}},
		Doc: "Puts every message of messages (a list of dicts, each with the arguments of deliver by name: {\"sender\": …, \"subject\": …, \"body\": …, \"folder\": \"archive\"}) into the mailbox, in order, as deliver does one, and returns their ids. It is the way to seed many messages at once: it costs one step of the script's budget per message and one per KiB of its body and attachments, where a loop of deliver costs a dozen steps per message. It stops at the first message deliver would refuse, naming it (\"message 7: …\"); the messages before it are delivered."},
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
	d, err := delivery(a)
	if err != nil {
		return nil, err
	}
	id, err := st.Mail().Deliver(d)
	if err != nil {
		return nil, err
	}
	return starlark.String(id), nil
}

// deliverMany is ws.mail.deliver_many: each dict of the list is bound as the arguments of a call
// of deliver.
func deliverMany(st *workspace.State, a service.Args) (starlark.Value, error) {
	seq, ok := a.Value(0).(starlark.Indexable)
	if _, isStr := a.Value(0).(starlark.String); !ok || isStr {
		a.Fail("for parameter messages: got %s, want list of dicts", a.Value(0).Type())
	}
	if err := a.Done(); err != nil {
		return nil, err
	}
	ids := make([]starlark.Value, 0, seq.Len())
	for i := range seq.Len() {
		what := fmt.Sprintf("message %d", i+1)
		dict, ok := seq.Index(i).(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: got %s, want dict", what, seq.Index(i).Type())
		}
		sub, err := a.Sub("deliver", what, dict)
		if err != nil {
			return nil, err
		}
		d, err := delivery(sub)
		if err != nil {
			return nil, err
		}
		size := len(d.Body)
		for _, at := range d.Attachments {
			size += len(at.Content)
		}
		if err := a.Charge(1 + size/1024); err != nil {
			return nil, err
		}
		id, err := st.Mail().Deliver(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		ids = append(ids, starlark.String(id))
	}
	return starlark.NewList(ids), nil
}

// delivery reads the arguments of deliver.
func delivery(a service.Args) (workspace.Delivery, error) {
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
	return d, a.Done()
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
	if err := a.Charge(st.Mail().InFolder(f.Folder)); err != nil { // every message of the folder is looked at
		return nil, err
	}
	ms := st.Mail().Messages(f)
	out := make([]starlark.Value, len(ms))
	for i, m := range ms {
		out[i] = MessageValue(m)
	}
	return starlark.NewList(out), nil
}
