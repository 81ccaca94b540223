package mail_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A body of MailBody bytes is delivered, sent, replied and read back; one byte more is an error
// that names the limit, for scripts and tools alike.
func TestMailBodyLimit(t *testing.T) {
	ws := mailWS(t)
	max := strings.Repeat("b", limits.MailBody)
	id, err := ws.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", Subject: "max", Body: max})
	require.NoError(t, err)
	read := servicetest.Object(t, servicetest.OK(t, ws, "mail_read", fmt.Sprintf(`{"id":%q}`, id)))
	body, _ := read.Get("body")
	assert.Equal(t, max, body)
	_, err = ws.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", Subject: "over", Body: max + "b"})
	assert.EqualError(t, err, "body: 1048577 bytes is over the 1 MiB limit of a mail body")

	send := func(body string) string {
		return jsonv.MustEncode(jsonv.NewObject("to", "dana@acme.example", "subject", "s", "body", body))
	}
	servicetest.OK(t, ws, "mail_send", send(max))
	servicetest.Fails(t, ws, "mail_send", send(max+"b"), "body: 1048577 bytes is over the 1 MiB limit of a mail body")
	servicetest.OK(t, ws, "mail_reply", jsonv.MustEncode(jsonv.NewObject("id", "m1", "body", max)))
	servicetest.Fails(t, ws, "mail_reply", jsonv.MustEncode(jsonv.NewObject("id", "m1", "body", max+"b")),
		"body: 1048577 bytes is over the 1 MiB limit of a mail body")

	// a forward quotes the original below the note: together within the limit
	servicetest.OK(t, ws, "mail_forward", `{"id":"m1","to":"kim@acme.example","body":"FYI"}`)
	servicetest.Fails(t, ws, "mail_forward", fmt.Sprintf(`{"id":%q,"to":"kim@acme.example"}`, id),
		"body: the forward (the note and the quoted original) would be 1048702 bytes, over the 1 MiB limit of a mail body")
}

// An attachment holds at most what a file holds (so it can be saved as one), and the
// attachments of a message at most Attachments together.
func TestAttachmentLimits(t *testing.T) {
	ws := mailWS(t)
	file := strings.Repeat("a", limits.FileSize)
	att := func(n int) []workspace.Attachment {
		out := make([]workspace.Attachment, n)
		for i := range out {
			out[i] = workspace.Attachment{Name: fmt.Sprintf("a%d.txt", i), Content: file}
		}
		return out
	}
	id, err := ws.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", Subject: "max", Attachments: att(limits.Attachments / limits.FileSize)})
	require.NoError(t, err)
	assert.Equal(t, `{"path":"/saved.txt"}`, servicetest.OK(t, ws, "mail_save_attachment", fmt.Sprintf(`{"id":%q,"name":"a0.txt","path":"/saved.txt"}`, id)))
	_, err = ws.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", Subject: "over", Attachments: att(limits.Attachments/limits.FileSize + 1)})
	assert.EqualError(t, err, "the attachments are over the 32 MiB limit of the attachments of one message together")
	_, err = ws.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", Subject: "over",
		Attachments: []workspace.Attachment{{Name: "big.txt", Content: file + "a"}}})
	assert.EqualError(t, err, `attachment "big.txt": 8388609 bytes is over the 8 MiB limit of an attachment`)

	// mail_send attaches files: the largest file is a valid attachment
	require.NoError(t, ws.Files().Write("/f.txt", file))
	servicetest.OK(t, ws, "mail_send", `{"to":"dana@acme.example","subject":"s","body":"b","attachments":["/f.txt"]}`)
}

// mail_list shows at most ListItems messages, and says when its limit asked for more.
func TestMailListIsCapped(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	for i := range limits.ListItems + 10 {
		_, err := ws.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", Subject: fmt.Sprintf("n%d", i),
			Date: fmt.Sprintf("2026-01-05T08:%02d:%02dZ", i/60, i%60)})
		require.NoError(t, err)
	}
	// the tool's own limit: a list, as always
	assert.True(t, strings.HasPrefix(servicetest.OK(t, ws, "mail_list", `{}`), `[{"id":"m210",`))
	assert.True(t, strings.HasPrefix(servicetest.OK(t, ws, "mail_list", `{"limit":200}`), `[{"id":"m210",`))
	got := servicetest.Object(t, servicetest.OK(t, ws, "mail_list", `{"limit":1000}`))
	items, _ := got.Get("items")
	require.Len(t, items, limits.ListItems)
	assert.Equal(t, "m210", must(items.([]jsonv.Value)[0].(*jsonv.Object).Get("id")))
	total, _ := got.Get("total")
	assert.Equal(t, int64(limits.ListItems+10), total)
	got = servicetest.Object(t, servicetest.OK(t, ws, "mail_list", `{"limit":205}`))
	total, _ = got.Get("total")
	assert.Equal(t, int64(205), total, "total is what the limit asks for")
}
