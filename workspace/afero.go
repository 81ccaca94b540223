package workspace

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/spf13/afero"
)

// hostPath joins workspace path p (absolute, cleaned) under root of an afero file system.
// Workspace paths never hold "..", so the result stays under root.
func hostPath(root, p string) string {
	return filepath.Join(root, filepath.FromSlash(CleanPath(p)))
}

// ExportTo writes every folder and file of the workspace under root of fsys (root itself is
// created). Existing files there are overwritten; nothing else there is removed.
func (f *Files) ExportTo(fsys afero.Fs, root string) error {
	if err := fsys.MkdirAll(filepath.Clean(root), 0o755); err != nil {
		return err
	}
	for _, d := range f.Dirs("/") {
		if err := fsys.MkdirAll(hostPath(root, d), 0o755); err != nil {
			return err
		}
	}
	for _, p := range f.Walk("/") {
		content, _ := f.Read(p)
		if err := afero.WriteFile(fsys, hostPath(root, p), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ImportFrom copies every folder and regular file under root of fsys into the workspace, at the
// same path relative to "/" (root's own content lands in "/"). It adds to what the workspace
// holds and overwrites files of the same path; other kinds of file are skipped. It stops at the
// first error.
func (f *Files) ImportFrom(fsys afero.Fs, root string) error {
	s := (*State)(f)
	if s.frozen {
		return ErrFrozen
	}
	root = filepath.Clean(root)
	info, err := fsys.Stat(root)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a folder", root)
	}
	return afero.Walk(fsys, root, func(hp string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, hp)
		if err != nil {
			return err
		}
		p := CleanPath(filepath.ToSlash(rel))
		switch {
		case info.IsDir():
			return f.Mkdir(p)
		case info.Mode().Type() == 0:
			if info.Size() > limits.FileSize {
				return fmt.Errorf("cannot import %s: %d bytes is over the %s limit of a file", hp, info.Size(), limits.Bytes(limits.FileSize))
			}
			b, err := afero.ReadFile(fsys, hp)
			if err != nil {
				return err
			}
			return f.Write(p, string(b))
		}
		return nil
	})
}
