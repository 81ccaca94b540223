package tools

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dec decodes JSON text into an object (test helper).
func dec(t testing.TB, s string) *jsonv.Object {
	t.Helper()
	v, err := jsonv.DecodeString(s)
	require.NoError(t, err)
	o, ok := v.(*jsonv.Object)
	require.True(t, ok, "not an object: %s", s)
	return o
}

func TestValidName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, ok := range []string{"a", "fs_read", "book_room2", "x_", long} {
		assert.True(t, ValidName(ok), ok)
	}
	for _, bad := range []string{"", "Fs", "1a", "_a", "a-b", "a.b", "a b", "é", long + "a"} {
		assert.False(t, ValidName(bad), bad)
	}
}

func TestKernelTools(t *testing.T) {
	var names []string
	for _, tl := range kernelTools() {
		names = append(names, tl.Name)
		assert.True(t, ValidName(tl.Name))
		assert.NotEmpty(t, tl.Description)
		assert.NotNil(t, tl.Run)
		for _, p := range tl.Params {
			assert.True(t, ValidName(p.Name), "%s.%s", tl.Name, p.Name)
			assert.NotEmpty(t, p.Description, "%s.%s", tl.Name, p.Name)
			assert.False(t, p.Required && p.HasDefault, "%s.%s", tl.Name, p.Name)
		}
	}
	assert.Equal(t, []string{
		"fs_list", "fs_read", "fs_write", "fs_delete", "fs_move", "fs_search",
		"mail_list", "mail_read", "mail_mark", "mail_send", "mail_reply", "mail_forward", "mail_move", "mail_save_attachment",
		"calendar_list", "calendar_create", "calendar_update", "calendar_delete",
	}, names)
	for g, ts := range map[string][]*Tool{"fs": FSTools(), "mail": MailTools(), "calendar": CalendarTools()} {
		for _, tl := range ts {
			assert.Equal(t, g, tl.Group)
		}
	}
	assert.Same(t, FSTools()[0], FSTools()[0], "built once")
}

func TestSchema(t *testing.T) {
	tl, _ := builtin("fs_list")
	assert.Equal(t,
		`{"type":"function","function":{"name":"fs_list","description":"List the contents of a folder in the user's files. Returns the names of the files and folders directly inside it, sorted; folder names end with \"/\".","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the folder, like \"/reports\".","default":"/"}},"required":[],"additionalProperties":false}}}`,
		jsonv.MustEncode(tl.Schema()))

	tl, _ = builtin("mail_send")
	params, _ := must(must(tl.Schema().Get("function")).(*jsonv.Object).Get("parameters")).(*jsonv.Object).Get("properties")
	props := params.(*jsonv.Object)
	assert.Equal(t, []string{"to", "subject", "body", "cc", "attachments"}, props.Keys(), "properties in Params order")
	assert.Equal(t, `{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}],"description":"Recipient address, or a list of addresses."}`, jsonv.MustEncode(must(props.Get("to"))))
	assert.Equal(t, `{"type":"array","description":"Absolute paths of files to attach; each is attached under its file name.","items":{"type":"string"},"default":[]}`, jsonv.MustEncode(must(props.Get("attachments"))))
	req, _ := must(must(tl.Schema().Get("function")).(*jsonv.Object).Get("parameters")).(*jsonv.Object).Get("required")
	assert.Equal(t, `["to","subject","body"]`, jsonv.MustEncode(req))

	custom := &Tool{Name: "list_rooms", Description: "Rooms.", Params: []Param{
		{Name: "site", Type: TypeString, Required: true, Enum: []jsonv.Value{"lisbon", "porto"}},
		{Name: "min", Type: TypeInteger, Default: int64(1), HasDefault: true},
		{Name: "tags", Type: TypeArray},
		{Name: "filter", Type: TypeObject},
	}}
	assert.Equal(t,
		`{"type":"function","function":{"name":"list_rooms","description":"Rooms.","parameters":{"type":"object","properties":{"site":{"type":"string","enum":["lisbon","porto"]},"min":{"type":"integer","default":1},"tags":{"type":"array"},"filter":{"type":"object"}},"required":["site"],"additionalProperties":false}}}`,
		jsonv.MustEncode(custom.Schema()))

	// every built-in schema encodes
	for _, tl := range kernelTools() {
		_, err := jsonv.Encode(tl.Schema())
		assert.NoError(t, err, tl.Name)
	}
}

func must(v jsonv.Value, _ ...any) jsonv.Value { return v }

func TestCheckArgs(t *testing.T) {
	tl := &Tool{Name: "t", Params: []Param{
		{Name: "path", Type: TypeString, Required: true},
		{Name: "limit", Type: TypeInteger, Default: int64(20), HasDefault: true},
		{Name: "ratio", Type: TypeNumber},
		{Name: "flag", Type: TypeBoolean, Default: false, HasDefault: true},
		{Name: "site", Type: TypeString, Enum: []jsonv.Value{"lisbon", "porto"}},
		{Name: "tags", Type: TypeArray, Items: TypeString},
		{Name: "counts", Type: TypeArray, Items: TypeInteger},
		{Name: "any", Type: TypeArray},
		{Name: "meta", Type: TypeObject},
		{Name: "to", Type: TypeAddresses},
		{Name: "level", Type: TypeInteger, Enum: []jsonv.Value{int64(1), int64(2)}},
	}}
	check := func(in string) (string, error) {
		out, err := tl.CheckArgs(dec(t, in))
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
		`{"pth":"/a"}`:                              `unknown argument "pth"`,
		`{"path":"/a","pth":"/a"}`:                  `unknown argument "pth"`,
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
	in := dec(t, `{"path":"/a","tags":["x"],"meta":{"k":1}}`)
	out, err := tl.CheckArgs(in)
	require.NoError(t, err)
	must(out.Get("tags")).([]jsonv.Value)[0] = "changed"
	must(out.Get("meta")).(*jsonv.Object).Set("k", 2)
	assert.Equal(t, `{"path":"/a","tags":["x"],"meta":{"k":1}}`, jsonv.MustEncode(in))

	// defaults are copies too
	tl2 := &Tool{Name: "t", Params: []Param{{Name: "xs", Type: TypeArray, Default: []jsonv.Value{"a"}, HasDefault: true}}}
	out, _ = tl2.CheckArgs(nil)
	must(out.Get("xs")).([]jsonv.Value)[0] = "changed"
	assert.Equal(t, []jsonv.Value{"a"}, tl2.Params[0].Default)
}
