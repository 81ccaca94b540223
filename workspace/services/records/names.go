package records

import (
	"strings"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
)

func init() {
	Service.Names = names
	Service.IDs = ids
}

// nameFields are the fields of a record whose string value names a person, a company or a place.
var nameFields = map[string]string{
	"name": "other", "customer": "company", "supplier": "company", "company": "company", "carrier": "company",
	"vendor": "company", "client": "company", "account": "company", "employee": "person", "driver": "person",
	"person": "person", "owner": "person", "assignee": "person", "contact": "person", "requester": "person",
	"manager": "person", "approver": "person", "site": "place", "location": "place", "warehouse": "place",
	"city": "place", "depot": "place",
}

// names are the values of the records' name fields (short ones: at most five words).
func names(st *workspace.State) []service.Name {
	seen := map[string]bool{}
	var out []service.Name
	db := st.DB()
	for _, coll := range db.Collections() {
		for _, rec := range db.All(coll) {
			for _, k := range rec.Keys() {
				class, ok := nameFields[k]
				if !ok {
					continue
				}
				v, ok := rec.Get(k)
				s, isStr := v.(string)
				if !ok || !isStr || s == "" || len(s) > 60 || len(strings.Fields(s)) > 5 || seen[s] {
					continue
				}
				seen[s] = true
				out = append(out, service.Name{Text: s, Class: class})
			}
		}
	}
	return out
}

// ids are the records' ids that read as words of prose ("kaas-001", "T-102"): not plain numbers.
func ids(st *workspace.State) []string {
	var out []string
	db := st.DB()
	for _, coll := range db.Collections() {
		for _, rec := range db.All(coll) {
			v, _ := rec.Get("id")
			if s, ok := v.(string); ok && len(s) >= 3 && strings.ContainsAny(s, "-_") {
				out = append(out, s)
			}
		}
	}
	return out
}
