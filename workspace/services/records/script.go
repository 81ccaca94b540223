package records

import (
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
)

// What scripts see: ws.db.

var wsMethods = []service.Method{
	{Name: "insert", Params: []service.Param{{Name: "collection"}, {Name: "record"}}, Ret: "string", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll := a.Str(0)
			var rec *jsonv.Object
			if d := a.Dict(1); d != nil {
				if v, err := starconv.ToJSON(d); err != nil {
					a.Fail("for parameter record: %v", err)
				} else {
					rec = v.(*jsonv.Object)
				}
			}
			if err := a.Done(); err != nil {
				return nil, err
			}
			id, err := st.DB().Insert(coll, rec)
			if err != nil {
				return nil, err
			}
			return starlark.String(id), nil
		},
		Doc: "Stores a copy of record (a dict of JSON-compatible values) in collection, which is created when new, and returns the record's id. When the record has no \"id\" (or a None one) it gets \"<collection>-<n>\", n counting per collection from 1 and skipping ids already taken; an id that is not a string, or is already taken, is an error, and so is a record over " + limits.Bytes(limits.RecordSize) + " as JSON."},
	{Name: "get", Params: []service.Param{{Name: "collection"}, {Name: "id"}}, Ret: "dict | None",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll, id := a.Str(0), a.Str(1)
			if err := a.Done(); err != nil {
				return nil, err
			}
			rec, ok := st.DB().Get(coll, id)
			if !ok {
				return starlark.None, nil
			}
			return starconv.FromJSON(rec), nil
		},
		Doc: "Returns a copy of record id of collection as a dict (changing it changes nothing), or None when there is no such record. Whole numbers come back as int, others as float."},
	{Name: "find", Params: []service.Param{{Name: "collection"}, {Name: "**equal_fields"}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll := a.Str(0)
			eq := a.Fields()
			if err := a.Done(); err != nil {
				return nil, err
			}
			return recordList(st.DB().Find(coll, eq)), nil
		},
		Doc: "Returns copies of the records of collection whose fields equal every keyword argument given (find(\"tickets\", status = \"open\")), in insertion order. A field a record lacks equals only None. A collection that does not exist gives []."},
	{Name: "all", Params: []service.Param{{Name: "collection"}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return recordList(st.DB().All(coll)), nil
		},
		Doc: "Returns copies of every record of collection, in insertion order; [] for a collection that does not exist."},
	{Name: "update", Params: []service.Param{{Name: "collection"}, {Name: "id"}, {Name: "**fields"}}, Ret: "dict", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll, id := a.Str(0), a.Str(1)
			fields := a.Fields()
			if err := a.Done(); err != nil {
				return nil, err
			}
			rec, err := st.DB().Update(coll, id, fields)
			if err != nil {
				return nil, err
			}
			return starconv.FromJSON(rec), nil
		},
		Doc: "Sets the given fields of record id of collection (update(\"deals\", \"D-1\", stage = \"won\")), adding those it lacks; a field given as None stores null. Returns a copy of the updated record. A missing record is an error, and so is giving \"id\" a different value or making the record larger than " + limits.Bytes(limits.RecordSize) + " as JSON."},
	{Name: "remove", Params: []service.Param{{Name: "collection"}, {Name: "id"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll, id := a.Str(0), a.Str(1)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return nil, st.DB().Remove(coll, id)
		},
		Doc: "Deletes record id of collection. A missing record is an error. The collection stays, with its id counter."},
	{Name: "collections", Ret: "list",
		Call: func(st *workspace.State, _ service.Args) (starlark.Value, error) {
			return starconv.Strings(st.DB().Collections()), nil
		},
		Doc: "Returns the names of the collections, sorted. A collection exists from its first insert on."},
}

func recordList(recs []*jsonv.Object) starlark.Value {
	out := make([]starlark.Value, len(recs))
	for i, r := range recs {
		out[i] = starconv.FromJSON(r)
	}
	return starlark.NewList(out)
}
