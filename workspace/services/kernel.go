package services

import (
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// The kernel's own services: their state lives in package workspace (sections with their own
// hash and diff code, for speed) and their script binding in package wsmod; this is where they
// are registered with their tools, setup summary and docs.

// Files is the file system.
var Files = &service.Service{
	Name: "files", WSName: "fs", Group: "fs", Entry: "file",
	Doc:   "A file system of folders and UTF-8 text files (paths start at \"/\").",
	Tools: tools.FSTools(),
	Setup: func(st *workspace.State) string {
		var b strings.Builder
		fs := st.Files()
		for _, p := range fs.Walk("/") {
			c, _ := fs.Read(p)
			b.WriteString("file " + p + "\n" + c + "\n")
		}
		return b.String()
	},
	Probe: func(st *workspace.State) error { return st.Files().Write("/probe.txt", "x") },
}

// Mail is the user's mailbox.
var Mail = &service.Service{
	Name: "mail", Entry: "message",
	Doc:   "The user's mailbox: messages in folders (inbox, sent, archive, …) with read flags, labels, threads and attachments; the agent lists, reads, sends, replies, forwards, moves and marks.",
	Tools: tools.MailTools(),
	Setup: func(st *workspace.State) string {
		var b strings.Builder
		for _, m := range st.Mail().Messages(workspace.Filter{}) {
			b.WriteString("mail " + m.Folder + " from " + m.Sender + " to " + strings.Join(m.To, ", ") + "\n")
			b.WriteString(m.Subject + "\n" + m.Body + "\n")
			for _, a := range m.Attachments {
				b.WriteString("attachment " + a.Name + "\n" + a.Content + "\n")
			}
		}
		return b.String()
	},
	Probe: func(st *workspace.State) error {
		_, err := st.Mail().Deliver(workspace.Delivery{Sender: "a@example.com", To: []string{"me@example.com"}, Subject: "probe", Body: "x"})
		return err
	},
}

// Calendar is the user's calendar.
var Calendar = &service.Service{
	Name: "calendar", Entry: "event",
	Doc:   "The user's calendar: events with a title, start and end, attendees, location and description.",
	Tools: tools.CalendarTools(),
	Setup: func(st *workspace.State) string {
		var b strings.Builder
		if evs, err := st.Calendar().Events("", "", ""); err == nil {
			for _, e := range evs {
				b.WriteString("event " + e.Title + " " + e.Start + " " + e.End + " " + e.Location + " " + strings.Join(e.Attendees, ", ") + "\n")
				b.WriteString(e.Description + "\n")
			}
		}
		return b.String()
	},
	Probe: func(st *workspace.State) error {
		_, err := st.Calendar().Add(workspace.Event{Title: "probe", Start: "2026-01-05T10:00:00Z", End: "2026-01-05T11:00:00Z"})
		return err
	},
}

// Records is the record store behind task-defined tools (tickets, orders, …); it has no
// built-in tools of its own.
var Records = &service.Service{
	Name: "records", WSName: "db", DiffName: "db", Entry: "record",
	Doc: "Named collections of JSON records, the state of the task's own tools (tickets, orders, stock).",
	Setup: func(st *workspace.State) string {
		var b strings.Builder
		db := st.DB()
		colls := db.Collections()
		sort.Strings(colls)
		for _, c := range colls {
			for _, r := range db.All(c) {
				b.WriteString("record " + c + " " + jsonv.MustEncode(r) + "\n")
			}
		}
		return b.String()
	},
	Probe: func(st *workspace.State) error {
		_, err := st.DB().Insert("probe", jsonv.NewObject("id", "p1", "x", int64(1)))
		return err
	},
}
