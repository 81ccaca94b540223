package validate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHiddenInfoTestdata validates testdata/honest/{weak,strong}/hidden_*.star: each weak task is
// flagged hidden-info at the value its header names, each strong one validates ok.
func TestHiddenInfoTestdata(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "honest")
	c := dsl.NewCorpus(os.DirFS(dir), ".", "testdata/honest")
	want := map[string]string{ // file -> the value the diagnostic names
		"weak/hidden_address_constant.star": `"to"[0] = "greta.vogel@verdant.example" (a mail address)`,
		"weak/hidden_record_id.star":        `"id" = "T-1042" (the id of record tickets/T-1042)`,
		"weak/hidden_new_path.star":         `"path" = "/reports/lumen_digest.md" (the path of a new file or folder)`,
		"weak/hidden_new_path_rule.star":    `"path" = "/reports/kaasmakers-Q4.md" (the path of a new file or folder)`,
	}
	var files []string
	for _, kind := range []string{"weak", "strong"} {
		paths, err := filepath.Glob(filepath.Join(dir, kind, "hidden_*.star"))
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(paths), 2, kind)
		for _, p := range paths {
			files = append(files, kind+"/"+filepath.Base(p))
		}
	}
	for rel := range want {
		assert.Contains(t, files, rel)
	}
	rep, err := Corpus(context.Background(), c, files, Options{Jobs: 2})
	require.NoError(t, err)
	for _, rel := range files {
		var tr *TaskReport
		for _, r := range rep.Tasks {
			if r.File == c.DisplayPath(rel) && !strings.Contains(r.Task, "--hack-") {
				tr = r
			}
		}
		require.NotNil(t, tr, rel)
		var hidden []dsl.Diagnostic
		for _, d := range tr.Diagnostics {
			if d.Code == "hidden-info" {
				hidden = append(hidden, d)
			}
		}
		if strings.HasPrefix(rel, "weak/") {
			require.Len(t, hidden, 1, "%s: %v", rel, tr.Diagnostics)
			d := hidden[0]
			assert.Equal(t, dsl.Error, d.Severity)
			assert.Contains(t, d.Message, "turn 0: the reference's call ", rel)
			if w, ok := want[rel]; ok {
				assert.Contains(t, d.Message, "passes argument "+w, rel)
			}
			assert.Contains(t, d.Message, "make it discoverable through a tool (a file, a directory record, a mail)", rel)
			if strings.Contains(d.Message, "(the path of a new file or folder)") {
				assert.True(t, strings.HasSuffix(d.Message, "; "+newPathAdvice), "%s: the advice says what the check accepts: %s", rel, d.Message)
			}
			assert.NotZero(t, d.Line, "%s: the diagnostic points at the call", rel)
		} else {
			assert.Equal(t, "ok", tr.Status, "%s: %v", rel, tr.Diagnostics)
			assert.Empty(t, tr.Diagnostics, rel)
		}
	}
}

// oracleOf runs the oracle of the one task in src.
func oracleOf(t *testing.T, src string) (*episode.Prepared, *episode.Result) {
	t.Helper()
	ctx := context.Background()
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(src)}}, ".", "t")
	f := c.LoadFile(ctx, "t.star")
	require.Empty(t, f.Diags)
	require.Len(t, f.Tasks, 1)
	p, d := episode.Prepare(ctx, f.Tasks[0], episode.Options{})
	require.Nil(t, d)
	res := p.Run(ctx, episode.Oracle{}, episode.RunOptions{})
	require.Nil(t, res.Err)
	require.True(t, res.Passed)
	return p, res
}

// hidden runs the oracle of the one task in src and returns the check's findings as
// `TOOL ARGUMENT = VALUE` lines.
func hidden(t *testing.T, src string) []string {
	t.Helper()
	p, res := oracleOf(t, src)
	var out []string
	for _, f := range newHiddenInfo(p, res).findings() {
		require.False(t, f.call.Fault)
		out = append(out, f.call.Name+" "+f.where+" = "+f.value)
	}
	return out
}

// mailTask is a task whose setup and solution bodies are given (indented by four spaces).
func mailTask(tools, prompt, setup, solve string) string {
	return `
def _setup(ws):
    ws.mail.address = "iris.bakker@verdant.example"
` + setup + `
def _solve(agent):
` + solve + `
    agent.reply("Done.")

task(name = "t", prompt = ` + prompt + `, tools = ` + tools + `, setup = _setup, solution = _solve,
     verify = lambda ws, ep: check(True, "ok"))
`
}

func TestHiddenInfoAddresses(t *testing.T) {
	t.Parallel()
	deliver := `    ws.mail.deliver(sender = "status@carrier.example", subject = "Status", body = "Two delays.", date = "2026-01-05T08:00:00Z")
`
	send := func(to string) string {
		return `    agent.call("mail_send", to = ["` + to + `"], subject = "Delays", body = "Two delays today.")`
	}
	// only in the reference: found; in the prompt, in any case: fair
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`},
		hidden(t, mailTask(`["mail"]`, `"Tell Greta about the delays."`, deliver, send("greta.vogel@verdant.example"))))
	assert.Empty(t, hidden(t, mailTask(`["mail"]`, `"Tell Greta (Greta.Vogel@Verdant.example) about the delays."`, deliver, send("greta.vogel@verdant.example"))))
	// a longer address does not show a shorter one
	assert.NotEmpty(t, hidden(t, mailTask(`["mail"]`, `"Tell margreta.vogel@verdant.example.org about the delays."`, deliver, send("greta.vogel@verdant.example"))))
	// seen in the result of an earlier call
	readFirst := `    agent.call("mail_read", id = "m1")
` + send("status@carrier.example")
	assert.Empty(t, hidden(t, mailTask(`["mail"]`, `"Answer the carrier."`, deliver, readFirst)))
	// in a mail of the workspace the tools reach, though the reference did not read it
	withDir := deliver + `    ws.mail.deliver(sender = "ava.jansen@verdant.example", subject = "Contacts", body = "Customer service: greta.vogel@verdant.example", date = "2026-01-04T08:00:00Z")
`
	assert.Empty(t, hidden(t, mailTask(`["mail"]`, `"Tell Greta about the delays."`, withDir, send("greta.vogel@verdant.example"))))
	// ... but not when no tool can read mail
	assert.NotEmpty(t, hidden(t, mailTask(`["mail_send"]`, `"Tell Greta about the delays."`, withDir, send("greta.vogel@verdant.example"))))
	// the company's pattern: first.last@domain once the full name is known
	assert.Empty(t, hidden(t, mailTask(`["mail"]`, `"Tell Greta Vogel about the delays."`, deliver, send("greta.vogel@verdant.example"))))
	assert.NotEmpty(t, hidden(t, mailTask(`["mail"]`, `"Tell Greta Vogel about the delays."`, deliver, send("gvogel@verdant.example"))))
	// "Name <address>" and lists in one string are addresses too
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`},
		hidden(t, mailTask(`["mail"]`, `"Tell Greta about the delays."`, deliver, send("Greta <greta.vogel@verdant.example>"))))
	// one finding per value, at its first use
	twice := send("greta.vogel@verdant.example") + "\n" + send("greta.vogel@verdant.example")
	assert.Len(t, hidden(t, mailTask(`["mail"]`, `"Tell Greta about the delays."`, deliver, twice)), 1)
	// a faulted attempt is not reported: its retry is
	faulty := strings.Replace(mailTask(`["mail"]`, `"Tell Greta about the delays."`, deliver, send("greta.vogel@verdant.example")),
		"verify = ", `faults = {"rate": 0, "nth": {"mail_send": [1]}}, verify = `, 1)
	_, res := oracleOf(t, faulty)
	require.Len(t, res.Calls, 2)
	require.True(t, res.Calls[0].Fault)
	assert.Len(t, hidden(t, faulty), 1)
}

func TestHiddenInfoTurns(t *testing.T) {
	t.Parallel()
	src := `
def _setup(ws):
    ws.mail.address = "iris.bakker@verdant.example"

def _solve1(agent):
    agent.call("mail_send", to = ["greta.vogel@verdant.example"], subject = "Hello", body = "Hi.")
    agent.reply("Done.")

def _solve2(agent):
    agent.call("mail_send", to = ["greta.vogel@verdant.example", "ava.jansen@verdant.example"], subject = "Again", body = "Hi.")
    agent.reply("Done.")

task(name = "t", tools = ["mail_send"], setup = _setup, verify = lambda ws, ep: check(True, "ok"), turns = [
    turn(user = "Say hello to Greta.", solution = _solve1),
    turn(user = "Greta is greta.vogel@verdant.example, and Ava is ava.jansen@verdant.example: write to both.", solution = _solve2),
])
`
	// the address that turn 2 gives is hidden in turn 1, not in turn 2
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`}, hidden(t, src))
}

// A fact a simulated user holds is unseen until the agent asks for it: a reference that asks
// first may use it, one that uses it before asking may not. (The agent's own question does not
// count as seen: it cannot launder a value.)
func TestHiddenInfoSimulatedUser(t *testing.T) {
	t.Parallel()
	src := `
def _setup(ws):
    ws.mail.address = "iris.bakker@verdant.example"

def _user(said, round):
    if "address" in said.lower():
        return "It is greta.vogel@verdant.example."
    return None

def _solve(agent):
    SEND_FIRST
    answer = agent.ask("What is Greta's mail address?")
    SEND_AFTER
    agent.reply("Done.")

task(name = "t", tools = ["mail_send"], setup = _setup, verify = lambda ws, ep: check(True, "ok"), turns = [
    turn(user = simulated_user(opening = "Say hello to Greta.", persona = "Iris, busy", goal = "greet Greta",
        facts = {"Greta's address": "greta.vogel@verdant.example"}, stand_in = _user), solution = _solve),
])
`
	send := `agent.call("mail_send", to = ["greta.vogel@verdant.example"], subject = "Hello", body = "Hi.")`
	after := strings.NewReplacer("SEND_FIRST", "pass", "SEND_AFTER", send).Replace(src)
	assert.Empty(t, hidden(t, after), "asked, then used")
	before := strings.NewReplacer("SEND_FIRST", send, "SEND_AFTER", "pass").Replace(src)
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`}, hidden(t, before), "used before it was asked for")
	laundered := strings.NewReplacer("SEND_FIRST", "pass", "SEND_AFTER", send, "return \"It is greta.vogel@verdant.example.\"", "return \"Yes.\"",
		"What is Greta's mail address?", "Is Greta's address greta.vogel@verdant.example?").Replace(src)
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`}, hidden(t, laundered), "the agent's own question")
}

func TestHiddenInfoIDs(t *testing.T) {
	t.Parallel()
	setup := `    for i in range(1, 43):
        ws.mail.deliver(sender = "x%d@carrier.example" % i, subject = "Note %d" % i, body = "Nothing.", date = "2026-01-04T08:00:00Z")
`
	reply := `    agent.call("mail_reply", id = "m4", body = "Thanks.")`
	// "m4" is not seen inside "m42"; without mail_list or mail_read no tool shows it
	assert.Equal(t, []string{`mail_reply argument "id" = m4`}, hidden(t, mailTask(`["mail_reply"]`, `"Answer m42, no, the message before it."`, setup, reply)))
	assert.Empty(t, hidden(t, mailTask(`["mail_reply"]`, `"Answer message m4."`, setup, reply)))
	// mail_read reads m1, m2, ... in turn: every message id is reached
	assert.Empty(t, hidden(t, mailTask(`["mail_read", "mail_reply"]`, `"Answer the fourth message."`, setup, reply)))

	records := `
def _setup(ws):
    for id in ["T-7", "T-8"]:
        ws.db.insert("tickets", {"id": id, "owner": "ops", "status": "open"})

def _list(ws):
    return [{"id": t["id"], "status": t["status"]} for t in ws.db.all("tickets")]

def _get(ws, id):
    return ws.db.get("tickets", id)

def _create(ws, id, status):
    ws.db.insert("tickets", {"id": id, "owner": "ops", "status": status})
    return {"ok": True}

def _close(ws, id):
    ws.db.update("tickets", id, status = "closed")
    return {"ok": True}

TOOLS = [
    tool(name = "ticket_list", description = "List tickets.", params = {}, impl = _list),
    tool(name = "ticket_get", description = "Read a ticket.", params = {"id": param("string")}, impl = _get),
    tool(name = "ticket_create", description = "Open a ticket.", params = {"id": param("string"), "status": param("string")}, impl = _create),
    tool(name = "ticket_close", description = "Close a ticket.", params = {"id": param("string")}, impl = _close),
]

def _solve(agent):
SOLVE
    agent.reply("Done.")

task(name = "t", prompt = "Close the old ticket.", tools = TOOLS, setup = _setup, solution = _solve, verify = lambda ws, ep: check(True, "ok"))
`
	solve := func(body string) string { return strings.Replace(records, "SOLVE", body, 1) }
	// no result shows T-7 unasked: hidden
	assert.Equal(t, []string{`ticket_get argument "id" = T-7`}, hidden(t, solve(`    agent.call("ticket_get", id = "T-7")
    agent.call("ticket_close", id = "T-7")`)))
	// a later read of the same turn on the same state shows it: the agent could have listed first
	assert.Empty(t, hidden(t, solve(`    agent.call("ticket_get", id = "T-7")
    agent.call("ticket_list")
    agent.call("ticket_close", id = "T-7")`)))
	// listed after the state changed: still shown by a result that was not asked for it
	assert.Empty(t, hidden(t, solve(`    agent.call("ticket_close", id = "T-7")
    agent.call("ticket_list")`)))
	// an id the agent chooses when it creates a record is its own, and known from then on
	assert.Empty(t, hidden(t, solve(`    agent.call("ticket_list")
    agent.call("ticket_create", id = "T-9", status = "open")
    agent.call("ticket_close", id = "T-9")`)))
}

func TestHiddenInfoRule3SameState(t *testing.T) {
	t.Parallel()
	src := `
def _setup(ws):
    ws.mail.address = "iris.bakker@verdant.example"

def _people(ws):
    return [{"name": "Greta", "email": "greta.vogel@verdant.example"}]

def _note(ws, text):
    ws.fs.write("/notes.md", text)
    return {"ok": True}

def _ping(ws, email):
    return {"pinged": True}

TOOLS = [
    tool(name = "people", description = "The team.", params = {}, impl = _people),
    tool(name = "note", description = "Write a note.", params = {"text": param("string")}, impl = _note),
    tool(name = "ping", description = "Ping someone.", params = {"email": param("string")}, impl = _ping),
]

def _solve(agent):
SOLVE
    agent.reply("Done.")

task(name = "t", prompt = "Ping Greta.", tools = TOOLS, setup = _setup, solution = _solve, verify = lambda ws, ep: check(True, "ok"))
`
	solve := func(body string) string { return strings.Replace(src, "SOLVE", body, 1) }
	assert.Empty(t, hidden(t, solve(`    agent.call("ping", email = "greta.vogel@verdant.example")
    agent.call("people")`)))
	assert.Equal(t, []string{`ping argument "email" = greta.vogel@verdant.example`}, hidden(t, solve(`    agent.call("ping", email = "greta.vogel@verdant.example")
    agent.call("note", text = "pinged")
    agent.call("people")`)))
}

func TestHiddenInfoPaths(t *testing.T) {
	t.Parallel()
	setup := `    ws.fs.write("/reports/README.md", "Summaries are saved as YYYY-MM-summary.md.")
    ws.fs.write("/data/sales.csv", "a,b\n")
`
	write := func(p string) string {
		return `    agent.call("fs_write", path = "` + p + `", content = "Total 2000.")`
	}
	// existing files are reached when fs_list or fs_search is a tool
	read := `    agent.call("fs_read", path = "/data/sales.csv")`
	assert.Empty(t, hidden(t, mailTask(`["fs"]`, `"Sum the sales."`, setup, read)))
	assert.Equal(t, []string{`fs_read argument "path" = /data/sales.csv`}, hidden(t, mailTask(`["fs_read"]`, `"Sum the sales."`, setup, read)))
	assert.Empty(t, hidden(t, mailTask(`["fs_read"]`, `"Sum the sales in data/sales.csv."`, setup, read)))
	// new files: the folder and the words of the name must be known
	assert.Empty(t, hidden(t, mailTask(`["fs"]`, `"Save the total as q3.md in /reports."`, setup, write("/reports/q3.md"))))
	assert.Empty(t, hidden(t, mailTask(`["fs"]`, `"Save the December 2025 summary as the README says."`, setup, write("/reports/2025-12-summary.md"))))
	assert.Equal(t, []string{`fs_write argument "path" = /reports/lumen.md`},
		hidden(t, mailTask(`["fs"]`, `"Save the total in /reports."`, setup, write("/reports/lumen.md"))))
	assert.Equal(t, []string{`fs_write argument "path" = /archive/q3.md`},
		hidden(t, mailTask(`["fs"]`, `"Save the total as q3.md."`, setup, write("/archive/q3.md"))))
	// paths nested in a task-defined tool's object argument
	nested := `
def _export(ws, report):
    ws.fs.write(report["file_path"], "x")
    return {"ok": True}

def _solve(agent):
    agent.call("export", report = {"title": "Q3", "file_path": "/out/zeta.md"})
    agent.reply("Done.")

task(name = "t", prompt = "Export the report.", tools = [tool(name = "export", description = "Export.", params = {"report": param("object")}, impl = _export)],
     solution = _solve, verify = lambda ws, ep: check(True, "ok"))
`
	assert.Equal(t, []string{`export argument "report"["file_path"] = /out/zeta.md`}, hidden(t, nested))
}

// text is seen text made of ss.
func text(ss ...string) []*seenText {
	s := &seenText{}
	for _, x := range ss {
		s.add(x)
	}
	return []*seenText{s}
}

// TestNamingRules: a new path is known when it follows a naming rule of seen text, with
// placeholders for digits of the right count and for seen words; the examples of newPathAdvice are
// such rules.
func TestNamingRules(t *testing.T) {
	t.Parallel()
	texts := func(rule string) []*seenText {
		return text("The reports folder: "+rule, "Clients: Kaasmakers, Tulpen Retail.")
	}
	known := func(rule, p string) bool { return pathKnown(texts(rule), p, nil, 0) }
	follows := func(rule, p string) bool { return ruleKnown(texts(rule), p, nil, 0) }
	// what the words alone do not give: a placeholder run into a literal, letters next to digits
	assert.False(t, pathKnown(text("The reports folder.", "Clients: Kaasmakers."), "/reports/q4-kaasmakers.md", nil, 0))
	assert.True(t, known("name them Q<quarter>-<client>.md.", "/reports/Q4-Kaasmakers.md"))
	assert.True(t, known("`report-v<n>.md`", "/reports/report-v3.md"))
	assert.True(t, known("<client>summary.md", "/reports/kaasmakerssummary.md"))
	assert.True(t, follows(`"report-YYYYMMDD.md"`, "/reports/report-20260105.md"))
	assert.True(t, follows("{client}_YYMM.csv", "/reports/tulpen-retail_2601.csv"), "a word placeholder takes seen words joined by - or _")
	// a placeholder takes only digits of its count, or seen words; YYYY, YY, MM and DD stand alone
	assert.False(t, follows(`"report-YYYYMMDD.md"`, "/reports/report-2026015.md"))
	assert.False(t, follows(`"report-YYYYMMDD.md"`, "/reports/report-abcdefgh.md"))
	assert.False(t, follows(`"reportYYYYMMDD.md"`, "/reports/report20260105.md"), "a placeholder is a run of letters of its own")
	assert.False(t, follows("summary.md", "/reports/su12ary.md"))
	assert.False(t, follows("Q<quarter>-<client>.md", "/reports/q4-lumen.md"))
	assert.False(t, known("Q<quarter>-<client>.md", "/reports/q4-lumen.md"))
	assert.False(t, known("Q<quarter>-<client>.md", "/reports/kaasmakers-q4.md"), "the literal parts hold")
	assert.False(t, known("report-v<n>.md", "/reports/report-v3.txt"), "the same extension")
	assert.False(t, known("report-v<n>", "/reports/report-v3"), "a rule has an extension")
	assert.False(t, known("report-v3.md", "/reports/report-v4.md"), "a token without a placeholder is no rule")
	// folders: the rule's segments match the path's last ones, the folder above is known as usual
	assert.True(t, follows("reports/<client>/YYYY-MM.md", "/reports/tulpen/2026-01.md"))
	assert.True(t, follows("/reports/<client>/YYYY-MM.md", "/reports/tulpen/2026-01.md"))
	assert.False(t, follows("/<client>/YYYY-MM.md", "/reports/tulpen/2026-01.md"), "a rule from the root holds all the path")
	assert.False(t, follows("<client>/YYYY-MM.md", "/archive/tulpen/2026-01.md"), "the folder above the rule is known")
	assert.True(t, ruleKnown(text("<client>/YYYY-MM.md", "tulpen"), "/archive/tulpen/2026-01.md", func(p string) bool { return p == "/archive" }, 0))
	// the advice's examples are rules the check accepts
	examples := regexp.MustCompile(`"([^"]+)"`).FindAllStringSubmatch(newPathAdvice, -1)
	require.Len(t, examples, 2)
	assert.True(t, follows(examples[0][1], "/reports/2025-12-summary.md"))
	assert.False(t, follows(examples[0][1], "/reports/2025-1-summary.md"))
	assert.True(t, follows(examples[1][1], "/reports/tulpen-retail-summary.md"))
	assert.True(t, follows(examples[1][1], "/reports/kaasmakers-summary.md"))
	assert.False(t, follows(examples[1][1], "/reports/lumen-summary.md"))
	// many rules: each is compiled only when the name holds its literal parts, and once
	var many strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&many, "see reports/notes.md, q<n>-r%d.md and <a>-<b>.md\n", i)
	}
	assert.False(t, pathKnown(text(many.String()), "/reports/q9-final.md", nil, 0))
	assert.True(t, pathKnown(text(many.String()), "/reports/q9-r123.md", nil, 0))
}

func TestTokenMatching(t *testing.T) {
	t.Parallel()
	assert.True(t, containsWord("see m4.", "m4"))
	assert.False(t, containsWord("see m42", "m4"))
	assert.False(t, containsWord("see am4", "m4"))
	assert.True(t, containsWord("ticket t-12 and t-1, done", "t-1"))
	assert.False(t, containsWord("ticket t-12", "t-1"))
	assert.True(t, containsWord("(#42)", "#42"))

	addr := func(text, a string) bool { return containsToken(text, a, addrLeft, wideRight) }
	assert.True(t, addr("greta <bo@x.example>", "bo@x.example"))
	assert.True(t, addr("write to bo@x.example.", "bo@x.example"))
	assert.False(t, addr("jbo@x.example", "bo@x.example"))
	assert.False(t, addr("j.bo@x.example", "bo@x.example"))
	assert.False(t, addr("bo@x.example.org", "bo@x.example"))
	assert.False(t, addr("bo@x.examples", "bo@x.example"))

	s := &seenText{}
	s.add("Mail Greta.Vogel@Verdant.Example about it")
	assert.True(t, s.has(kindAddress, "greta.vogel@verdant.example"))
	s.addJSON(mustDecode(t, `{"path": "/reports/2025/q3.md", "note": "ids m7 and m8"}`))
	assert.True(t, s.has(kindID, "M7"))
	assert.True(t, s.has(kindPath, "/reports/2025/q3.md"))
	assert.True(t, s.has(kindPath, "/reports/2025"))
	assert.False(t, s.has(kindPath, "/reports/2025/q3.md.bak"))
}

func TestPathKnown(t *testing.T) {
	t.Parallel()
	assert.True(t, pathKnown(text(), "/", nil, 0))
	assert.True(t, pathKnown(text("read /reports/q3.md"), "/reports/q3.md", nil, 0))
	assert.True(t, pathKnown(text("read reports/q3.md"), "/reports/q3.md", nil, 0))
	assert.True(t, pathKnown(text("save q3.md in the reports folder"), "/reports/q3.md", nil, 0))
	assert.True(t, pathKnown(text("name it YYYY-MM-summary.md under /reports"), "/reports/2025-12-summary.md", nil, 0))
	assert.True(t, pathKnown(text("q3.md"), "/reports/q3.md", func(p string) bool { return p == "/reports" }, 0))
	assert.True(t, pathKnown(text("put q3.md in a folder per year under /reports"), "/reports/2025/q3.md", nil, 0))
	assert.False(t, pathKnown(text("put q3.md under /reports"), "/reports/y2025/q3.md", nil, 0))
	assert.False(t, pathKnown(text("save it in /reports"), "/reports/q3.md", nil, 0))
	assert.False(t, pathKnown(text("save q3.md"), "/reports/q3.md", nil, 0))
	assert.False(t, pathKnown(text("read /reports/q3x.md"), "/reports/q3.md", nil, 0))
	// the words of a name count wherever they are: q3 and md are words of q3.md.bak
	assert.True(t, pathKnown(text("read /reports/q3.md.bak"), "/reports/q3.md", nil, 0))
}

func TestIdentifierShapes(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"a@x.example"}, addressesIn("a@x.example"))
	assert.Equal(t, []string{"bo@x.example"}, addressesIn("Bo Berg <bo@x.example>"))
	assert.Equal(t, []string{"a@x.example", "b@y.example"}, addressesIn("a@x.example, b@y.example"))
	assert.Equal(t, []string{"a@x.example", "b@y.example"}, addressesIn("a@x.example; B <b@y.example>"))
	assert.Nil(t, addressesIn("write to a@x.example today"))
	assert.Nil(t, addressesIn("a@x.example, later"))
	assert.Nil(t, addressesIn("@x.example"))

	for _, s := range []string{"T-1042", "m4", "e2", "tulpen", "INV-2026-004"} {
		assert.True(t, idLike(s), s)
	}
	for _, s := range []string{"2026-01-05", "2026-01-05T09:00:00Z", "12:30", "1200", "18,400.00", "-3"} {
		assert.False(t, idLike(s), s)
	}

	assert.True(t, pathParam("path", true))
	assert.True(t, pathParam("attachments", true))
	assert.False(t, pathParam("file", true))
	assert.True(t, pathParam("file", false))
	assert.True(t, pathParam("report_path", false))
	assert.True(t, pathParam("out_dir", false))
	assert.False(t, pathParam("body", false))
	assert.False(t, pathParam("profile", false))

	texts := func(ss ...string) []*seenText {
		s := &seenText{}
		for _, x := range ss {
			s.add(x)
		}
		return []*seenText{s}
	}
	known := texts("Greta Vogel", "You are iris.bakker@verdant.example.", "facilities@verdant.example")
	assert.True(t, inferable(known, "greta.vogel@verdant.example"))
	assert.False(t, inferable(known, "greta_vogel@verdant.example"), "another shape")
	assert.False(t, inferable(known, "greta.vogel@verdant.example.org"), "another domain")
	assert.False(t, inferable(texts("Greta", "iris.bakker@verdant.example"), "greta.vogel@verdant.example"), "surname unknown")
	assert.True(t, inferable(texts("the security desk", "facilities@verdant.example"), "security@verdant.example"))
}

func mustDecode(t *testing.T, s string) jsonv.Value {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	require.NoError(t, err)
	return v
}

func TestHiddenInfoLaterMail(t *testing.T) {
	t.Parallel()
	src := `
def _setup(ws):
    ws.mail.address = "iris.bakker@verdant.example"

def _before2(ws):
    ws.mail.deliver(sender = "greta.vogel@verdant.example", subject = "Re: Hello", body = "Thanks! Loop in karl@carrier.example please.")

def _solve1(agent):
    agent.call("mail_send", to = ["greta.vogel@verdant.example"], subject = "Hello", body = "Hi.")
    agent.reply("Done.")

def _solve2(agent):
    agent.call("mail_send", to = ["karl@carrier.example"], subject = "Hello", body = "Hi Karl.")
    agent.reply("Done.")

task(name = "t", tools = ["mail"], setup = _setup, verify = lambda ws, ep: check(True, "ok"), turns = [
    turn(user = "Say hello to Greta.", solution = _solve1),
    turn(user = "Greta answered: do what she asks.", advance = "1h", before = _before2, solution = _solve2),
])
`
	// Karl's address is in mail that turn 2's before delivered: reached in turn 2, though the
	// reference did not read it. Greta's answer does not make her address known in turn 1.
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`}, hidden(t, src))
	// without the advance, the mail is still dated at turn 2's start
	assert.Equal(t, []string{`mail_send argument "to"[0] = greta.vogel@verdant.example`}, hidden(t, strings.Replace(src, `advance = "1h", `, "", 1)))
}
