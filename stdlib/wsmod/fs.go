package wsmod

import (
	"github.com/coworkenv/coworkenv/internal/starconv"
	"go.starlark.net/starlark"
)

var fsMembers = []*member{
	{name: "write", params: []param{{"path", ""}, {"content", ""}}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			p, content := c.str(0), c.str(1)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Files().Write(p, content))
		},
		doc: "Creates or replaces the file at path with content (a string), creating its parent folders. It is an error when path is a folder or a parent is a file, or when content is over 8 MiB."},
	{name: "read", params: []param{{"path", ""}}, ret: "string",
		call: func(c *call) (starlark.Value, error) {
			p := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			s, err := c.w.st.Files().Read(p)
			if err != nil {
				return nil, c.wrap(err)
			}
			return str(s), nil
		},
		doc: "Returns the content of the file at path. A missing file or a folder is an error (\"ws.fs.read: no such file: /x\"); use ws.fs.exists to test first."},
	{name: "exists", params: []param{{"path", ""}}, ret: "bool",
		call: func(c *call) (starlark.Value, error) {
			p := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return starlark.Bool(c.w.st.Files().Exists(p)), nil
		},
		doc: "Reports whether path is a file or a folder (\"/\" always exists)."},
	{name: "list", params: []param{{"dir", `"/"`}}, ret: "list",
		call: func(c *call) (starlark.Value, error) {
			d := c.optStr(0, "/")
			if err := c.done(); err != nil {
				return nil, err
			}
			names, err := c.w.st.Files().List(d)
			if err != nil {
				return nil, c.wrap(err)
			}
			return starconv.Strings(names), nil
		},
		doc: "Returns the names of the direct children of folder dir, sorted; folder names end in \"/\" (e.g. [\"notes.txt\", \"reports/\"]). A missing folder or a file is an error."},
	{name: "walk", params: []param{{"dir", `"/"`}}, ret: "list",
		call: func(c *call) (starlark.Value, error) {
			d := c.optStr(0, "/")
			if err := c.done(); err != nil {
				return nil, err
			}
			return starconv.Strings(c.w.st.Files().Walk(d)), nil
		},
		doc: "Returns the absolute path of every file inside folder dir, at any depth, sorted (folders are not listed). It is empty when dir is missing."},
	{name: "remove", params: []param{{"path", ""}}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			p := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Files().Remove(p))
		},
		doc: "Deletes the file at path, or the folder at path with everything in it. A missing path, or \"/\", is an error."},
	{name: "move", params: []param{{"src", ""}, {"dst", ""}}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			src, dst := c.str(0), c.str(1)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Files().Move(src, dst))
		},
		doc: "Moves the file or folder src. When dst is an existing folder, or ends in \"/\", src moves into it under its own name; otherwise src is renamed to dst. Missing parent folders are created. It is an error when src is missing or the target already exists (nothing is overwritten)."},
	{name: "mkdir", params: []param{{"path", ""}}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			p := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Files().Mkdir(p))
		},
		doc: "Creates the folder at path and its parents. An existing folder is fine; a file in the way is an error."},
	{name: "glob", params: []param{{"pattern", ""}}, ret: "list",
		call: func(c *call) (starlark.Value, error) {
			p := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			paths, err := c.w.st.Files().Glob(p)
			if err != nil {
				return nil, c.wrap(err)
			}
			return starconv.Strings(paths), nil
		},
		doc: "Returns the files (not folders) whose path matches pattern, sorted. Within a segment, *, ? and [...] work as in a shell; a segment that is exactly ** matches any number of folders, none included (\"/docs/**/*.md\" matches /docs/a.md and /docs/x/y/a.md)."},
}
