package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// outputKind is what an output argument names.
type outputKind int

const (
	outputFile   outputKind = iota // a file, written through a temporary file and a rename
	outputFolder                   // a folder, created when missing
)

// checkOutput checks an output argument before the command does any work, so that nothing runs
// only to fail at the end, and no input is overwritten. arg names the argument in the error
// ("--out", "--trace"); inputs are the files and folders the command reads (paths that do not
// exist are ignored).
//
// A file must not be an existing folder, and the folder it goes in must exist and be writable. A
// folder must not be an existing file, and it (or, when it does not exist yet, its nearest
// existing parent) must be a writable folder. Neither may be one of the inputs, however the two
// paths are spelt (an output that does not exist yet is none of them). The error is a usage
// error (exit status 2) that starts with arg.
func checkOutput(arg, path string, kind outputKind, inputs ...string) error {
	info, err := os.Stat(path)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %s: %v", arg, path, unwrap(err))
	case exists && kind == outputFile && info.IsDir():
		return fmt.Errorf("%s: %s is a folder; give the path of a file", arg, path)
	case exists && kind == outputFolder && !info.IsDir():
		return fmt.Errorf("%s: %s is a file, not a folder", arg, path)
	}
	for _, in := range inputs {
		if exists && sameFile(info, in) {
			if filepath.Clean(in) == filepath.Clean(path) {
				return fmt.Errorf("%s: %s is also an input; write the output elsewhere", arg, path)
			}
			return fmt.Errorf("%s: %s is also an input (%s); write the output elsewhere", arg, path, in)
		}
	}
	dir := filepath.Dir(path)
	if kind == outputFolder {
		dir = path
		for {
			if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
	}
	dinfo, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: the folder %s does not exist", arg, dir)
	case err != nil:
		return fmt.Errorf("%s: %s: %v", arg, dir, unwrap(err))
	case !dinfo.IsDir():
		return fmt.Errorf("%s: %s is a file, not a folder", arg, dir)
	}
	// The one sure test of writing is to write: a temporary file, removed at once.
	f, err := os.CreateTemp(dir, ".coworkenv-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %v", arg, dir, unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// sameFile reports whether the existing output (info is its Stat) is the input in: the same
// file or folder, however the two paths are spelt (relative, through symbolic or hard links).
func sameFile(info os.FileInfo, in string) bool {
	inInfo, err := os.Stat(in)
	return err == nil && os.SameFile(info, inInfo)
}
