package files

import (
	"fmt"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/starconv"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
)

// What scripts see: ws.fs.

var wsMethods = []service.Method{
	{Name: "write", Params: []service.Param{{Name: "path"}, {Name: "content"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			p, content := a.Str(0), a.Str(1)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return nil, st.Files().Write(p, content)
		},
		Doc: "Creates or replaces the file at path with content (a string), creating its parent folders. It is an error when path is a folder or a parent is a file, or when content is over " + limits.Bytes(limits.FileSize) + "."},
	{Name: "write_many", Params: []service.Param{{Name: "files"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			files := a.Dict(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			for i, kv := range files.Items() {
				p, ok1 := kv[0].(starlark.String)
				content, ok2 := kv[1].(starlark.String)
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("item %d: got a %s: %s item, want string: string (path: content)", i+1, kv[0].Type(), kv[1].Type())
				}
				if err := a.Charge(1 + len(content)/1024); err != nil {
					return nil, err
				}
				if err := st.Files().Write(string(p), string(content)); err != nil {
					return nil, err
				}
			}
			return nil, nil
		},
		Doc: "Writes every file of files (a dict from path to content), in dict order, as write does one. It is the way to seed many files at once: it costs one step of the script's budget per file and one per KiB of content, where a loop of write costs several steps per file. It stops at the first file that write would refuse; the files before it are written."},
	{Name: "read", Params: []service.Param{{Name: "path"}}, Ret: "string",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			p := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			s, err := st.Files().Read(p)
			if err != nil {
				return nil, err
			}
			return starlark.String(s), nil
		},
		Doc: "Returns the content of the file at path. A missing file or a folder is an error (\"ws.fs.read: no such file: /x\"); use ws.fs.exists to test first."},
	{Name: "exists", Params: []service.Param{{Name: "path"}}, Ret: "bool",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			p := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return starlark.Bool(st.Files().Exists(p)), nil
		},
		Doc: "Reports whether path is a file or a folder (\"/\" always exists)."},
	{Name: "list", Params: []service.Param{{Name: "dir", Default: `"/"`}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			d := a.OptStr(0, "/")
			if err := a.Done(); err != nil {
				return nil, err
			}
			names, err := st.Files().List(d)
			if err != nil {
				return nil, err
			}
			return starconv.Strings(names), nil
		},
		Doc: "Returns the names of the direct children of folder dir, sorted; folder names end in \"/\" (e.g. [\"notes.txt\", \"reports/\"]). A missing folder or a file is an error."},
	{Name: "walk", Params: []service.Param{{Name: "dir", Default: `"/"`}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			d := a.OptStr(0, "/")
			if err := a.Done(); err != nil {
				return nil, err
			}
			return starconv.Strings(st.Files().Walk(d)), nil
		},
		Doc: "Returns the absolute path of every file inside folder dir, at any depth, sorted (folders are not listed). It is empty when dir is missing."},
	{Name: "remove", Params: []service.Param{{Name: "path"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			p := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return nil, st.Files().Remove(p)
		},
		Doc: "Deletes the file at path, or the folder at path with everything in it. A missing path, or \"/\", is an error."},
	{Name: "move", Params: []service.Param{{Name: "src"}, {Name: "dst"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			src, dst := a.Str(0), a.Str(1)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return nil, st.Files().Move(src, dst)
		},
		Doc: "Moves the file or folder src. When dst is an existing folder, or ends in \"/\", src moves into it under its own name; otherwise src is renamed to dst. Missing parent folders are created. It is an error when src is missing or the target already exists (nothing is overwritten)."},
	{Name: "mkdir", Params: []service.Param{{Name: "path"}}, Ret: "None", Write: true,
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			p := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			return nil, st.Files().Mkdir(p)
		},
		Doc: "Creates the folder at path and its parents. An existing folder is fine; a file in the way is an error."},
	{Name: "glob", Params: []service.Param{{Name: "pattern"}}, Ret: "list",
		Call: func(st *workspace.State, a service.Args) (starlark.Value, error) {
			p := a.Str(0)
			if err := a.Done(); err != nil {
				return nil, err
			}
			if err := a.Charge(st.Files().GlobLooks(p)); err != nil {
				return nil, err
			}
			paths, err := st.Files().GlobCharged(p, a.Charge) // and what a "**" makes it try

			if err != nil {
				return nil, err
			}
			return starconv.Strings(paths), nil
		},
		Doc: "Returns the files (not folders) whose path matches pattern, sorted. Within a segment, *, ? and [...] work as in a shell; a segment that is exactly ** matches any number of folders, none included (\"/docs/**/*.md\" matches /docs/a.md and /docs/x/y/a.md)."},
}
