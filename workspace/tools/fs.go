package tools

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/workspace"
)

func fsTools() []*Tool {
	const g = "fs"
	return []*Tool{
		{
			Name:  "fs_list",
			Group: g,
			Description: "List the contents of a folder in the user's files. Returns the names of the files and " +
				"folders directly inside it, sorted; folder names end with \"/\".",
			Params: []Param{
				opt("path", TypeString, "Absolute path of the folder, like \"/reports\".", "/"),
			},
			Run: fsList,
		},
		{
			Name:        "fs_read",
			Group:       g,
			Description: "Read a text file from the user's files. Returns the whole content as a string.",
			Params: []Param{
				req("path", TypeString, "Absolute path of the file, like \"/reports/q3.csv\"."),
			},
			Run: fsRead,
		},
		{
			Name:  "fs_write",
			Group: g,
			Description: "Create a file, or replace the whole content of an existing one. Missing parent folders " +
				"are created. To change part of a file, read it, edit the text and write it all back. " +
				"Returns {\"path\"}.",
			Params: []Param{
				req("path", TypeString, "Absolute path of the file to write."),
				req("content", TypeString, "The complete new content of the file."),
			},
			Run: fsWrite,
		},
		{
			Name:        "fs_delete",
			Group:       g,
			Description: "Delete a file, or a folder with everything inside it. Returns {\"ok\": true}.",
			Params: []Param{
				req("path", TypeString, "Absolute path of the file or folder to delete."),
			},
			Run: fsDelete,
		},
		{
			Name:  "fs_move",
			Group: g,
			Description: "Move or rename a file or folder. When dst is an existing folder (or ends with \"/\"), the " +
				"item moves into it and keeps its name; otherwise it is renamed to dst. Missing parent " +
				"folders are created; an existing file at the target is never overwritten. Returns " +
				"{\"path\"} with the final path.",
			Params: []Param{
				req("src", TypeString, "Absolute path of the file or folder to move."),
				req("dst", TypeString, "New absolute path, or a folder to move it into."),
			},
			Run: fsMove,
		},
		{
			Name:  "fs_search",
			Group: g,
			Description: "Search the text of files for lines containing a string (case-insensitive). Returns a list " +
				"of {path, line, text}, one per matching line, by path then line number (lines count from 1).",
			Params: []Param{
				req("query", TypeString, "The text to look for."),
				opt("path", TypeString, "Folder to search in, with all its subfolders, or a single file.", "/"),
			},
			Run: fsSearch,
		},
	}
}

func fsList(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	names, err := ws.Files().List(argStr(args, "path"))
	if err != nil {
		return nil, err
	}
	return strs(names), nil
}

func fsRead(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	c, err := ws.Files().Read(argStr(args, "path"))
	if err != nil {
		return nil, err
	}
	return c, nil
}

func fsWrite(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	p := workspace.CleanPath(argStr(args, "path"))
	if err := ws.Files().Write(p, argStr(args, "content")); err != nil {
		return nil, err
	}
	return pathResult(p), nil
}

func fsDelete(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	if err := ws.Files().Remove(argStr(args, "path")); err != nil {
		return nil, err
	}
	return okResult(), nil
}

func fsMove(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	p, err := ws.Files().MoveTo(argStr(args, "src"), argStr(args, "dst"))
	if err != nil {
		return nil, err
	}
	return pathResult(p), nil
}

func fsSearch(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	query := argStr(args, "query")
	if query == "" {
		return nil, fmt.Errorf("argument \"query\": empty")
	}
	fs := ws.Files()
	root := workspace.CleanPath(argStr(args, "path"))
	var paths []string
	switch {
	case fs.IsFile(root):
		paths = []string{root}
	case fs.IsDir(root):
		paths = fs.Walk(root)
	default:
		return nil, fmt.Errorf("no such file or folder: %s", root)
	}
	q := strings.ToLower(query)
	out := []jsonv.Value{}
	for _, p := range paths {
		content, _ := fs.Read(p)
		if !strings.Contains(strings.ToLower(content), q) {
			continue
		}
		for i, line := range strings.Split(content, "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.Contains(strings.ToLower(line), q) {
				out = append(out, jsonv.NewObject("path", p, "line", int64(i+1), "text", line))
			}
		}
	}
	return out, nil
}
