package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHistoryKeepsWhatTheStateForgets(t *testing.T) {
	s := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	require.NoError(t, s.Files().Write("/a.md", "one"))
	base := s.Fork()
	base.Freeze()
	ep := base.Fork()
	ep.SetActor(ActorAgent, 0)
	require.NoError(t, ep.Files().Write("/a.md", "two"))
	require.NoError(t, ep.Files().Write("/a.md", "one")) // restored: the state is as before
	id, err := ep.Mail().Send([]string{"x@out.example"}, nil, "leak", "secret", []Attachment{{Name: "n.txt", Content: "payload"}})
	require.NoError(t, err)
	_, err = ep.Mail().Move(id, "trash")
	require.NoError(t, err)
	ep.SetActor("", 1)
	_, err = ep.Mail().Deliver(Delivery{Sender: "a@b.example", Subject: "s", Body: "b"})
	require.NoError(t, err)

	h := ep.History(base)
	var ops []string
	for _, a := range h {
		ops = append(ops, a.Kind+" "+a.Op+" "+a.Key+" "+a.Actor)
	}
	require.Equal(t, []string{
		"file write /a.md agent", "file write /a.md agent", "message send m1 agent",
		"message move m1 agent", "message deliver m2 ",
	}, ops)
	require.Equal(t, "one", h[0].Before())
	require.Equal(t, "two", h[0].After())
	sent := h[2].After().(Message)
	require.Equal(t, "payload", sent.Attachments[0].Content)
	require.Equal(t, "sent", h[3].Before().(Message).Folder)
	require.Equal(t, 1, h[4].Turn)
	// the base and a sibling fork do not see the episode's actions
	require.Empty(t, base.History(base))
	require.Len(t, base.History(nil), 1)
	require.Empty(t, base.Fork().History(base))
	// history is not content: the restored file leaves the hash of a state without the writes
	other := base.Fork()
	_, err = other.Mail().Send([]string{"x@out.example"}, nil, "leak", "secret", []Attachment{{Name: "n.txt", Content: "payload"}})
	require.NoError(t, err)
	_, err = other.Mail().Move("m1", "trash")
	require.NoError(t, err)
	_, err = other.Mail().Deliver(Delivery{Sender: "a@b.example", Subject: "s", Body: "b"})
	require.NoError(t, err)
	require.Equal(t, other.Hash(), ep.Hash())
}

func TestHistoryOfFolderMovesAndRecords(t *testing.T) {
	s := New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	require.NoError(t, s.Files().Write("/d/b.md", "b"))
	require.NoError(t, s.Files().Write("/d/a.md", "a"))
	require.NoError(t, s.Files().Move("/d", "/e"))
	require.NoError(t, s.Files().Remove("/e"))
	var got []string
	for _, a := range s.History(nil) {
		got = append(got, a.Kind+" "+a.Op+" "+a.Key+">"+a.To)
	}
	require.Equal(t, []string{
		"file write /d/b.md>", "file write /d/a.md>",
		"file move /d/a.md>/e/a.md", "file move /d/b.md>/e/b.md", "folder move /d>/e",
		"file remove /e/a.md>", "file remove /e/b.md>", "folder remove /e>",
	}, got)
}
