// Package jsonv is the JSON value model shared by the workspace, the tools and the Starlark
// bridge: objects keep their key order, whole numbers are int64, and encoding is deterministic.
//
// A Value is one of: nil, bool, int64, float64, string, []Value, *Object.
package jsonv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Value is a JSON value: nil, bool, int64, float64, string, []Value or *Object.
type Value = any

// Member is one key of an object.
type Member struct {
	Key   string
	Value Value
}

// Object is a JSON object that keeps insertion order.
type Object struct {
	Members []Member
}

// NewObject builds an object from alternating keys and values.
func NewObject(kv ...any) *Object {
	o := &Object{Members: make([]Member, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	for _, m := range o.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key, or appends it.
func (o *Object) Set(key string, v Value) {
	for i := range o.Members {
		if o.Members[i].Key == key {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, Member{key, v})
}

// Delete removes key if present.
func (o *Object) Delete(key string) {
	for i := range o.Members {
		if o.Members[i].Key == key {
			o.Members = append(o.Members[:i:i], o.Members[i+1:]...)
			return
		}
	}
}

// Len is the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.Members)
}

// Keys returns the keys in order.
func (o *Object) Keys() []string {
	ks := make([]string, len(o.Members))
	for i, m := range o.Members {
		ks[i] = m.Key
	}
	return ks
}

// Clone returns a deep copy of v.
func Clone(v Value) Value {
	switch x := v.(type) {
	case []Value:
		out := make([]Value, len(x))
		for i, e := range x {
			out[i] = Clone(e)
		}
		return out
	case *Object:
		if x == nil {
			return (*Object)(nil)
		}
		out := &Object{Members: make([]Member, len(x.Members))}
		for i, m := range x.Members {
			out.Members[i] = Member{m.Key, Clone(m.Value)}
		}
		return out
	default:
		return v
	}
}

// Equal reports whether a and b are the same JSON value. Numbers compare by value (1 == 1.0);
// objects compare as sets of keys (order does not matter).
func Equal(a, b Value) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64, float64:
		fa, oka := number(a)
		fb, okb := number(b)
		if !oka || !okb {
			return false
		}
		if ia, ok := a.(int64); ok {
			if ib, ok := b.(int64); ok {
				return ia == ib
			}
		}
		return fa == fb
	case []Value:
		y, ok := b.([]Value)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, m := range x.Members {
			v, ok := y.Get(m.Key)
			if !ok || !Equal(m.Value, v) {
				return false
			}
		}
		return true
	}
	return false
}

func number(v Value) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Encode writes v as compact JSON, objects in their key order.
func Encode(v Value) ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MustEncode is Encode for values known to be valid (no NaN, no foreign types).
func MustEncode(v Value) string {
	b, err := Encode(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func encode(b *bytes.Buffer, v Value) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("cannot encode %v as JSON", x)
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		b.WriteString(s)
	case string:
		writeString(b, x)
	case []Value:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, e)
		}
		b.WriteByte(']')
	case *Object:
		if x == nil {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('{')
		for i, m := range x.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.Key)
			b.WriteByte(':')
			if err := encode(b, m.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("cannot encode %T as JSON", v)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	// encoding/json escapes <, > and & for HTML; we want plain text, so do it by hand.
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		case c == '\n':
			b.WriteString(`\n`)
			i++
		case c == '\r':
			b.WriteString(`\r`)
			i++
		case c == '\t':
			b.WriteString(`\t`)
			i++
		case c < 0x20:
			fmt.Fprintf(b, `\u%04x`, c)
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	b.WriteByte('"')
}

// Decode parses one JSON value. Whole numbers (no fraction, or a fraction of zero that fits)
// become int64; others float64. Objects keep their order; a repeated key keeps the last value.
func Decode(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: trailing data after the value")
	}
	return v, nil
}

// DecodeString is Decode of a string.
func DecodeString(s string) (Value, error) { return Decode([]byte(s)) }

func decodeValue(dec *json.Decoder) (Value, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("invalid JSON: unexpected end of input")
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %v", err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("invalid JSON: object key is not a string")
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.Set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %v", err)
			}
			return o, nil
		case '[':
			arr := []Value{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %v", err)
			}
			return arr, nil
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	case json.Number:
		return ParseNumber(string(t))
	default:
		return t, nil // nil, bool, string
	}
}

// ParseNumber turns JSON number text into int64 when it is whole and fits, else float64.
func ParseNumber(s string) (Value, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("invalid JSON number %q", s)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), nil
	}
	return f, nil
}

// TypeName names v's JSON type, as in error messages ("string", "integer", "number", ...).
func TypeName(v Value) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int64, int:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case []Value:
		return "array"
	case *Object:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
