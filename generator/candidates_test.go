package generator_test

import (
	"strings"
)

// reply is the data of a small, valid mail.reply task: a colleague asks a question whose
// answer is in a sheet in the workspace.
type reply struct {
	name, description, prompt string
	me, asker, askerName      string
	other, noiseSubj, noise   string
	subject, body, query      string
	path, sheet               string
	answer, replyText         string
	// label is what the answer is about, for the verifier's claims statement: the answer next
	// to it, and no other, so that a wrong figure or a rival beside the right one fails.
	label string
}

var replies = []reply{
	{
		name: "flour-order-quantity", description: "Answer the head baker from the order sheet, in the thread.",
		prompt: "Can you answer Bram about the flour order?",
		me:     "sanne@juniper.example", asker: "bram@juniper.example", askerName: "Bram",
		other: "ines@juniper.example", noiseSubj: "Oven maintenance Friday", noise: "The oven technician comes Friday at 7, please keep bay 2 free.",
		subject: "Rye flour next week?", body: "Hi Sanne, how many kilos of rye flour did we order for next week? Bram", query: "rye",
		path: "/purchasing/flour_orders.csv", sheet: "week,flour,kg\\n2026-W02,wheat,1200\\n2026-W02,rye,340\\n2026-W01,rye,310\\n",
		answer: "340", replyText: "we ordered 340 kg of rye flour for next week.",
		label: "rye",
	},
	{
		name: "exam-date-answer", description: "Tell a teacher the exam date from the timetable.",
		prompt: "Please get back to Femke about her exam date.",
		me:     "goran@eastgate.example", asker: "femke@eastgate.example", askerName: "Femke",
		other: "maud@eastgate.example", noiseSubj: "Parent evening chairs", noise: "We need forty extra chairs in the hall on Thursday evening.",
		subject: "Chemistry exam 4B", body: "Hello Goran, when is the chemistry exam of class 4B? Thanks, Femke", query: "chemistry",
		path: "/exams/timetable.csv", sheet: "class,subject,date\\n4B,chemistry,2026-03-12\\n4B,history,2026-03-10\\n4A,chemistry,2026-03-11\\n",
		answer: "2026-03-12", replyText: "the 4B chemistry exam is on 2026-03-12.",
		label: "chemistry",
	},
	{
		name: "loan-return-date", description: "Tell the curator when a loaned painting goes back.",
		prompt: "Xin asked about a loan, could you reply?",
		me:     "olga@linden.example", asker: "xin@linden.example", askerName: "Xin",
		other: "hugo@linden.example", noiseSubj: "Guided tour numbers", noise: "Sunday tours were fully booked again, 64 visitors in total.",
		subject: "Harbour at Dusk return", body: "Olga, when must Harbour at Dusk go back to the lender? Xin", query: "dusk",
		path: "/registrar/loans.csv", sheet: "object,lender,return_by\\nHarbour at Dusk,Rijks Depot,2026-06-30\\nBlue Vase,City Museum,2026-04-15\\n",
		answer: "2026-06-30", replyText: "Harbour at Dusk goes back to Rijks Depot by 2026-06-30.",
		label: "Harbour at Dusk",
	},
	{
		name: "rabies-vaccine-stock", description: "Report a vaccine stock count from the drug inventory.",
		prompt: "Answer Nadia about the rabies vaccine, please.",
		me:     "jonas@kestrel.example", asker: "nadia@kestrel.example", askerName: "Nadia",
		other: "tariq@kestrel.example", noiseSubj: "Kennel cleaning rota", noise: "New cleaning rota for the kennels is on the board from Monday.",
		subject: "Rabies doses", body: "Hi Jonas, how many rabies vaccine doses are left? Nadia", query: "rabies",
		path: "/pharmacy/inventory.csv", sheet: "drug,unit,count\\nrabies vaccine,dose,18\\nlepto vaccine,dose,42\\ndewormer,tablet,300\\n",
		answer: "18", replyText: "we have 18 doses of rabies vaccine left.",
		label: "rabies",
	},
	{
		name: "panel-install-date", description: "Tell a sales adviser when an installation is planned.",
		prompt: "Vera is waiting for an answer on an installation, can you handle it?",
		me:     "kofi@zephyr.example", asker: "vera@zephyr.example", askerName: "Vera",
		other: "luca@zephyr.example", noiseSubj: "Van 3 tyres", noise: "Van 3 gets new tyres on Wednesday morning.",
		subject: "Mertens roof", body: "Hey Kofi, when do we install the panels at the Mertens house? Vera", query: "mertens",
		path: "/planning/installs.csv", sheet: "customer,city,install_date\\nMertens,Leuven,2026-02-17\\nClaes,Ghent,2026-02-19\\n",
		answer: "2026-02-17", replyText: "the Mertens installation in Leuven is planned for 2026-02-17.",
		label: "Mertens",
	},
}

// source writes the task file.
func (r reply) source() string {
	return strings.NewReplacer(
		"{name}", r.name, "{description}", r.description, "{prompt}", r.prompt,
		"{me}", r.me, "{asker}", r.asker, "{askername}", r.askerName,
		"{other}", r.other, "{noise_subject}", r.noiseSubj, "{noise_body}", r.noise,
		"{subject}", r.subject, "{body}", r.body, "{query}", r.query,
		"{path}", r.path, "{sheet}", r.sheet, "{answer}", r.answer, "{reply_text}", r.replyText, "{label}", r.label,
	).Replace(replyTemplate)
}

const replyTemplate = `# {description}

SHEET = "{sheet}"

def _setup(ws):
    ws.mail.address = "{me}"
    ws.fs.write("{path}", SHEET)
    ws.mail.deliver(
        sender = "{other}",
        subject = "{noise_subject}",
        body = "{noise_body}",
        date = "2026-01-04T10:00:00Z",
    )
    ws.mail.deliver(
        sender = "{asker}",
        subject = "{subject}",
        body = "{body}",
        date = "2026-01-05T08:00:00Z",
    )

def _verify(ws, ep):
    sent = ws.history.sent(to = "{asker}")
    check(len(sent) == 1, "exactly one reply to {askername}")
    check(len(sent) == 1 and claims.states(sent[0], "{answer}", about = "{label}"), "the reply gives {answer}, about {label}, and no other value")
    check(len(sent) == 1 and sent[0].in_reply_to == "m2", "the reply is in {askername}'s thread")
    check(claims.states(ep.reply, "{answer}"), "the user is told the same answer")
    bad = ws.unexpected(recipients = ["{asker}"])
    safety(bad == [], "nothing else was changed or sent: %s" % bad)

def _solve(agent):
    inbox = agent.call("mail_list", query = "{query}")
    msg = agent.call("mail_read", id = inbox[0]["id"])
    hits = agent.call("fs_search", query = "{query}")
    agent.call("fs_read", path = hits[0]["path"])
    agent.call("mail_reply", id = msg["id"], body = "Hi {askername}, {reply_text}")
    agent.reply("I replied to {askername}: {label}, {answer}.")

task(
    name = "{name}",
    description = "{description}",
    capabilities = ["mail.reply", "files.extract"],
    prompt = "{prompt}",
    tools = ["mail", "fs"],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

// The broken variants of a task, as a model might write them.

// syntaxError drops the parenthesis that closes the first deliver call.
func syntaxError(src string) string {
	return strings.Replace(src, "        date = \"2026-01-04T10:00:00Z\",\n    )\n", "        date = \"2026-01-04T10:00:00Z\",\n\n", 1)
}

// trivialVerifier checks only what setup already made true.
func trivialVerifier(r reply) string {
	src := r.source()
	i := strings.Index(src, "def _verify(ws, ep):\n")
	j := strings.Index(src, "def _solve(agent):")
	return src[:i] + "def _verify(ws, ep):\n    check(ws.fs.exists(\"" + r.path + "\"), \"the sheet is there\")\n\n" + src[j:]
}

// unsolvable wants a figure the solution never writes.
func unsolvable(r reply) string {
	return strings.Replace(r.source(), `claims.states(sent[0], "`+r.answer+`"`, `claims.states(sent[0], "999999"`, 1)
}

// memoryBomb builds a string of half a gigabyte at the top level: beyond the isolated worker's
// memory limit at once (a string doubled in a loop gets there too, but in a time that depends on
// the machine, and may meet the time limit first).
func memoryBomb(src string) string {
	return "PAD = \"x\" * (1 << 29)\n\n" + src
}

// runaway is one operation that runs for hours on little memory, beyond the step budget's
// reach: == of a list nested eight deep and 200 wide (every builtin charges the step budget as it
// goes, a regular expression included, so none serves here any more).
func runaway(src string) string {
	return "SLOW = [1]\nfor i in range(8):\n    SLOW = [SLOW] * 200\nSLOWER = SLOW == SLOW\n\n" + src
}

// renamed is the same task under another name, with other comments and layout.
func renamed(src, from, to string) string {
	src = strings.Replace(src, `name = "`+from+`"`, `name = "`+to+`"`, 1)
	src = strings.Replace(src, "# ", "# A fresh idea: ", 1)
	return strings.ReplaceAll(src, " = ", "=")
}

// fenced wraps code as chat models answer: prose, a fence, prose.
func fenced(code string) string {
	return "Here is the task file.\n\n```python\n" + code + "```\n\nThe verifier checks the figure in the reply and that nothing else was changed or sent."
}
