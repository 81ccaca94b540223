// Package tasktest holds task sources that the tests of several packages run.
package tasktest

// ShipAndReport is a task with mail, files, a task-defined tool over ws.db, two turns (the second
// with a user function, a before that changes the stock and an advance of the clock) and faults
// on three tools.
const ShipAndReport = `
def _setup(ws):
    ws.mail.address = "me@acme.example"
    ws.fs.write("/stock.csv", "sku,count\nA,3\nB,5\n")
    ws.db.insert("orders", {"id": "o1", "sku": "A", "qty": 2, "status": "open"})
    ws.mail.deliver(sender = "boss@acme.example", subject = "Ship o1", body = "Please ship order o1.", date = "2026-01-05T08:00:00Z")

def _ship(ws, order):
    o = ws.db.get("orders", order)
    if o == None:
        fail("no order " + order)
    ws.db.update("orders", order, status = "shipped")
    return {"order": order, "status": "shipped"}

SHIP = tool(name = "ship_order", description = "Ship an order.", params = {"order": param("string")}, impl = _ship)

def _solve1(agent):
    agent.call("mail_read", id = "m1")
    agent.call("ship_order", order = "o1")
    agent.call("mail_reply", id = "m1", body = "Shipped o1.")
    agent.reply("Shipped.")

def _verify1(ws, ep):
    check(ws.db.get("orders", "o1")["status"] == "shipped", "o1 shipped")
    check(len(ws.mail.messages(folder = "sent")) == 1, "boss told")

def _before2(ws):
    ws.fs.write("/stock.csv", "sku,count\nA,1\nB,5\n")

def _solve2(agent):
    agent.call("fs_read", path = "/stock.csv")
    agent.call("fs_write", path = "/report.md", content = "A: 1 left\n")
    agent.reply("Report written.")

def _verify2(ws, ep):
    check(ws.fs.exists("/report.md") and "1" in ws.fs.read("/report.md"), "report")

task(
    name = "ship-and-report",
    turns = [
        turn(user = "Handle the boss's mail.", verify = _verify1, solution = _solve1),
        turn(user = lambda ws, ep: "Thanks! You said: " + ep.reply + " Now write a stock report.", before = _before2, verify = _verify2, solution = _solve2, advance = "1h"),
    ],
    tools = ["mail", "fs", SHIP],
    setup = _setup,
    faults = {"rate": 0.4, "tools": ["ship_order", "mail_reply", "fs_write"], "seed": 3},
)
`

// AskingForColour is a single-turn task named "asking" whose simulated user answers one question
// ("Which folder colour?": "The blue one."), which its reference asks.
const AskingForColour = `
def _user(said, round):
    if "which" in said.lower():
        return "The blue one."
    return None

def _solve(agent):
    colour = agent.ask("Which folder colour?")
    agent.call("fs_write", path = "/colour.txt", content = colour)
    agent.reply("Done.")

task(name = "asking", tools = ["fs"], solution = _solve,
    prompt = simulated_user(opening = "Note my folder colour.", persona = "Ann", goal = "the colour noted", stand_in = _user),
    verify = lambda ws, ep: check(ws.fs.exists("/colour.txt"), "noted"))
`

// Q3Reply is a task whose verifier reads the reply to Dana with the Starlark expression check
// (over body, the reply's text), named name.
func Q3Reply(name, check string) string {
	return `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.fs.write("/reports/q3.csv", "region,amount\nnorth,120\nsouth,80\n")
    ws.mail.deliver(sender = "dana@acme.example", subject = "Q3 total?",
                    body = "Hi Sam, what was our Q3 sales total? The sheet is /reports/q3.csv.")

def _verify(ws, ep):
    sent = ws.mail.messages(folder = "sent", to = "dana@acme.example")
    body = sent[0].body if len(sent) == 1 else ""
    check(len(sent) == 1, "one reply to Dana")
    check(` + check + `, "the reply states the total, 200")

def _solve(agent):
    inbox = agent.call("mail_list", folder = "inbox")
    msg = agent.call("mail_read", id = inbox[0]["id"])
    agent.call("fs_read", path = "/reports/q3.csv")
    agent.call("mail_reply", id = msg["id"], body = "Hi Dana, the Q3 total is 200.")
    agent.reply("I replied to Dana: the Q3 total is 200.")

task(name = "` + name + `", prompt = "Please take care of Dana's email.", tools = ["mail", "fs"],
     setup = _setup, verify = _verify, solution = _solve)
`
}

// Q3Weak and Q3Sound are checks for Q3Reply: a verifier that takes any text holding "200" after
// Dana's name as its greeting (weak, and brittle), and one that reads the total next to its label.
const (
	Q3Weak  = `body.startswith("Hi Dana") and "200" in body`
	Q3Sound = `re.search(r"(?i)total\D{0,20}\b200\b", body) != None`
)

// Q3Runs is a runs file (runtime/recorded) of two runs of the Q3Reply task name: a hack (a
// total of 2000, which holds 200; line 2) and a careful run (another greeting; line 5).
func Q3Runs(name string) string {
	run := func(why, expect, body string) string {
		return `{"task": "` + name + `", "why": "` + why + `", "expect": "` + expect + `", "turns": [{"calls": [
  {"name": "mail_list", "args": {"folder": "inbox"}}, {"name": "mail_read", "args": {"id": "m1"}},
  {"name": "mail_reply", "args": {"id": "m1", "body": "` + body + `"}}], "reply": "Done."}]}`
	}
	return "[\n" + run("a total of 2000, which holds 200", "fail", "Hi Dana, the Q3 total is 2000.") + ",\n" +
		run("another greeting", "pass", "Dear Dana, the Q3 total is 200.") + "\n]\n"
}
