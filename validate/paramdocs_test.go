package validate

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const paramDocsTask = `
def _approve(ws, invoice, note = ""):
    ws.db.update("invoices", invoice, {"status": "approved"})
    return {"ok": True}

def _setup(ws):
    ws.db.insert("invoices", {"id": "INV-1", "status": "pending"})

def _solve(agent):
    agent.call("ap_approve", invoice = "INV-1")
    agent.reply("Approved INV-1.")

def _verify(ws, ep):
    check(ws.db.get("invoices", "INV-1")["status"] == "approved", "INV-1 is approved")

task(
    name = "param-docs",
    prompt = "Approve invoice INV-1.",
    tools = ["fs", tool(name = "ap_approve", description = "Approve a pending invoice.", params = {
        "invoice": param("string"),
        "note": param("string", required = False, default = "", description = "a note for accounts payable"),
    }, impl = _approve)],
    setup = _setup,
    verify = _verify,
    solution = _solve,
)
`

// A parameter of a task-defined tool without a description is a warning at its param(); one
// with a description, and the built-in tools, are not.
func TestUndocumentedParam(t *testing.T) {
	t.Parallel()
	c := dsl.NewCorpus(fstest.MapFS{"t.star": {Data: []byte(paramDocsTask)}}, ".", "c")
	f := c.LoadFile(context.Background(), "t.star")
	require.Empty(t, f.Diags)
	rep := Task(context.Background(), f.Tasks[0], Options{})
	var got []dsl.Diagnostic
	for _, d := range rep.Diagnostics {
		if d.Code == "undocumented-param" {
			got = append(got, d)
		}
	}
	require.Len(t, got, 1, "%v", rep.Diagnostics)
	assert.Equal(t, dsl.Warning, got[0].Severity)
	assert.Contains(t, got[0].Message, `parameter "invoice" of tool ap_approve has no description`)
	assert.Equal(t, 20, got[0].Line, "at the param() of the parameter")
}
