package records

import (
	"encoding/csv"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"github.com/coworkenv/coworkenv/workspace/tools"
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
			rec, ok := st.DB().View(coll, id)
			if !ok {
				return starlark.None, nil
			}
			return starconv.FromJSON(rec), nil // a new dict: the record is not shared
		},
		Doc: "Returns a copy of record id of collection as a dict (changing it changes nothing), or None when there is no such record. Whole numbers come back as int, others as float."},
	{Name: "insert_many", Params: []service.Param{{Name: "collection"}, {Name: "records"}}, Ret: "list", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll := a.Str(0)
			seq, ok := a.Value(1).(starlark.Indexable)
			if _, isStr := a.Value(1).(starlark.String); !ok || isStr {
				a.Fail("for parameter records: got %s, want list of dicts", a.Value(1).Type())
			}
			if err := a.Done(); err != nil {
				return nil, err
			}
			return insertEach(st, a, coll, func(yield func(*jsonv.Object, error) bool) {
				for i := range seq.Len() {
					d, ok := seq.Index(i).(*starlark.Dict)
					if !ok {
						yield(nil, fmt.Errorf("got %s, want dict", seq.Index(i).Type()))
						return
					}
					v, err := starconv.ToJSON(d)
					if !yield(asObject(v), err) {
						return
					}
				}
			})
		},
		Doc: "Stores a copy of each record of records (a list of dicts) in collection, in order, as insert does one, and returns their ids. It is the way to seed many records at once: it costs one step of the script's budget per record and one per KiB of it, where a loop of insert costs a dozen steps per record, so setup seeds 100,000 records within the default budget. It stops at the first record that insert would refuse, naming it (\"record 7: …\"); the records before it are stored."},
	{Name: "insert_text", Params: []service.Param{{Name: "collection"}, {Name: "text"}, {Name: "format", Default: `"json"`}}, Ret: "list", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll, text, format := a.Str(0), a.Str(1), a.OptStr(2, "json")
			if err := a.Done(); err != nil {
				return nil, err
			}
			recs, ok := textFormats[format]
			if !ok {
				return nil, fmt.Errorf("format %q is not \"json\", \"jsonl\" or \"csv\"", format)
			}
			if err := a.Charge(len(text) / 1024); err != nil { // reading the text
				return nil, err
			}
			return insertEach(st, a, coll, recs(text))
		},
		Doc: "Stores the records written in text in collection, in order, as insert_many does (and at its cost), and returns their ids. format is \"json\" (a JSON array of objects), \"jsonl\" (one JSON object per line; empty lines are skipped) or \"csv\" (a header line naming the fields, then one record per line; every value is a string, and an \"id\" column gives the ids). The text is typically a string constant of a file the task loads: load(\"data/orders.star\", \"ORDERS\"); ws.db.insert_text(\"orders\", ORDERS), which records the data file's hash in traces like any loaded file."},
	{Name: "find", Params: []service.Param{{Name: "collection"}, {Name: "**equal_fields"}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll, eq, err := query(st, a)
			if err != nil {
				return nil, err
			}
			return recordList(st.DB().Scan(coll, eq)), nil
		},
		Doc: "Returns copies of the records of collection whose fields equal every keyword argument given (find(\"tickets\", status = \"open\")), in insertion order. A field a record lacks equals only None. A collection that does not exist gives []. Only the records that match are copied; with fields, it costs a step per record of the collection."},
	{Name: "count", Params: []service.Param{{Name: "collection"}, {Name: "**equal_fields"}}, Ret: "int",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll, eq, err := query(st, a)
			if err != nil {
				return nil, err
			}
			return starlark.MakeInt(st.DB().Count(coll, eq)), nil
		},
		Doc: "Returns how many records of collection have fields equal to every keyword argument given, as find would list them, without copying any: count(\"orders\") is the size of the collection (0 when it does not exist), at no cost; with fields it costs a step per record."},
	{Name: "all", Params: []service.Param{{Name: "collection"}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			coll := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return recordList(st.DB().Scan(coll, nil)), nil
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

// query reads the arguments of find and count, a collection and the fields to match, and
// charges a step per record of the collection when there are fields (each is looked at).
func query(st *workspace.State, a service.Args) (string, *jsonv.Object, error) {
	coll, eq := a.Str(0), a.Fields()
	if err := a.Done(); err != nil {
		return "", nil, err
	}
	if len(eq.Members) > 0 {
		if err := a.Charge(st.DB().Count(coll, nil)); err != nil {
			return "", nil, err
		}
	}
	return coll, eq, nil
}

// insertEach inserts the records recs yields into coll, charging each one step and one per KiB
// of its JSON, and returns their ids. It stops at the first error, which names the record.
func insertEach(st *workspace.State, a service.Args, coll string, recs iter.Seq2[*jsonv.Object, error]) (starlark.Value, error) {
	ids := []starlark.Value{}
	for rec, err := range recs {
		n := len(ids) + 1
		if err != nil {
			return nil, fmt.Errorf("record %d: %v", n, err)
		}
		size, _ := tools.Size(rec)
		if err := a.Charge(1 + size/1024); err != nil {
			return nil, err
		}
		id, err := st.DB().Insert(coll, rec)
		if err != nil {
			return nil, fmt.Errorf("record %d: %v", n, err)
		}
		ids = append(ids, starlark.String(id))
	}
	return starlark.NewList(ids), nil
}

// asObject is v when it is an object, else nil (Insert refuses it).
func asObject(v jsonv.Value) *jsonv.Object {
	o, _ := v.(*jsonv.Object)
	return o
}

// textFormats read the records of insert_text's text, by format.
var textFormats = map[string]func(text string) iter.Seq2[*jsonv.Object, error]{
	"json": func(text string) iter.Seq2[*jsonv.Object, error] {
		return func(yield func(*jsonv.Object, error) bool) {
			v, err := jsonv.DecodeString(text)
			if err != nil {
				yield(nil, err)
				return
			}
			arr, ok := v.([]jsonv.Value)
			if !ok {
				yield(nil, fmt.Errorf("the text is a JSON %s, not an array of objects", jsonv.TypeName(v)))
				return
			}
			for _, e := range arr {
				if !yield(objectOf(e)) {
					return
				}
			}
		}
	},
	"jsonl": func(text string) iter.Seq2[*jsonv.Object, error] {
		return func(yield func(*jsonv.Object, error) bool) {
			for line := range strings.Lines(text) {
				if strings.TrimSpace(line) == "" {
					continue
				}
				v, err := jsonv.DecodeString(line)
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(objectOf(v)) {
					return
				}
			}
		}
	},
	"csv": func(text string) iter.Seq2[*jsonv.Object, error] {
		return func(yield func(*jsonv.Object, error) bool) {
			r := csv.NewReader(strings.NewReader(text))
			header, err := r.Read()
			if err != nil {
				yield(nil, fmt.Errorf("the header line: %v", err))
				return
			}
			for {
				row, err := r.Read()
				if err == io.EOF {
					return
				}
				if err != nil {
					yield(nil, err)
					return
				}
				o := &jsonv.Object{Members: make([]jsonv.Member, 0, len(row))}
				for i, v := range row {
					o.Set(header[i], v)
				}
				if !yield(o, nil) {
					return
				}
			}
		}
	},
}

func objectOf(v jsonv.Value) (*jsonv.Object, error) {
	if o, ok := v.(*jsonv.Object); ok {
		return o, nil
	}
	return nil, fmt.Errorf("got a JSON %s, want an object", jsonv.TypeName(v))
}

// recordList converts the records recs yields to a list of new dicts (the records themselves
// are not copied first: converting them copies them).
func recordList(recs iter.Seq[*jsonv.Object]) starlark.Value {
	out := []starlark.Value{}
	for r := range recs {
		out = append(out, starconv.FromJSON(r))
	}
	return starlark.NewList(out)
}
