package tools

import (
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
)

// Readers of arguments already checked by CheckArgs: a present argument has its declared type,
// so these only tell present from absent.

func argStr(args *jsonv.Object, name string) string {
	v, _ := args.Get(name)
	s, _ := v.(string)
	return s
}

func argStrOK(args *jsonv.Object, name string) (string, bool) {
	v, ok := args.Get(name)
	s, isStr := v.(string)
	return s, ok && isStr
}

func argBool(args *jsonv.Object, name string) bool {
	v, _ := args.Get(name)
	b, _ := v.(bool)
	return b
}

func argBoolPtr(args *jsonv.Object, name string) *bool {
	v, ok := args.Get(name)
	b, isBool := v.(bool)
	if !ok || !isBool {
		return nil
	}
	return &b
}

func argInt(args *jsonv.Object, name string) int64 {
	v, _ := args.Get(name)
	i, _ := v.(int64)
	return i
}

// argStrs returns an array of strings argument; nil when absent.
func argStrs(args *jsonv.Object, name string) []string {
	v, ok := args.Get(name)
	arr, isArr := v.([]jsonv.Value)
	if !ok || !isArr {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Result shapes, shared with whoever shows workspace values as JSON.

// strs makes a JSON array of strings (never null).
func strs(ss []string) []jsonv.Value {
	out := make([]jsonv.Value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
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
		"to", strs(m.To),
		"cc", strs(m.Cc),
		"subject", m.Subject,
		"body", m.Body,
		"date", m.Date,
		"folder", m.Folder,
		"read", m.Read,
		"labels", strs(m.Labels),
		"thread", m.Thread,
		"in_reply_to", inReplyTo,
		"attachments", strs(m.AttachmentNames()),
	)
}

// EventJSON is an event as the calendar tools show it: id, title, start, end, attendees,
// location, description.
func EventJSON(e workspace.Event) *jsonv.Object {
	return jsonv.NewObject(
		"id", e.ID,
		"title", e.Title,
		"start", e.Start,
		"end", e.End,
		"attendees", strs(e.Attendees),
		"location", e.Location,
		"description", e.Description,
	)
}

func idResult(id string) *jsonv.Object  { return jsonv.NewObject("id", id) }
func pathResult(p string) *jsonv.Object { return jsonv.NewObject("path", p) }
func okResult() *jsonv.Object           { return jsonv.NewObject("ok", true) }
