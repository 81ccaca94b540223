package dsl

import (
	"bytes"
	"io/fs"
	"os"
	"sync"
	"testing/fstest"
)

// builtin is the capability taxonomy of the built-in corpus, which package corpus registers:
// the taxonomy of task files that belong to no corpus (OpenStandalone), and the one a diagnostic
// names as "the built-in taxonomy".
var builtin struct {
	sync.Mutex
	data []byte
}

// BuiltinTaxonomyName is how diagnostics name the built-in taxonomy.
const BuiltinTaxonomyName = "the built-in taxonomy, corpus/capabilities.star (it applies where no capabilities.star is found in the file's folder or above it; coworkenv list --capabilities lists it)"

// RegisterBuiltinTaxonomy records the built-in corpus's capabilities.star (package corpus calls
// it once, when it is initialised).
func RegisterBuiltinTaxonomy(data []byte) {
	builtin.Lock()
	defer builtin.Unlock()
	builtin.data = data
}

// BuiltinTaxonomy is the registered capabilities.star of the built-in corpus (nil when none).
func BuiltinTaxonomy() []byte {
	builtin.Lock()
	defer builtin.Unlock()
	return builtin.data
}

// taxonomyName is how diagnostics name the taxonomy of a corpus whose capabilities.star holds
// data and is shown at path.
func taxonomyName(data []byte, path string) string {
	if b := BuiltinTaxonomy(); b != nil && bytes.Equal(b, data) {
		return BuiltinTaxonomyName
	}
	return path
}

// OpenStandalone opens the folder dir on disk as OpenDir does, for task files that belong to no
// corpus (there is no capabilities.star in dir or above it): the corpus's capabilities.star is
// then taxonomy (the built-in one), so that capability names are checked against it, in this
// process and in the isolated workers that are given the corpus's files.
func OpenStandalone(dir, display string, taxonomy []byte) (*Corpus, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	fsys := &withTaxonomy{base: root.FS(), tax: fstest.MapFS{CapabilitiesFile: &fstest.MapFile{Data: taxonomy, Mode: 0o444}}}
	return NewCorpus(fsys, ".", display), nil
}

// withTaxonomy is a folder's file system with capabilities.star added at its top.
type withTaxonomy struct {
	base fs.FS // implements fs.ReadLinkFS (an os.Root's)
	tax  fstest.MapFS
}

func (w *withTaxonomy) Open(name string) (fs.File, error) {
	if name == CapabilitiesFile {
		return w.tax.Open(name)
	}
	return w.base.Open(name)
}

func (w *withTaxonomy) ReadLink(name string) (string, error) {
	if name == CapabilitiesFile {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return fs.ReadLink(w.base, name)
}

func (w *withTaxonomy) Lstat(name string) (fs.FileInfo, error) {
	if name == CapabilitiesFile {
		return fs.Stat(w.tax, name)
	}
	return fs.Lstat(w.base, name)
}
