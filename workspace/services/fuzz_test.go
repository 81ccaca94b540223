package services_test

import (
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// fuzzArgsMax bounds the fuzzed arguments, so that one run of the fuzz target stays fast.
const fuzzArgsMax = 8 << 10

// fuzzWorkspace is a small workspace with something in every service: files, mail in the inbox
// (one with an attachment), what each service's probe adds (a file, a message, an event, a
// record, a contact, a chat channel with a message), and what a few tool calls add (an event, a
// sent mail, a contact, a chat post). It is frozen; each fuzz run works on forks of it.
func fuzzWorkspace(tb testing.TB, byName map[string]*tools.Tool) *workspace.State {
	st := workspace.New(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), 7)
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(st.Files().Write("/reports/q3.csv", "region,amount\nnorth,120\nsouth,80\n"))
	must(st.Files().Write("/notes/todo.md", "# To do\n- call Dana\n- file the Q3 report\n"))
	must(st.Mail().SetAddress("sam@acme.example"))
	_, err := st.Mail().Deliver(workspace.Delivery{Sender: "dana@acme.example", To: []string{"sam@acme.example"},
		Cc: []string{"lars@acme.example"}, Subject: "Q3 total?", Body: "Hi Sam, what was our Q3 total?"})
	must(err)
	_, err = st.Mail().Deliver(workspace.Delivery{Sender: "ops@vendor.example", To: []string{"sam@acme.example"},
		Subject: "Invoice", Body: "See attached.", Attachments: []workspace.Attachment{{Name: "invoice.csv", Content: "item,eur\nrack,900\n"}}})
	must(err)
	for _, s := range services.All {
		if s.Probe != nil {
			must(s.Probe(st))
		}
	}
	for _, c := range []struct{ tool, args string }{
		{"calendar_create", `{"title":"Q3 review","start":"2026-01-06T10:00:00Z","end":"2026-01-06T11:00:00Z","attendees":["dana@acme.example"],"location":"Room 2"}`},
		{"mail_send", `{"to":"dana@acme.example","subject":"Draft","body":"Numbers follow.","attachments":["/reports/q3.csv"]}`},
		{"contacts_add", `{"name":"Dana Berg","email":"dana@acme.example","team":"finance","company":"Acme","location":"Hamburg"}`},
		{"chat_post", `{"channel":"#probe","text":"hello @probe"}`},
	} {
		tl := byName[c.tool]
		if tl == nil {
			continue // the tool was renamed: the fuzz target still runs on the rest
		}
		args, err := jsonv.DecodeString(c.args)
		must(err)
		checked, err := tl.CheckArgs(args.(*jsonv.Object))
		must(err)
		_, err = tl.Run(st, checked)
		if err != nil {
			tb.Logf("seeding with %s: %v", c.tool, err)
		}
	}
	st.Freeze()
	return st
}

// Any bytes as the arguments of every built-in tool: decoded as JSON and, when they are an
// object, checked by CheckArgs and run by each tool in turn on a fork of a small workspace (a
// call that succeeds keeps its change, as in an episode). Nothing panics, a result is JSON, and
// the state still hashes and diffs. Errors are fine.
func FuzzToolArgs(f *testing.F) {
	all := services.Tools()
	byName := map[string]*tools.Tool{}
	for _, tl := range all {
		byName[tl.Name] = tl
	}
	base := fuzzWorkspace(f, byName)
	for _, s := range []string{
		`{}`,
		`null`,
		`[{"path":"/x"}]`,
		`{"path":"/reports/q3.csv"}`,
		`{"path":"reports/../notes/./todo.md","content":"- done\n"}`,
		`{"src":"/reports","dst":"/archive/"}`,
		`{"query":"q3","path":"/"}`,
		`{"folder":"inbox","unread_only":true,"query":"total","limit":1}`,
		`{"id":"m1","read":false,"labels":["finance","q3"]}`,
		`{"id":"m1","body":"The total is 200.","reply_all":true,"attachments":["/reports/q3.csv"]}`,
		`{"id":"m2","to":["lars@acme.example","x@y.example"],"cc":"dana@acme.example","body":"FYI"}`,
		`{"id":"m2","name":"invoice.csv","path":"/saved/invoice.csv"}`,
		`{"id":"m2","folder":"archive"}`,
		`{"to":"dana@acme.example","subject":"Re: Q3","body":"200","cc":[],"attachments":[]}`,
		`{"start":"2026-01-01T00:00:00Z","end":"2026-02-01T00:00:00Z"}`,
		`{"title":"1:1","start":"2026-01-07T09:00:00+01:00","end":"2026-01-07T09:30:00+01:00","attendees":[],"description":"x"}`,
		`{"id":"e1","title":"Moved","start":"2026-01-06T12:00:00Z","end":"2026-01-06T13:00:00Z"}`,
		`{"query":"dana","team":"finance","source":"personal","limit":5}`,
		`{"id":"c1","name":"Dana B.","phone":"+49 40 123","notes":"prefers chat"}`,
		`{"id":"m2"}`,
		`{"id":"e1"}`,
		`{"id":"c1"}`,
		`{"channel":"#probe","thread":"cm1","limit":10}`,
		`{"channel":"#probe","thread":"cm1","text":"thanks @probe"}`,
		`{"query":"hello","channel":"#probe","limit":3}`,
		`{"message_id":"cm2"}`,
		`{"message_id":"cm1","emoji":"+1","remove":false}`,
		`{"message_id":"cm2","text":"edited"}`,
		`{"limit":-1,"query":"","channel":"@probe"}`,
		`{"id":"m1","limit":1e308,"read":1,"labels":[null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzArgsMax {
			return
		}
		v, err := jsonv.Decode(b)
		if err != nil {
			return
		}
		args, _ := v.(*jsonv.Object)
		if args == nil && v != nil {
			return // not an object: never run (a nil object is an empty one)
		}
		st := base.Fork()
		for _, tl := range all {
			checked, err := tl.CheckArgs(args)
			if err != nil {
				continue
			}
			next := st.Fork()
			res, err := tl.Run(next, checked)
			if err != nil {
				continue
			}
			if _, err := jsonv.Encode(res); err != nil {
				t.Fatalf("%s %s: the result is not JSON: %v", tl.Name, b, err)
			}
			st = next
		}
		_ = st.Hash()
		_ = workspace.Diff(base, st)
	})
}
