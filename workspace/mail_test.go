package workspace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func boolp(b bool) *bool { return &b }

func TestMailAddress(t *testing.T) {
	mb := newWS().Mail()
	assert.Equal(t, "me@example.com", mb.Address())
	require.NoError(t, mb.SetAddress("sam@acme.example"))
	assert.Equal(t, "sam@acme.example", mb.Address())
	assert.EqualError(t, mb.SetAddress("sam"), `address: "sam" is not an email address`)
	assert.EqualError(t, mb.SetAddress(" "), "address: empty address")
}

func TestMailDeliver(t *testing.T) {
	ws := newWS()
	mb := ws.Mail()
	id, err := mb.Deliver(Delivery{Sender: "dana@acme.example", Subject: "Q3", Body: "total?"})
	require.NoError(t, err)
	assert.Equal(t, "m1", id)
	m, ok := mb.Get("m1")
	require.True(t, ok)
	assert.Equal(t, Message{
		ID: "m1", Sender: "dana@acme.example", To: []string{"me@example.com"}, Cc: []string{},
		Subject: "Q3", Body: "total?", Date: "2026-01-05T09:00:00Z", Folder: "inbox",
		Labels: []string{}, Thread: "m1", Attachments: []Attachment{},
	}, m)

	id, err = mb.Deliver(Delivery{
		Sender: "bo@x.example", To: []string{"a@x.example"}, Cc: []string{"c@x.example"},
		Subject: "Re: Q3", Date: "2026-01-04T10:00:00+01:00", Folder: "archive", Read: true,
		Labels: []string{"work", "work", "q3"}, InReplyTo: "m1",
		Attachments: []Attachment{{"a.csv", "1,2"}},
	})
	require.NoError(t, err)
	assert.Equal(t, "m2", id)
	m, _ = mb.Get(id)
	assert.Equal(t, "2026-01-04T10:00:00+01:00", m.Date)
	assert.Equal(t, "m1", m.Thread, "a delivered reply joins its parent's thread")
	assert.Equal(t, "m1", m.InReplyTo)
	assert.Equal(t, []string{"work", "q3"}, m.Labels)
	assert.Equal(t, []string{"a.csv"}, m.AttachmentNames())
	assert.True(t, m.Read)

	id, _ = mb.Deliver(Delivery{Sender: "x@y.z", InReplyTo: "m99", Date: "2026-01-04T08:00"})
	m, _ = mb.Get(id)
	assert.Equal(t, "m3", m.Thread, "an unknown parent leaves the message its own thread")
	assert.Equal(t, "m99", m.InReplyTo)
	assert.Equal(t, "2026-01-04T08:00:00Z", m.Date, "no offset means UTC")

	// the copy is a copy
	m.To[0] = "changed@x"
	m2, _ := mb.Get(id)
	assert.Equal(t, "me@example.com", m2.To[0])

	// errors name the bad value
	_, err = mb.Deliver(Delivery{Sender: "nobody"})
	assert.EqualError(t, err, `sender: "nobody" is not an email address`)
	_, err = mb.Deliver(Delivery{Sender: "a@b", To: []string{"ok@x", "bad"}})
	assert.EqualError(t, err, `to: "bad" is not an email address`)
	_, err = mb.Deliver(Delivery{Sender: "a@b", Cc: []string{""}})
	assert.EqualError(t, err, "cc: empty address")
	_, err = mb.Deliver(Delivery{Sender: "a@b", Date: "yesterday"})
	assert.EqualError(t, err, `date: invalid time "yesterday": want RFC 3339, like 2026-01-05T09:00:00Z`)
	_, err = mb.Deliver(Delivery{Sender: "a@b", Attachments: []Attachment{{"x", ""}, {"x", ""}}})
	assert.EqualError(t, err, `two attachments are named "x"`)
	_, err = mb.Deliver(Delivery{Sender: "a@b", Labels: []string{""}})
	assert.EqualError(t, err, "empty label")
	_, ok = mb.Get("m4")
	assert.False(t, ok, "failed deliveries take no id")
}

func seedMail(t *testing.T) *State {
	t.Helper()
	ws := newWS()
	mb := ws.Mail()
	require.NoError(t, mb.SetAddress("sam@acme.example"))
	for _, d := range []Delivery{
		{Sender: "Dana@Acme.example", Subject: "Q3 total", Body: "what was it?", Date: "2026-01-05T08:00:00Z",
			To: []string{"sam@acme.example", "lee@acme.example"}, Cc: []string{"boss@acme.example", "SAM@acme.example"}},
		{Sender: "bot@news.example", Subject: "Weekly news", Date: "2026-01-04T08:00:00Z", Read: true, Labels: []string{"news"}},
		{Sender: "lee@acme.example", Subject: "lunch", Date: "2026-01-05T09:00:00+01:00", Folder: "personal"},
	} {
		_, err := mb.Deliver(d)
		require.NoError(t, err)
	}
	return ws
}

func ids(ms []Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestMailMessages(t *testing.T) {
	ws := seedMail(t)
	mb := ws.Mail()
	// m3 is 08:00Z (09:00+01:00), same instant as m1: the id number breaks the tie
	assert.Equal(t, []string{"m2", "m1", "m3"}, ids(mb.Messages(Filter{})))
	assert.Equal(t, []string{"m2", "m1"}, ids(mb.Messages(Filter{Folder: "inbox"})))
	assert.Equal(t, []string{"m1"}, ids(mb.Messages(Filter{Sender: "dana@acme.example"})))
	assert.Equal(t, []string{}, ids(mb.Messages(Filter{Sender: "dana"})), "sender is exact")
	assert.Equal(t, []string{"m1"}, ids(mb.Messages(Filter{To: "LEE@acme.example"})))
	assert.Equal(t, []string{"m1"}, ids(mb.Messages(Filter{To: "boss@acme.example"})), "to matches cc")
	assert.Equal(t, []string{"m1"}, ids(mb.Messages(Filter{Subject: "q3"})))
	assert.Equal(t, []string{"m2"}, ids(mb.Messages(Filter{Label: "news"})))
	assert.Equal(t, []string{"m1", "m3"}, ids(mb.Messages(Filter{Unread: boolp(true)})))
	assert.Equal(t, []string{"m2"}, ids(mb.Messages(Filter{Unread: boolp(false)})))
	assert.Equal(t, []string{"inbox", "personal"}, mb.Folders())
	assert.Equal(t, []string{}, newWS().Mail().Folders())

	// m9 before m10 at one date
	ws2 := newWS()
	for i := 0; i < 11; i++ {
		_, err := ws2.Mail().Deliver(Delivery{Sender: "a@b"})
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10", "m11"}, ids(ws2.Mail().Messages(Filter{})))
}

func TestMailSend(t *testing.T) {
	ws := seedMail(t)
	require.NoError(t, ws.Clock().Advance("1h"))
	mb := ws.Mail()
	id, err := mb.Send([]string{"dana@acme.example"}, nil, "Hello", "body", []Attachment{{"r.txt", "R"}})
	require.NoError(t, err)
	assert.Equal(t, "m4", id, "sent mail shares the id counter")
	m, _ := mb.Get(id)
	assert.Equal(t, Message{
		ID: "m4", Sender: "sam@acme.example", To: []string{"dana@acme.example"}, Cc: []string{},
		Subject: "Hello", Body: "body", Date: "2026-01-05T10:00:00Z", Folder: "sent", Read: true,
		Labels: []string{}, Thread: "m4", Attachments: []Attachment{{"r.txt", "R"}},
	}, m)
	_, err = mb.Send(nil, nil, "s", "b", nil)
	assert.EqualError(t, err, "to: at least one recipient is needed")
	_, err = mb.Send([]string{"x"}, nil, "s", "b", nil)
	assert.EqualError(t, err, `to: "x" is not an email address`)
	_, err = mb.Send([]string{"x@y"}, []string{"nope"}, "s", "b", nil)
	assert.EqualError(t, err, `cc: "nope" is not an email address`)
	_, ok := mb.Get("m5")
	assert.False(t, ok)
}

func TestMailReply(t *testing.T) {
	ws := seedMail(t)
	mb := ws.Mail()
	before, _ := mb.Get("m1")
	id, err := mb.Reply("m1", "It was 200.", false, nil, nil)
	require.NoError(t, err)
	m, _ := mb.Get(id)
	assert.Equal(t, []string{"Dana@Acme.example"}, m.To)
	assert.Equal(t, []string{}, m.Cc)
	assert.Equal(t, "Re: Q3 total", m.Subject)
	assert.Equal(t, "It was 200.", m.Body)
	assert.Equal(t, "m1", m.Thread)
	assert.Equal(t, "m1", m.InReplyTo)
	assert.Equal(t, "sent", m.Folder)
	assert.Equal(t, "sam@acme.example", m.Sender)
	after, _ := mb.Get("m1")
	assert.Equal(t, before, after, "the original is unchanged")

	// reply all: original to+cc into cc, without us (any case) and the sender
	id, err = mb.Reply("m1", "all", true, nil, []Attachment{{"a", "b"}})
	require.NoError(t, err)
	m, _ = mb.Get(id)
	assert.Equal(t, []string{"Dana@Acme.example"}, m.To)
	assert.Equal(t, []string{"lee@acme.example", "boss@acme.example"}, m.Cc)
	assert.Equal(t, []string{"a"}, m.AttachmentNames())

	// replying to a reply: "Re:" once, same thread
	id2, err := mb.Reply(id, "again", false, nil, nil)
	require.NoError(t, err)
	m2, _ := mb.Get(id2)
	assert.Equal(t, "Re: Q3 total", m2.Subject)
	assert.Equal(t, "m1", m2.Thread)
	assert.Equal(t, id, m2.InReplyTo)
	// our own mail: to its recipients; reply all adds its cc
	assert.Equal(t, []string{"Dana@Acme.example"}, m2.To)
	id3, err := mb.Reply(id, "again", true, nil, nil)
	require.NoError(t, err)
	m3, _ := mb.Get(id3)
	assert.Equal(t, []string{"Dana@Acme.example"}, m3.To)
	assert.Equal(t, []string{"lee@acme.example", "boss@acme.example"}, m3.Cc)

	_, err = mb.Deliver(Delivery{Sender: "x@y", Subject: "RE: shouting"})
	require.NoError(t, err)
	last := mb.Messages(Filter{Subject: "shouting"})[0].ID
	id4, err := mb.Reply(last, "b", false, nil, nil)
	require.NoError(t, err)
	m4, _ := mb.Get(id4)
	assert.Equal(t, "RE: shouting", m4.Subject)

	_, err = mb.Reply("m99", "x", false, nil, nil)
	assert.EqualError(t, err, "no message m99")
}

func TestMailForward(t *testing.T) {
	ws := newWS()
	mb := ws.Mail()
	_, err := mb.Deliver(Delivery{Sender: "a@x", To: []string{"me@example.com", "b@x"}, Cc: []string{"c@x"},
		Subject: "Invoice", Body: "see attached", Attachments: []Attachment{{"inv.pdf", "PDF"}}})
	require.NoError(t, err)
	id, err := mb.Forward("m1", []string{"acct@x"}, []string{"boss@x"}, "FYI")
	require.NoError(t, err)
	m, _ := mb.Get(id)
	assert.Equal(t, "Fwd: Invoice", m.Subject)
	assert.Equal(t, "FYI\n\n---------- Forwarded message ----------\nFrom: a@x\nDate: 2026-01-05T09:00:00Z\nSubject: Invoice\nTo: me@example.com, b@x\nCc: c@x\n\nsee attached", m.Body)
	assert.Equal(t, []Attachment{{"inv.pdf", "PDF"}}, m.Attachments)
	assert.Equal(t, "m2", m.Thread, "a forward starts a new thread")
	assert.Equal(t, "", m.InReplyTo)
	assert.Equal(t, []string{"acct@x"}, m.To)
	assert.Equal(t, []string{"boss@x"}, m.Cc)

	id, err = mb.Forward(id, []string{"d@x"}, nil, "")
	require.NoError(t, err)
	m, _ = mb.Get(id)
	assert.Equal(t, "Fwd: Invoice", m.Subject, "Fwd: once")
	assert.Contains(t, m.Body, "---------- Forwarded message ----------\nFrom: me@example.com\n")
	assert.NotContains(t, m.Body[:5], "\n")

	_, err = mb.Forward("m1", nil, nil, "")
	assert.EqualError(t, err, "to: at least one recipient is needed")
	_, err = mb.Forward("m7", []string{"a@b"}, nil, "")
	assert.EqualError(t, err, "no message m7")
}

func TestMailMarkMoveAttachment(t *testing.T) {
	ws := seedMail(t)
	mb := ws.Mail()
	m, err := mb.Mark("m1", boolp(true), nil)
	require.NoError(t, err)
	assert.True(t, m.Read)
	assert.Equal(t, []string{}, m.Labels)
	m, err = mb.Mark("m2", nil, []string{"finance"})
	require.NoError(t, err)
	assert.True(t, m.Read)
	assert.Equal(t, []string{"finance"}, m.Labels, "labels are replaced")
	m, err = mb.Mark("m2", boolp(false), []string{})
	require.NoError(t, err)
	assert.False(t, m.Read)
	assert.Equal(t, []string{}, m.Labels)
	_, err = mb.Mark("m9", nil, nil)
	assert.EqualError(t, err, "no message m9")

	h := ws.Hash()
	_, err = mb.Mark("m1", boolp(true), nil)
	require.NoError(t, err)
	assert.Equal(t, h, ws.Hash(), "marking as it was changes nothing")

	m, err = mb.Move("m1", "archive")
	require.NoError(t, err)
	assert.Equal(t, "archive", m.Folder)
	assert.Equal(t, []string{"archive", "inbox", "personal"}, mb.Folders())
	_, err = mb.Move("m3", "archive")
	require.NoError(t, err)
	assert.Equal(t, []string{"archive", "inbox"}, mb.Folders())
	_, err = mb.Move("m3", "")
	assert.EqualError(t, err, "folder: empty name")
	_, err = mb.Move("m0", "x")
	assert.EqualError(t, err, "no message m0")

	_, err = mb.Deliver(Delivery{Sender: "a@b", Attachments: []Attachment{{"a.txt", "AAA"}, {"b.txt", "B"}}})
	require.NoError(t, err)
	c, err := mb.Attachment("m4", "a.txt")
	require.NoError(t, err)
	assert.Equal(t, "AAA", c)
	_, err = mb.Attachment("m4", "c.txt")
	assert.EqualError(t, err, `message m4 has no attachment "c.txt" (it has "a.txt", "b.txt")`)
	_, err = mb.Attachment("m1", "c.txt")
	assert.EqualError(t, err, "message m1 has no attachments")
	_, err = mb.Attachment("m40", "c.txt")
	assert.EqualError(t, err, "no message m40")
}
