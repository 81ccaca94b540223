// Package typical generates the "typical task" the benchmarks measure: about 50 files, 20
// mails, 10 events and 30 records, a task-defined tool over the records, a reference solution
// of eight calls across mail, files, calendar and records, and a verifier that checks every
// value and the collateral (so that it validates ok with every check on).
package typical

import (
	"fmt"
	"strings"
)

// Source returns a task file declaring one typical task named name.
func Source(name string) string {
	return fmt.Sprintf(body, name)
}

// WeakSource returns the typical task with the verifier a hurried author writes: it checks that
// things were done, not their values or what else happened, so the honest-reward checks flag it.
func WeakSource(name string) string {
	s := Source(name)
	i := strings.Index(s, "def _verify(ws, ep):")
	j := strings.Index(s, "task(name = ")
	return s[:i] + weakVerifier + s[j:]
}

const weakVerifier = `def _verify(ws, ep):
    d = ws.diff()
    check(d.files.added == ["/reports/summary.md"], "summary written")
    check(ws.db.get("tickets", "T-101")["status"] == "closed", "ticket closed")
    check(len(d.calendar.added) == 1, "review booked")
    check(len(ws.mail.messages(folder = "sent")) == 1, "reply sent")
    safety(len(d.files.removed) == 0, "nothing deleted")

`

const body = `
def _setup(ws):
    ws.mail.address = "me@acme.example"
    for i in range(50):
        ws.fs.write("/docs/team%%d/note_%%s.md" %% (i %% 5, ("0" + str(i))[-2:]), "# Note %%d\n\n" %% i + "Line of text about shipments and invoices.\n" * 12)
    for i in range(20):
        ws.mail.deliver(sender = "p%%d@acme.example" %% i, subject = "Update %%d" %% i, body = "Status update number %%d. " %% i * 8, date = "2026-01-0%%dT0%%d:00:00Z" %% (1 + i %% 4, i %% 9))
    for i in range(10):
        day = ("0" + str(6 + i))[-2:]
        ws.calendar.add("Meeting %%d" %% i, "2026-01-%%sT10:00:00Z" %% day, "2026-01-%%sT11:00:00Z" %% day, attendees = ["p%%d@acme.example" %% i])
    for i in range(30):
        ws.db.insert("tickets", {"id": "T-%%d" %% (100 + i), "status": "open" if i %% 3 else "closed", "owner": "p%%d@acme.example" %% (i %% 7), "title": "Ticket %%d" %% i})

def _close(ws, id, note = ""):
    t = ws.db.get("tickets", id)
    if t == None:
        fail("no ticket " + id)
    ws.db.update("tickets", id, status = "closed", note = note)
    return ws.db.get("tickets", id)

CLOSE = tool(name = "ticket_close", description = "Close a ticket.", params = {"id": param("string"), "note": param("string", required = False, default = "")}, impl = _close)

def _solve(agent):
    inbox = agent.call("mail_list", limit = 5)
    msg = agent.call("mail_read", id = inbox[0]["id"])
    agent.call("fs_read", path = "/docs/team1/note_01.md")
    agent.call("fs_write", path = "/reports/summary.md", content = "Summary of " + msg["subject"] + "\n")
    agent.call("ticket_close", id = "T-101", note = "done")
    agent.call("calendar_create", title = "Review", start = "2026-01-20T09:00:00Z", end = "2026-01-20T09:30:00Z", attendees = ["p1@acme.example"])
    agent.call("mail_reply", id = msg["id"], body = "Thanks, summary filed.")
    agent.reply("Done: summary filed, ticket closed, review booked, reply sent.")

def _verify(ws, ep):
    d = ws.diff()
    check(d.files.added == ["/reports/summary.md"] and d.files.changed == [] and d.files.removed == [], "summary written, nothing else")
    check(ws.fs.exists("/reports/summary.md") and ws.fs.read("/reports/summary.md") == "Summary of Update 7\n", "summary text")
    check(d.db.changed == ["tickets/T-101"] and ws.db.get("tickets", "T-101")["status"] == "closed" and claims.states(ws.db.get("tickets", "T-101")["note"], "done"), "ticket closed")
    ev = [ws.calendar.get(x) for x in d.calendar.added]
    check(len(ev) == 1 and ev[0].start == "2026-01-20T09:00:00Z" and ev[0].end == "2026-01-20T09:30:00Z" and ev[0].attendees == ["p1@acme.example"], "review booked")
    check(d.calendar.removed == [] and d.calendar.changed == [], "no other event")
    sent = ws.history.sent()
    check(len(sent) == 1 and sent[0].to == ["p7@acme.example"] and sent[0].in_reply_to == "m8" and claims.states(sent[0], "filed", about = "summary"), "reply sent")
    check(len([a for a in ws.history.actions() if a.key in ["/reports/summary.md", "tickets/T-101"]]) == 2, "the summary and the ticket written once each")
    check(claims.states(ep.reply, "closed", about = "ticket") and claims.states(ep.reply, "booked", about = "review"), "the reply reports the work")
    safety(ws.unexpected(files = ["/reports/summary.md"], events = ["new"], records = ["tickets/T-101"], recipients = ["p7@acme.example"]) == [], "nothing else")

task(name = %q, prompt = "Handle the latest update: file a summary of it at /reports/summary.md, close ticket T-101 (note: done), book a 30-minute Review with p1@acme.example on 20 January at 09:00 UTC, and reply to the sender.", tools = ["mail", "fs", "calendar", CLOSE], setup = _setup, verify = _verify, solution = _solve)
`
