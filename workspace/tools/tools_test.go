package tools_test

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, ok := range []string{"a", "fs_read", "book_room2", "x_", long} {
		assert.True(t, tools.ValidName(ok), ok)
	}
	for _, bad := range []string{"", "Fs", "1a", "_a", "a-b", "a.b", "a b", "é", long + "a"} {
		assert.False(t, tools.ValidName(bad), bad)
	}
}

func TestSchema(t *testing.T) {
	custom := &tools.Tool{Name: "list_rooms", Description: "Rooms.", Params: []tools.Param{
		{Name: "site", Type: tools.TypeString, Required: true, Enum: []jsonv.Value{"lisbon", "porto"}},
		{Name: "min", Type: tools.TypeInteger, Default: int64(1), HasDefault: true},
		{Name: "tags", Type: tools.TypeArray},
		{Name: "filter", Type: tools.TypeObject},
	}}
	assert.Equal(t,
		`{"type":"function","function":{"name":"list_rooms","description":"Rooms.","parameters":{"type":"object","properties":{"site":{"type":"string","enum":["lisbon","porto"]},"min":{"type":"integer","default":1},"tags":{"type":"array"},"filter":{"type":"object"}},"required":["site"],"additionalProperties":false}}}`,
		jsonv.MustEncode(custom.Schema()))
}

func must(v jsonv.Value, _ ...any) jsonv.Value { return v }

func TestCheckArgs(t *testing.T) {
	tl := &tools.Tool{Name: "t", Params: []tools.Param{
		{Name: "path", Type: tools.TypeString, Required: true},
		{Name: "limit", Type: tools.TypeInteger, Default: int64(20), HasDefault: true},
		{Name: "ratio", Type: tools.TypeNumber},
		{Name: "flag", Type: tools.TypeBoolean, Default: false, HasDefault: true},
		{Name: "site", Type: tools.TypeString, Enum: []jsonv.Value{"lisbon", "porto"}},
		{Name: "tags", Type: tools.TypeArray, Items: tools.TypeString},
		{Name: "counts", Type: tools.TypeArray, Items: tools.TypeInteger},
		{Name: "any", Type: tools.TypeArray},
		{Name: "meta", Type: tools.TypeObject},
		{Name: "to", Type: tools.TypeAddresses},
		{Name: "level", Type: tools.TypeInteger, Enum: []jsonv.Value{int64(1), int64(2)}},
	}}
	check := func(in string) (string, error) {
		out, err := tl.CheckArgs(servicetest.Object(t, in))
		if err != nil {
			return "", err
		}
		return jsonv.MustEncode(out), nil
	}

	got, err := check(`{"path":"/a"}`)
	require.NoError(t, err)
	assert.Equal(t, `{"path":"/a","limit":20,"flag":false}`, got, "defaults filled in, others absent")

	got, err = check(`{"flag":true,"limit":5.0,"ratio":2,"path":"/a","ratio":3,"counts":[1,2.0],"to":"a@b","meta":{"x":[1]},"any":[1,"a",null],"site":"porto","tags":[],"level":2.0}`)
	require.NoError(t, err)
	assert.Equal(t, `{"path":"/a","limit":5,"ratio":3.0,"flag":true,"site":"porto","tags":[],"counts":[1,2],"any":[1,"a",null],"meta":{"x":[1]},"to":["a@b"],"level":2}`, got, "coerced, in Params order")

	got, err = check(`{"path":"/a","limit":null,"ratio":null,"to":["a@b","c@d"]}`)
	require.NoError(t, err)
	assert.Equal(t, `{"path":"/a","limit":20,"flag":false,"to":["a@b","c@d"]}`, got, "null is absent for optional arguments")

	errs := map[string]string{
		`{}`:                                        `missing required argument "path"`,
		`{"path":null}`:                             `argument "path": got null, want string`,
		`{"pth":"/a"}`:                              `unknown argument "pth" (the arguments are: path, limit, ratio, flag, site, tags, counts, any, meta, to, level)`,
		`{"path":"/a","pth":"/a"}`:                  `unknown argument "pth" (the arguments are: path, limit, ratio, flag, site, tags, counts, any, meta, to, level)`,
		`{"path":1}`:                                `argument "path": got integer, want string`,
		`{"path":"/a","limit":"5"}`:                 `argument "limit": got string, want integer`,
		`{"path":"/a","limit":2.5}`:                 `argument "limit": got number, want integer`,
		`{"path":"/a","ratio":"x"}`:                 `argument "ratio": got string, want number`,
		`{"path":"/a","flag":"true"}`:               `argument "flag": got string, want boolean`,
		`{"path":"/a","site":"x"}`:                  `argument "site": "x" is not one of "lisbon", "porto"`,
		`{"path":"/a","level":3}`:                   `argument "level": 3 is not one of 1, 2`,
		`{"path":"/a","tags":"a"}`:                  `argument "tags": got string, want array`,
		`{"path":"/a","tags":["a",1]}`:              `argument "tags": item 1: got integer, want string`,
		`{"path":"/a","counts":[1.5]}`:              `argument "counts": item 0: got number, want integer`,
		`{"path":"/a","meta":[]}`:                   `argument "meta": got array, want object`,
		`{"path":"/a","to":3}`:                      `argument "to": got integer, want string or array of strings`,
		`{"path":"/a","to":["a@b",null]}`:           `argument "to": item 1: got null, want string`,
		`{"path":"/a","limit":1e300}`:               `argument "limit": got number, want integer`,
		`{"path":"/a","limit":9223372036854775808}`: `argument "limit": got number, want integer`,
	}
	for in, want := range errs {
		_, err := check(in)
		assert.EqualError(t, err, want, in)
	}

	// nil args is an empty object; the input is not changed and not shared
	_, err = tl.CheckArgs(nil)
	assert.EqualError(t, err, `missing required argument "path"`)
	in := servicetest.Object(t, `{"path":"/a","tags":["x"],"meta":{"k":1}}`)
	out, err := tl.CheckArgs(in)
	require.NoError(t, err)
	must(out.Get("tags")).([]jsonv.Value)[0] = "changed"
	must(out.Get("meta")).(*jsonv.Object).Set("k", 2)
	assert.Equal(t, `{"path":"/a","tags":["x"],"meta":{"k":1}}`, jsonv.MustEncode(in))

	// defaults are copies too
	tl2 := &tools.Tool{Name: "t", Params: []tools.Param{{Name: "xs", Type: tools.TypeArray, Default: []jsonv.Value{"a"}, HasDefault: true}}}
	out, _ = tl2.CheckArgs(nil)
	must(out.Get("xs")).([]jsonv.Value)[0] = "changed"
	assert.Equal(t, []jsonv.Value{"a"}, tl2.Params[0].Default)

	// an unknown argument of a tool without parameters says it takes none
	_, err = (&tools.Tool{Name: "ping"}).CheckArgs(servicetest.Object(t, `{"x":1}`))
	assert.EqualError(t, err, `unknown argument "x" (it takes no arguments)`)
}
