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
