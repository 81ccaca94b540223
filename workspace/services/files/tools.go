package files

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/tools"
)

// The agent's tools, group "fs".

const group = "fs"

var agentTools = []*tools.Tool{
	{
		Name:  "fs_list",
		Group: group,
		Description: "List the contents of a folder in the user's files. Returns the names of the files and " +
			"folders directly inside it, sorted; folder names end with \"/\". " + tools.ListingDoc,
		Params: []tools.Param{
			tools.Opt("path", tools.TypeString, "Absolute path of the folder, like \"/reports\".", "/"),
		},
		Run: fsList,
	},
	{
		Name:  "fs_read",
		Group: group,
		Description: "Read a text file from the user's files. Returns the whole content as a string (a file holds at most " +
			limits.Bytes(limits.FileSize) + ").",
		Params: []tools.Param{
			tools.Req("path", tools.TypeString, "Absolute path of the file, like \"/reports/q3.csv\"."),
		},
		Run: fsRead,
	},
	{
		Name:  "fs_write",
		Group: group,
		Description: "Create a file, or replace the whole content of an existing one. Missing parent folders " +
			"are created. To change part of a file, read it, edit the text and write it all back. A file holds at most " +
			limits.Bytes(limits.FileSize) + ". Returns {\"path\"}.",
		Params: []tools.Param{
			tools.Req("path", tools.TypeString, "Absolute path of the file to write."),
			tools.Req("content", tools.TypeString, "The complete new content of the file."),
		},
		Run: fsWrite,
	},
	{
		Name:        "fs_delete",
		Group:       group,
		Description: "Delete a file, or a folder with everything inside it. Returns {\"ok\": true}.",
		Params: []tools.Param{
			tools.Req("path", tools.TypeString, "Absolute path of the file or folder to delete."),
		},
		Run: fsDelete,
	},
	{
		Name:  "fs_move",
		Group: group,
		Description: "Move or rename a file or folder. When dst is an existing folder (or ends with \"/\"), the " +
			"item moves into it and keeps its name; otherwise it is renamed to dst. Missing parent " +
			"folders are created; an existing file at the target is never overwritten. Returns " +
			"{\"path\"} with the final path.",
		Params: []tools.Param{
			tools.Req("src", tools.TypeString, "Absolute path of the file or folder to move."),
			tools.Req("dst", tools.TypeString, "New absolute path, or a folder to move it into."),
		},
		Run: fsMove,
	},
	{
		Name:  "fs_search",
		Group: group,
		Description: "Search the text of files for lines containing a string (case-insensitive). Returns a list " +
			"of {path, line, text}, one per matching line, by path then line number (lines count from 1); the text of a line longer than " +
			limits.Bytes(limits.MatchText) + " is cut around the match, marked by \"…\". " + tools.ListingDoc,
		Params: []tools.Param{
			tools.Req("query", tools.TypeString, "The text to look for."),
			tools.Opt("path", tools.TypeString, "Folder to search in, with all its subfolders, or a single file.", "/"),
		},
		Run: fsSearch,
	},
}

func fsList(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	names, err := ws.Files().List(tools.ArgStr(args, "path"))
	if err != nil {
		return nil, err
	}
	return tools.Listing(tools.Strings(names), len(names), false, "entries", "list a subfolder, or use fs_search"), nil
}

func fsRead(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	c, err := ws.Files().Read(tools.ArgStr(args, "path"))
	if err != nil {
		return nil, err
	}
	return c, nil
}

func fsWrite(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	p := workspace.CleanPath(tools.ArgStr(args, "path"))
	if err := ws.Files().Write(p, tools.ArgStr(args, "content")); err != nil {
		return nil, err
	}
	return tools.PathResult(p), nil
}

func fsDelete(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	if err := ws.Files().Remove(tools.ArgStr(args, "path")); err != nil {
		return nil, err
	}
	return tools.OKResult(), nil
}

func fsMove(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	p, err := ws.Files().MoveTo(tools.ArgStr(args, "src"), tools.ArgStr(args, "dst"))
	if err != nil {
		return nil, err
	}
	return tools.PathResult(p), nil
}

func fsSearch(ws *workspace.State, args *jsonv.Object) (jsonv.Value, error) {
	query := tools.ArgStr(args, "query")
	if query == "" {
		return nil, fmt.Errorf("argument \"query\": empty")
	}
	fs := ws.Files()
	root := workspace.CleanPath(tools.ArgStr(args, "path"))
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
	total := 0 // matches, also past the ones a listing can show (which are all that is built)
	for _, p := range paths {
		content, _ := fs.Read(p)
		if !strings.Contains(strings.ToLower(content), q) {
			continue
		}
		for i := 1; content != ""; i++ {
			var line string
			line, content, _ = strings.Cut(content, "\n")
			line = strings.TrimSuffix(line, "\r")
			at := strings.Index(strings.ToLower(line), q)
			if at < 0 {
				continue
			}
			if total++; len(out) < limits.ListItems {
				out = append(out, jsonv.NewObject("path", p, "line", int64(i), "text", matchText(line, at, len(q))))
			}
		}
	}
	return tools.Listing(out, total, false, "matches", "narrow the query or the path"), nil
}

// matchText is the text of a matching line as fs_search shows it: the line, or when it is longer
// than limits.MatchText, the part of it around the match (at and n: where the match is in the
// lower-cased line, and its length), marked by "…" where it is cut.
func matchText(line string, at, n int) string {
	if len(line) <= limits.MatchText {
		return line
	}
	if len(strings.ToLower(line)) != len(line) {
		at, n = 0, 0 // lower-casing moved the bytes: show the start
	}
	from := max(0, min(at-(limits.MatchText-n)/2, len(line)-limits.MatchText))
	to := from + limits.MatchText
	for from > 0 && !utf8.RuneStart(line[from]) {
		from++
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to--
	}
	text := line[from:to]
	if from > 0 {
		text = "…" + text
	}
	if to < len(line) {
		text += "…"
	}
	return text
}
