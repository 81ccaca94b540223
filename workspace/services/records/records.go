// Package records is the record store behind task-defined tools (tickets, orders, stock):
// named collections of JSON records. It has no built-in tools of its own.
//
// Its state is the kernel's own section (workspace.State.DB, written out by hand for speed);
// this package declares everything else about it: ws.db, the setup summary, the history values
// and the words of ws.unexpected(records = [...]).
package records

import (
	"sort"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
)

// Service declares the service (registered in package services).
var Service = &service.Service{
	Name: "records", WSName: "db", DiffName: "db", Entry: "record",
	Doc:     "Named collections of JSON records, the state of the task's own tools (tickets, orders, stock).",
	WSDoc:   "Named collections of records for task-defined services (tickets, CRM, orders…). A record is a dict with a string \"id\"; every record handed out is a fresh copy.",
	Kinds:   []string{workspace.KindRecord},
	Section: func(ch workspace.Changes) workspace.Section { return ch.DB },
	WS:      wsMethods,
	Setup:   setupText,
	Value:   service.ValueOf(func(r *jsonv.Object) starlark.Value { return starconv.FromJSON(r) }),
	Keywords: []service.Keyword{
		{Name: "records", Doc: "allows \"collection/id\", \"collection/new\" (inserts) and \"collection/*\""},
	},
	Judge: judge,
	Probe: func(st *workspace.State) error {
		_, err := st.DB().Insert("probe", jsonv.NewObject("id", "p1", "x", int64(1)))
		return err
	},
}

// setupText is every record, collection by collection.
func setupText(st *workspace.State) string {
	var b strings.Builder
	db := st.DB()
	colls := db.Collections()
	sort.Strings(colls)
	for _, c := range colls {
		for _, r := range db.All(c) {
			b.WriteString("record " + c + " " + jsonv.MustEncode(r) + "\n")
		}
	}
	return b.String()
}

// judge says what the agent did to a record that ws.unexpected(records = [...]) does not allow.
func judge(keys [][]string, act workspace.Action) string {
	coll, _, _ := strings.Cut(act.Key, "/")
	for _, r := range keys[0] {
		if r == act.Key || r == coll+"/*" || act.Op == "insert" && r == coll+"/new" {
			return ""
		}
	}
	return map[string]string{"insert": "inserted", "update": "changed", "remove": "removed"}[act.Op] + " record " + act.Key
}
