package mail

import (
	"fmt"
	"path"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// The agent's tools, group "mail".

const group = "mail"

const idDesc = "Message id, like \"m3\", as given by mail_list."

// attachDoc says the limits of attachments.
var attachDoc = "at most " + limits.Bytes(limits.Attachment) + " each and " + limits.Bytes(limits.Attachments) + " together"

var agentTools = []*tools.Tool{
	{
		Name:  "mail_list",
		Group: group,
		Description: "List messages in a mail folder, newest first, as summaries {id, sender, subject, date, read}; " +
			"with folder \"\" (every folder), each summary also names its folder. Use mail_read to see a whole message. " + tools.ListingDoc,
		Params: []tools.Param{
			tools.Opt("folder", tools.TypeString, "Folder to list, like \"inbox\", \"sent\" or \"archive\"; \"\" lists every folder.", "inbox"),
			tools.Opt("unread_only", tools.TypeBoolean, "List only unread messages.", false),
			tools.Opt("query", tools.TypeString, "Keep only messages whose sender, subject or body contains this text (case-insensitive).", ""),
			tools.Opt("limit", tools.TypeInteger, "Largest number of messages to return.", int64(20)),
		},
		Run: mailList,
	},
	{
		Name:  "mail_read",
		Group: group,
		Description: "Read a whole message: id, sender, to, cc, subject, body, date, folder, read, labels, thread, " +
			"in_reply_to and the names of its attachments. Reading does not mark it as read.",
		Params: []tools.Param{tools.Req("id", tools.TypeString, idDesc)},
		Run:    mailRead,
	},
	{
		Name:  "mail_mark",
		Group: group,
		Description: "Mark a message as read or unread, and optionally set its labels (the list given replaces " +
			"the labels it had). Returns the message summary.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, idDesc),
			tools.Opt("read", tools.TypeBoolean, "true to mark as read, false to mark as unread.", true),
			tools.WithItems(tools.Opt("labels", tools.TypeArray, "The new labels of the message, replacing the old ones; leave out to keep them.", nil), tools.TypeString),
		},
		Run: mailMark,
	},
	{
		Name:  "mail_send",
		Group: group,
		Description: "Send a new email from the user's address. It is saved in the \"sent\" folder. Files from the " +
			"user's files can be attached by path. Returns {\"id\"} of the sent message.",
		Params: []tools.Param{
			tools.Req("to", tools.TypeAddresses, "Recipient address, or a list of addresses."),
			tools.Req("subject", tools.TypeString, "Subject line."),
			tools.Req("body", tools.TypeString, "Plain-text body, at most "+limits.Bytes(limits.MailBody)+"."),
			tools.Opt("cc", tools.TypeAddresses, "Address or list of addresses to copy.", []jsonv.Value{}),
			tools.WithItems(tools.Opt("attachments", tools.TypeArray, "Absolute paths of files to attach; each is attached under its file name ("+attachDoc+").", []jsonv.Value{}), tools.TypeString),
		},
		Run: mailSend,
	},
	{
		Name:  "mail_reply",
		Group: group,
		Description: "Reply to a message. The reply goes to its sender; with reply_all, everyone else on the " +
			"message (to and cc, except the user) is copied, and the addresses in cc are copied too. The " +
			"subject gets \"Re: \", the reply stays in the same thread, and the original is not quoted. " +
			"Returns {\"id\"} of the reply.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, "Id of the message to reply to."),
			tools.Req("body", tools.TypeString, "Plain-text body of the reply, at most "+limits.Bytes(limits.MailBody)+"."),
			tools.Opt("reply_all", tools.TypeBoolean, "Also copy everyone else who received the message.", false),
			tools.Opt("cc", tools.TypeAddresses, "Address or list of addresses to copy on the reply as well.", []jsonv.Value{}),
			tools.WithItems(tools.Opt("attachments", tools.TypeArray, "Absolute paths of files to attach ("+attachDoc+").", []jsonv.Value{}), tools.TypeString),
		},
		Run: mailReply,
	},
	{
		Name:  "mail_forward",
		Group: group,
		Description: "Forward a message to new recipients, with its attachments. The subject gets \"Fwd: \" and the " +
			"original message is quoted below your note (the note and the quote together at most " + limits.Bytes(limits.MailBody) + "). Returns {\"id\"} of the new message.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, "Id of the message to forward."),
			tools.Req("to", tools.TypeAddresses, "Recipient address, or a list of addresses."),
			tools.Opt("body", tools.TypeString, "Your note above the forwarded message.", ""),
			tools.Opt("cc", tools.TypeAddresses, "Address or list of addresses to copy.", []jsonv.Value{}),
		},
		Run: mailForward,
	},
	{
		Name:  "mail_move",
		Group: group,
		Description: "Move a message to another folder, like \"archive\" or \"junk\"; a folder that does not exist " +
			"yet is created. Returns the message summary.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, idDesc),
			tools.Req("folder", tools.TypeString, "Name of the folder to move it to."),
		},
		Run: mailMove,
	},
	{
		Name:  "mail_save_attachment",
		Group: group,
		Description: "Save an attachment of a message to the user's files. Missing parent folders are created; when " +
			"path is an existing folder (or ends with \"/\"), the file is saved in it under the attachment's " +
			"name. Returns {\"path\"} of the saved file.",
		Params: []tools.Param{
			tools.Req("id", tools.TypeString, idDesc),
			tools.Req("name", tools.TypeString, "Name of the attachment, as listed by mail_read."),
			tools.Req("path", tools.TypeString, "Absolute path to save the file to."),
		},
		Run: mailSaveAttachment,
	},
}

func mailList(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	limit := tools.ArgInt(args, "limit")
	if limit < 1 {
		return nil, fmt.Errorf("argument \"limit\": must be at least 1, got %d", limit)
	}
	f := workspace.Filter{Folder: tools.ArgStr(args, "folder"), Text: tools.ArgStr(args, "query")}
	if tools.ArgBool(args, "unread_only") {
		unread := true
		f.Unread = &unread
	}
	// the newest messages the limit asks for, also past those a listing can show; the walk starts
	// at the folder's newest message and stops at the limit
	out := []jsonv.Value{}
	total := 0
	for m := range ws.Mail().Scan(f, true) {
		if int64(total) >= limit {
			break
		}
		if total++; len(out) < limits.ListItems {
			s := MessageSummary(*m)
			if f.Folder == "" {
				s.Set("folder", m.Folder) // a listing of every folder says where each message is
			}
			out = append(out, s)
		}
	}
	return tools.Listing(out, total, false, "messages", "give a query or a folder, or a smaller limit"), nil
}

func message(ws *workspace.State, id string) (workspace.Message, error) {
	m, ok := ws.Mail().Get(id)
	if !ok {
		return m, fmt.Errorf("no message %s", id)
	}
	return m, nil
}

func mailRead(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	m, err := message(ws, tools.ArgStr(args, "id"))
	if err != nil {
		return nil, err
	}
	return MessageJSON(m), nil
}

func mailMark(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	m, err := ws.Mail().Mark(tools.ArgStr(args, "id"), tools.ArgBoolPtr(args, "read"), tools.ArgStrs(args, "labels"))
	if err != nil {
		return nil, err
	}
	return MessageSummary(m), nil
}

// attachments reads the workspace files at paths as attachments named by their base names.
func attachments(ws *workspace.State, paths []string) ([]workspace.Attachment, error) {
	out := make([]workspace.Attachment, 0, len(paths))
	for _, p := range paths {
		content, err := ws.Files().Read(p)
		if err != nil {
			return nil, fmt.Errorf("attachment %s: %v", p, err)
		}
		out = append(out, workspace.Attachment{Name: path.Base(workspace.CleanPath(p)), Content: content})
	}
	return out, nil
}

func mailSend(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	att, err := attachments(ws, tools.ArgStrs(args, "attachments"))
	if err != nil {
		return nil, err
	}
	id, err := ws.Mail().Send(tools.ArgStrs(args, "to"), tools.ArgStrs(args, "cc"), tools.ArgStr(args, "subject"), tools.ArgStr(args, "body"), att)
	if err != nil {
		return nil, err
	}
	return tools.IDResult(id), nil
}

func mailReply(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	att, err := attachments(ws, tools.ArgStrs(args, "attachments"))
	if err != nil {
		return nil, err
	}
	id, err := ws.Mail().Reply(tools.ArgStr(args, "id"), tools.ArgStr(args, "body"), tools.ArgBool(args, "reply_all"), tools.ArgStrs(args, "cc"), att)
	if err != nil {
		return nil, err
	}
	return tools.IDResult(id), nil
}

func mailForward(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	id, err := ws.Mail().Forward(tools.ArgStr(args, "id"), tools.ArgStrs(args, "to"), tools.ArgStrs(args, "cc"), tools.ArgStr(args, "body"))
	if err != nil {
		return nil, err
	}
	return tools.IDResult(id), nil
}

func mailMove(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	m, err := ws.Mail().Move(tools.ArgStr(args, "id"), tools.ArgStr(args, "folder"))
	if err != nil {
		return nil, err
	}
	return MessageSummary(m), nil
}

func mailSaveAttachment(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	name := tools.ArgStr(args, "name")
	content, err := ws.Mail().Attachment(tools.ArgStr(args, "id"), name)
	if err != nil {
		return nil, err
	}
	raw := tools.ArgStr(args, "path")
	p := workspace.CleanPath(raw)
	if strings.HasSuffix(raw, "/") || ws.Files().IsDir(p) {
		p = workspace.CleanPath(p + "/" + path.Base(workspace.CleanPath(name)))
	}
	if err := ws.Files().Write(p, content); err != nil {
		return nil, err
	}
	return tools.PathResult(p), nil
}

// MessageSummary is how listings show a message: {id, sender, subject, date, read}.
func MessageSummary(m workspace.Message) *jsonv.Object {
	return jsonv.NewObject(
		"id", m.ID,
		"sender", m.Sender,
		"subject", m.Subject,
		"date", m.Date,
		"read", m.Read,
	)
}

// MessageJSON is the whole message as mail_read shows it: id, sender, to, cc, subject, body,
// date, folder, read, labels, thread, in_reply_to (null when none) and attachments (names).
func MessageJSON(m workspace.Message) *jsonv.Object {
	var inReplyTo jsonv.Value
	if m.InReplyTo != "" {
		inReplyTo = m.InReplyTo
	}
	return jsonv.NewObject(
		"id", m.ID,
		"sender", m.Sender,
		"to", tools.Strings(m.To),
		"cc", tools.Strings(m.Cc),
		"subject", m.Subject,
		"body", m.Body,
		"date", m.Date,
		"folder", m.Folder,
		"read", m.Read,
		"labels", tools.Strings(m.Labels),
		"thread", m.Thread,
		"in_reply_to", inReplyTo,
		"attachments", tools.Strings(m.AttachmentNames()),
	)
}
