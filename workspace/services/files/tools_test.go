package files_test

import (
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/stretchr/testify/assert"
)

func TestFSTools(t *testing.T) {
	ws := workspace.New(servicetest.Start, 0)
	assert.Equal(t, `[]`, servicetest.OK(t, ws, "fs_list", `{}`))
	assert.Equal(t, `{"path":"/notes/a.txt"}`, servicetest.OK(t, ws, "fs_write", `{"path":"notes/a.txt","content":"Alpha\nbeta ALPHA\r\ngamma"}`))
	assert.Equal(t, `{"path":"/b.md"}`, servicetest.OK(t, ws, "fs_write", `{"path":"/b.md","content":"nothing here"}`))
	assert.Equal(t, `["b.md","notes/"]`, servicetest.OK(t, ws, "fs_list", `{}`))
	assert.Equal(t, `["a.txt"]`, servicetest.OK(t, ws, "fs_list", `{"path":"/notes"}`))
	assert.Equal(t, `"Alpha\nbeta ALPHA\r\ngamma"`, servicetest.OK(t, ws, "fs_read", `{"path":"/notes/a.txt"}`))

	assert.Equal(t, `[{"path":"/notes/a.txt","line":1,"text":"Alpha"},{"path":"/notes/a.txt","line":2,"text":"beta ALPHA"}]`,
		servicetest.OK(t, ws, "fs_search", `{"query":"alpha"}`))
	assert.Equal(t, `[{"path":"/b.md","line":1,"text":"nothing here"}]`, servicetest.OK(t, ws, "fs_search", `{"query":"HERE","path":"/b.md"}`))
	assert.Equal(t, `[]`, servicetest.OK(t, ws, "fs_search", `{"query":"here","path":"/notes"}`))

	assert.Equal(t, `{"path":"/archive/a.txt"}`, servicetest.OK(t, ws, "fs_move", `{"src":"/notes/a.txt","dst":"/archive/"}`))
	assert.Equal(t, `{"path":"/archive/b.md"}`, servicetest.OK(t, ws, "fs_move", `{"src":"/b.md","dst":"/archive"}`))
	assert.Equal(t, `{"path":"/c.md"}`, servicetest.OK(t, ws, "fs_move", `{"src":"/archive/b.md","dst":"/c.md"}`))
	assert.Equal(t, `{"ok":true}`, servicetest.OK(t, ws, "fs_delete", `{"path":"/archive"}`))
	assert.Equal(t, `["c.md","notes/"]`, servicetest.OK(t, ws, "fs_list", `{"path":"/"}`))

	servicetest.Fails(t, ws, "fs_read", `{"path":"/missing"}`, "no such file: /missing")
	servicetest.Fails(t, ws, "fs_read", `{"path":"/notes"}`, "/notes is a folder")
	servicetest.Fails(t, ws, "fs_read", `{"pth":"/notes"}`, `unknown argument "pth" (the arguments are: path)`)
	servicetest.Fails(t, ws, "fs_read", `{}`, `missing required argument "path"`)
	servicetest.Fails(t, ws, "fs_list", `{"path":"/nope"}`, "no such folder: /nope")
	servicetest.Fails(t, ws, "fs_write", `{"path":"/notes","content":""}`, "cannot write /notes: it is a folder")
	servicetest.Fails(t, ws, "fs_write", `{"path":"/c.md","content":3}`, `argument "content": got integer, want string`)
	servicetest.Fails(t, ws, "fs_delete", `{"path":"/nope"}`, "no such file or folder: /nope")
	servicetest.Fails(t, ws, "fs_move", `{"src":"/nope","dst":"/x"}`, "no such file or folder: /nope")
	servicetest.Fails(t, ws, "fs_search", `{"query":""}`, `argument "query": empty`)
	servicetest.Fails(t, ws, "fs_search", `{"query":"x","path":"/nope"}`, "no such file or folder: /nope")

	// listings never change the state
	h := ws.Hash()
	servicetest.OK(t, ws, "fs_list", `{}`)
	servicetest.OK(t, ws, "fs_read", `{"path":"/c.md"}`)
	servicetest.OK(t, ws, "fs_search", `{"query":"a"}`)
	assert.Equal(t, h, ws.Hash())
}

func TestSchema(t *testing.T) {
	tl, _ := services.Tool("fs_list")
	assert.Equal(t,
		`{"type":"function","function":{"name":"fs_list","description":"List the contents of a folder in the user's files. Returns the names of the files and folders directly inside it, sorted; folder names end with \"/\". At most 200 items (256 KiB of JSON) are returned: when there are more, the result is {items, truncated: true, total, note} instead of a list, with the first items and how many there are; narrow the request to see the others.","parameters":{"type":"object","properties":{"path":{"type":"string","description":"Absolute path of the folder, like \"/reports\".","default":"/"}},"required":[],"additionalProperties":false}}}`,
		jsonv.MustEncode(tl.Schema()))
}
