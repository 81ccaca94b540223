// Package jsonv is the JSON value model shared by the workspace, the tools and the Starlark
// bridge: objects keep their key order, whole numbers are int64, and encoding is deterministic.
//
// A Value is one of: nil, bool, int64, float64, string, []Value, *Object.
package jsonv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Value is a JSON value: nil, bool, int64, float64, string, []Value or *Object.
type Value = any

// Member is one key of an object.
type Member struct {
	Key   string
	Value Value
}

// Object is a JSON object that keeps insertion order.
//
// Members may be read, and changed directly: appended to, re-sliced, or replaced by another
// slice. An object with many members keeps an index from key to position, built lazily and
// checked against the slice (its first element and length) before each use, so such changes
// are seen; what it cannot see is a key changed in place (o.Members[i].Key = k) or a truncated
// slice refilled to the same length with other keys: do those on a new slice, or through Set and
// Delete. Get may be called from many goroutines at once, as long as nothing changes the object.
// Compare objects with Equal: reflect.DeepEqual also sees whether a large one has its index yet.
type Object struct {
	Members []Member
	idx     atomic.Pointer[index]
}

// indexMin is the number of members from which an object looks keys up through an index; below
// it a linear scan is as fast and allocates nothing.
const indexMin = 32

// index maps each key of Members to the position of its first member. It describes the slice
// whose first element is base and whose length is n; any other slice makes it stale. Only
// writers (Set, Delete) change an index in place; readers build a new one and publish it.
type index struct {
	pos  map[string]int
	base *Member
	n    int
}

// indexBuilds counts how often an index was built (for the tests).
var indexBuilds atomic.Int64

// first is the address of the first member (nil for none). An index keeps it as a pointer, not
// a number, so the array it points to cannot be freed and its address reused by another slice.
func first(ms []Member) *Member {
	if len(ms) == 0 {
		return nil
	}
	return &ms[0]
}

func (ix *index) matches(ms []Member) bool {
	return ix.n == len(ms) && ix.base == first(ms)
}

// reindex builds and publishes an index of Members.
func (o *Object) reindex() *index {
	indexBuilds.Add(1)
	ms := o.Members
	ix := &index{pos: make(map[string]int, len(ms)), base: first(ms), n: len(ms)}
	for i := range ms {
		if _, dup := ix.pos[ms[i].Key]; !dup {
			ix.pos[ms[i].Key] = i
		}
	}
	o.idx.Store(ix)
	return ix
}

// find returns the position of key's first member, or -1, and the index it used (nil for a
// small object).
func (o *Object) find(key string) (int, *index) {
	ms := o.Members
	if len(ms) < indexMin {
		for i := range ms {
			if ms[i].Key == key {
				return i, nil
			}
		}
		return -1, nil
	}
	ix := o.idx.Load()
	if ix == nil || !ix.matches(ms) {
		ix = o.reindex()
	}
	i, ok := ix.pos[key]
	if ok && ms[i].Key != key { // a key was changed in place
		ix = o.reindex()
		i, ok = ix.pos[key]
	}
	if !ok {
		return -1, ix
	}
	return i, ix
}

// NewObject builds an object from alternating keys and values.
func NewObject(kv ...any) *Object {
	o := &Object{Members: make([]Member, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Get returns the value of key and whether it is present. When keys repeat (Members changed
// directly), it is the first member's.
func (o *Object) Get(key string) (Value, bool) {
	if o == nil {
		return nil, false
	}
	if len(o.Members) < indexMin { // as find does, without the call
		for i := range o.Members {
			if o.Members[i].Key == key {
				return o.Members[i].Value, true
			}
		}
		return nil, false
	}
	if i, _ := o.find(key); i >= 0 {
		return o.Members[i].Value, true
	}
	return nil, false
}

// Set replaces the value of key (of its first member), or appends it.
func (o *Object) Set(key string, v Value) {
	if len(o.Members) < indexMin { // as find does, without the call
		for i := range o.Members {
			if o.Members[i].Key == key {
				o.Members[i].Value = v
				return
			}
		}
		o.Members = append(o.Members, Member{key, v})
		return
	}
	i, ix := o.find(key)
	if i >= 0 {
		o.Members[i].Value = v
		return
	}
	o.Members = append(o.Members, Member{key, v})
	if ix != nil { // it matched Members before the append: keep it matching
		ix.pos[key] = len(o.Members) - 1
		ix.base, ix.n = first(o.Members), len(o.Members)
	}
}

// Delete removes key (its first member) if present.
func (o *Object) Delete(key string) {
	i, ix := o.find(key)
	if i < 0 {
		return
	}
	o.Members = append(o.Members[:i:i], o.Members[i+1:]...)
	if ix == nil || len(o.Members) < indexMin {
		o.idx.Store(nil)
		return
	}
	// Members from i on moved down by one: a key whose first member was among them follows it,
	// and the deleted key now starts at its next member, if any.
	delete(ix.pos, key)
	ms := o.Members
	for j := i; j < len(ms); j++ {
		if p, ok := ix.pos[ms[j].Key]; !ok || p == j+1 {
			ix.pos[ms[j].Key] = j
		}
	}
	ix.base, ix.n = first(ms), len(ms)
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

// Walk calls fn for v and then, depth first in document order, for every value inside it; key is
// the member's key for a value of an object, and "" otherwise.
func Walk(v Value, fn func(key string, v Value)) { walk("", v, fn) }

func walk(key string, v Value, fn func(key string, v Value)) {
	fn(key, v)
	switch x := v.(type) {
	case []Value:
		for _, e := range x {
			walk("", e, fn)
		}
	case *Object:
		if x != nil {
			for _, m := range x.Members {
				walk(m.Key, m.Value, fn)
			}
		}
	}
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
		fa, oka := Number(a)
		fb, okb := Number(b)
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

// Number returns a JSON number (int64 or float64) as a float64.
func Number(v Value) (float64, bool) {
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
	// encoding/json escapes <, > and & for HTML; we want plain text, so do it by hand, copying
	// runs of plain bytes at once.
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			fmt.Fprintf(b, `\u%04x`, c)
		}
		start = i + 1
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// Decode parses one JSON value (RFC 8259). Whole numbers (no fraction, or a fraction of zero
// that fits) become int64; others float64. Objects keep their order; a repeated key keeps the
// last value. Nesting deeper than MaxDepth is an error.
func Decode(data []byte) (Value, error) {
	d := decoder{data: data}
	d.space()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.data) {
		return nil, d.errorf("trailing data after the value")
	}
	return v, nil
}

// DecodeString is Decode of a string.
func DecodeString(s string) (Value, error) { return Decode([]byte(s)) }

// MaxDepth bounds the nesting of decoded values.
const MaxDepth = 1000

type decoder struct {
	data []byte
	i    int
}

func (d *decoder) errorf(format string, a ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", d.i, fmt.Sprintf(format, a...))
}

func (d *decoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (Value, error) {
	if depth > MaxDepth {
		return nil, d.errorf("nested more than %d levels", MaxDepth)
	}
	if d.i >= len(d.data) {
		return nil, d.errorf("unexpected end of input")
	}
	switch c := d.data[d.i]; {
	case c == '{':
		d.i++
		o := &Object{}
		d.space()
		if d.i < len(d.data) && d.data[d.i] == '}' {
			d.i++
			return o, nil
		}
		for {
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != '"' {
				return nil, d.errorf("want a string key")
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			d.space()
			if d.i >= len(d.data) || d.data[d.i] != ':' {
				return nil, d.errorf("want ':' after an object key")
			}
			d.i++
			d.space()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
			d.space()
			if d.i >= len(d.data) {
				return nil, d.errorf("unexpected end of input in an object")
			}
			if d.data[d.i] == ',' {
				d.i++
				continue
			}
			if d.data[d.i] == '}' {
				d.i++
				return o, nil
			}
			return nil, d.errorf("want ',' or '}' in an object")
		}
	case c == '[':
		d.i++
		arr := []Value{}
		d.space()
		if d.i < len(d.data) && d.data[d.i] == ']' {
			d.i++
			return arr, nil
		}
		for {
			d.space()
			v, err := d.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
			d.space()
			if d.i >= len(d.data) {
				return nil, d.errorf("unexpected end of input in an array")
			}
			if d.data[d.i] == ',' {
				d.i++
				continue
			}
			if d.data[d.i] == ']' {
				d.i++
				return arr, nil
			}
			return nil, d.errorf("want ',' or ']' in an array")
		}
	case c == '"':
		return d.str()
	case c == 't':
		return d.literal("true", true)
	case c == 'f':
		return d.literal("false", false)
	case c == 'n':
		return d.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return d.Number()
	}
	return nil, d.errorf("unexpected character %q", d.data[d.i])
}

func (d *decoder) literal(word string, v Value) (Value, error) {
	if !bytes.HasPrefix(d.data[d.i:], []byte(word)) {
		return nil, d.errorf("invalid literal")
	}
	d.i += len(word)
	return v, nil
}

func (d *decoder) Number() (Value, error) {
	start := d.i
	if d.data[d.i] == '-' {
		d.i++
	}
	digits := func() int {
		n := 0
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	intStart := d.i
	if digits() == 0 {
		return nil, d.errorf("invalid number")
	}
	if d.data[intStart] == '0' && d.i-intStart > 1 {
		return nil, d.errorf("invalid number: leading zero")
	}
	if d.i < len(d.data) && d.data[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits after '.'")
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, d.errorf("invalid number: no digits in the exponent")
		}
	}
	return ParseNumber(string(d.data[start:d.i]))
}

// str reads a string at d.i (which is '"').
func (d *decoder) str() (string, error) {
	d.i++
	start := d.i
	// fast path: no escapes
	for d.i < len(d.data) {
		c := d.data[d.i]
		if c == '"' {
			s := string(d.data[start:d.i])
			d.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		d.i++
	}
	buf := append([]byte(nil), d.data[start:d.i]...)
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return string(buf), nil
		case c < 0x20:
			return "", d.errorf("control character in a string")
		case c != '\\':
			buf = append(buf, c)
			d.i++
			continue
		}
		d.i++
		if d.i >= len(d.data) {
			break
		}
		e := d.data[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.errorf("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := unicode.ReplacementChar
				if d.i+1 < len(d.data) && d.data[d.i] == '\\' && d.data[d.i+1] == 'u' {
					d.i += 2
					if lo, ok := d.hex4(); ok {
						r2 = utf16.DecodeRune(r, lo)
					} else {
						return "", d.errorf("invalid \\u escape")
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", d.errorf("invalid escape \\%c", e)
		}
	}
	return "", d.errorf("unexpected end of input in a string")
}

func (d *decoder) hex4() (rune, bool) {
	if d.i+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.i : d.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// ParseNumber turns JSON number text into int64 when it is whole and fits, else float64.
func ParseNumber(s string) (Value, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return nil, fmt.Errorf("JSON number %s is out of range", s)
		}
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

// Indent encodes v as JSON indented by two spaces (keys in their order).
func Indent(v Value) ([]byte, error) {
	b, err := Encode(v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
