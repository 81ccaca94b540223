package typical

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services/chat"
	"github.com/coworkenv/coworkenv/workspace/services/contacts"
)

// The workspace at enterprise size (issue 24): what the scale benchmarks seed and change. Only
// the kernel's exported API is used, so that the same benchmarks measure an older tree too.

// ScaleSizes are the sizes the scale benchmarks measure.
var ScaleSizes = []int{1000, 10000, 100000}

// ScaleRecord is record i of the scale benchmarks: an order of a shop or a CRM, six fields.
func ScaleRecord(i int) *jsonv.Object {
	return jsonv.NewObject("id", "O-"+strconv.Itoa(i), "customer", "C-"+strconv.Itoa(i%5000),
		"status", []string{"pending", "processed", "delivered"}[i%3], "qty", int64(1+i%9),
		"total", float64(i%1000)+0.25, "note", "order number "+strconv.Itoa(i))
}

// ScalePath is the path of file i.
func ScalePath(i int) string { return fmt.Sprintf("/data/d%03d/f%06d.txt", i%500, i) }

// Scale adds n files (ScalePath), n messages (m1 … in inbox and archive) and n records
// (collection "orders", ScaleRecord) to st, and 20 files in /docs, whatever n is.
func Scale(st *workspace.State, n int) error {
	fs, mail, db := st.Files(), st.Mail(), st.DB()
	for i := range 20 {
		if err := fs.Write(fmt.Sprintf("/docs/note%02d.md", i), "a note\n"); err != nil {
			return err
		}
	}
	for i := range n {
		if err := fs.Write(ScalePath(i), "line of text "+strconv.Itoa(i)+"\n"); err != nil {
			return err
		}
		if _, err := mail.Deliver(workspace.Delivery{Sender: fmt.Sprintf("p%d@acme.example", i%300), Subject: "update " + strconv.Itoa(i),
			Body: "status update " + strconv.Itoa(i), Date: fmt.Sprintf("2025-%02d-%02dT%02d:%02d:00Z", 1+i%12, 1+i%28, i%24, i%60),
			Folder: []string{"inbox", "inbox", "inbox", "archive"}[i%4]}); err != nil {
			return err
		}
		if _, err := db.Insert("orders", ScaleRecord(i)); err != nil {
			return err
		}
	}
	return nil
}

// The chat and the contacts of the scale benchmarks are seeded through chat.Seed and the part
// of the contacts (workspace.PartPut), which store entries without reading the service, so
// that the tree before their indexes seeds them in O(n log n) too.

// ScaleChannels is the number of chat channels, #ch00 … #ch49.
const ScaleChannels = 50

// scaleChannel is the channel of message i.
func scaleChannel(i int) string { return fmt.Sprintf("#ch%02d", i%ScaleChannels) }

// ScaleChatContacts adds a chat of n messages (ScaleChat) and a book of n contacts
// (ScaleContacts) to st.
func ScaleChatContacts(st *workspace.State, n int) error {
	if err := ScaleChat(st, n); err != nil {
		return err
	}
	return ScaleContacts(st, n)
}

// ScaleChat adds a chat of n messages to st. Message i is in channel i mod 50 (a tenth of
// them, every tenth round of the channels, replies to the message of the round before), one in
// ten says "delayed", one in twenty mentions the user; they are a minute apart.
func ScaleChat(st *workspace.State, n int) error {
	var channels []*chat.Channel
	for c := range ScaleChannels {
		channels = append(channels, &chat.Channel{Name: scaleChannel(c), Topic: "topic " + strconv.Itoa(c), Members: []string{"me", "p001", "p002"}})
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	msgs := make([]*chat.Message, n)
	for i := range n {
		text := fmt.Sprintf("status of truck %d", i)
		if i%10 == 3 {
			text += ", delayed"
		}
		if i%20 == 7 {
			text += " @me"
		}
		m := &chat.Message{Conv: scaleChannel(i), Sender: fmt.Sprintf("p%03d", i%200), Text: text, TS: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)}
		if i/ScaleChannels%10 == 9 {
			m.Thread = "cm" + strconv.Itoa(1+i-ScaleChannels) // the message of the same channel a round before
		}
		msgs[i] = m
	}
	_, err := chat.Seed(st, channels, msgs)
	return err
}

// ScaleContacts adds a book of n contacts to st (ScaleContact).
func ScaleContacts(st *workspace.State, n int) error {
	for i := range n {
		if _, err := st.NextNumber(contacts.Part); err != nil {
			return err
		}
		if err := st.PartPut(contacts.Part, "c"+strconv.Itoa(i+1), "add", ScaleContact(i)); err != nil {
			return err
		}
	}
	return nil
}

var scaleFirst = strings.Fields("Greta Jonas Ava Mehmet Ruben Anna Lars Iris Dana Zoe Sanne Pieter Eva Tomas Lotte Jan Noor Bram Fleur Daan " +
	"Emma Sem Julia Luuk Sara Milan Tess Thijs Lieke Ruben Nina Koen Maud Stijn Roos Bas Femke Joris Ilse Timo")

// ScaleLastName is the last name of contact i: six letters, as good as unique among 100,000.
func ScaleLastName(i int) string {
	x := (uint64(i) + 1) * 2654435761 % 308915776 // 26^6
	b := make([]byte, 6)
	for j := range b {
		b[j] = byte('a' + x%26)
		x /= 26
	}
	b[0] -= 'a' - 'A'
	return string(b)
}

// ScaleContact is contact i of the scale benchmarks: a first name of 40, a last name of its own
// (ScaleLastName), a role, team and location of ten each; one in ten is in the personal address
// book.
func ScaleContact(i int) *contacts.Contact {
	first, last := scaleFirst[i%len(scaleFirst)], ScaleLastName(i)
	source := contacts.Directory
	if i%10 == 0 {
		source = contacts.Personal
	}
	return &contacts.Contact{ID: "c" + strconv.Itoa(i+1), Name: first + " " + last, Email: strings.ToLower(first+"."+last) + "@verdant.example",
		Phone: fmt.Sprintf("+31 10 555 %05d", i), Role: []string{"dispatcher", "planner", "driver", "controller", "buyer", "clerk", "mechanic", "analyst", "agent", "lead"}[i%10],
		Team: "Team " + strconv.Itoa(i/7%10), Location: []string{"Antwerp", "Hamburg", "Rotterdam", "Gouda", "Lyon", "Turin", "Leeds", "Porto", "Gdansk", "Brno"}[i/3%10],
		Company: "Verdant Freight", Source: source}
}

// ScaleWrite is one of the three writes the goals name, made through the kernel: a file
// written, a message marked, a record updated. i picks the entry and makes the change new.
type ScaleWrite struct {
	Name  string
	Write func(st *workspace.State, n, i int) error
}

// scaleEntry spreads the i-th change over the n entries.
func scaleEntry(n, i int) int { return (i * 7919) % n }

// ScaleWrites are the writes of the scale benchmarks, named as the tools that make them.
var ScaleWrites = []ScaleWrite{
	{"fs_write", func(st *workspace.State, n, i int) error {
		return st.Files().Write(ScalePath(scaleEntry(n, i)), "changed "+strconv.Itoa(i))
	}},
	{"mail_mark", func(st *workspace.State, n, i int) error {
		read := i%2 == 0
		_, err := st.Mail().Mark("m"+strconv.Itoa(1+scaleEntry(n, i)), &read, []string{"l" + strconv.Itoa(i)})
		return err
	}},
	{"record_update", func(st *workspace.State, n, i int) error {
		_, err := st.DB().Update("orders", "O-"+strconv.Itoa(scaleEntry(n, i)), jsonv.NewObject("status", "closed "+strconv.Itoa(i)))
		return err
	}},
}

// ScaleCallArgs are the arguments of call i of a tool the scale benchmarks call through an
// episode, over a workspace that Scale and ScaleChatContacts seeded with n entries: the same
// entries as ScaleWrites. A tool named "name:what" is tool name with other arguments.
func ScaleCallArgs(tool string, n, i int) *jsonv.Object {
	e := scaleEntry(n, i)
	switch tool {
	case "fs_write":
		return jsonv.NewObject("path", ScalePath(e), "content", "changed "+strconv.Itoa(i))
	case "fs_read":
		return jsonv.NewObject("path", ScalePath(e))
	case "fs_list":
		return jsonv.NewObject("path", "/docs") // the same 20 files at every size
	case "mail_mark":
		return jsonv.NewObject("id", "m"+strconv.Itoa(1+e), "read", i%2 == 0, "labels", []jsonv.Value{"l" + strconv.Itoa(i)})
	case "mail_list":
		return jsonv.NewObject("limit", int64(5))
	case "order_update":
		return jsonv.NewObject("id", "O-"+strconv.Itoa(e), "status", "closed "+strconv.Itoa(i))
	case "chat_read":
		return jsonv.NewObject("channel", scaleChannel(e)) // its 20 newest messages
	case "chat_search":
		return jsonv.NewObject("query", "delayed") // one message in ten: the 20 newest matches
	case "chat_mentions", "chat_list_channels":
		return jsonv.NewObject()
	case "chat_post":
		return jsonv.NewObject("channel", scaleChannel(e), "text", "on it "+strconv.Itoa(i))
	case "chat_react":
		return jsonv.NewObject("message_id", "cm"+strconv.Itoa(1+e), "emoji", "e"+strconv.Itoa(i))
	case "contacts_search":
		return jsonv.NewObject("query", strings.ToLower(ScaleContact(e).Name)) // one contact
	case "contacts_search:role":
		return jsonv.NewObject("query", "dispatcher", "limit", int64(10)) // a tenth of the book
	case "contacts_get":
		return jsonv.NewObject("id", "c"+strconv.Itoa(1+e))
	case "contacts_list":
		return jsonv.NewObject("team", "Team 3") // a tenth of the book, by name: the first 50
	case "contacts_update":
		return jsonv.NewObject("id", "c"+strconv.Itoa(1+e/10*10), "phone", "+31 6 "+strconv.Itoa(i)) // a personal contact
	}
	panic("typical: no scale arguments for " + tool)
}

// ScaleTask is a task over a workspace that Scale and ScaleChatContacts seed (in Go: its own
// setup only sets the address), with the fs, mail, chat and contacts tools and order_update, a
// task-defined tool that updates one record.
const ScaleTask = `
def _setup(ws):
    ws.mail.address = "me@acme.example"

def _update(ws, id, status):
    ws.db.update("orders", id, status = status)
    return {"id": id, "status": status}

def _verify(ws, ep):
    check(True, "nothing to check")

task(name = "scale", prompt = "Work.", setup = _setup, verify = _verify, solution = lambda agent: agent.reply("ok"),
     tools = ["fs", "mail", "chat", "contacts", tool(name = "order_update", description = "Set the status of an order.",
                                 params = {"id": param("string"), "status": param("string")}, impl = _update)])
`
