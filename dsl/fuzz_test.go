package dsl_test

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
)

// fuzzTaskMax bounds a fuzzed task file, so that one run of the fuzz target stays fast.
const fuzzTaskMax = 16 << 10

// fuzzTaskRel is where a fuzzed file sits in the corpus: a task file beside the built-in ones.
const fuzzTaskRel = "tasks/fuzz/fuzz.star"

// fuzzCorpusBase is the built-in corpus's taxonomy and helper files, read once, so a fuzzed
// file can load("//lib/...") as the built-in tasks do.
func fuzzCorpusBase(f *testing.F) fstest.MapFS {
	m := fstest.MapFS{}
	root := os.DirFS("../corpus")
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if p == dsl.CapabilitiesFile || strings.HasPrefix(p, "lib/") && strings.HasSuffix(p, ".star") {
			b, err := fs.ReadFile(root, p)
			if err != nil {
				return err
			}
			m[p] = &fstest.MapFile{Data: b}
		}
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	if m[dsl.CapabilitiesFile] == nil || len(m) < 3 {
		f.Fatalf("the built-in corpus is not at ../corpus (found %d files)", len(m))
	}
	return m
}

// A task file of any content loads through the corpus loader, with the normal limits, into
// tasks or diagnostics: it never panics, and every diagnostic has a registered code, a message
// and a position that the diagnostic helpers can show.
func FuzzLoadTaskFile(f *testing.F) {
	base := fuzzCorpusBase(f)
	for _, s := range []string{
		okTask,
		// a multi-turn task with a task-defined tool, faults and helpers of the built-in corpus
		`load("//lib/helpers.star", "deliver_noise")
load("//lib/cast.star", "PEOPLE")

def _setup(ws):
    ws.fs.write("/in/a.csv", "x,y\n1,2\n")
    deliver_noise(ws)

def _lookup(ws, sku, qty = 1):
    if qty < 0:
        fail("negative quantity")
    return {"sku": sku, "qty": qty, "who": sorted(PEOPLE.keys())[:1]}

def _u2(ws, ep):
    return "Now the second part, please."

def _v(ws, ep):
    check(len(ep.calls("stock_lookup")) > 0, "looked up")

def _s1(agent):
    agent.call("stock_lookup", sku = "A-1", qty = 2)
    agent.reply("ok")

def _s2(agent):
    agent.reply("done")

task(
    name = "fuzz-multi",
    turns = [turn(user = "Check stock.", verify = _v, solution = _s1),
             turn(user = _u2, advance = "2h", solution = _s2)],
    tools = ["fs", "mail", tool(name = "stock_lookup", description = "Stock of a SKU.",
        params = {"sku": param("string", required = True), "qty": param("integer", default = 1)},
        impl = _lookup)],
    capabilities = ["mail.reply"],
    faults = {"rate": 0.5, "tools": ["fs_read"], "nth": {"fs_read": [1]}},
    pass_threshold = 0.5,
)
`,
		"def loop():\n    n = 0\n    while True:\n        n += 1\nloop()\n",
		"load(\"//lib/missing.star\", \"x\")\n",
		"load(\"../../corpus/lib/cast.star\", \"PEOPLE\")\n",
		"task(name = \"a\", prompt = \"p\", tools = [\"email\"])\n",
		"x = [1, 2\ny = (\n\tdef f(:\n",
		"print(\"hi\")\nx = {\"a\": 1}[\"b\"]\n",
		"capability(name = \"x.y\", description = \"d\")\n",
		"s = \"\\xff\\u00e9\"\nx = 1 // 0\n",
	} {
		f.Add([]byte(s))
	}
	for _, p := range []string{"../corpus/tasks/mail/fuel_surcharge_answer.star", "../corpus/tasks/chat/rack_inspection_dm.star"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzTaskMax {
			return
		}
		m := maps.Clone(base)
		m[fuzzTaskRel] = &fstest.MapFile{Data: src}
		c := dsl.NewCorpus(m, ".", "corpus")
		file := c.LoadFile(context.Background(), fuzzTaskRel)
		if file == nil {
			t.Fatal("LoadFile returned nil")
		}
		for _, d := range file.Diags {
			if _, ok := dsl.CodeByID(d.Code); !ok {
				t.Errorf("unregistered diagnostic code %q: %s", d.Code, d)
			}
			if d.Message == "" {
				t.Errorf("diagnostic without a message: %s", d)
			}
			_ = d.String()
			_ = dsl.PointAtCallee(d, src)
		}
		if len(file.Diags) > 0 && len(file.Tasks) > 0 {
			t.Errorf("a file with diagnostics has %d tasks", len(file.Tasks))
		}
		for _, task := range file.Tasks {
			if task == nil || task.Name == "" || path.Base(task.File) != "fuzz.star" {
				t.Errorf("a loaded task without a name or its file: %+v", task)
			}
		}
	})
}
