package wsmod

import (
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"go.starlark.net/starlark"
)

var dbMembers = []*member{
	{name: "insert", params: []param{{"collection", ""}, {"record", ""}}, ret: "string", write: true,
		call: func(c *call) (starlark.Value, error) {
			coll := c.str(0)
			var rec *jsonv.Object
			if d, ok := c.args[1].(*starlark.Dict); !ok {
				c.badType(1, c.args[1], "dict")
			} else if v, err := starconv.ToJSON(d); err != nil {
				c.fail("for parameter record: %v", err)
			} else {
				rec = v.(*jsonv.Object)
			}
			if err := c.done(); err != nil {
				return nil, err
			}
			id, err := c.w.st.DB().Insert(coll, rec)
			if err != nil {
				return nil, c.wrap(err)
			}
			return str(id), nil
		},
		doc: "Stores a copy of record (a dict of JSON-compatible values) in collection, which is created when new, and returns the record's id. When the record has no \"id\" (or a None one) it gets \"<collection>-<n>\", n counting per collection from 1 and skipping ids already taken; an id that is not a string, or is already taken, is an error."},
	{name: "get", params: []param{{"collection", ""}, {"id", ""}}, ret: "dict | None",
		call: func(c *call) (starlark.Value, error) {
			coll, id := c.str(0), c.str(1)
			if err := c.done(); err != nil {
				return nil, err
			}
			rec, ok := c.w.st.DB().Get(coll, id)
			if !ok {
				return starlark.None, nil
			}
			return starconv.FromJSON(rec), nil
		},
		doc: "Returns a copy of record id of collection as a dict (changing it changes nothing), or None when there is no such record. Whole numbers come back as int, others as float."},
	{name: "find", params: []param{{"collection", ""}, {"**equal_fields", ""}}, ret: "list",
		call: func(c *call) (starlark.Value, error) {
			coll := c.str(0)
			eq := c.fields()
			if err := c.done(); err != nil {
				return nil, err
			}
			return recordList(c.w.st.DB().Find(coll, eq)), nil
		},
		doc: "Returns copies of the records of collection whose fields equal every keyword argument given (find(\"tickets\", status = \"open\")), in insertion order. A field a record lacks equals only None. A collection that does not exist gives []."},
	{name: "all", params: []param{{"collection", ""}}, ret: "list",
		call: func(c *call) (starlark.Value, error) {
			coll := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return recordList(c.w.st.DB().All(coll)), nil
		},
		doc: "Returns copies of every record of collection, in insertion order; [] for a collection that does not exist."},
	{name: "update", params: []param{{"collection", ""}, {"id", ""}, {"**fields", ""}}, ret: "dict", write: true,
		call: func(c *call) (starlark.Value, error) {
			coll, id := c.str(0), c.str(1)
			fields := c.fields()
			if err := c.done(); err != nil {
				return nil, err
			}
			rec, err := c.w.st.DB().Update(coll, id, fields)
			if err != nil {
				return nil, c.wrap(err)
			}
			return starconv.FromJSON(rec), nil
		},
		doc: "Sets the given fields of record id of collection (update(\"deals\", \"D-1\", stage = \"won\")), adding those it lacks; a field given as None stores null. Returns a copy of the updated record. A missing record is an error, and so is giving \"id\" a different value."},
	{name: "remove", params: []param{{"collection", ""}, {"id", ""}}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			coll, id := c.str(0), c.str(1)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.DB().Remove(coll, id))
		},
		doc: "Deletes record id of collection. A missing record is an error. The collection stays, with its id counter."},
	{name: "collections", ret: "list",
		call: func(c *call) (starlark.Value, error) {
			return starconv.Strings(c.w.st.DB().Collections()), nil
		},
		doc: "Returns the names of the collections, sorted. A collection exists from its first insert on."},
}

// fields converts the keyword arguments collected by a "**" parameter to an object.
func (c *call) fields() *jsonv.Object {
	o := &jsonv.Object{Members: make([]jsonv.Member, 0, len(c.kw))}
	for _, kv := range c.kw {
		name := string(kv[0].(starlark.String))
		v, err := starconv.ToJSON(kv[1])
		if err != nil {
			c.fail("for parameter %s: %v", name, err)
			return nil
		}
		o.Members = append(o.Members, jsonv.Member{Key: name, Value: v})
	}
	return o
}

func recordList(recs []*jsonv.Object) starlark.Value {
	out := make([]starlark.Value, len(recs))
	for i, r := range recs {
		out[i] = starconv.FromJSON(r)
	}
	return starlark.NewList(out)
}
