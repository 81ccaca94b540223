package tools

import (
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// Helpers for the tools of services: parameter constructors, readers of checked arguments and
// result shapes.

// Req is a required parameter.
func Req(name, typ, desc string) Param {
	return Param{Name: name, Type: typ, Description: desc, Required: true}
}

// Opt is an optional parameter with a default (nil: none).
func Opt(name, typ, desc string, def any) Param {
	p := Param{Name: name, Type: typ, Description: desc}
	if def != nil {
		p.Default, p.HasDefault = def, true
	}
	return p
}

// WithItems gives an array parameter the type of its items.
func WithItems(p Param, items string) Param {
	p.Items = items
	return p
}

// Readers of arguments already checked by CheckArgs: a present argument has its declared type,
// so these only tell present from absent.

// ArgStr returns a string argument; "" when absent.
func ArgStr(args *jsonv.Object, name string) string {
	v, _ := args.Get(name)
	s, _ := v.(string)
	return s
}

// ArgStrOK returns a string argument and whether it is present.
func ArgStrOK(args *jsonv.Object, name string) (string, bool) {
	v, ok := args.Get(name)
	s, isStr := v.(string)
	return s, ok && isStr
}

// ArgBool returns a boolean argument; false when absent.
func ArgBool(args *jsonv.Object, name string) bool {
	v, _ := args.Get(name)
	b, _ := v.(bool)
	return b
}

// ArgBoolPtr returns a boolean argument; nil when absent.
func ArgBoolPtr(args *jsonv.Object, name string) *bool {
	v, ok := args.Get(name)
	b, isBool := v.(bool)
	if !ok || !isBool {
		return nil
	}
	return &b
}

// ArgInt returns an integer argument; 0 when absent.
func ArgInt(args *jsonv.Object, name string) int64 {
	v, _ := args.Get(name)
	i, _ := v.(int64)
	return i
}

// ArgStrs returns an array of strings argument; nil when absent.
func ArgStrs(args *jsonv.Object, name string) []string {
	v, ok := args.Get(name)
	arr, isArr := v.([]jsonv.Value)
	if !ok || !isArr {
		return nil
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Result shapes.

// Strings makes a JSON array of strings (never null).
func Strings(ss []string) []jsonv.Value {
	out := make([]jsonv.Value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// IDResult is {"id": id}, PathResult {"path": p} and OKResult {"ok": true}.
func IDResult(id string) *jsonv.Object  { return jsonv.NewObject("id", id) }
func PathResult(p string) *jsonv.Object { return jsonv.NewObject("path", p) }
func OKResult() *jsonv.Object           { return jsonv.NewObject("ok", true) }
