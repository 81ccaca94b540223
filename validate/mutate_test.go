package validate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tokens(s string, scan func(string) []tokSpan) []string {
	out := []string{}
	for _, sp := range scan(s) {
		out = append(out, s[sp.start:sp.end])
	}
	return out
}

func TestScanNumbers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		want []string
	}{
		{"the total is 200 EUR", []string{"200"}},
		{"14% on HAM-RTM, 12.5% before", []string{"14", "12.5"}},
		{"EUR 1,240.50 and 1.240,50 € and 1240", []string{"1,240.50", "1.240,50", "1240"}},
		// glued to letters, ids, paths, dates, times, years, codes: not numbers
		{"Q3 m4 T-104 HD-4410 2nd 5kg v2 /team1/a.md", []string{}},
		{"on 2026-01-05 at 09:30 in 2026", []string{}},
		{"PO #4411, IBAN NL91 ABNA 0417 1643 00", []string{"1643"}},
		{"a@b1.example p1@acme.example", []string{}},
		{"(3 pallets) -5 degrees, 7.", []string{"3", "5", "7"}},
		{"items 1,2,3 and 1.2.3", []string{}},
		{"left 'invoice_NX-0012_2026 (1).pdf' and scan 3.tif in /a b/7 x", []string{}},
		{"7. Next, 12.5%.", []string{"7", "12.5"}},
	} {
		assert.Equal(t, c.want, tokens(c.text, scanNumbers), c.text)
	}
}

func TestBumpNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"14": "15", "12.5": "13.5", "12,5": "13,5", "1,240.00": "1,241.00", "1.240,00": "1.241,00",
		"999": "1000", "9,999.99": "10,000.99", "0.5": "1.5", "19": "20",
	} {
		got, ok := bumpNumber(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
}

func TestDatesTimesWeekdays(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"2026-01-05"}, tokens("valid from 2026-01-05.", scanDates))
	assert.Equal(t, []string{}, tokens("at 2026-01-05T09:00:00Z", scanDates), "a timestamp is not a date")
	assert.Equal(t, []string{}, tokens("invoice 2025-01-1189", scanDates))
	d, _ := shiftDate("2026-01-31")
	assert.Equal(t, "2026-02-01", d)
	d, _ = shiftDate("2028-02-28")
	assert.Equal(t, "2028-02-29", d)

	assert.Equal(t, []string{"09:30", "14:00:00", "9:15"}, tokens("from 09:30 to 14:00:00, or 9:15.", scanTimes))
	assert.Equal(t, []string{}, tokens("2026-01-05T09:00:00Z 25:00 12:75 1:1", scanTimes))
	for in, want := range map[string]string{"09:30": "10:30", "9:30": "10:30", "23:15": "00:15", "14:00:00": "15:00:00", "1:05": "2:05"} {
		got, _ := shiftTime(in)
		assert.Equal(t, want, got, in)
	}

	assert.Equal(t, []string{"Friday", "monday"}, tokens("by Friday, not monday; Fridays", scanWeekdays))
	assert.Equal(t, []string{}, tokens("on Tuesday 6 January, Friday, 9 Jan, Monday 2026-01-05, Sunday the 4th, Monday January 5, Tuesday (17 February)", scanWeekdays), "the date says the day")
	for in, want := range map[string]string{"Friday": "Saturday", "sunday": "monday", "MONDAY": "TUESDAY"} {
		got, _ := nextWeekday(in)
		assert.Equal(t, want, got, in)
	}

	assert.Equal(t, "2026-01-20T10:00:00Z", shiftTimestamps("2026-01-20T09:00:00Z", time.Hour))
	assert.Equal(t, "2026-01-21T09:00:00+01:00 and 2026-01-21T10:30", shiftTimestamps("2026-01-20T09:00:00+01:00 and 2026-01-20T10:30", 24*time.Hour))
}

func TestTokenEdits(t *testing.T) {
	t.Parallel()
	texts := []string{"Total 200 EUR on 2026-01-05 at 09:00; again: total 200 EUR.", "Ref T-200, 300 units, Friday"}
	es := tokenEdits(texts, 2)
	var got []string
	for _, e := range es {
		got = append(got, e.kind+":"+e.old+"→"+e.new)
	}
	// the first of each kind, then the second of each
	assert.Equal(t, []string{"date:2026-01-05→2026-01-06", "time:09:00→10:00", "number:200→201", "weekday:Friday→Saturday", "number:300→301"}, got)
	// every standalone occurrence changes, not the one inside an id
	assert.Equal(t, "Total 201 EUR on 2026-01-05 at 09:00; again: total 201 EUR.", es[2].apply(texts[0]))
	assert.Equal(t, "Ref T-200, 300 units, Friday", es[2].apply(texts[1]))
}

func TestNegations(t *testing.T) {
	t.Parallel()
	neg := func(s string, max int) []string {
		var out []string
		for _, e := range negations(s, max) {
			out = append(out, e.apply(s))
		}
		return out
	}
	// polarity words first, then negations removed, then added; one statement at a time
	assert.Equal(t, []string{"The request is rejected and it is final."}, neg("The request is approved and it is final.", 1))
	assert.Equal(t, []string{"The request is rejected and it is final.", "The request is not approved and it is final."}, neg("The request is approved and it is final.", 2))
	assert.Equal(t, []string{"We can deliver on Friday."}, neg("We cannot deliver on Friday.", 2))
	assert.Equal(t, []string{"It is 14%."}, neg("It is not 14%.", 2), "a negation is removed even next to a number")
	// no "not" added to a sentence with a number: the number itself is changed instead
	assert.Empty(t, neg("Your badge number is 4471.", 2))
	assert.Equal(t, []string{"Total: 200. The invoice is not paid."}, neg("Total: 200. The invoice is paid.", 2)[1:])
	assert.Equal(t, []string{"We will not send it.", "We will send it."}[:1], neg("We will send it.", 2))
	assert.Equal(t, []string{"No, it fits."}, neg("Yes, it fits.", 1))
	assert.Equal(t, []string{"The room is unavailable."}, neg("The room is available.", 1))
	assert.Empty(t, neg("Thanks, see attached.", 2))
	// questions state nothing
	assert.Empty(t, neg("Could you let us know when we can expect payment?", 2))
	assert.Equal(t, []string{"Can we meet? It is not booked."}, neg("Can we meet? It is booked.", 2))
	// "isn't" is not read as "is"
	assert.Equal(t, []string{"It is late."}, neg("It isn't late.", 1))
}

func TestRewriteProse(t *testing.T) {
	t.Parallel()
	s := "Hi Kim, the total is EUR 1240.50. Paid on 2026-01-05.\nSam"
	assert.Equal(t, "Hi Kim, the total is EUR 1,240.50. Paid on 2026-01-05.\nSam", rewriteProse(s, rewriteThousands))
	assert.Equal(t, "Hi Kim, the total is EUR 1240.50.\n\nPaid on 2026-01-05.\n\nSam", rewriteProse(s, rewriteBreaks))
	assert.Equal(t, "Hello,\n\n"+s+"\n\nBest regards", rewriteProse(s, rewriteGreeting))
	assert.Equal(t, "Hello,\n\nHi Kim, the total is EUR 1,240.50.\n\nPaid on 2026-01-05.\n\nSam\n\nBest regards", rewriteProse(s))

	for in, want := range map[string]string{
		"EUR 1240.50":            "EUR 1,240.50",
		"1240,50 €":              "1.240,50 €",
		"1240.00":                "1,240.00", // two decimals: an amount
		"12480 pallets":          "12480 pallets",
		"invoice 4411":           "invoice 4411",
		"in 2026, EUR 2026":      "in 2026, EUR 2026", // a year, even next to a currency
		"$15000 and 999 EUR":     "$15,000 and 999 EUR",
		"1240 euros, SH-7731.00": "1,240 euros, SH-7731.00",
	} {
		assert.Equal(t, want, addThousands(in), in)
	}
	// no break inside "Mr. Smith" or "approx. 5"
	assert.Equal(t, "Mr. Smith has approx. 5 left.", addBreaks("Mr. Smith has approx. 5 left."))
}

func TestLooksStructured(t *testing.T) {
	t.Parallel()
	assert.True(t, looksStructured("a,b\n1,2\n"))
	assert.True(t, looksStructured(`{"a": 1}`))
	assert.True(t, looksStructured("x\ty\n1\t2"))
	assert.False(t, looksStructured("Hi Kim,\n\nthe total is 200, as agreed.\nSam"))
	assert.False(t, looksStructured("One line, with a comma."))
}

func TestSwapKind(t *testing.T) {
	t.Parallel()
	base := workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 1)
	require.NoError(t, base.Files().Write("/reports/q3.csv", "a\n"))
	for s, want := range map[string]string{
		"dana@acme.example": "address", "/reports/q3.csv": "path:.csv", "/reports": "path:/", "/archive/": "path:/",
		"T-104": "id:T-#", "m4": "id:m#", "HD-4410": "id:HD-#", "REQ-2026-014": "id:REQ-#-#",
		"urgent": "", "2026-01-05": "", "Hello there": "", "Q3 report": "",
	} {
		_, shape := swapKind(s, base)
		assert.Equal(t, want, shape, s)
	}
}

func TestSetArg(t *testing.T) {
	t.Parallel()
	v, err := jsonv.DecodeString(`{"to":["a@x.example","b@x.example"],"meta":{"n":1},"body":"hi"}`)
	require.NoError(t, err)
	args := v.(*jsonv.Object)
	got := setArg(args, []any{"to", 1}, "c@x.example", false)
	assert.Equal(t, `{"to":["a@x.example","c@x.example"],"meta":{"n":1},"body":"hi"}`, jsonv.MustEncode(got))
	got = setArg(args, []any{"to", 0}, nil, true)
	assert.Equal(t, `{"to":["b@x.example"],"meta":{"n":1},"body":"hi"}`, jsonv.MustEncode(got))
	got = setArg(args, []any{"meta", "n"}, int64(2), false)
	assert.Equal(t, `{"to":["a@x.example","b@x.example"],"meta":{"n":2},"body":"hi"}`, jsonv.MustEncode(got))
	assert.Equal(t, `{"to":["a@x.example","b@x.example"],"meta":{"n":1},"body":"hi"}`, jsonv.MustEncode(args), "the original is left as it was")
}

// honestCodes are the codes of the checks in mutate*.go, and honestPrefixes the file names of
// their precision testdata (other checks keep theirs in the same folders).
var (
	honestCodes    = []string{"blind-to-content", "blind-to-side-effect", "brittle-verifier", "blind-to-change", "blind-to-claim", "blind-to-reply"}
	honestPrefixes = []string{"content_", "side_", "brittle_", "change_", "claim_", "reply_", "fair_"}
)

// TestHonestTestdata validates testdata/honest and checks the files of the four checks here: each
// weak file's task is flagged with the code its header names and with none of the other three,
// at least one of its hacks passes; each strong file's task is ok, and every hack fails. Every
// task spends at most maxMutationRuns mutation runs, and a second validation says the same.
func TestHonestTestdata(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "honest")
	c := dsl.NewCorpus(os.DirFS(dir), ".", "testdata/honest")
	all, err := c.TaskFiles()
	require.NoError(t, err)
	var files []string
	for _, f := range all {
		for _, p := range honestPrefixes {
			if strings.HasPrefix(filepath.Base(f), p) {
				files = append(files, f)
			}
		}
	}
	rep, err := Corpus(context.Background(), c, files, Options{Jobs: 2})
	require.NoError(t, err)
	rep2, err := Corpus(context.Background(), c, files, Options{Jobs: 1})
	require.NoError(t, err)

	weak, strong := map[string]int{}, 0
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		header, _, _ := bytes.Cut(src, []byte("\n"))
		code, isWeak := strings.CutPrefix(strings.TrimSpace(string(header)), "# weak: ")
		require.True(t, isWeak || strings.TrimSpace(string(header)) == "# strong", "%s: the first line is # weak: CODE or # strong", f)
		if isWeak {
			require.Contains(t, honestCodes, code, f)
			weak[code]++
		} else {
			strong++
		}
		var main *TaskReport
		var hacks []*TaskReport
		for _, tr := range rep.Tasks {
			if tr.File != c.DisplayPath(f) {
				continue
			}
			require.NotEmpty(t, tr.Task, "%s does not load: %v", f, tr.Diagnostics)
			if strings.Contains(tr.Task, "--hack-") {
				hacks = append(hacks, tr)
			} else {
				require.Nil(t, main, "%s declares two real tasks", f)
				main = tr
			}
		}
		require.NotNil(t, main, f)
		require.NotEmpty(t, hacks, "%s has no hack", f)
		codes := map[string]bool{}
		for _, d := range main.Diagnostics {
			codes[d.Code] = true
		}
		if isWeak {
			assert.True(t, codes[code], "%s: %s is not flagged with %s: %s", f, main.Task, code, diagLines(main))
			for _, other := range honestCodes {
				assert.False(t, other != code && codes[other], "%s: %s has a second weakness, %s: %s", f, main.Task, other, diagLines(main))
			}
			passes := 0
			for _, h := range hacks {
				if h.Oracle != nil && h.Oracle.Passed {
					passes++
				}
			}
			assert.NotZero(t, passes, "%s: no hack passes", f)
		} else {
			assert.Equal(t, "ok", main.Status, "%s: %s: %s", f, main.Task, diagLines(main))
			for _, h := range hacks {
				assert.True(t, h.Oracle == nil || !h.Oracle.Passed, "%s: hack %s passes", f, h.Task)
			}
		}
	}
	for _, code := range honestCodes {
		assert.GreaterOrEqual(t, weak[code], 2, "weak files for %s", code)
	}
	assert.GreaterOrEqual(t, strong, 8, "strong files")

	require.Equal(t, len(rep.Tasks), len(rep2.Tasks))
	for i := range rep.Tasks {
		assert.Equal(t, rep.Tasks[i].Diagnostics, rep2.Tasks[i].Diagnostics, "validation is deterministic: %s", rep.Tasks[i].Task)
	}
}

func diagLines(tr *TaskReport) string {
	var b strings.Builder
	for _, d := range tr.Diagnostics {
		b.WriteString("\n  " + d.String())
	}
	return b.String()
}

// TestMutationBudget runs the four checks on every task of testdata/honest and counts the episodes
// they run: never more than maxMutationRuns.
func TestMutationBudget(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "honest")
	c := dsl.NewCorpus(os.DirFS(dir), ".", "testdata/honest")
	files, err := c.TaskFiles()
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		lf := c.LoadFile(context.Background(), f)
		for _, task := range lf.Tasks {
			o := oracleFor(t, task)
			if o == nil {
				continue
			}
			runs := 0
			o.note = func(*episode.Result) { runs++ }
			v := &taskCheck{ctx: context.Background(), t: task, opts: Options{Limits: dsl.DefaultLimits}, rep: &TaskReport{}}
			v.checkContent(o)
			v.checkSideEffects(o)
			v.checkBrittle(o)
			v.checkClaims(o)
			v.checkReply(o)
			v.checkStateAttacks(o)
			v.checkFair(o)
			v.checkChange(o)
			assert.LessOrEqual(t, runs, maxMutationRuns, task.Name)
			checked++
		}
	}
	assert.Greater(t, checked, 10)
	assert.Equal(t, 53, maxMutationRuns)
}

// oracleFor prepares a task and runs its oracle as validate.go does (nil when it does not pass).
func oracleFor(t *testing.T, task *dsl.Task) *oracleRun {
	p, d := episode.Prepare(context.Background(), task, episode.Options{})
	if d != nil {
		return nil
	}
	res := p.Run(context.Background(), episode.Oracle{}, episode.RunOptions{})
	if res.Err != nil || !res.Passed {
		return nil
	}
	o := &oracleRun{p: p, res: res, note: func(*episode.Result) {}}
	for _, tr := range res.Turns {
		o.replies = append(o.replies, tr.Reply)
		o.calls = append(o.calls, nil)
	}
	for _, c := range res.Calls {
		if c.Succeeded() {
			o.calls[c.Turn] = append(o.calls[c.Turn], episode.ScriptedCall{Name: c.Name, Args: c.Args})
		}
	}
	return o
}

// TestSeenTokens checks what blind-to-content swaps: values of the same shape seen before the
// call, the user's own address never.
func TestSeenTokens(t *testing.T) {
	t.Parallel()
	src := `
def _setup(ws):
    ws.mail.address = "sam@acme.example"
    ws.mail.deliver(sender = "dana@acme.example", subject = "Tickets", body = "See T-101 and T-102 in /ops/list.md, cc rik@other.example")
    ws.fs.write("/ops/list.md", "x")
    ws.fs.write("/ops/old.md", "y")

def _verify(ws, ep):
    check(len(ws.mail.messages(folder = "sent")) == 1, "sent")

def _solve(agent):
    m = agent.call("mail_list")
    agent.call("mail_read", id = m[0]["id"])
    agent.call("fs_list", path = "/ops")
    agent.call("mail_send", to = "dana@acme.example", subject = "T-101", body = "done")
    agent.reply("ok")

task(name = "seen", prompt = "Handle it.", tools = ["mail", "fs"], setup = _setup, verify = _verify, solution = _solve)
`
	c := dsl.NewCorpus(fstest.MapFS{"seen.star": &fstest.MapFile{Data: []byte(src)}}, ".", "x")
	lf := c.LoadFile(context.Background(), "seen.star")
	require.Empty(t, lf.Diags)
	o := oracleFor(t, lf.Tasks[0])
	require.NotNil(t, o)
	s := newSeenTokens(o)
	var got []string
	for _, tk := range s.toks {
		got = append(got, tk.kind+":"+tk.value)
	}
	assert.Subset(t, got, []string{"id:m1", "address:dana@acme.example", "id:T-101", "id:T-102", "path:/ops/list.md", "address:rik@other.example", "path:/ops/old.md"})
	send := len(o.res.Calls) - 1
	repl, ok := s.swapFor(send, swapAddress, swapAddress, "dana@acme.example", []string{"sam@acme.example"}, nil)
	assert.True(t, ok)
	assert.Equal(t, "rik@other.example", repl)
	repl, _ = s.swapFor(send, swapID, "id:T-#", "T-101", nil, nil)
	assert.Equal(t, "T-102", repl)
	_, ok = s.swapFor(send, swapID, "id:T-#", "T-101", nil, func(a, b string) bool { return b == "T-102" })
	assert.False(t, ok, "an id as good as the one used (a message of the same thread and sender) is no swap")
	repl, _ = s.swapFor(send, swapPath, "path:.md", "/ops/list.md", nil, nil)
	assert.Equal(t, "/ops/old.md", repl)
	_, ok = s.swapFor(1, swapPath, "path:.md", "/ops/list.md", nil, nil)
	assert.False(t, ok, "the listing comes later")
}
