package wsmod

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/budget"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services/chat"
	"github.com/coworkenv/coworkenv/workspace/services/contacts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

// charged runs src with ws over st and returns the steps the methods of ws charged.
func charged(t *testing.T, st *workspace.State, src string) uint64 {
	t.Helper()
	th := &starlark.Thread{Name: "test"}
	var n uint64
	budget.Install(th, func(_ *starlark.Thread, k uint64) error { n += k; return nil })
	_, err := starlark.ExecFile(th, "test.star", src, starlark.StringDict{"ws": New(st, Options{})})
	require.NoError(t, err)
	return n
}

// The methods of ws charge the calling script's budget for what they do: a step per entry
// stored, per KiB stored, per element returned and per entry looked at.
func TestMethodsChargeTheirWork(t *testing.T) {
	t.Parallel()
	st := workspace.New(start, 1)
	assert.Equal(t, uint64(2000), charged(t, st, `ws.db.insert_many("o", [{"n": i} for i in range(1000)])`),
		"a step per record stored and per id returned")
	assert.Equal(t, uint64(1+4+1), charged(t, st, `ws.db.insert_many("big", [{"text": "x" * 4096}])`), "and a step per KiB")
	assert.Equal(t, uint64(1000), charged(t, st, `ws.db.all("o")`), "a step per record returned")
	assert.Equal(t, uint64(1000+1), charged(t, st, `ws.db.find("o", n = 7)`), "a step per record looked at, and per record returned")
	assert.Equal(t, uint64(0), charged(t, st, `ws.db.count("o")`), "the size of a collection is known")
	assert.Equal(t, uint64(1000), charged(t, st, `ws.db.count("o", n = 7)`))
	assert.Equal(t, uint64(2*3), charged(t, st, `ws.db.insert_text("t", '[{"id": "a"}, {"id": "b"}, {"id": "c"}]')`))

	assert.Equal(t, uint64(20+2), charged(t, st, `ws.fs.write_many({"/d/%d.txt" % i: "x" for i in range(20)}); ws.fs.write_many({"/e/1.txt": "y" * 1024})`))
	assert.Equal(t, uint64(1+20+20), charged(t, st, `ws.fs.glob("/d/*.txt")`), "the files under /d looked at, and returned")
	assert.Equal(t, uint64(1+1), charged(t, st, `ws.fs.glob("/d/1.txt")`), "a path without a wildcard is looked up")

	assert.Equal(t, uint64(3+3), charged(t, st, `ws.mail.deliver_many([{"sender": "a@x", "subject": "s", "body": "b", "folder": f} for f in ["inbox", "inbox", "archive"]])`))
	assert.Equal(t, uint64(2+2), charged(t, st, `ws.mail.messages(folder = "inbox")`), "the folder's messages looked at, and returned")
	assert.Equal(t, uint64(3+0+1+1), charged(t, st, `ws.mail.messages(sender = "nobody@x", label = "x") + ws.mail.messages(folder = "archive")`))
}

// With the default limits, a setup seeds 100,000 records, 100,000 files and 100,000 messages from
// JSON texts (as a task reads them from a file it loads) within its step budget; listing all the
// records in a loop runs out of steps instead of running on.
func TestSeedingAtScaleFitsTheBudget(t *testing.T) {
	t.Parallel()
	const n = 100000
	var orders, files, msgs strings.Builder
	for i := range n {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&orders, `%s{"id": "O-%d", "customer": "C-%d", "status": "open", "total": %d.5}`, sep, i, i%977, i%300)
		fmt.Fprintf(&files, `%s"/data/%d/%d.txt": "file %d"`, sep, i%100, i, i)
		fmt.Fprintf(&msgs, `%s{"sender": "p%d@x.example", "subject": "s %d", "body": "b", "date": "2026-01-01T10:00:00Z"}`, sep, i%50, i)
	}
	run := func(src string) (*starlark.Thread, error) {
		th := dsl.NewThread("setup", dsl.DefaultLimits, nil)
		st := workspace.New(start, 1)
		_, err := starlark.ExecFileOptions(dsl.FileOptions, th, "setup.star", src, starlark.StringDict{
			"ws": New(st, Options{}), "json": dsl.Predeclared()["json"],
			"ORDERS": starlark.String("[" + orders.String() + "]"), "FILES": starlark.String("{" + files.String() + "}"),
			"MESSAGES": starlark.String("[" + msgs.String() + "]")})
		return th, err
	}
	th, err := run(`
ws.db.insert_text("orders", ORDERS)
ws.fs.write_many(json.decode(FILES))
ws.mail.deliver_many(json.decode(MESSAGES))
if ws.db.count("orders") != 100000 or len(ws.fs.walk("/data/7")) != 1000 or len(ws.mail.messages(sender = "p1@x.example")) != 2000:
    fail("not seeded")
`)
	require.NoError(t, err)
	assert.Less(t, th.Steps, dsl.DefaultLimits.Steps)
	assert.Greater(t, th.Steps, uint64(3*n), "every entry was charged")

	_, err = run(`
ws.db.insert_text("orders", ORDERS)
for i in range(100):
    ws.db.all("orders")
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too many steps")
}

// The methods of ws.chat and ws.contacts charge as the others do: a step per message or contact
// looked at (those of the index a call walks, not the whole service) and per element returned.
func TestChatAndContactsChargeTheirWork(t *testing.T) {
	t.Parallel()
	st := workspace.New(start, 1)
	var msgs []*chat.Message
	for i := range 25 {
		m := &chat.Message{Conv: []string{"#a", "#b"}[i%2], Sender: []string{"dana.berg", "lars.olsen"}[i%4/2], Text: fmt.Sprintf("m %d", i),
			TS: start.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)}
		if i >= 20 {
			m.Conv, m.Sender, m.Thread = "#a", "dana.berg", "cm1"
		}
		msgs = append(msgs, m)
	}
	_, err := chat.Seed(st, []*chat.Channel{{Name: "#a", Members: []string{"me", "dana.berg"}}, {Name: "#b", Members: []string{"lars.olsen"}}}, msgs)
	require.NoError(t, err)
	assert.Equal(t, uint64(25+25), charged(t, st, `ws.chat.messages()`), "every message looked at, and returned")
	assert.Equal(t, uint64(25), charged(t, st, `ws.chat.messages(contains = "zzz")`))
	assert.Equal(t, uint64(10+10), charged(t, st, `ws.chat.messages(channel = "#b")`), "the messages of the channel")
	assert.Equal(t, uint64(5+5), charged(t, st, `ws.chat.messages(thread = "cm21")`), "the replies of the thread")
	assert.Equal(t, uint64(1+10+10), charged(t, st, `ws.chat.messages(sender = "lars.olsen")`), "the sender's messages, and channels")
	assert.Equal(t, uint64(0), charged(t, st, `ws.chat.get("cm3")`))

	src := `ws.contacts.add_many([dict(name = "Greta Vogel", email = "greta.vogel@x.example", phone = "+32 3 555 0117"), dict(name = "Greta Hoffmann")] +
    [dict(name = "Person %d" % i, manager = "c1" if i < 4 else "", team = "Ops") for i in range(10)])`
	assert.Equal(t, uint64(4*12+12), charged(t, st, src), "a step per contact read, given its id, checked and stored, and per id returned")
	assert.Equal(t, uint64(4+1+5), charged(t, st, `ws.contacts.add_many([dict(name = "Long", notes = "x" * 5120)])`), "and per KiB")
	assert.Equal(t, uint64(13+13), charged(t, st, `ws.contacts.list()`))
	assert.Equal(t, uint64(13), charged(t, st, `ws.contacts.list(team = "nobody")`))
	assert.Equal(t, uint64(4+4), charged(t, st, `ws.contacts.list(manager = "C1")`), "the reports of c1")
	assert.Equal(t, uint64(1+1), charged(t, st, `ws.contacts.list(email = "GRETA.vogel@x.example")`))
	assert.Equal(t, uint64(2+2), charged(t, st, `ws.contacts.search("greta")`), "the contacts with a word that starts like greta")
	assert.Equal(t, uint64(13+1), charged(t, st, `ws.contacts.search("0117")`), "a number may be inside any phone number")
	assert.Equal(t, uint64(0), charged(t, st, `ws.contacts.search("zzzz")`), "no contact has a word like it")
	assert.Equal(t, uint64(0), charged(t, st, `ws.contacts.get("c1")`))
}

// A huge ws.contacts.add_many stops at the step budget while it checks the batch, not after it
// has stored it (it once ran for minutes in one process), and stores none of it.
func TestHugeAddManyRunsOutOfSteps(t *testing.T) {
	t.Parallel()
	st := workspace.New(start, 1)
	var n uint64
	th := &starlark.Thread{Name: "setup"}
	budget.Install(th, func(_ *starlark.Thread, k uint64) error {
		if n += k; n > 1000 {
			return fmt.Errorf("spent")
		}
		return nil
	})
	_, err := starlark.ExecFile(th, "setup.star", `ws.contacts.add_many([dict(name = "x")] * 600)`, starlark.StringDict{"ws": New(st, Options{})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spent")
	assert.Equal(t, uint64(1001), n, "stopped at the first step over the budget")
	assert.Empty(t, st.PartKeys(contacts.Part), "nothing stored")

	th = dsl.NewThread("setup", dsl.DefaultLimits, nil)
	_, err = starlark.ExecFileOptions(dsl.FileOptions, th, "setup.star", `ws.contacts.add_many([dict(name = "x")] * 300000)`, starlark.StringDict{"ws": New(st, Options{})})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "too many steps")
	assert.Empty(t, st.PartKeys(contacts.Part))
}

// Over a chat of 100,000 messages and a book of 100,000 contacts, a verifier that reads them
// all in a loop runs out of steps rather than on; one call that reads them fits.
func TestLargeChatAndContactsRunOutOfSteps(t *testing.T) {
	t.Parallel()
	const n = 100000
	st := workspace.New(start, 1)
	msgs := make([]*chat.Message, n)
	cs := make([]*contacts.Contact, n)
	for i := range n {
		msgs[i] = &chat.Message{Conv: "#c" + strconv.Itoa(i%10), Sender: "p" + strconv.Itoa(i%50), Text: "status " + strconv.Itoa(i),
			TS: start.Add(time.Duration(i) * time.Second).Format(time.RFC3339)}
		cs[i] = &contacts.Contact{Name: "Person " + strconv.Itoa(i), Email: fmt.Sprintf("p%d@x.example", i), Team: "Team " + strconv.Itoa(i%20), Source: contacts.Directory}
	}
	var channels []*chat.Channel
	for i := range 10 {
		channels = append(channels, &chat.Channel{Name: "#c" + strconv.Itoa(i)})
	}
	_, err := chat.Seed(st, channels, msgs)
	require.NoError(t, err)
	_, err = contacts.Add(st, cs)
	require.NoError(t, err)
	st.Freeze()
	run := func(src string) error {
		th := dsl.NewThread("verify", dsl.DefaultLimits, nil)
		_, err := starlark.ExecFileOptions(dsl.FileOptions, th, "verify.star", src, starlark.StringDict{"ws": New(st, Options{ReadOnly: true})})
		return err
	}
	require.NoError(t, run(`
if len(ws.chat.messages(contains = "status 99999")) != 1 or len(ws.contacts.list(team = "Team 3")) != 5000:
    fail("not seeded")
if ws.contacts.search("person 77")[0].id != "c78":
    fail("not found")
`))
	for _, src := range []string{
		`[ws.chat.messages(contains = "nothing") for i in range(100)]`,
		`[ws.contacts.list(team = "nobody") for i in range(100)]`,
	} {
		err := run(src)
		require.Error(t, err, src)
		assert.Contains(t, err.Error(), "too many steps", src)
	}
}
