package tools

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
)

const idDesc = "Message id, like \"m3\", as given by mail_list."

func mailTools() []*Tool {
	const g = "mail"
	return []*Tool{
		{
			Name:  "mail_list",
			Group: g,
			Description: "List messages in a mail folder, newest first, as summaries {id, sender, subject, date, read}. " +
				"Use mail_read to see a whole message.",
			Params: []Param{
				opt("folder", TypeString, "Folder to list, like \"inbox\", \"sent\" or \"archive\"; \"\" lists every folder.", "inbox"),
				opt("unread_only", TypeBoolean, "List only unread messages.", false),
				opt("query", TypeString, "Keep only messages whose sender, subject or body contains this text (case-insensitive).", ""),
				opt("limit", TypeInteger, "Largest number of messages to return.", int64(20)),
			},
			Run: mailList,
		},
		{
			Name:  "mail_read",
			Group: g,
			Description: "Read a whole message: id, sender, to, cc, subject, body, date, folder, read, labels, thread, " +
				"in_reply_to and the names of its attachments. Reading does not mark it as read.",
			Params: []Param{req("id", TypeString, idDesc)},
			Run:    mailRead,
		},
		{
			Name:  "mail_mark",
			Group: g,
			Description: "Mark a message as read or unread, and optionally set its labels (the list given replaces " +
				"the labels it had). Returns the message summary.",
			Params: []Param{
				req("id", TypeString, idDesc),
				opt("read", TypeBoolean, "true to mark as read, false to mark as unread.", true),
				withItems(opt("labels", TypeArray, "The new labels of the message, replacing the old ones; leave out to keep them.", nil), TypeString),
			},
			Run: mailMark,
		},
		{
			Name:  "mail_send",
			Group: g,
			Description: "Send a new email from the user's address. It is saved in the \"sent\" folder. Files from the " +
				"user's files can be attached by path. Returns {\"id\"} of the sent message.",
			Params: []Param{
				req("to", TypeAddresses, "Recipient address, or a list of addresses."),
				req("subject", TypeString, "Subject line."),
				req("body", TypeString, "Plain-text body."),
				opt("cc", TypeAddresses, "Address or list of addresses to copy.", []jsonv.Value{}),
				withItems(opt("attachments", TypeArray, "Absolute paths of files to attach; each is attached under its file name.", []jsonv.Value{}), TypeString),
			},
			Run: mailSend,
		},
		{
			Name:  "mail_reply",
			Group: g,
			Description: "Reply to a message. The reply goes to its sender; with reply_all, everyone else on the " +
				"message (to and cc, except the user) is copied. The subject gets \"Re: \", the reply stays in " +
				"the same thread, and the original is not quoted. Returns {\"id\"} of the reply.",
			Params: []Param{
				req("id", TypeString, "Id of the message to reply to."),
				req("body", TypeString, "Plain-text body of the reply."),
				opt("reply_all", TypeBoolean, "Also copy everyone else who received the message.", false),
				withItems(opt("attachments", TypeArray, "Absolute paths of files to attach.", []jsonv.Value{}), TypeString),
			},
			Run: mailReply,
		},
		{
			Name:  "mail_forward",
			Group: g,
			Description: "Forward a message to new recipients, with its attachments. The subject gets \"Fwd: \" and the " +
				"original message is quoted below your note. Returns {\"id\"} of the new message.",
			Params: []Param{
				req("id", TypeString, "Id of the message to forward."),
				req("to", TypeAddresses, "Recipient address, or a list of addresses."),
				opt("body", TypeString, "Your note above the forwarded message.", ""),
				opt("cc", TypeAddresses, "Address or list of addresses to copy.", []jsonv.Value{}),
			},
			Run: mailForward,
		},
		{
			Name:  "mail_move",
			Group: g,
			Description: "Move a message to another folder, like \"archive\" or \"junk\"; a folder that does not exist " +
				"yet is created. Returns the message summary.",
			Params: []Param{
				req("id", TypeString, idDesc),
				req("folder", TypeString, "Name of the folder to move it to."),
			},
			Run: mailMove,
		},
		{
			Name:  "mail_save_attachment",
			Group: g,
			Description: "Save an attachment of a message to the user's files. Missing parent folders are created; when " +
				"path is an existing folder (or ends with \"/\"), the file is saved in it under the attachment's " +
				"name. Returns {\"path\"} of the saved file.",
			Params: []Param{
				req("id", TypeString, idDesc),
				req("name", TypeString, "Name of the attachment, as listed by mail_read."),
				req("path", TypeString, "Absolute path to save the file to."),
			},
			Run: mailSaveAttachment,
		},
	}
}

func mailList(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	limit := argInt(args, "limit")
	if limit < 1 {
		return nil, fmt.Errorf("argument \"limit\": must be at least 1, got %d", limit)
	}
	f := workspace.Filter{Folder: argStr(args, "folder")}
	if argBool(args, "unread_only") {
		unread := true
		f.Unread = &unread
	}
	msgs := ws.Mail().Messages(f)
	q := strings.ToLower(argStr(args, "query"))
	out := []jsonv.Value{}
	// Messages is oldest first (date, then id number): newest first is the reverse.
	for _, m := range slices.Backward(msgs) {
		if int64(len(out)) >= limit {
			break
		}
		if q != "" && !strings.Contains(strings.ToLower(m.Sender), q) &&
			!strings.Contains(strings.ToLower(m.Subject), q) && !strings.Contains(strings.ToLower(m.Body), q) {
			continue
		}
		out = append(out, MessageSummary(m))
	}
	return out, nil
}

func message(ws *workspace.State, id string) (workspace.Message, error) {
	m, ok := ws.Mail().Get(id)
	if !ok {
		return m, fmt.Errorf("no message %s", id)
	}
	return m, nil
}

func mailRead(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	m, err := message(ws, argStr(args, "id"))
	if err != nil {
		return nil, err
	}
	return MessageJSON(m), nil
}

func mailMark(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	m, err := ws.Mail().Mark(argStr(args, "id"), argBoolPtr(args, "read"), argStrs(args, "labels"))
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
	att, err := attachments(ws, argStrs(args, "attachments"))
	if err != nil {
		return nil, err
	}
	id, err := ws.Mail().Send(argStrs(args, "to"), argStrs(args, "cc"), argStr(args, "subject"), argStr(args, "body"), att)
	if err != nil {
		return nil, err
	}
	return idResult(id), nil
}

func mailReply(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	att, err := attachments(ws, argStrs(args, "attachments"))
	if err != nil {
		return nil, err
	}
	id, err := ws.Mail().Reply(argStr(args, "id"), argStr(args, "body"), argBool(args, "reply_all"), att)
	if err != nil {
		return nil, err
	}
	return idResult(id), nil
}

func mailForward(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	id, err := ws.Mail().Forward(argStr(args, "id"), argStrs(args, "to"), argStrs(args, "cc"), argStr(args, "body"))
	if err != nil {
		return nil, err
	}
	return idResult(id), nil
}

func mailMove(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	m, err := ws.Mail().Move(argStr(args, "id"), argStr(args, "folder"))
	if err != nil {
		return nil, err
	}
	return MessageSummary(m), nil
}

func mailSaveAttachment(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	name := argStr(args, "name")
	content, err := ws.Mail().Attachment(argStr(args, "id"), name)
	if err != nil {
		return nil, err
	}
	raw := argStr(args, "path")
	p := workspace.CleanPath(raw)
	if strings.HasSuffix(raw, "/") || ws.Files().IsDir(p) {
		p = workspace.CleanPath(p + "/" + path.Base(workspace.CleanPath(name)))
	}
	if err := ws.Files().Write(p, content); err != nil {
		return nil, err
	}
	return pathResult(p), nil
}
