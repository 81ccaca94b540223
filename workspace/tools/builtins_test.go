package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// call runs built-in tool name with JSON arguments and returns the JSON result text, or the
// error.
func call(t testing.TB, ws *workspace.State, name, args string) (string, error) {
	t.Helper()
	tl, ok := builtin(name)
	require.True(t, ok, name)
	res, err := tl.Call(ws, dec(t, args))
	if err != nil {
		return "", err
	}
	return jsonv.MustEncode(res), nil
}

func ok(t testing.TB, ws *workspace.State, name, args string) string {
	t.Helper()
	res, err := call(t, ws, name, args)
	require.NoError(t, err, "%s %s", name, args)
	return res
}

func fails(t testing.TB, ws *workspace.State, name, args, want string) {
	t.Helper()
	h := ws.Hash()
	_, err := call(t, ws, name, args)
	assert.EqualError(t, err, want, "%s %s", name, args)
	assert.Equal(t, h, ws.Hash(), "a failed %s changes nothing", name)
}

func TestFSTools(t *testing.T) {
	ws := workspace.New(t0, 0)
	assert.Equal(t, `[]`, ok(t, ws, "fs_list", `{}`))
	assert.Equal(t, `{"path":"/notes/a.txt"}`, ok(t, ws, "fs_write", `{"path":"notes/a.txt","content":"Alpha\nbeta ALPHA\r\ngamma"}`))
	assert.Equal(t, `{"path":"/b.md"}`, ok(t, ws, "fs_write", `{"path":"/b.md","content":"nothing here"}`))
	assert.Equal(t, `["b.md","notes/"]`, ok(t, ws, "fs_list", `{}`))
	assert.Equal(t, `["a.txt"]`, ok(t, ws, "fs_list", `{"path":"/notes"}`))
	assert.Equal(t, `"Alpha\nbeta ALPHA\r\ngamma"`, ok(t, ws, "fs_read", `{"path":"/notes/a.txt"}`))

	assert.Equal(t, `[{"path":"/notes/a.txt","line":1,"text":"Alpha"},{"path":"/notes/a.txt","line":2,"text":"beta ALPHA"}]`,
		ok(t, ws, "fs_search", `{"query":"alpha"}`))
	assert.Equal(t, `[{"path":"/b.md","line":1,"text":"nothing here"}]`, ok(t, ws, "fs_search", `{"query":"HERE","path":"/b.md"}`))
	assert.Equal(t, `[]`, ok(t, ws, "fs_search", `{"query":"here","path":"/notes"}`))

	assert.Equal(t, `{"path":"/archive/a.txt"}`, ok(t, ws, "fs_move", `{"src":"/notes/a.txt","dst":"/archive/"}`))
	assert.Equal(t, `{"path":"/archive/b.md"}`, ok(t, ws, "fs_move", `{"src":"/b.md","dst":"/archive"}`))
	assert.Equal(t, `{"path":"/c.md"}`, ok(t, ws, "fs_move", `{"src":"/archive/b.md","dst":"/c.md"}`))
	assert.Equal(t, `{"ok":true}`, ok(t, ws, "fs_delete", `{"path":"/archive"}`))
	assert.Equal(t, `["c.md","notes/"]`, ok(t, ws, "fs_list", `{"path":"/"}`))

	fails(t, ws, "fs_read", `{"path":"/missing"}`, "no such file: /missing")
	fails(t, ws, "fs_read", `{"path":"/notes"}`, "/notes is a folder")
	fails(t, ws, "fs_read", `{"pth":"/notes"}`, `unknown argument "pth"`)
	fails(t, ws, "fs_read", `{}`, `missing required argument "path"`)
	fails(t, ws, "fs_list", `{"path":"/nope"}`, "no such folder: /nope")
	fails(t, ws, "fs_write", `{"path":"/notes","content":""}`, "cannot write /notes: it is a folder")
	fails(t, ws, "fs_write", `{"path":"/c.md","content":3}`, `argument "content": got integer, want string`)
	fails(t, ws, "fs_delete", `{"path":"/nope"}`, "no such file or folder: /nope")
	fails(t, ws, "fs_move", `{"src":"/nope","dst":"/x"}`, "no such file or folder: /nope")
	fails(t, ws, "fs_search", `{"query":""}`, `argument "query": empty`)
	fails(t, ws, "fs_search", `{"query":"x","path":"/nope"}`, "no such file or folder: /nope")

	// listings never change the state
	h := ws.Hash()
	ok(t, ws, "fs_list", `{}`)
	ok(t, ws, "fs_read", `{"path":"/c.md"}`)
	ok(t, ws, "fs_search", `{"query":"a"}`)
	assert.Equal(t, h, ws.Hash())
}

func mailWS(t *testing.T) *workspace.State {
	t.Helper()
	ws := workspace.New(t0, 0)
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
		ok(t, ws, "mail_list", `{}`), "newest first; same date: higher id first")
	assert.Equal(t, `["m3","m1"]`, listIDs(t, ws, `{"unread_only":true}`))
	assert.Equal(t, `["m3","m1"]`, listIDs(t, ws, `{"query":"q3"}`), "query matches subject or body")
	assert.Equal(t, `["m2"]`, listIDs(t, ws, `{"query":"LETTER"}`), "query matches sender")
	assert.Equal(t, `["m3"]`, listIDs(t, ws, `{"limit":1}`))
	assert.Equal(t, `["m3"]`, listIDs(t, ws, `{"limit":1.0}`))
	assert.Equal(t, `["m4"]`, listIDs(t, ws, `{"folder":"archive"}`))
	assert.Equal(t, `[]`, listIDs(t, ws, `{"folder":"nope"}`))
	assert.Equal(t, `["m3","m1","m2","m4"]`, listIDs(t, ws, `{"folder":""}`))
	fails(t, ws, "mail_list", `{"limit":0}`, `argument "limit": must be at least 1, got 0`)
	fails(t, ws, "mail_list", `{"limit":"5"}`, `argument "limit": got string, want integer`)

	assert.Equal(t,
		`{"id":"m1","sender":"dana@acme.example","to":["sam@acme.example"],"cc":["lee@acme.example"],"subject":"Q3 total?",`+
			`"body":"What was our Q3 total?","date":"2026-01-05T08:00:00Z","folder":"inbox","read":false,"labels":[],`+
			`"thread":"m1","in_reply_to":null,"attachments":["q3.csv"]}`,
		ok(t, ws, "mail_read", `{"id":"m1"}`))
	assert.Equal(t, h, ws.Hash(), "reading changes nothing")
	fails(t, ws, "mail_read", `{"id":"m9"}`, "no message m9")

	// mark: read defaults to true; labels replace
	assert.Equal(t, `{"id":"m1","sender":"dana@acme.example","subject":"Q3 total?","date":"2026-01-05T08:00:00Z","read":true}`,
		ok(t, ws, "mail_mark", `{"id":"m1","labels":["finance","q3"]}`))
	m, _ := ws.Mail().Get("m1")
	assert.Equal(t, []string{"finance", "q3"}, m.Labels)
	ok(t, ws, "mail_mark", `{"id":"m1","read":false,"labels":null}`)
	m, _ = ws.Mail().Get("m1")
	assert.False(t, m.Read)
	assert.Equal(t, []string{"finance", "q3"}, m.Labels, "null labels keep them")
	fails(t, ws, "mail_mark", `{"id":"m9"}`, "no message m9")
	fails(t, ws, "mail_mark", `{"id":"m1","labels":"x"}`, `argument "labels": got string, want array`)

	// move
	assert.Equal(t, `{"id":"m2","sender":"news@letter.example","subject":"Weekly digest","date":"2026-01-04T08:00:00Z","read":true}`,
		ok(t, ws, "mail_move", `{"id":"m2","folder":"junk"}`))
	assert.Equal(t, []string{"archive", "inbox", "junk"}, ws.Mail().Folders())
	fails(t, ws, "mail_move", `{"id":"m99","folder":"junk"}`, "no message m99")
	fails(t, ws, "mail_move", `{"id":"m2"}`, `missing required argument "folder"`)
}

func listIDs(t *testing.T, ws *workspace.State, args string) string {
	t.Helper()
	v, err := jsonv.DecodeString(ok(t, ws, "mail_list", args))
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

	assert.Equal(t, `{"id":"m5"}`, ok(t, ws, "mail_send", `{"to":"dana@acme.example","subject":"Q3","body":"200","attachments":["/reports/q3.txt"]}`))
	assert.Equal(t,
		`{"id":"m5","sender":"sam@acme.example","to":["dana@acme.example"],"cc":[],"subject":"Q3","body":"200",`+
			`"date":"2026-01-05T09:30:00Z","folder":"sent","read":true,"labels":[],"thread":"m5","in_reply_to":null,"attachments":["q3.txt"]}`,
		ok(t, ws, "mail_read", `{"id":"m5"}`))
	c, err := ws.Mail().Attachment("m5", "q3.txt")
	require.NoError(t, err)
	assert.Equal(t, "Total: 200", c)
	assert.Equal(t, `{"id":"m6"}`, ok(t, ws, "mail_send", `{"to":["a@x.example","b@x.example"],"cc":"c@x.example","subject":"s","body":"b"}`))
	m, _ := ws.Mail().Get("m6")
	assert.Equal(t, []string{"a@x.example", "b@x.example"}, m.To)
	assert.Equal(t, []string{"c@x.example"}, m.Cc)

	fails(t, ws, "mail_send", `{"to":"dana@acme.example","subject":"s","body":"b","attachments":["/nope.txt"]}`, "attachment /nope.txt: no such file: /nope.txt")
	fails(t, ws, "mail_send", `{"to":"dana","subject":"s","body":"b"}`, `to: "dana" is not an email address`)
	fails(t, ws, "mail_send", `{"to":[],"subject":"s","body":"b"}`, "to: at least one recipient is needed")
	fails(t, ws, "mail_send", `{"to":"a@b","subject":"s"}`, `missing required argument "body"`)
	fails(t, ws, "mail_send", `{"to":5,"subject":"s","body":"b"}`, `argument "to": got integer, want string or array of strings`)

	// reply and reply all
	assert.Equal(t, `{"id":"m7"}`, ok(t, ws, "mail_reply", `{"id":"m1","body":"It was 200."}`))
	r := readObj(t, ws, "m7")
	assert.Equal(t, `["dana@acme.example"]`, field(r, "to"))
	assert.Equal(t, `[]`, field(r, "cc"))
	assert.Equal(t, `"Re: Q3 total?"`, field(r, "subject"))
	assert.Equal(t, `"m1"`, field(r, "thread"))
	assert.Equal(t, `"m1"`, field(r, "in_reply_to"))
	assert.Equal(t, `"It was 200."`, field(r, "body"))
	assert.Equal(t, `{"id":"m8"}`, ok(t, ws, "mail_reply", `{"id":"m1","body":"all","reply_all":true,"attachments":["/reports/q3.txt"]}`))
	r = readObj(t, ws, "m8")
	assert.Equal(t, `["lee@acme.example"]`, field(r, "cc"))
	assert.Equal(t, `["q3.txt"]`, field(r, "attachments"))
	fails(t, ws, "mail_reply", `{"id":"m99","body":"x"}`, "no message m99")
	fails(t, ws, "mail_reply", `{"id":"m1","body":"x","attachments":["/nope"]}`, "attachment /nope: no such file: /nope")

	// forward
	assert.Equal(t, `{"id":"m9"}`, ok(t, ws, "mail_forward", `{"id":"m1","to":"acct@acme.example","body":"FYI"}`))
	r = readObj(t, ws, "m9")
	assert.Equal(t, `"Fwd: Q3 total?"`, field(r, "subject"))
	assert.Equal(t, `["q3.csv"]`, field(r, "attachments"))
	assert.Equal(t, `"m9"`, field(r, "thread"))
	assert.Equal(t, `[]`, field(r, "cc"))
	assert.Equal(t, `"FYI\n\n---------- Forwarded message ----------\nFrom: dana@acme.example\nDate: 2026-01-05T08:00:00Z\nSubject: Q3 total?\nTo: sam@acme.example\nCc: lee@acme.example\n\nWhat was our Q3 total?"`, field(r, "body"))
	assert.Equal(t, `{"id":"m10"}`, ok(t, ws, "mail_forward", `{"id":"m3","to":["x@acme.example"],"cc":["y@acme.example"]}`))
	r = readObj(t, ws, "m10")
	assert.Equal(t, `["y@acme.example"]`, field(r, "cc"))
	fails(t, ws, "mail_forward", `{"id":"m99","to":"a@b"}`, "no message m99")
	fails(t, ws, "mail_forward", `{"id":"m1"}`, `missing required argument "to"`)

	// the originals did not change
	orig, _ := ws.Mail().Get("m1")
	assert.False(t, orig.Read)
	assert.Equal(t, "inbox", orig.Folder)
}

func readObj(t *testing.T, ws *workspace.State, id string) *jsonv.Object {
	t.Helper()
	return dec(t, ok(t, ws, "mail_read", fmt.Sprintf(`{"id":%q}`, id)))
}

func field(o *jsonv.Object, k string) string {
	v, _ := o.Get(k)
	return jsonv.MustEncode(v)
}

func TestMailSaveAttachment(t *testing.T) {
	ws := mailWS(t)
	assert.Equal(t, `{"path":"/finance/2026/q3.csv"}`, ok(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"finance/2026/q3.csv"}`))
	c, err := ws.Files().Read("/finance/2026/q3.csv")
	require.NoError(t, err)
	assert.Equal(t, "region,amount\nnorth,120\n", c)
	assert.Equal(t, `{"path":"/finance/q3.csv"}`, ok(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"/finance"}`), "into an existing folder")
	assert.Equal(t, `{"path":"/new/q3.csv"}`, ok(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"/new/"}`), "into a new folder")
	fails(t, ws, "mail_save_attachment", `{"id":"m1","name":"nope.pdf","path":"/x"}`, `message m1 has no attachment "nope.pdf" (it has "q3.csv")`)
	fails(t, ws, "mail_save_attachment", `{"id":"m2","name":"x","path":"/x"}`, "message m2 has no attachments")
	fails(t, ws, "mail_save_attachment", `{"id":"m9","name":"x","path":"/x"}`, "no message m9")
	fails(t, ws, "mail_save_attachment", `{"id":"m1","name":"q3.csv","path":"/finance/2026/q3.csv/x"}`, "cannot write /finance/2026/q3.csv/x: /finance/2026/q3.csv is a file, not a folder")
}

func TestCalendarTools(t *testing.T) {
	ws := workspace.New(t0, 0)
	assert.Equal(t, `{"id":"e1"}`, ok(t, ws, "calendar_create", `{"title":"Standup","start":"2026-01-06T09:00:00Z","end":"2026-01-06T09:15:00Z"}`))
	assert.Equal(t, `{"id":"e2"}`, ok(t, ws, "calendar_create", `{"title":"Review","start":"2026-01-06T10:00:00+01:00","end":"2026-01-06T11:00:00+01:00","attendees":["a@x.example"],"location":"Tejo","description":"Q3"}`))
	assert.Equal(t, `{"id":"e3"}`, ok(t, ws, "calendar_create", `{"title":"Late","start":"2026-01-06T17:00:00Z","end":"2026-01-06T18:00:00Z"}`))

	assert.Equal(t,
		`[{"id":"e1","title":"Standup","start":"2026-01-06T09:00:00Z","end":"2026-01-06T09:15:00Z","attendees":[],"location":"","description":""},`+
			`{"id":"e2","title":"Review","start":"2026-01-06T10:00:00+01:00","end":"2026-01-06T11:00:00+01:00","attendees":["a@x.example"],"location":"Tejo","description":"Q3"}]`,
		ok(t, ws, "calendar_list", `{"start":"2026-01-06T00:00:00Z","end":"2026-01-06T17:00:00Z"}`), "touching the end is not overlapping")
	assert.Equal(t, `[]`, ok(t, ws, "calendar_list", `{"start":"2026-01-07T00:00:00Z","end":"2026-01-08T00:00:00Z"}`))

	assert.Equal(t,
		`{"id":"e2","title":"Review","start":"2026-01-06T12:00:00Z","end":"2026-01-06T13:00:00Z","attendees":["b@x.example"],"location":"Tejo","description":"Q3"}`,
		ok(t, ws, "calendar_update", `{"id":"e2","start":"2026-01-06T12:00:00Z","end":"2026-01-06T13:00:00Z","attendees":["b@x.example"],"title":null}`))
	assert.Equal(t, `{"ok":true}`, ok(t, ws, "calendar_delete", `{"id":"e1"}`))
	_, found := ws.Calendar().Get("e1")
	assert.False(t, found)

	fails(t, ws, "calendar_create", `{"title":"x","start":"2026-01-06T10:00:00Z","end":"2026-01-06T09:00:00Z"}`, "end 2026-01-06T09:00:00Z is not after start 2026-01-06T10:00:00Z")
	fails(t, ws, "calendar_create", `{"title":"x","start":"tomorrow","end":"2026-01-06T09:00:00Z"}`, `start: invalid time "tomorrow": want RFC 3339, like 2026-01-05T09:00:00Z`)
	fails(t, ws, "calendar_create", `{"title":"x","start":"2026-01-06T10:00:00Z"}`, `missing required argument "end"`)
	fails(t, ws, "calendar_list", `{"start":"2026-01-06"}`, `missing required argument "end"`)
	fails(t, ws, "calendar_list", `{"start":"x","end":"2026-01-06T00:00:00Z"}`, `start: invalid time "x": want RFC 3339, like 2026-01-05T09:00:00Z`)
	fails(t, ws, "calendar_update", `{"id":"e9","title":"x"}`, "no event e9")
	fails(t, ws, "calendar_update", `{"id":"e2","end":"2026-01-06T11:00:00Z"}`, "end 2026-01-06T11:00:00Z is not after start 2026-01-06T12:00:00Z")
	fails(t, ws, "calendar_update", `{"id":"e2","attendees":"a@b"}`, `argument "attendees": got string, want array`)
	fails(t, ws, "calendar_delete", `{"id":"e1"}`, "no event e1")
}

func TestFrozenWorkspace(t *testing.T) {
	ws := mailWS(t)
	ws.Freeze()
	_, err := call(t, ws, "fs_write", `{"path":"/a","content":""}`)
	assert.ErrorIs(t, err, workspace.ErrFrozen)
	_, err = call(t, ws, "mail_mark", `{"id":"m1"}`)
	assert.ErrorIs(t, err, workspace.ErrFrozen)
	ok(t, ws, "mail_list", `{}`)
	ok(t, ws, "mail_read", `{"id":"m1"}`)
}

// typical is the benchmark state: 50 files of about 1 KB, 20 mails, 10 events, 30 records.
func typical(tb testing.TB) *workspace.State {
	tb.Helper()
	ws := workspace.New(t0, 7)
	body := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 18)
	for i := 0; i < 50; i++ {
		require.NoError(tb, ws.Files().Write(fmt.Sprintf("/dir%d/file%02d.txt", i%5, i), body))
	}
	for i := 0; i < 20; i++ {
		_, err := ws.Mail().Deliver(workspace.Delivery{Sender: fmt.Sprintf("p%d@acme.example", i),
			Subject: fmt.Sprintf("subject %d", i), Body: body[:300], Date: fmt.Sprintf("2026-01-0%dT%02d:00:00Z", 1+i%4, i)})
		require.NoError(tb, err)
	}
	for i := 0; i < 10; i++ {
		_, err := ws.Calendar().Add(workspace.Event{Title: "m", Start: fmt.Sprintf("2026-01-%02dT10:00:00Z", 6+i), End: fmt.Sprintf("2026-01-%02dT11:00:00Z", 6+i)})
		require.NoError(tb, err)
	}
	for i := 0; i < 30; i++ {
		_, err := ws.DB().Insert("tickets", jsonv.NewObject("n", int64(i)))
		require.NoError(tb, err)
	}
	ws.Freeze()
	return ws
}

func BenchmarkToolCall(b *testing.B) {
	base := typical(b)
	// Each call is followed by Hash, as the episode does; fs_write alternates between two
	// contents so that every call changes the state.
	for _, c := range []struct{ name, args, args2 string }{
		{"mail_list", `{}`, `{"query":"subject 1"}`},
		{"fs_read", `{"path":"/dir0/file00.txt"}`, `{"path":"/dir1/file01.txt"}`},
		{"fs_write", `{"path":"/dir0/file00.txt","content":"changed"}`, `{"path":"/dir0/file00.txt","content":"changed again"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			tl, _ := builtin(c.name)
			args := []*jsonv.Object{dec(b, c.args), dec(b, c.args2)}
			ws := base.Fork()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := tl.Call(ws, args[i%2]); err != nil {
					b.Fatal(err)
				}
				_ = ws.Hash()
			}
		})
	}
}
