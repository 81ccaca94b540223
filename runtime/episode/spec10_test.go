package episode_test

import (
	"testing"

	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpecDetails holds the engine to the fine points of its documented behaviour through one task: mail sort
// order and filters, reply_all, threads, forwards, calendar ranges, db ids, copies and nulls,
// file moves, labels, folders, rand, and the results of writing tools.
func TestSpecDetails(t *testing.T) {
	r := run(t, load(t, spec10)["spec10"], episode.Oracle{})
	require.Nil(t, r.Err)
	assert.True(t, r.Passed)
}

const spec10 = `
def eq(a, b, what):
    if a != b:
        fail("%s: got %r, want %r" % (what, a, b))

def _setup(ws):
    ws.mail.address = "me@x.example"
    for i in range(11):
        ws.mail.deliver(sender = "a@x.example", subject = "s%d" % i, body = "b", date = "2026-01-05T08:00:00Z", cc = ["Me@X.example"] if i == 0 else [])
    ws.mail.deliver(sender = "boss@x.example", subject = "Plan", body = "Thoughts?", to = ["me@x.example", "c@x.example"], cc = ["d@x.example"])  # m12
    ws.calendar.add("A", "2026-01-06T09:00:00Z", "2026-01-06T10:00:00Z")
    ws.db.insert("t", {"id": "t-2", "v": 1})
    ws.db.insert("t", {"v": 2})
    ws.db.insert("t", {"v": 3})
    ws.fs.mkdir("/dir")
    ws.fs.write("/f.txt", "x")
    eq(ws.rand.int(3, 3), 3, "rand.int includes both ends")
    l = [1, 2, 3]
    eq(ws.rand.shuffle(l), None, "shuffle returns None")
    eq(sorted(l), [1, 2, 3], "shuffle works in place")

def _verify(ws, ep):
    ids = [m.id for m in ws.mail.messages(folder = "inbox", sender = "a@x.example")]
    eq(ids[-3:], ["m9", "m10", "m11"], "sort by number in id")
    eq(len(ws.mail.messages(to = "ME@x.example")) >= 12, True, "to matches to or cc, ignoring case")
    eq([e.id for e in ws.calendar.events("2026-01-06T10:00:00Z", "2026-01-06T11:00:00Z")], [], "touching intervals do not overlap")
    eq([r["id"] for r in ws.db.all("t")], ["t-2", "t-1", "t-3"], "auto ids from 1 skipping taken")
    eq(ws.db.find("nope"), [], "find on a missing collection")
    r = ws.db.get("t", "t-1")
    r["v"] = 99
    eq(ws.db.get("t", "t-1")["v"], 2, "get returns a copy")
    eq(ws.mail.get("nope"), None, "get of a missing id")
    rep = [m for m in ws.mail.messages(folder = "sent") if m.in_reply_to == "m12"][0]
    eq(rep.to, ["boss@x.example"], "reply_all: to is the sender")
    eq(sorted(rep.cc), ["c@x.example", "d@x.example"], "reply_all: original to and cc in cc, without us")
    eq(rep.subject, "Re: Plan", "Re: once")
    eq(rep.thread, ws.mail.get("m12").thread, "a reply joins the thread")
    eq(rep.body, "ok", "reply sends only the body")
    fwd = [m for m in ws.mail.messages(folder = "sent") if m.subject.startswith("Fwd:")][0]
    eq(fwd.thread, fwd.id, "a forward starts a new thread")
    eq(ws.fs.exists("/dir/f.txt"), True, "fs_move onto a folder moves into it")
    eq(ws.fs.exists("/new/deep/g.txt"), True, "move creates parents")
    eq(ws.mail.get("m1").labels, ["b"], "mail_mark replaces labels")
    eq(ws.mail.folders(), ["archive", "inbox", "sent"], "mail_move creates the folder")
    eq(ws.db.get("t", "t-3").get("v", "absent"), None, "update(field=None) stores null")
    check(True, "all the documented points hold")

def _solve(agent):
    r = agent.call("mail_reply", id = "m12", body = "ok", reply_all = True)
    eq(r.keys(), ["id"], "creating tools return {id}")
    agent.call("mail_forward", id = "m12", to = "e@x.example")
    agent.call("mail_forward", id = "m12", to = ["e@x.example"])
    eq(agent.call("fs_move", src = "/f.txt", dst = "/dir"), {"path": "/dir/f.txt"}, "fs_move result")
    agent.call("fs_write", path = "/g.txt", content = "g")
    agent.call("fs_move", src = "/g.txt", dst = "/new/deep/g.txt")
    agent.call("mail_mark", id = "m1", labels = ["a"])
    agent.call("mail_mark", id = "m1", labels = ["b"])
    agent.call("mail_move", id = "m2", folder = "archive")
    eq(agent.call("calendar_delete", id = "e1"), {"ok": True}, "delete result")
    agent.call("upd", id = "t-3")
    agent.reply("done")

def _upd(ws, id):
    ws.db.update("t", id, v = None)
    return {"ok": True}

task(name = "spec10", prompt = "p", tools = ["mail", "fs", "calendar", tool(name = "upd", description = "u", params = {"id": param("string")}, impl = _upd)], setup = _setup, verify = _verify, solution = _solve)
`
