package tools_test

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Size is the length jsonv.Encode gives, for every kind of value and escape.
func TestSizeIsTheEncodedLength(t *testing.T) {
	for _, v := range []jsonv.Value{
		nil, true, false, int64(0), int64(-1234567890123), 7, 0.5, 1.0, -2.5e-300, 1e21, 123456789.0,
		"", "plain", "quote \" back \\ nl \n cr \r tab \t bell \x07 nul \x00 del \x7f é \u2028 \xff",
		[]jsonv.Value{}, []jsonv.Value{int64(1), "a", nil, []jsonv.Value{}}, []string{}, []string{"a", "b\n"},
		(*jsonv.Object)(nil), jsonv.NewObject(), jsonv.NewObject("k\"", int64(1), "l", jsonv.NewObject("m", []jsonv.Value{true})),
	} {
		enc, err := jsonv.Encode(v)
		require.NoError(t, err)
		n, err := tools.Size(v)
		require.NoError(t, err)
		assert.Equal(t, len(enc), n, "%s", enc)
	}
	_, err := tools.Size(math.NaN())
	assert.Error(t, err)
	_, err = tools.Size(struct{}{})
	assert.Error(t, err)
}

// nested is {"v": [[...[1]...]]}: arguments depth levels deep.
func nested(depth int) *jsonv.Object {
	var v jsonv.Value = int64(1)
	for i := 1; i < depth; i++ {
		v = []jsonv.Value{v}
	}
	return jsonv.NewObject("v", v)
}

// The arguments of a call: the largest and deepest pass, one byte or one level more is an
// error that names the limit, and CheckArgs says it before anything else.
func TestArgsLimits(t *testing.T) {
	assert.NoError(t, tools.CheckArgsLimits(nil))
	assert.NoError(t, tools.CheckArgsLimits(nested(limits.ToolArgsDepth)))
	err := tools.CheckArgsLimits(nested(limits.ToolArgsDepth + 1))
	assert.EqualError(t, err, "the arguments are nested deeper than 100 levels, the limit of a tool call's arguments")

	fill := func(n int) *jsonv.Object { // {"v":"xxx…"} of n bytes
		return jsonv.NewObject("v", strings.Repeat("x", n-len(`{"v":""}`)))
	}
	assert.Len(t, jsonv.MustEncode(fill(limits.ToolArgs)), limits.ToolArgs)
	assert.NoError(t, tools.CheckArgsLimits(fill(limits.ToolArgs)))
	err = tools.CheckArgsLimits(fill(limits.ToolArgs + 1))
	assert.EqualError(t, err, "the arguments are more than 16 MiB of JSON, the limit of a tool call's arguments")

	tl := &tools.Tool{Name: "t", Params: []tools.Param{tools.Req("path", tools.TypeString, "")}}
	_, err = tl.CheckArgs(jsonv.NewObject("pth", nested(limits.ToolArgsDepth)))
	assert.EqualError(t, err, "the arguments are nested deeper than 100 levels, the limit of a tool call's arguments")
}

func TestCheckResult(t *testing.T) {
	assert.NoError(t, tools.CheckResult("fs_read", make([]byte, limits.ToolResult)))
	assert.EqualError(t, tools.CheckResult("fs_read", make([]byte, limits.ToolResult+1)),
		"the result of fs_read is 16777217 bytes of JSON, over the 16 MiB limit of a tool result; ask for less")
}

func TestErrorText(t *testing.T) {
	short := strings.Repeat("é", limits.ToolError/2)
	assert.Equal(t, short, tools.ErrorText(short))
	long := "x" + strings.Repeat("é", limits.ToolError)
	cut := tools.ErrorText(long)
	assert.LessOrEqual(t, len(cut), limits.ToolError)
	assert.True(t, utf8.ValidString(cut))
	assert.True(t, strings.HasPrefix(long, cut[:strings.LastIndex(cut, "… (")]), "the start of the message is kept")
	assert.Regexp(t, `é… \(\d+ more bytes not shown\)$`, cut)
}

func items(n int, text string) []jsonv.Value {
	out := make([]jsonv.Value, n)
	for i := range out {
		out[i] = jsonv.NewObject("i", int64(i), "text", text)
	}
	return out
}

func TestListing(t *testing.T) {
	// all there are, and they fit: the list as it is
	all := items(limits.ListItems, "a")
	assert.Equal(t, jsonv.Value(all), tools.Listing(all, len(all), false, "things", "ask less"))

	// more than a listing holds: the first ones, or the newest ones, and how many there are
	many := items(limits.ListItems+5, "a")
	got := tools.Listing(many, len(many), false, "things", "ask less").(*jsonv.Object)
	assert.Equal(t, []string{"items", "truncated", "total", "note"}, got.Keys())
	kept, _ := got.Get("items")
	assert.Len(t, kept, limits.ListItems)
	assert.Equal(t, many[0], kept.([]jsonv.Value)[0])
	assert.Equal(t, jsonv.Value(int64(limits.ListItems+5)), must(got.Get("total")))
	assert.Equal(t, "showing 200 of 205 things (a result holds at most 200 items and 256 KiB of JSON); ask less", must(got.Get("note")))
	newest := tools.Listing(many, len(many), true, "things", "ask less").(*jsonv.Object)
	assert.Equal(t, many[5:], must(newest.Get("items")))

	// items that fit, but more exist than were built (the caller stopped at ListItems)
	got = tools.Listing(all, 1000, false, "things", "ask less").(*jsonv.Object)
	assert.Equal(t, jsonv.Value(int64(1000)), must(got.Get("total")))

	// bytes: as many as fit in ListBytes, and at least one
	big := items(10, strings.Repeat("b", limits.ListBytes/4))
	got = tools.Listing(big, len(big), false, "things", "ask less").(*jsonv.Object)
	assert.Len(t, must(got.Get("items")), 3)
	assert.LessOrEqual(t, len(jsonv.MustEncode(must(got.Get("items")))), limits.ListBytes)
	huge := items(2, strings.Repeat("h", limits.ListBytes))
	got = tools.Listing(huge, len(huge), false, "things", "ask less").(*jsonv.Object)
	assert.Len(t, must(got.Get("items")), 1, "the first item is always shown")
}
