// Package files is the file system service: folders and UTF-8 text files, the user's files.
//
// Its state is the kernel's own section (workspace.State.Files, written out by hand for speed);
// this package declares everything else about it: ws.fs, the fs_* tools, the setup summary,
// the history values and the words of ws.unexpected(files = [...]).
package files

import (
	"fmt"
	"strings"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/service"
	"go.starlark.net/starlark"
)

// Service declares the service (registered in package services).
var Service = &service.Service{
	Name: "files", WSName: "fs", Group: "fs", Entry: "file",
	Doc:     "A file system of folders and UTF-8 text files (paths start at \"/\").",
	WSDoc:   "The in-memory file system. Paths are absolute and cleaned: \"a.txt\" is \"/a.txt\" and \"..\" never leaves \"/\". Folders exist explicitly (mkdir makes an empty one) and are created for the parents of every file written.",
	Kinds:   []string{workspace.KindFile, workspace.KindFolder},
	Section: func(ch workspace.Changes) workspace.Section { return ch.Files },
	WS:      wsMethods,
	Tools:   agentTools,
	Setup:   setupText,
	Value:   service.ValueOf(func(content string) starlark.Value { return starlark.String(content) }),
	Keywords: []service.Keyword{
		{Name: "files", Doc: "allows paths, and every path under an entry that ends in \"/\""},
	},
	Judge: judge,
	Probe: func(st *workspace.State) error { return st.Files().Write("/probe.txt", "x") },
}

// setupText is every file with its content.
func setupText(st *workspace.State) string {
	var b strings.Builder
	fs := st.Files()
	for _, p := range fs.Walk("/") {
		c, _ := fs.Read(p)
		b.WriteString("file " + p + "\n" + c + "\n")
	}
	return b.String()
}

// allowed reports whether the keys of ws.unexpected(files = [...]) allow path p: a path, or a
// folder ending in "/" with everything under it.
func allowed(keys []string, p string) bool {
	for _, f := range keys {
		f = strings.TrimSpace(f)
		if strings.HasSuffix(f, "/") {
			if strings.HasPrefix(p+"/", workspace.CleanPath(f)+"/") || f == "/" {
				return true
			}
		} else if workspace.CleanPath(f) == p {
			return true
		}
	}
	return false
}

// folderAllowed allows a folder that is allowed itself, or that holds an allowed path.
func folderAllowed(keys []string, p string) bool {
	if allowed(keys, p) {
		return true
	}
	for _, f := range keys {
		if strings.HasPrefix(workspace.CleanPath(f), p+"/") {
			return true
		}
	}
	return false
}

// judge says what the agent did to a file or folder that ws.unexpected(files = [...]) does not
// allow.
func judge(keys [][]string, act workspace.Action) string {
	files := keys[0]
	if act.Kind == workspace.KindFolder {
		if folderAllowed(files, act.Key) && (act.To == "" || folderAllowed(files, act.To)) {
			return ""
		}
		if act.Op == "move" {
			return fmt.Sprintf("moved folder %s to %s", act.Key, act.To)
		}
		if act.Op == "mkdir" {
			return "made folder " + act.Key
		}
		return "removed folder " + act.Key
	}
	switch act.Op {
	case "move":
		if allowed(files, act.Key) && allowed(files, act.To) {
			return ""
		}
		return fmt.Sprintf("moved file %s to %s", act.Key, act.To)
	case "remove":
		if allowed(files, act.Key) {
			return ""
		}
		return "removed file " + act.Key
	default:
		if allowed(files, act.Key) {
			return ""
		}
		return "wrote file " + act.Key
	}
}
