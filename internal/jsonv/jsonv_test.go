package jsonv

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	v, err := DecodeString(` {"b": [1, 2.5, 3.0, -0, 1e2, "x\n\u00e9\ud83d\ude00", true, false, null], "a": {}, "b2": []} `)
	require.NoError(t, err)
	o := v.(*Object)
	assert.Equal(t, []string{"b", "a", "b2"}, o.Keys(), "key order is kept")
	b, _ := o.Get("b")
	assert.Equal(t, []Value{int64(1), 2.5, int64(3), int64(0), int64(100), "x\né😀", true, false, nil}, b)

	for _, bad := range []string{``, `{`, `[1,]`, `{"a" 1}`, `01`, `1.`, `-`, `"\x"`, "\"a\nb\"", `tru`, `1 2`, `{"a":1,}`, `"\u12"`, `[`} {
		_, err := DecodeString(bad)
		assert.Error(t, err, "%q", bad)
	}
}

// Decode agrees with encoding/json on what is valid JSON, and Encode round-trips. In every
// decoded object the keys are distinct and each key gets its member's value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `1e400`, `-0.5`, `[]`, string(objectJSON(40)),
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,` +
			`"k16":16,"k17":17,"k18":18,"k19":19,"k20":20,"k21":21,"k22":22,"k23":23,"k24":24,"k25":25,"k26":26,"k27":27,"k28":28,` +
			`"k29":29,"k30":30,"k31":31,"k32":32,"k3":{"k3":[]},"k33":33,"k0":"last"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b)
		if err != nil && strings.Contains(err.Error(), "out of range") {
			return // valid JSON, but not a float64
		}
		if json.Valid(b) != (err == nil) {
			t.Fatalf("valid=%v but err=%v for %q", json.Valid(b), err, b)
		}
		if err != nil {
			return
		}
		Walk(v, func(_ string, v Value) {
			o, ok := v.(*Object)
			if !ok {
				return
			}
			seen := map[string]bool{}
			for _, m := range o.Members {
				if seen[m.Key] {
					t.Fatalf("key %q twice in %q", m.Key, b)
				}
				seen[m.Key] = true
				if got, ok := o.Get(m.Key); !ok || !Equal(got, m.Value) {
					t.Fatalf("Get(%q) = %v, %v; want %v in %q", m.Key, got, ok, m.Value, b)
				}
			}
		})
		enc, err := Encode(v)
		require.NoError(t, err)
		v2, err := Decode(enc)
		require.NoError(t, err)
		if !Equal(v, v2) {
			t.Fatalf("round trip: %q -> %q", b, enc)
		}
	})
}

func TestEncode(t *testing.T) {
	o := NewObject("z", int64(1), "a", 1.5, "s", "<&>\"\\\n\x01", "f", 3.0, "l", []Value{nil, true})
	assert.Equal(t, `{"z":1,"a":1.5,"s":"<&>\"\\\n\u0001","f":3.0,"l":[null,true]}`, MustEncode(o))
}

func TestWalkVisitsEveryValueInDocumentOrder(t *testing.T) {
	v, err := DecodeString(`{"a": [1, {"id": "x"}], "b": null, "c": {}}`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	Walk(v, func(key string, v Value) { got = append(got, key+"="+TypeName(v)) })
	want := []string{"=object", "a=array", "=integer", "=object", "id=string", "b=null", "c=object"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("visited %v, want %v", got, want)
	}
}
