package trace

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// The codec turns the event types of events.go into JSON objects and back. Each struct type gets
// a schema once, from its fields: the JSON key is the json tag's name, the JSON type follows from
// the Go type, and the tags say which fields may be absent or null (see events.go). Encoding
// keeps the fields' order and goes through jsonv, so a line is byte for byte what jsonv writes;
// decoding checks every field against the same schema.

// JSON types a field accepts.
const (
	tString = 1 << iota
	tInt
	tNumber
	tBool
	tArray
	tObject
	tNull
)

// field is one member of an event, or of an object inside one.
type field struct {
	name     string
	index    int  // of the struct field
	types    int  // the JSON types it accepts
	omit     bool // omitempty: not written when zero, and may be absent
	optional bool // may be absent
	get      func(reflect.Value) jsonv.Value
	// set stores a value of one of types, not null, into a zero field. The path of an error it
	// returns is relative to the field ("[2].turn").
	set func(v reflect.Value, x jsonv.Value) *fieldError
}

type schema struct {
	kind   string       // the event's kind; "" for an object inside an event
	typ    reflect.Type // the struct
	ptr    reflect.Type // a pointer to it, the type of an event value
	fields []field
	turn   int // index in fields of the int field named turn, -1 when none
}

// fieldError is a missing or mistyped field; path names it inside the event ("checks[2].turn").
type fieldError struct {
	path    string
	missing bool
	got     jsonv.Value
	want    int
}

func (e *fieldError) Error() string {
	if e.missing {
		return fmt.Sprintf("missing field %q", e.path)
	}
	return fmt.Sprintf("field %q is %s, want %s", e.path, jsonv.TypeName(e.got), typeNames(e.want))
}

// schemas are the events' schemas by kind.
var schemas = func() map[string]*schema {
	m := make(map[string]*schema, len(bodies))
	for _, b := range bodies {
		s := newSchema(reflect.TypeOf(b).Elem())
		s.kind = b.Kind()
		m[s.kind] = s
	}
	return m
}()

// schemaOf is the schema of an event value.
func schemaOf(b Body) (*schema, reflect.Value) {
	v := reflect.ValueOf(b)
	s := schemas[b.Kind()]
	if s == nil || v.Type() != s.ptr || v.IsNil() {
		panic(fmt.Sprintf("trace: %T is not an event", b))
	}
	return s, v.Elem()
}

var (
	valueType  = reflect.TypeFor[jsonv.Value]()
	objectType = reflect.TypeFor[*jsonv.Object]()
)

func newSchema(t reflect.Type) *schema {
	s := &schema{typ: t, ptr: reflect.PointerTo(t), turn: -1}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := strings.Split(sf.Tag.Get("json"), ",")
		if tag[0] == "" || tag[0] == "-" || !sf.IsExported() {
			panic(fmt.Sprintf("trace: %s.%s has no json name", t.Name(), sf.Name))
		}
		f := field{name: tag[0], index: i}
		for _, o := range tag[1:] {
			f.omit = f.omit || o == "omitempty"
		}
		f.optional = f.omit
		nullable := false
		for o := range strings.SplitSeq(sf.Tag.Get("trace"), ",") {
			f.optional = f.optional || o == "optional"
			nullable = nullable || o == "null"
		}
		f.types, f.get, f.set = convert(sf.Type, nullable)
		if nullable {
			f.types |= tNull
		}
		if _, dup := s.field(f.name); dup || f.name == "event" {
			panic(fmt.Sprintf("trace: %s: the name %q is taken", t.Name(), f.name))
		}
		if f.name == "turn" && sf.Type.Kind() == reflect.Int {
			s.turn = len(s.fields)
		}
		s.fields = append(s.fields, f)
	}
	return s
}

// convert gives the JSON types of a Go type and the functions that read and write its values.
// A nil pointer is null; a nil slice is null when the field may be null, and [] otherwise.
func convert(t reflect.Type, nullable bool) (int, func(reflect.Value) jsonv.Value, func(reflect.Value, jsonv.Value) *fieldError) {
	switch {
	case t.Kind() == reflect.String:
		return tString, func(v reflect.Value) jsonv.Value { return v.String() },
			func(v reflect.Value, x jsonv.Value) *fieldError { v.SetString(x.(string)); return nil }
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		return tInt, func(v reflect.Value) jsonv.Value { return v.Int() },
			func(v reflect.Value, x jsonv.Value) *fieldError { v.SetInt(x.(int64)); return nil }
	case t.Kind() == reflect.Float64:
		return tNumber, func(v reflect.Value) jsonv.Value { return v.Float() },
			func(v reflect.Value, x jsonv.Value) *fieldError {
				f, _ := jsonv.Number(x)
				v.SetFloat(f)
				return nil
			}
	case t.Kind() == reflect.Bool:
		return tBool, func(v reflect.Value) jsonv.Value { return v.Bool() },
			func(v reflect.Value, x jsonv.Value) *fieldError { v.SetBool(x.(bool)); return nil }
	case t == objectType:
		return tObject, func(v reflect.Value) jsonv.Value {
			if v.IsNil() {
				return nil
			}
			return v.Interface()
		}, setValue
	case t.Kind() == reflect.Slice && t.Elem() == valueType:
		return tArray, func(v reflect.Value) jsonv.Value {
			if v.IsNil() && nullable {
				return nil
			}
			if v.IsNil() {
				return []jsonv.Value{}
			}
			return v.Interface()
		}, setValue
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		elem := newSchema(t.Elem())
		return tArray, func(v reflect.Value) jsonv.Value {
				if v.IsNil() && nullable {
					return nil
				}
				out := make([]jsonv.Value, v.Len())
				for i := range out {
					out[i] = elem.object(v.Index(i))
				}
				return out
			}, func(v reflect.Value, x jsonv.Value) *fieldError {
				arr := x.([]jsonv.Value)
				sl := reflect.MakeSlice(t, len(arr), len(arr))
				for i, e := range arr {
					o, ok := e.(*jsonv.Object)
					if !ok {
						return &fieldError{path: fmt.Sprintf("[%d]", i), got: e, want: tObject}
					}
					if err := elem.decode(o, sl.Index(i)); err != nil {
						err.path = fmt.Sprintf("[%d].%s", i, err.path)
						return err
					}
				}
				v.Set(sl)
				return nil
			}
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		elem := newSchema(t.Elem())
		return tObject, func(v reflect.Value) jsonv.Value {
				if v.IsNil() {
					return nil
				}
				return elem.object(v.Elem())
			}, func(v reflect.Value, x jsonv.Value) *fieldError {
				p := reflect.New(t.Elem())
				if err := elem.decode(x.(*jsonv.Object), p.Elem()); err != nil {
					err.path = "." + err.path
					return err
				}
				v.Set(p)
				return nil
			}
	case t.Kind() == reflect.Pointer:
		types, get, set := convert(t.Elem(), false)
		return types, func(v reflect.Value) jsonv.Value {
				if v.IsNil() {
					return nil
				}
				return get(v.Elem())
			}, func(v reflect.Value, x jsonv.Value) *fieldError {
				p := reflect.New(t.Elem())
				v.Set(p)
				return set(p.Elem(), x)
			}
	}
	panic(fmt.Sprintf("trace: no JSON form for %s", t))
}

func setValue(v reflect.Value, x jsonv.Value) *fieldError {
	v.Set(reflect.ValueOf(x))
	return nil
}

// field is the field named k.
func (s *schema) field(k string) (*field, bool) {
	for i := range s.fields {
		if s.fields[i].name == k {
			return &s.fields[i], true
		}
	}
	return nil, false
}

// turnOf is the turn of a value of the schema, -1 when it has none.
func (s *schema) turnOf(v reflect.Value) int {
	if s.turn < 0 {
		return -1
	}
	return int(v.Field(s.fields[s.turn].index).Int())
}

// object is the JSON object of a struct value: the event's kind first for an event, then the
// fields in their order.
func (s *schema) object(v reflect.Value) *jsonv.Object {
	o := &jsonv.Object{Members: make([]jsonv.Member, 0, len(s.fields)+1)}
	if s.kind != "" {
		o.Members = append(o.Members, jsonv.Member{Key: "event", Value: s.kind})
	}
	for _, f := range s.fields {
		fv := v.Field(f.index)
		if f.omit && fv.IsZero() {
			continue
		}
		o.Members = append(o.Members, jsonv.Member{Key: f.name, Value: f.get(fv)})
	}
	return o
}

// decode checks the members of o against the schema and stores them in v (a zero struct).
// Members that are not fields are ignored.
func (s *schema) decode(o *jsonv.Object, v reflect.Value) *fieldError {
	for _, f := range s.fields {
		x, present := o.Get(f.name)
		if !present {
			if f.optional {
				continue
			}
			return &fieldError{path: f.name, missing: true}
		}
		if typeOf(x)&f.types == 0 {
			return &fieldError{path: f.name, got: x, want: f.types}
		}
		if x == nil {
			continue // the zero value
		}
		if err := f.set(v.Field(f.index), x); err != nil {
			err.path = f.name + err.path
			return err
		}
	}
	return nil
}

// Object is the JSON object of an event, as its line holds it.
func Object(b Body) *jsonv.Object {
	s, v := schemaOf(b)
	return s.object(v)
}

// Encode is the line of an event, without its newline.
func Encode(b Body) ([]byte, error) { return jsonv.Encode(Object(b)) }

// value is the JSON value of the field named k of an event; nil when absent.
func value(b Body, k string) jsonv.Value {
	if b == nil {
		return nil
	}
	s, v := schemaOf(b)
	f, ok := s.field(k)
	if !ok {
		if k == "event" {
			return s.kind
		}
		return nil
	}
	fv := v.Field(f.index)
	if f.omit && fv.IsZero() {
		return nil
	}
	return f.get(fv)
}

func typeOf(v jsonv.Value) int {
	switch v.(type) {
	case nil:
		return tNull
	case string:
		return tString
	case int64:
		return tInt | tNumber
	case float64:
		return tNumber
	case bool:
		return tBool
	case []jsonv.Value:
		return tArray
	case *jsonv.Object:
		return tObject
	}
	return 0
}

func typeNames(k int) string {
	names := []string{"string", "integer", "number", "boolean", "array", "object", "null"}
	var out []string
	for i, n := range names {
		if k&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "?"
	}
	return strings.Join(out, " or ")
}
