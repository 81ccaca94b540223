package mail_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mailWS(t *testing.T) *workspace.State {
	t.Helper()
	ws := workspace.New(servicetest.Start, 0)
	mb := ws.Mail()
	require.NoError(t, mb.SetAddress("sam@acme.example"))
	for _, d := range []workspace.Delivery{
		{Sender: "dana@acme.example", Subject: "Q3 total?", Body: "What was our Q3 total?", Date: "2026-01-05T08:00:00Z",
			Cc: []string{"lee@acme.example"}, Attachments: []workspace.Attachment{{Name: "q3.csv", Content: "region,amount\nnorth,120\n"}}},
		{Sender: "news@letter.example", Subject: "Weekly digest", Body: "Top stories", Date: "2026-01-04T08:00:00Z", Read: true},
		{Sender: "lee@acme.example", Subject: "Lunch", Body: "Pizza at noon? Q3 party later.", Date: "2026-01-05T08:00:00Z"},
		{Sender: "old@acme.example", Subject: "Archived", Date: "2025-12-01T08:00:00Z", Folder: "archive"},
	} {
		_, err := mb.Deliver(d)
		require.NoError(t, err)
	}
	return ws
}

func TestMailTools(t *testing.T) {
	ws := mailWS(t)
	h := ws.Hash()
	assert.Equal(t,
		`[{"id":"m3","sender":"lee@acme.example","subject":"Lunch","date":"2026-01-05T08:00:00Z","read":false},`+
			`{"id":"m1","sender":"dana@acme.example","subject":"Q3 total?","date":"2026-01-05T08:00:00Z","read":false},`+
			`{"id":"m2","sender":"news@letter.example","subject":"Weekly digest","date":"2026-01-04T08:00:00Z","read":true}]`,
		servicetest.OK(t, ws, "mail_list", `{}`), "newest first; same date: higher id first")
	assert.Equal(t, `["m3","m1"]`, listIDs(t, ws, `{"unread_only":true}`))
	assert.Equal(t, `["m3","m1"]`, listIDs(t, ws, `{"query":"q3"}`), "query matches subject or body")
	assert.Equal(t, `["m2"]`, listIDs(t, ws, `{"query":"LETTER"}`), "query matches sender")
	assert.Equal(t, `["m3"]`, listIDs(t, ws, `{"limit":1}`))
	assert.Equal(t, `["m3"]`, listIDs(t, ws, `{"limit":1.0}`))
	assert.Equal(t, `["m4"]`, listIDs(t, ws, `{"folder":"archive"}`))
	assert.Equal(t, `[]`, listIDs(t, ws, `{"folder":"nope"}`))
	assert.Equal(t, `["m3","m1","m2","m4"]`, listIDs(t, ws, `{"folder":""}`))
	// every folder: each message says its folder (a listing of one folder does not)
	assert.Equal(t, `[{"id":"m4","sender":"old@acme.example","subject":"Archived","date":"2025-12-01T08:00:00Z","read":false,"folder":"archive"}]`,
		servicetest.OK(t, ws, "mail_list", `{"folder":"","query":"Archived"}`))
	assert.Equal(t, `[{"id":"m2","sender":"news@letter.example","subject":"Weekly digest","date":"2026-01-04T08:00:00Z","read":true,"folder":"inbox"}]`,
		servicetest.OK(t, ws, "mail_list", `{"folder":"","query":"Weekly"}`))
	assert.Equal(t, `[{"id":"m4","sender":"old@acme.example","subject":"Archived","date":"2025-12-01T08:00:00Z","read":false}]`,
		servicetest.OK(t, ws, "mail_list", `{"folder":"archive"}`))
	servicetest.Fails(t, ws, "mail_list", `{"limit":0}`, `argument "limit": must be at least 1, got 0`)
	servicetest.Fails(t, ws, "mail_list", `{"limit":"5"}`, `argument "limit": got string, want integer`)

	assert.Equal(t,
		`{"id":"m1","sender":"dana@acme.example","to":["sam@acme.example"],"cc":["lee@acme.example"],"subject":"Q3 total?",`+
			`"body":"What was our Q3 total?","date":"2026-01-05T08:00:00Z","folder":"inbox","read":false,"labels":[],`+
			`"thread":"m1","in_reply_to":null,"attachments":["q3.csv"]}`,
		servicetest.OK(t, ws, "mail_read", `{"id":"m1"}`))
	assert.Equal(t, h, ws.Hash(), "reading changes nothing")
	servicetest.Fails(t, ws, "mail_read", `{"id":"m9"}`, "no message m9")

	// mark: read defaults to true; labels replace
	assert.Equal(t, `{"id":"m1","sender":"dana@acme.example","subject":"Q3 total?","date":"2026-01-05T08:00:00Z","read":true}`,
		servicetest.OK(t, ws, "mail_mark", `{"id":"m1","labels":["finance","q3"]}`))
	m, _ := ws.Mail().Get("m1")
	assert.Equal(t, []string{"finance", "q3"}, m.Labels)
	servicetest.OK(t, ws, "mail_mark", `{"id":"m1","read":false,"labels":null}`)
	m, _ = ws.Mail().Get("m1")
	assert.False(t, m.Read)
	assert.Equal(t, []string{"finance", "q3"}, m.Labels, "null labels keep them")
	servicetest.Fails(t, ws, "mail_mark", `{"id":"m9"}`, "no message m9")
	servicetest.Fails(t, ws, "mail_mark", `{"id":"m1","labels":"x"}`, `argument "labels": got string, want array`)

	// move
	assert.Equal(t, `{"id":"m2","sender":"news@letter.example","subject":"Weekly digest","date":"2026-01-04T08:00:00Z","read":true}`,
		servicetest.OK(t, ws, "mail_move", `{"id":"m2","folder":"junk"}`))
	assert.Equal(t, []string{"archive", "inbox", "junk"}, ws.Mail().Folders())
	servicetest.Fails(t, ws, "mail_move", `{"id":"m99","folder":"junk"}`, "no message m99")
	servicetest.Fails(t, ws, "mail_move", `{"id":"m2"}`, `missing required argument "folder"`)
}

func listIDs(t *testing.T, ws *workspace.State, args string) string {
	t.Helper()
	v, err := jsonv.DecodeString(servicetest.OK(t, ws, "mail_list", args))
	require.NoError(t, err)
	out := []string{}
	for _, s := range v.([]jsonv.Value) {
		id, _ := s.(*jsonv.Object).Get("id")
		out = append(out, fmt.Sprintf("%q", id))
	}
	return "[" + strings.Join(out, ",") + "]"
}

func TestMailSendReplyForward(t *testing.T) {
	ws := mailWS(t)
	require.NoError(t, ws.Clock().Advance("30m"))
	require.NoError(t, ws.Files().Write("/reports/q3.txt", "Total: 200"))

	assert.Equal(t, `{"id":"m5"}`, servicetest.OK(t, ws, "mail_send", `{"to":"dana@acme.example","subject":"Q3","body":"200","attachments":["/reports/q3.txt"]}`))
	assert.Equal(t,
		`{"id":"m5","sender":"sam@acme.example","to":["dana@acme.example"],"cc":[],"subject":"Q3","body":"200",`+
			`"date":"2026-01-05T09:30:00Z","folder":"sent","read":true,"labels":[],"thread":"m5","in_reply_to":null,"attachments":["q3.txt"]}`,
		servicetest.OK(t, ws, "mail_read", `{"id":"m5"}`))
	c, err := ws.Mail().Attachment("m5", "q3.txt")
	require.NoError(t, err)
	assert.Equal(t, "Total: 200", c)
	assert.Equal(t, `{"id":"m6"}`, servicetest.OK(t, ws, "mail_send", `{"to":["a@x.example","b@x.example"],"cc":"c@x.example","subject":"s","body":"b"}`))
	m, _ := ws.Mail().Get("m6")
	assert.Equal(t, []string{"a@x.example", "b@x.example"}, m.To)
	assert.Equal(t, []string{"c@x.example"}, m.Cc)

	servicetest.Fails(t, ws, "mail_send", `{"to":"dana@acme.example","subject":"s","body":"b","attachments":["/nope.txt"]}`, "attachment /nope.txt: no such file: /nope.txt")
	servicetest.Fails(t, ws, "mail_send", `{"to":"dana","subject":"s","body":"b"}`, `to: "dana" is not an email address`)
	servicetest.Fails(t, ws, "mail_send", `{"to":[],"subject":"s","body":"b"}`, "to: at least one recipient is needed")
	servicetest.Fails(t, ws, "mail_send", `{"to":"a@b","subject":"s"}`, `missing required argument "body"`)
	servicetest.Fails(t, ws, "mail_send", `{"to":5,"subject":"s","body":"b"}`, `argument "to": got integer, want string or array of strings`)

	// reply and reply all
	assert.Equal(t, `{"id":"m7"}`, servicetest.OK(t, ws, "mail_reply", `{"id":"m1","body":"It was 200."}`))
	r := readObj(t, ws, "m7")
	assert.Equal(t, `["dana@acme.example"]`, field(r, "to"))
	assert.Equal(t, `[]`, field(r, "cc"))
	assert.Equal(t, `"Re: Q3 total?"`, field(r, "subject"))
	assert.Equal(t, `"m1"`, field(r, "thread"))
	assert.Equal(t, `"m1"`, field(r, "in_reply_to"))
	assert.Equal(t, `"It was 200."`, field(r, "body"))
	assert.Equal(t, `{"id":"m8"}`, servicetest.OK(t, ws, "mail_reply", `{"id":"m1","body":"all","reply_all":true,"attachments":["/reports/q3.txt"]}`))
	r = readObj(t, ws, "m8")
	assert.Equal(t, `["lee@acme.example"]`, field(r, "cc"))
	assert.Equal(t, `["q3.txt"]`, field(r, "attachments"))
	servicetest.Fails(t, ws, "mail_reply", `{"id":"m99","body":"x"}`, "no message m99")
	servicetest.Fails(t, ws, "mail_reply", `{"id":"m1","body":"x","attachments":["/nope"]}`, "attachment /nope: no such file: /nope")

	// forward
	assert.Equal(t, `{"id":"m9"}`, servicetest.OK(t, ws, "mail_forward", `{"id":"m1","to":"acct@acme.example","body":"FYI"}`))
	r = readObj(t, ws, "m9")
	assert.Equal(t, `"Fwd: Q3 total?"`, field(r, "subject"))
	assert.Equal(t, `["q3.csv"]`, field(r, "attachments"))
	assert.Equal(t, `"m9"`, field(r, "thread"))
	assert.Equal(t, `[]`, field(r, "cc"))
	assert.Equal(t, `"FYI\n\n---------- Forwarded message ----------\nFrom: dana@acme.example\nDate: 2026-01-05T08:00:00Z\nSubject: Q3 total?\nTo: sam@acme.example\nCc: lee@acme.example\n\nWhat was our Q3 total?"`, field(r, "body"))
	assert.Equal(t, `{"id":"m10"}`, servicetest.OK(t, ws, "mail_forward", `{"id":"m3","to":["x@acme.example"],"cc":["y@acme.example"]}`))
	r = readObj(t, ws, "m10")
	assert.Equal(t, `["y@acme.example"]`, field(r, "cc"))
	servicetest.Fails(t, ws, "mail_forward", `{"id":"m99","to":"a@b"}`, "no message m99")
	servicetest.Fails(t, ws, "mail_forward", `{"id":"m1"}`, `missing required argument "to"`)

	// the originals did not change
	orig, _ := ws.Mail().Get("m1")
	assert.False(t, orig.Read)
	assert.Equal(t, "inbox", orig.Folder)
}

func readObj(t *testing.T, ws *workspace.State, id string) *jsonv.Object {
	t.Helper()
	return servicetest.Object(t, servicetest.OK(t, ws, "mail_read", fmt.Sprintf(`{"id":%q}`, id)))
}

func field(o *jsonv.Object, k string) string {
	v, _ := o.Get(k)
	return jsonv.MustEncode(v)
}

func TestMailSaveAttachment(t *testing.T) {
	ws := mailWS(t)
	assert.Equal(t, `{"path":"/finance/2026/q3.csv"}`, servicetest.OK(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"finance/2026/q3.csv"}`))
	c, err := ws.Files().Read("/finance/2026/q3.csv")
	require.NoError(t, err)
	assert.Equal(t, "region,amount\nnorth,120\n", c)
	assert.Equal(t, `{"path":"/finance/q3.csv"}`, servicetest.OK(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"/finance"}`), "into an existing folder")
	assert.Equal(t, `{"path":"/new/q3.csv"}`, servicetest.OK(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"/new/"}`), "into a new folder")
	servicetest.Fails(t, ws, "mail_save_attachment", `{"id":"m1","name":"nope.pdf","path":"/x"}`, `message m1 has no attachment "nope.pdf" (it has "q3.csv")`)
	servicetest.Fails(t, ws, "mail_save_attachment", `{"id":"m2","name":"x","path":"/x"}`, "message m2 has no attachments")
	servicetest.Fails(t, ws, "mail_save_attachment", `{"id":"m9","name":"x","path":"/x"}`, "no message m9")
	servicetest.Fails(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"/finance/2026/q3.csv/x"}`, "cannot write /finance/2026/q3.csv/x: /finance/2026/q3.csv is a file, not a folder")
}

func TestFrozenWorkspace(t *testing.T) {
	ws := mailWS(t)
	ws.Freeze()
	_, err := servicetest.Call(t, ws, "fs_write", `{"path":"/a","content":""}`)
	assert.ErrorIs(t, err, workspace.ErrFrozen)
	_, err = servicetest.Call(t, ws, "mail_mark", `{"id":"m1"}`)
	assert.ErrorIs(t, err, workspace.ErrFrozen)
	servicetest.OK(t, ws, "mail_list", `{}`)
	servicetest.OK(t, ws, "mail_read", `{"id":"m1"}`)
}

func TestSchema(t *testing.T) {
	tl, _ := services.Tool("mail_send")
	params, _ := must(must(tl.Schema().Get("function")).(*jsonv.Object).Get("parameters")).(*jsonv.Object).Get("properties")
	props := params.(*jsonv.Object)
	assert.Equal(t, []string{"to", "subject", "body", "cc", "attachments"}, props.Keys(), "properties in Params order")
	assert.Equal(t, `{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}],"description":"Recipient address, or a list of addresses."}`, jsonv.MustEncode(must(props.Get("to"))))
	assert.Equal(t, `{"type":"array","description":"Absolute paths of files to attach; each is attached under its file name (at most 8 MiB each and 32 MiB together).","items":{"type":"string"},"default":[]}`, jsonv.MustEncode(must(props.Get("attachments"))))
	req, _ := must(must(tl.Schema().Get("function")).(*jsonv.Object).Get("parameters")).(*jsonv.Object).Get("required")
	assert.Equal(t, `["to","subject","body"]`, jsonv.MustEncode(req))

}

func must(v jsonv.Value, _ ...any) jsonv.Value { return v }

// A reply copies the addresses in cc, in the thread of the original, with its "Re:" subject;
// nobody already on the reply is copied twice.
func TestMailReplyCc(t *testing.T) {
	ws := mailWS(t)
	id := servicetest.OK(t, ws, "mail_reply", `{"id":"m1","body":"Copying Noor.","cc":"noor@acme.example"}`)
	r := readObj(t, ws, id[len(`{"id":"`):len(id)-2])
	assert.Equal(t, `["dana@acme.example"]`, field(r, "to"))
	assert.Equal(t, `["noor@acme.example"]`, field(r, "cc"))
	assert.Equal(t, `"Re: Q3 total?"`, field(r, "subject"))
	assert.Equal(t, `"m1"`, field(r, "thread"))
	assert.Equal(t, `"m1"`, field(r, "in_reply_to"))

	// with reply_all: the original's others first, then the new ones, none twice (case ignored)
	id = servicetest.OK(t, ws, "mail_reply", `{"id":"m1","body":"All.","reply_all":true,"cc":["Lee@acme.example","noor@acme.example","DANA@acme.example"]}`)
	r = readObj(t, ws, id[len(`{"id":"`):len(id)-2])
	assert.Equal(t, `["lee@acme.example","noor@acme.example"]`, field(r, "cc"))

	servicetest.Fails(t, ws, "mail_reply", `{"id":"m1","body":"x","cc":"noor"}`, `cc: "noor" is not an email address`)
}
