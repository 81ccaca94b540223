package wsmod

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/startest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"go.starlark.net/starlark"
)

var start = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// predeclared returns the names a test file sees, over a fresh state:
//
//	ws          the writable workspace
//	ro          a read-only view of the same state, Reason "in a verifier"
//	snapshot()  freezes a copy of the state as it is now and returns a read-only ws (in a
//	            verifier) of the live state whose ws.initial is that copy
//	writable_verifier()  like snapshot() but writable (for diff after further changes)
//	as_agent(on)  makes the following changes the agent's (True) or a script's (False)
func predeclared() starlark.StringDict {
	st := workspace.New(start, 1)
	snap := func(readOnly bool) *starlark.Builtin {
		return starlark.NewBuiltin("snapshot", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
				return nil, err
			}
			initial := st.Fork()
			initial.Freeze()
			return New(st, Options{ReadOnly: readOnly, Reason: "in a verifier", Initial: initial}), nil
		})
	}
	asAgent := starlark.NewBuiltin("as_agent", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var on bool
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "on", &on); err != nil {
			return nil, err
		}
		if on {
			st.SetActor(workspace.ActorAgent, 0)
		} else {
			st.SetActor("", 0)
		}
		return starlark.None, nil
	})
	var svcs []starlark.Value // the names of ws's service objects, beside the kernel's
	for _, s := range services.All {
		if s.Part != nil {
			svcs = append(svcs, starlark.String(s.ScriptName()))
		}
	}
	return starlark.StringDict{
		"SERVICES":          starlark.NewList(svcs),
		"as_agent":          asAgent,
		"ws":                New(st, Options{}),
		"ro":                New(st, Options{ReadOnly: true, Reason: "in a verifier"}),
		"snapshot":          snap(true),
		"writable_snapshot": snap(false),
	}
}

// TestScripts runs each testdata/*.star file as its own test, over its own fresh state.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.star")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".star")
		t.Run(name, func(t *testing.T) {
			// startest.Run runs every file of a folder with one set of predeclared values: give
			// each file a folder of its own, so that each gets a fresh state.
			dir := t.TempDir()
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
			startest.Run(t, dir, predeclared())
		})
	}
}

// exec runs src with ws bound to New(st, opts) and returns its globals.
func exec(t *testing.T, st *workspace.State, opts Options, src string) (starlark.StringDict, error) {
	t.Helper()
	thread := &starlark.Thread{Name: "test"}
	return starlark.ExecFile(thread, "test.star", src, starlark.StringDict{"ws": New(st, opts)})
}

func TestRandDeterminism(t *testing.T) {
	const src = `
draws = [ws.rand.int(1, 6) for _ in range(20)]
draws.append(ws.rand.choice(["a", "b", "c", "d"]))
l = list(range(10))
ws.rand.shuffle(l)
draws.append(l)
draws.append(ws.rand.sample(range(100), 5))
draws.append(ws.rand.int(-1000000000, 1000000000))
`
	run := func(seed int64) string {
		st := workspace.New(start, seed)
		g, err := exec(t, st, Options{}, src)
		if err != nil {
			t.Fatal(err)
		}
		return g["draws"].String()
	}
	a, b, c := run(42), run(42), run(43)
	if a != b {
		t.Errorf("same seed, different draws:\n%s\n%s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 drew the same: %s", a)
	}
	// A fork continues the sequence of its parent.
	st := workspace.New(start, 42)
	if _, err := exec(t, st, Options{}, `x = [ws.rand.int(1, 6) for _ in range(20)]`); err != nil {
		t.Fatal(err)
	}
	f1, f2 := st.Fork(), st.Fork()
	g1, err1 := exec(t, f1, Options{}, `y = ws.rand.choice(["a", "b", "c", "d"])`)
	g2, err2 := exec(t, f2, Options{}, `y = ws.rand.choice(["a", "b", "c", "d"])`)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if g1["y"] != g2["y"] {
		t.Errorf("forks drew %s and %s", g1["y"], g2["y"])
	}
}

func TestFrozenState(t *testing.T) {
	st := workspace.New(start, 1)
	st.Freeze()
	_, err := exec(t, st, Options{}, `ws.fs.write("/a", "b")`)
	if err == nil || !strings.Contains(err.Error(), "ws.fs.write: the workspace is read-only") {
		t.Errorf("write to a frozen state: %v", err)
	}
	_, err = exec(t, workspace.New(start, 1), Options{ReadOnly: true, Reason: "in a user function"}, `ws.mail.address = "a@b.c"`)
	if err == nil || err.Error() != "ws.mail.address: the workspace is read-only in a user function" {
		t.Errorf("set address on a read-only ws: %v", err)
	}
	_, err = exec(t, workspace.New(start, 1), Options{ReadOnly: true}, `ws.db.insert("c", {})`)
	if err == nil || err.Error() != "ws.db.insert: the workspace is read-only" {
		t.Errorf("insert on a read-only ws without a reason: %v", err)
	}
}

func TestNewIsCheap(t *testing.T) {
	st := workspace.New(start, 1)
	if n := testing.AllocsPerRun(100, func() { _ = New(st, Options{ReadOnly: true}) }); n > 1 {
		t.Errorf("New makes %v allocations, want 1", n)
	}
	v := New(st, Options{}).(starlark.HasAttrs)
	if n := testing.AllocsPerRun(100, func() { _, _ = v.Attr("fs") }); n > 0 {
		t.Errorf("ws.fs makes %v allocations, want 0", n)
	}
}

// TestReference checks that Reference covers every member of every object, once, with a
// signature that lists the member's parameters.
func TestReference(t *testing.T) {
	seen := map[string]FuncDoc{}
	for _, d := range Reference {
		if _, dup := seen[d.Name]; dup {
			t.Errorf("%s documented twice", d.Name)
		}
		seen[d.Name] = d
		if d.Doc == "" || !strings.HasPrefix(d.Signature, d.Name) {
			t.Errorf("%s: bad entry %+v", d.Name, d)
		}
	}
	want := []string{
		"ws.fs", "ws.fs.write", "ws.fs.write_many", "ws.fs.read", "ws.fs.exists", "ws.fs.list", "ws.fs.walk", "ws.fs.remove",
		"ws.fs.move", "ws.fs.mkdir", "ws.fs.glob",
		"ws.mail", "ws.mail.address", "ws.mail.deliver", "ws.mail.deliver_many", "ws.mail.get", "ws.mail.messages", "ws.mail.folders",
		"ws.calendar", "ws.calendar.add", "ws.calendar.get", "ws.calendar.events", "ws.calendar.update", "ws.calendar.remove",
		"ws.db", "ws.db.insert", "ws.db.insert_many", "ws.db.insert_text", "ws.db.get", "ws.db.find", "ws.db.count", "ws.db.all",
		"ws.db.update", "ws.db.remove", "ws.db.collections",
		"ws.clock", "ws.clock.now", "ws.clock.set", "ws.clock.advance",
		"ws.rand", "ws.rand.int", "ws.rand.choice", "ws.rand.shuffle", "ws.rand.sample",
		"ws.initial", "ws.diff", "ws.history", "ws.history.actions", "ws.history.sent",
		"ws.history.versions", "ws.history.touched", "ws.unexpected", "ws.reference",
	}
	for _, s := range services.All { // the other services' members come from their tables
		if s.Part == nil {
			continue
		}
		want = append(want, "ws."+s.ScriptName())
		for _, m := range s.WS {
			want = append(want, "ws."+s.ScriptName()+"."+m.Name)
		}
	}
	for _, n := range want {
		if _, ok := seen[n]; !ok {
			t.Errorf("%s is not documented", n)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("Reference has %d entries, want %d", len(seen), len(want))
	}
	for _, typ := range types {
		for _, m := range typ.members {
			if _, ok := seen[m.full]; !ok {
				t.Errorf("member %s is not in Reference", m.full)
			}
		}
	}
	for name, sig := range map[string]string{
		"ws.fs.list":         `ws.fs.list(dir="/") -> list`,
		"ws.mail.deliver":    `ws.mail.deliver(sender, subject, body, to=None, cc=[], date=None, folder="inbox", attachments={}, read=False, labels=[], in_reply_to=None) -> string`,
		"ws.mail.messages":   `ws.mail.messages(folder=None, sender=None, to=None, subject=None, unread=None, label=None) -> list`,
		"ws.calendar.add":    `ws.calendar.add(title, start, end, attendees=[], location="", description="") -> string`,
		"ws.calendar.update": `ws.calendar.update(id, **fields) -> struct`,
		"ws.db.find":         `ws.db.find(collection, **equal_fields) -> list`,
		"ws.mail.address":    `ws.mail.address`,
		"ws.diff":            `ws.diff(against=None) -> struct`,
	} {
		if got := seen[name].Signature; got != sig {
			t.Errorf("%s: signature %q, want %q", name, got, sig)
		}
	}
}
