package mail

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/workspace"
)

func TestMessageValue(t *testing.T) {
	m := workspace.Message{ID: "m3", Sender: "a@x.example", To: []string{"b@x.example"}, Subject: "S",
		Body: "B", Date: "2026-01-05T09:00:00Z", Folder: "inbox", Labels: []string{"l"}, Thread: "m1",
		Attachments: []workspace.Attachment{{Name: "f.pdf", Content: "%PDF"}}}
	got := MessageValue(m).String()
	want := `struct(attachment_contents = {"f.pdf": "%PDF"}, attachments = ["f.pdf"], body = "B", cc = [], date = "2026-01-05T09:00:00Z", folder = "inbox", id = "m3", in_reply_to = None, labels = ["l"], read = False, sender = "a@x.example", subject = "S", thread = "m1", to = ["b@x.example"])`
	if got != want {
		t.Errorf("MessageValue:\n got %s\nwant %s", got, want)
	}
	m.InReplyTo = "m1"
	if s := MessageValue(m).String(); !strings.Contains(s, `in_reply_to = "m1"`) {
		t.Errorf("MessageValue with in_reply_to: %s", s)
	}
}
