// Package atomicfile writes files so that their path never holds half of one: the bytes go to a
// temporary file beside the path, which Commit renames onto it. A run that is killed, or fails
// half way, leaves the old file (or none) and at most a hidden temporary file.
package atomicfile

import (
	"bufio"
	"os"
	"path/filepath"
)

// File is a file being written; its path is untouched until Commit.
type File struct {
	path string
	f    *os.File
	w    *bufio.Writer
	err  error
}

// Create starts writing path: a temporary file ".NAME.tmp*" in the same folder, mode 0644.
func Create(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{path: path, f: f, w: bufio.NewWriterSize(f, 1<<16)}, nil
}

// Path is the path the file is renamed onto.
func (a *File) Path() string { return a.path }

// Write buffers p; the first error is kept and returned by every later call and by Commit.
func (a *File) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.w.Write(p)
	a.err = err
	return n, err
}

// Commit flushes the file, syncs it to disk and renames it onto its path; on any error the
// temporary file is removed and the path keeps what it held.
func (a *File) Commit() error {
	err := a.err
	if err == nil {
		err = a.w.Flush()
	}
	if err == nil {
		err = a.f.Sync()
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.f.Name())
	}
	return err
}

// Abort drops the temporary file.
func (a *File) Abort() {
	a.f.Close()
	os.Remove(a.f.Name())
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	f.Write(data)
	return f.Commit()
}
