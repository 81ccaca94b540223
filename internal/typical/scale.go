package typical

import (
	"fmt"
	"strconv"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
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
// episode, over a workspace that Scale seeded with n entries: the same entries as ScaleWrites.
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
	}
	panic("typical: no scale arguments for " + tool)
}

// ScaleTask is a task over a workspace that Scale seeds (in Go: its own setup only sets the
// address), with the fs and mail tools and order_update, a task-defined tool that updates one
// record.
const ScaleTask = `
def _setup(ws):
    ws.mail.address = "me@acme.example"

def _update(ws, id, status):
    ws.db.update("orders", id, status = status)
    return {"id": id, "status": status}

def _verify(ws, ep):
    check(True, "nothing to check")

task(name = "scale", prompt = "Work.", setup = _setup, verify = _verify, solution = lambda agent: agent.reply("ok"),
     tools = ["fs", "mail", tool(name = "order_update", description = "Set the status of an order.",
                                 params = {"id": param("string"), "status": param("string")}, impl = _update)])
`
