package files_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The largest file of "x\n" lines searched for "x": 4,194,304 matching lines. The result is a
// listing of the first ones that says how many there are, and building it costs about the
// file, not a value per match (it took gigabytes).
func TestFSSearchIsCapped(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	require.NoError(t, ws.Files().Write("/big.txt", strings.Repeat("x\n", limits.FileSize/2)))
	require.NoError(t, ws.Files().Write("/small.txt", "x marks the spot\n"))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := servicetest.OK(t, ws, "fs_search", `{"query":"X"}`)
	runtime.ReadMemStats(&after)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2*limits.FileSize), "bytes allocated by the search")

	assert.LessOrEqual(t, len(res), limits.ListBytes+1<<10)
	got := servicetest.Object(t, res)
	assert.Equal(t, []string{"items", "truncated", "total", "note"}, got.Keys())
	items, _ := got.Get("items")
	require.Len(t, items, limits.ListItems)
	assert.Equal(t, `{"path":"/big.txt","line":200,"text":"x"}`, jsonv.MustEncode(items.([]jsonv.Value)[199]))
	total, _ := got.Get("total")
	assert.Equal(t, int64(limits.FileSize/2+1), total)
	note, _ := got.Get("note")
	assert.Equal(t, "showing 200 of 4194305 matches (a result holds at most 200 items and 256 KiB of JSON); narrow the query or the path", note)

	// narrowed, it is the list it always was
	assert.Equal(t, `[{"path":"/small.txt","line":1,"text":"x marks the spot"}]`, servicetest.OK(t, ws, "fs_search", `{"query":"spot"}`))
}

// A line longer than MatchText shows the part around the match, marked where it is cut.
func TestFSSearchCutsLongLines(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	line := strings.Repeat("a", 5000) + "NEEDLE" + strings.Repeat("b", 5000)
	require.NoError(t, ws.Files().Write("/long.txt", "short needle\n"+line+"\n"+strings.Repeat("İ", 2000)+"needle\n"))
	res := servicetest.OK(t, ws, "fs_search", `{"query":"needle"}`)
	var matches []jsonv.Value
	v, err := jsonv.DecodeString(res)
	require.NoError(t, err)
	matches = v.([]jsonv.Value)
	require.Len(t, matches, 3)
	text := func(i int) string { s, _ := matches[i].(*jsonv.Object).Get("text"); return s.(string) }
	assert.Equal(t, "short needle", text(0))
	assert.Contains(t, text(1), "NEEDLE")
	assert.True(t, strings.HasPrefix(text(1), "…a") && strings.HasSuffix(text(1), "b…"), text(1))
	assert.Equal(t, limits.MatchText+2*len("…"), len(text(1)))
	assert.True(t, strings.HasPrefix(text(2), "İİ") && strings.HasSuffix(text(2), "İ…"), "a line whose bytes lower-casing moves is shown from its start")
	assert.LessOrEqual(t, len(text(2)), limits.MatchText+len("…"))
}

func TestFSListIsCapped(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	for i := range limits.ListItems + 1 {
		require.NoError(t, ws.Files().Write(fmt.Sprintf("/d/f%03d.txt", i), ""))
	}
	got := servicetest.Object(t, servicetest.OK(t, ws, "fs_list", `{"path":"/d"}`))
	items, _ := got.Get("items")
	assert.Len(t, items, limits.ListItems)
	total, _ := got.Get("total")
	assert.Equal(t, int64(limits.ListItems+1), total)
	require.NoError(t, ws.Files().Remove("/d/f200.txt"))
	assert.True(t, strings.HasPrefix(servicetest.OK(t, ws, "fs_list", `{"path":"/d"}`), `["f000.txt",`))
}

// The content of a file: the largest is written, one byte more is not, by the tool and by ws.fs
// alike; the largest file of plain text reads back within the result limit.
func TestFileSize(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	max := strings.Repeat("x", limits.FileSize)
	args := jsonv.MustEncode(jsonv.NewObject("path", "/max.txt", "content", max))
	servicetest.OK(t, ws, "fs_write", args)
	res := servicetest.OK(t, ws, "fs_read", `{"path":"/max.txt"}`)
	assert.Len(t, res, limits.FileSize+2)
	args = jsonv.MustEncode(jsonv.NewObject("path", "/over.txt", "content", max+"x"))
	servicetest.Fails(t, ws, "fs_write", args, "cannot write /over.txt: 8388609 bytes is over the 8 MiB limit of a file")
}
