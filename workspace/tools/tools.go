// Package tools defines what a tool is for the agent (a name, a description and typed
// parameters, shown as a JSON Schema in the OpenAI function-calling format), checks the
// arguments an agent sends against it, and holds the helpers the services' tools share (args.go).
// The built-in tools themselves are declared by the services (package services and below).
//
// Tool results are jsonv values; a tool error is a plain error whose message is shown to the
// agent as is.
package tools

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
)

// Parameter types. TypeAddresses is for built-in tools only: one address or a list of them.
const (
	TypeString    = "string"
	TypeInteger   = "integer"
	TypeNumber    = "number"
	TypeBoolean   = "boolean"
	TypeArray     = "array"
	TypeObject    = "object"
	TypeAddresses = "addresses"
)

// ParamTypes are the types a task-defined tool's parameter (and an array's items) may have:
// every type but TypeAddresses.
var ParamTypes = []string{TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeArray, TypeObject}

// CheckType reports whether typ is one of ParamTypes: `"date" is not one of string, integer, …`.
func CheckType(typ string) error {
	if slices.Contains(ParamTypes, typ) {
		return nil
	}
	return fmt.Errorf("%q is not one of %s", typ, strings.Join(ParamTypes, ", "))
}

// Param is one parameter of a tool.
type Param struct {
	Name        string
	Type        string // one of the Type constants
	Description string
	Required    bool
	Enum        []jsonv.Value // allowed values; nil: any
	Items       string        // element type of an array; "": any
	Default     jsonv.Value   // given to an optional argument left out, when HasDefault
	HasDefault  bool
}

// Func runs a tool on a workspace with arguments already checked by CheckArgs.
type Func func(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error)

// Tool is one tool the agent can call.
type Tool struct {
	Name        string
	Description string
	Group       string // the group of a service's built-in tool ("fs", "contacts"); "" for task-defined ones
	Params      []Param
	Run         Func // nil for task-defined tools, which the scripting layer runs
}

// ValidName reports whether name can name a tool or a parameter: [a-z][a-z0-9_]{0,63}.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Schema returns the tool in the OpenAI function format:
//
//	{"type":"function","function":{"name":…,"description":…,"parameters":{"type":"object",
//	 "properties":{…},"required":[…],"additionalProperties":false}}}
//
// Properties come in Params order, each with its type (an "addresses" parameter is
// {"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}), description, enum,
// items and default, the keys in that order and only when set.
func (t *Tool) Schema() *jsonv.Object {
	props := &jsonv.Object{}
	required := []jsonv.Value{}
	for _, p := range t.Params {
		props.Set(p.Name, p.schema())
		if p.Required {
			required = append(required, p.Name)
		}
	}
	params := jsonv.NewObject(
		"type", "object",
		"properties", props,
		"required", required,
		"additionalProperties", false,
	)
	return jsonv.NewObject("type", "function", "function", jsonv.NewObject(
		"name", t.Name,
		"description", t.Description,
		"parameters", params,
	))
}

func (p *Param) schema() *jsonv.Object {
	o := &jsonv.Object{}
	if p.Type == TypeAddresses {
		o.Set("anyOf", []jsonv.Value{
			jsonv.NewObject("type", "string"),
			jsonv.NewObject("type", "array", "items", jsonv.NewObject("type", "string")),
		})
	} else {
		o.Set("type", p.Type)
	}
	if p.Description != "" {
		o.Set("description", p.Description)
	}
	if p.Enum != nil {
		o.Set("enum", jsonv.Clone(p.Enum))
	}
	if p.Type == TypeArray && p.Items != "" {
		o.Set("items", jsonv.NewObject("type", p.Items))
	}
	if p.HasDefault {
		o.Set("default", jsonv.Clone(p.Default))
	}
	return o
}

// CheckArgs checks the arguments an agent sent and returns them as a new object in Params
// order, coerced to the declared types: an integer accepts a whole number such as 3.0 (it
// becomes int64), a number accepts an integer (it becomes float64), and "addresses" accepts
// one string or an array of strings (it becomes an array). An optional argument that is absent
// or null gets its default when it has one, and stays absent otherwise. Errors name the
// argument:
//
//	unknown argument "pth" (the arguments are: path, limit)
//	missing required argument "path"
//	argument "limit": got string, want integer
//	argument "tags": item 1: got integer, want string
//	argument "site": "x" is not one of "lisbon", "porto"
//
// Arguments over the limits of a tool call (CheckArgsLimits) are reported first, then unknown
// arguments, then the parameters in order. A nil args is an empty object.
func (t *Tool) CheckArgs(args *jsonv.Object) (*jsonv.Object, error) {
	if err := CheckArgsLimits(args); err != nil {
		return nil, err
	}
	return t.CheckParams(args)
}

// CheckParams is CheckArgs for arguments already known to be within the limits of a tool call
// (an episode checks those before it records the call, and does not measure them twice).
func (t *Tool) CheckParams(args *jsonv.Object) (*jsonv.Object, error) {
	if args != nil {
		for _, m := range args.Members {
			if t.param(m.Key) == nil {
				return nil, fmt.Errorf("unknown argument %q (%s)", m.Key, t.argumentsDoc())
			}
		}
	}
	out := &jsonv.Object{Members: make([]jsonv.Member, 0, len(t.Params))}
	for i := range t.Params {
		p := &t.Params[i]
		v, ok := args.Get(p.Name)
		if !ok || v == nil && !p.Required {
			switch {
			case p.Required:
				return nil, fmt.Errorf("missing required argument %q", p.Name)
			case p.HasDefault:
				out.Members = append(out.Members, jsonv.Member{Key: p.Name, Value: jsonv.Clone(p.Default)})
			}
			continue
		}
		cv, err := p.Check(v)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %v", p.Name, err)
		}
		out.Members = append(out.Members, jsonv.Member{Key: p.Name, Value: cv})
	}
	return out, nil
}

// argumentsDoc lists the parameters, for the error of an unknown argument.
func (t *Tool) argumentsDoc() string {
	if len(t.Params) == 0 {
		return "it takes no arguments"
	}
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return "the arguments are: " + strings.Join(names, ", ")
}

// Check checks one value against the parameter's type, items and enum, and returns it coerced
// to the type as CheckArgs does (a deep copy for arrays and objects). This is the one check of a
// value against a parameter: of an agent's argument, and of a task-defined parameter's default
// and enum values. Its errors do not name the parameter:
//
//	got string, want integer
//	item 1: got integer, want string
//	"x" is not one of "lisbon", "porto"
func (p *Param) Check(v jsonv.Value) (jsonv.Value, error) {
	cv, err := coerce(p.Type, p.Items, v)
	if err != nil {
		return nil, err
	}
	if p.Enum != nil && !inEnum(p.Enum, cv) {
		return nil, fmt.Errorf("%s is not one of %s", jsonv.MustEncode(cv), enumList(p.Enum))
	}
	return cv, nil
}

// Call checks args and runs the tool.
func (t *Tool) Call(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	if t.Run == nil {
		return nil, fmt.Errorf("tool %s has no Go implementation", t.Name)
	}
	checked, err := t.CheckArgs(args)
	if err != nil {
		return nil, err
	}
	return t.Run(ws, checked)
}

// Param returns the parameter called name, or nil.
func (t *Tool) param(name string) *Param {
	for i := range t.Params {
		if t.Params[i].Name == name {
			return &t.Params[i]
		}
	}
	return nil
}

type typeError struct{ got, want string }

func (e typeError) Error() string { return fmt.Sprintf("got %s, want %s", e.got, e.want) }

// coerce checks v against a parameter type and returns it in canonical form (a deep copy for
// arrays and objects).
func coerce(typ, items string, v jsonv.Value) (jsonv.Value, error) {
	switch typ {
	case TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case TypeInteger:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
				return int64(x), nil
			}
		}
	case TypeNumber:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case int:
			return float64(x), nil
		}
	case TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case TypeArray:
		if arr, ok := v.([]jsonv.Value); ok {
			out := make([]jsonv.Value, len(arr))
			for i, e := range arr {
				if items == "" {
					out[i] = jsonv.Clone(e)
					continue
				}
				ce, err := coerce(items, "", e)
				if err != nil {
					return nil, fmt.Errorf("item %d: %v", i, err)
				}
				out[i] = ce
			}
			return out, nil
		}
	case TypeObject:
		if o, ok := v.(*jsonv.Object); ok && o != nil {
			return jsonv.Clone(o), nil
		}
	case TypeAddresses:
		switch x := v.(type) {
		case string:
			return []jsonv.Value{x}, nil
		case []jsonv.Value:
			out := make([]jsonv.Value, len(x))
			for i, e := range x {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("item %d: %v", i, typeError{jsonv.TypeName(e), TypeString})
				}
				out[i] = s
			}
			return out, nil
		}
		return nil, typeError{jsonv.TypeName(v), "string or array of strings"}
	default:
		return nil, fmt.Errorf("parameter type %q is not supported", typ)
	}
	return nil, typeError{jsonv.TypeName(v), typ}
}

func inEnum(enum []jsonv.Value, v jsonv.Value) bool {
	for _, e := range enum {
		if jsonv.Equal(e, v) {
			return true
		}
	}
	return false
}

func enumList(enum []jsonv.Value) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = jsonv.MustEncode(e)
	}
	return strings.Join(parts, ", ")
}
