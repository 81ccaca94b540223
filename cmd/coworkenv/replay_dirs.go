package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/coworkenv/coworkenv/dsl"
)

// maxRecordedDirs bounds the folders of a recorded path that locateTraced tries.
const maxRecordedDirs = 8

// recordedDirs are, for a task file of no corpus (its path inside its corpus, rel, is its own
// name), the folders that its path as the trace names it (file, relative to the folder of the
// run or absolute) has above it: for tasks/t.star, "tasks"; for /home/a/proj/tasks/t.star,
// "tasks", "proj/tasks", "a/proj/tasks" and "home/a/proj/tasks", nearest first, at most
// maxRecordedDirs. Parts that are not plain names ("..", ".") end the list: nothing found by it
// leaves the folder it is tried under. A file of a corpus has its folders inside the corpus in
// rel already, and none are given.
func recordedDirs(file, rel string) []string {
	if strings.Contains(rel, "/") {
		return nil
	}
	file = path.Clean(strings.ReplaceAll(file, `\`, "/"))
	dir, ok := strings.CutSuffix(file, "/"+rel)
	if !ok {
		return nil
	}
	parts := strings.Split(dir, "/")
	var out []string
	for i := len(parts) - 1; i >= 0 && len(out) < maxRecordedDirs; i-- {
		if !fs.ValidPath(parts[i]) || parts[i] == "." || strings.Contains(parts[i], ":") {
			break
		}
		out = append(out, path.Join(parts[i:]...))
	}
	return out
}

// underRecordedDir looks for the task file at rel under the folder sub of d, whose corpus root
// is then d/sub; the way from d to it is checked as the corpus checks its paths (no symbolic
// link out of d).
func (s *taskSearch) underRecordedDir(d, sub, rel string) *tracedTask {
	r, err := os.OpenRoot(d)
	if err != nil {
		return nil
	}
	defer r.Close()
	walled := dsl.NewCorpus(r.FS(), ".", displayDir(d))
	if err := walled.CheckPath(sub + "/" + rel); err != nil {
		s.refuse(walled.DisplayPath(sub+"/"+rel) + ": " + err.Error())
		return nil
	}
	if info, err := fs.Stat(walled.FS, sub); err != nil || !info.IsDir() {
		return nil
	}
	return s.onDisk(filepath.Join(d, filepath.FromSlash(sub)), rel, "")
}
