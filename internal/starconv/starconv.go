// Package starconv converts between Starlark values and jsonv values.
//
// Starlark to JSON: None, bool, int (must fit in int64), float (finite), string, list and tuple
// (arrays), dict with string keys (objects, in insertion order) and struct (objects, fields sorted).
// JSON to Starlark: whole numbers are int, others float; objects become dicts; arrays lists.
package starconv

import (
	"fmt"
	"math"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// maxDepth bounds nesting so that a cyclic or absurdly deep value costs an error, not the stack.
const maxDepth = 100

// ToJSON converts a Starlark value to a JSON value.
func ToJSON(v starlark.Value) (jsonv.Value, error) { return toJSON(v, 0) }

func toJSON(v starlark.Value, depth int) (jsonv.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested more than %d levels deep", maxDepth)
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		i, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("integer %s does not fit in 64 bits", x)
		}
		return i, nil
	case starlark.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("cannot represent %v in JSON", x)
		}
		return f, nil
	case starlark.String:
		return string(x), nil
	case *starlark.List:
		return seqToJSON(x, depth)
	case starlark.Tuple:
		return seqToJSON(x, depth)
	case *starlark.Dict:
		o := &jsonv.Object{Members: make([]jsonv.Member, 0, x.Len())}
		for _, item := range x.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is a %s, want string", item[0], item[0].Type())
			}
			e, err := toJSON(item[1], depth+1)
			if err != nil {
				return nil, err
			}
			o.Members = append(o.Members, jsonv.Member{Key: string(k), Value: e})
		}
		return o, nil
	case *starlarkstruct.Struct:
		names := x.AttrNames() // sorted
		o := &jsonv.Object{Members: make([]jsonv.Member, 0, len(names))}
		for _, n := range names {
			fv, err := x.Attr(n)
			if err != nil {
				return nil, err
			}
			e, err := toJSON(fv, depth+1)
			if err != nil {
				return nil, err
			}
			o.Members = append(o.Members, jsonv.Member{Key: n, Value: e})
		}
		return o, nil
	}
	if j, ok := v.(interface{ ToJSON() (jsonv.Value, error) }); ok {
		return j.ToJSON()
	}
	return nil, fmt.Errorf("cannot convert %s to JSON", v.Type())
}

func seqToJSON(seq starlark.Indexable, depth int) (jsonv.Value, error) {
	n := seq.Len()
	out := make([]jsonv.Value, n)
	for i := 0; i < n; i++ {
		e, err := toJSON(seq.Index(i), depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// FromJSON converts a JSON value to a (mutable, unfrozen) Starlark value.
func FromJSON(v jsonv.Value) starlark.Value {
	switch x := v.(type) {
	case nil:
		return starlark.None
	case bool:
		return starlark.Bool(x)
	case int64:
		return starlark.MakeInt64(x)
	case int:
		return starlark.MakeInt(x)
	case float64:
		return starlark.Float(x)
	case string:
		return starlark.String(x)
	case []string:
		out := make([]starlark.Value, len(x))
		for i, e := range x {
			out[i] = starlark.String(e)
		}
		return starlark.NewList(out)
	case []jsonv.Value:
		out := make([]starlark.Value, len(x))
		for i, e := range x {
			out[i] = FromJSON(e)
		}
		return starlark.NewList(out)
	case *jsonv.Object:
		if x == nil {
			return starlark.None
		}
		d := starlark.NewDict(x.Len())
		for _, m := range x.Members {
			_ = d.SetKey(starlark.String(m.Key), FromJSON(m.Value))
		}
		return d
	}
	panic(fmt.Sprintf("starconv.FromJSON: unexpected %T", v))
}

// Strings converts a list of strings.
func Strings(ss []string) *starlark.List {
	out := make([]starlark.Value, len(ss))
	for i, s := range ss {
		out[i] = starlark.String(s)
	}
	return starlark.NewList(out)
}
