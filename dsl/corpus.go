package dsl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/coworkenv/coworkenv/internal/shown"
)

// CapabilitiesFile is the taxonomy file at a corpus root.
const CapabilitiesFile = "capabilities.star"

// Corpus is a folder of task files with its capability taxonomy and helper files. All file
// access goes through FS, so a corpus can live on disk (OpenDir) or in the binary (embed.FS).
//
// The corpus root is a wall: every read checks the path first (CheckPath), so a symbolic link
// (of the file or of a folder on its way) that leads out of the root is refused with an
// *EscapeError naming it, and nothing outside the root is read or quoted. Links that stay
// inside the root work.
//
// A corpus's limits are fixed when it is made (Limits, WithLimits): what a file loads is kept
// per corpus (a helper file's top-level code runs once), and the outcome depends on them.
type Corpus struct {
	FS fs.FS
	// Root is the corpus root inside FS ("." for the top).
	Root string
	// Display is how the root is shown in diagnostics (a path as the user gave it).
	Display string

	limits      Limits
	predeclared starlark.StringDict

	taxOnce  sync.Once
	taxonomy *Taxonomy
	taxFile  *File

	mu      sync.Mutex
	modules map[string]*module
}

type module struct {
	globals starlark.StringDict
	err     error
}

// NewCorpus opens a corpus rooted at root inside fsys, with DefaultLimits.
func NewCorpus(fsys fs.FS, root, display string) *Corpus {
	if root == "" {
		root = "."
	}
	return &Corpus{FS: fsys, Root: path.Clean(root), Display: display, limits: DefaultLimits,
		predeclared: Predeclared(), modules: map[string]*module{}}
}

// Limits are the limits of every call into the corpus's scripts while its files load.
func (c *Corpus) Limits() Limits { return c.limits }

// WithLimits is the corpus with other limits: c itself when they are c's, or a corpus of the
// same files that loads them anew (nothing c loaded is shared).
func (c *Corpus) WithLimits(lim Limits) *Corpus {
	if lim == c.limits {
		return c
	}
	n := NewCorpus(c.FS, c.Root, c.Display)
	n.limits = lim
	return n
}

// OpenDir opens the corpus rooted at the folder dir on disk, behind an os.Root: besides the
// checks every corpus makes, the operating system then refuses any read that would leave dir,
// even through a link changed after it was checked.
func OpenDir(dir, display string) (*Corpus, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return NewCorpus(root.FS(), ".", display), nil
}

// EscapeError refuses a path that leaves the corpus root.
type EscapeError struct {
	Rel  string // the root-relative path asked for
	Link string // the root-relative symbolic link that leads out ("" when Rel itself climbs out)
}

func (e *EscapeError) Error() string {
	const only = "only files inside the root are read"
	switch e.Link {
	case "":
		return fmt.Sprintf("%s leaves the corpus root; %s", e.Rel, only)
	case e.Rel:
		return fmt.Sprintf("%s is a symbolic link that leads out of the corpus root; %s", e.Rel, only)
	}
	return fmt.Sprintf("%s: %s is a symbolic link that leads out of the corpus root; %s", e.Rel, e.Link, only)
}

// maxLinks bounds the symbolic links followed for one path (as the operating systems do).
const maxLinks = 40

// CheckPath returns an *EscapeError when the root-relative path rel leaves the corpus root: when
// it is not a plain relative path, or when a symbolic link on its way (the file's own or a
// folder's) is absolute or climbs out of the root. Links are followed as the operating system
// follows them, without reading any file. A file system without symbolic links (one that is not
// an fs.ReadLinkFS, such as embed.FS) only has its paths checked. A missing file is no error
// here: reading it reports that.
func (c *Corpus) CheckPath(rel string) error {
	if !fs.ValidPath(rel) || rel == "." {
		return &EscapeError{Rel: rel}
	}
	lfs, ok := c.FS.(fs.ReadLinkFS)
	if !ok {
		return nil
	}
	var done []string // the resolved segments below the root
	todo := strings.Split(rel, "/")
	link, links := "", 0 // the last link followed, and how many
	for len(todo) > 0 {
		seg := todo[0]
		todo = todo[1:]
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return &EscapeError{Rel: rel, Link: link}
			}
			done = done[:len(done)-1]
			continue
		}
		cur := path.Join(append(done, seg)...)
		info, err := lfs.Lstat(c.fsPath(cur))
		if err != nil {
			return nil
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			done = append(done, seg)
			continue
		}
		link = cur
		if links++; links > maxLinks {
			return fmt.Errorf("%s: too many symbolic links", rel)
		}
		target, err := lfs.ReadLink(c.fsPath(cur))
		if err != nil {
			return nil
		}
		if path.IsAbs(target) || filepath.IsAbs(target) {
			return &EscapeError{Rel: rel, Link: link}
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return nil
}

// readFile reads a root-relative file after CheckPath.
func (c *Corpus) readFile(rel string) ([]byte, error) {
	if err := c.CheckPath(rel); err != nil {
		return nil, err
	}
	return fs.ReadFile(c.FS, c.fsPath(rel))
}

// File is the outcome of loading one file: its tasks, or the diagnostics that stopped it.
type File struct {
	Rel    string // path relative to the corpus root, slash-separated
	Path   string // path as shown in diagnostics
	Source []byte
	Tasks  []*Task
	// Diags holds the file's own diagnostics (the null-task entry). A file either loads whole
	// (Diags empty) or gives only these.
	Diags  []Diagnostic
	Prints []string
}

// DisplayPath is how a root-relative path is shown.
func (c *Corpus) DisplayPath(rel string) string {
	if c.Display == "" || c.Display == "." {
		return rel
	}
	return strings.TrimSuffix(c.Display, "/") + "/" + rel
}

func (c *Corpus) fsPath(rel string) string { return path.Join(c.Root, rel) }

// RelPath maps a path as shown in diagnostics back to a root-relative one.
func (c *Corpus) RelPath(display string) (string, bool) {
	if c.Display == "" || c.Display == "." {
		return display, true
	}
	return strings.CutPrefix(display, strings.TrimSuffix(c.Display, "/")+"/")
}

// HasTaxonomy reports whether the corpus root holds capabilities.star (a link counts, so that
// loading it reports a link that leads out of the root).
func (c *Corpus) HasTaxonomy() bool {
	_, err := fs.Lstat(c.FS, c.fsPath(CapabilitiesFile))
	return err == nil
}

// Taxonomy loads capabilities.star once. It returns nil when there is none or when it fails
// (the failure is in TaxonomyFile().Diags); capability names are then not checked.
func (c *Corpus) Taxonomy() *Taxonomy {
	c.taxOnce.Do(func() {
		if !c.HasTaxonomy() {
			return
		}
		f := c.exec(context.Background(), CapabilitiesFile, &fileState{isCaps: true})
		c.taxFile = f.File
		if len(f.Diags) == 0 {
			c.taxonomy = &Taxonomy{Capabilities: f.caps, Name: taxonomyName(f.Source, f.Path)}
		}
	})
	return c.taxonomy
}

// TaxonomyFile is the loaded capabilities.star (nil when there is none).
func (c *Corpus) TaxonomyFile() *File {
	c.Taxonomy()
	return c.taxFile
}

// IsTaskFile reports whether a root-relative path is a task file: a .star file that is not the
// root's capabilities.star and not under the root's lib/.
func IsTaskFile(rel string) bool {
	return strings.HasSuffix(rel, ".star") && rel != CapabilitiesFile && !strings.HasPrefix(rel, "lib/")
}

// TaskFiles lists the corpus's task files in path order. It does not descend into linked
// folders, and fails, naming it, on a symbolic link that leads out of the root.
func (c *Corpus) TaskFiles() ([]string, error) {
	var out []string
	err := fs.WalkDir(c.FS, c.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, c.Root), "/")
		if c.Root == "." {
			rel = p
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if err := c.CheckPath(rel); err != nil {
				return err
			}
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." && rel != "" {
				return fs.SkipDir
			}
			return nil
		}
		if IsTaskFile(rel) {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// LoadFile runs one task file's top-level code and returns its tasks.
func (c *Corpus) LoadFile(ctx context.Context, rel string) *File {
	st := &fileState{taxonomy: c.Taxonomy()}
	f := c.exec(ctx, rel, st).File
	if len(f.Diags) == 0 {
		f.Tasks = st.tasks
	}
	if len(f.Diags) == 0 && len(f.Tasks) == 0 {
		what := "the file declares no task"
		if len(bytes.TrimSpace(f.Source)) == 0 {
			what = "the file is empty"
		}
		d := NewDiag("no-task", what+"; a task file calls task(...) at top level (a file of helpers belongs under lib/ at the corpus root)")
		d.File = f.Path
		f.Diags = []Diagnostic{d}
	}
	for i, d := range f.Diags {
		f.Diags[i] = c.locate(d, f)
	}
	return f
}

// locate is Locate for a diagnostic of the file f (in f itself, or in a file it
// loads), so that every reader of a file's diagnostics shows the same column.
func (c *Corpus) locate(d Diagnostic, f *File) Diagnostic {
	if d.File == f.Path {
		return Locate(d, f.Source)
	}
	if rel, ok := c.RelPath(d.File); ok && d.File != "" {
		if src, err := c.ReadSource(rel); err == nil {
			return Locate(d, src)
		}
	}
	return d
}

type fileResult struct {
	*File
	caps []Capability
}

// exec runs top-level code of a file.
func (c *Corpus) exec(ctx context.Context, rel string, st *fileState) *fileResult {
	f := &File{Rel: rel, Path: c.DisplayPath(rel)}
	res := &fileResult{File: f}
	st.rel, st.display = rel, f.Path
	sc := c.run(ctx, rel, st, []string{rel}, func(pos syntax.Position, msg string) { f.Prints = append(f.Prints, fmt.Sprintf("%s: %s", pos, msg)) })
	f.Source = sc.src
	var esc *EscapeError
	var bad *NotUTF8Error
	switch {
	case sc.err == nil:
		res.caps = st.caps
	case sc.stage == stageRead && errors.As(sc.err, &esc):
		f.Diags = []Diagnostic{NewDiag("load", esc.Error())}
		f.Diags[0].File = f.Path
	case sc.stage == stageRead:
		f.Diags = []Diagnostic{NewDiag("load", fmt.Sprintf("cannot read %s: %v", f.Path, shown.Cause(sc.err)))}
		f.Diags[0].File = f.Path
	case errors.As(sc.err, &bad):
		f.Diags = []Diagnostic{bad.diag(f.Path)}
	case sc.stage == stageSyntax:
		f.Diags = SyntaxDiags(sc.err)
	default:
		f.Diags = []Diagnostic{ErrorDiag("script-error", sc.err)}
		if f.Diags[0].File == "" {
			f.Diags[0].File = f.Path
		}
	}
	return res
}

// The stages of running a file's top-level code (script.stage).
const (
	stageRead   = iota // reading the file
	stageText          // its text (NotUTF8Error)
	stageSyntax        // parsing and resolving it
	stageRun           // running it
)

// script is the outcome of running a file's top-level code.
type script struct {
	src     []byte
	globals starlark.StringDict
	err     error // what stopped it, at stage
	stage   int
	// transient: a cancelled context or the wall-clock limit stopped it (or a file it loads):
	// another run may end otherwise, so the outcome is not kept.
	transient bool
}

// transientKey marks a thread one of whose loads ended transiently.
const transientKey = "coworkenv.dsl.transient"

// run is the one way a file's top-level code runs, a task file's (exec) or a helper's
// (loadModule): read it through the wall, check its text, compile it, and run it on a thread
// of its own with the corpus's limits, its loads resolved by the corpus. chain is the stack of
// files being loaded, rel last.
func (c *Corpus) run(ctx context.Context, rel string, st *fileState, chain []string, print func(syntax.Position, string)) *script {
	sc := &script{}
	src, err := c.readFile(rel)
	if err != nil {
		sc.err, sc.stage = err, stageRead
		return sc
	}
	sc.src = src
	text, bad := sourceText(src)
	if bad != nil {
		sc.err, sc.stage = bad, stageText
		return sc
	}
	_, prog, err := starlark.SourceProgramOptions(FileOptions, c.DisplayPath(rel), text, c.predeclared.Has)
	if err != nil {
		sc.err, sc.stage = err, stageSyntax
		return sc
	}
	if ctx.Err() != nil {
		// the interpreter's error for a cancelled thread, without starting one
		sc.err, sc.stage, sc.transient = cancelled(reasonCanceled), stageRun, true
		return sc
	}
	th := NewThread(rel, c.limits, print)
	th.SetLocal(fileStateKey, st)
	th.Load = c.loader(ctx, chain)
	stop := Guard(ctx, th, c.limits)
	globals, err := prog.Init(th, c.predeclared)
	stop()
	globals.Freeze()
	sc.globals = globals
	if err != nil {
		sc.err, sc.stage = err, stageRun
		sc.transient = guardOf(th).cancelled.Load() != nil || th.Local(transientKey) != nil || ctx.Err() != nil
	}
	return sc
}

// ResolveLoad maps a load() module string of the file from (root-relative) to a root-relative
// path: "//lib/x.star" is relative to the corpus root, anything else to the loading file's
// folder. Leaving the root, an absolute path and a file that is not .star are errors. It is the
// one rule for every reader of load statements (the loader, the isolation pool, the generator).
func ResolveLoad(from, module string) (string, error) {
	var p string
	if strings.HasPrefix(module, "//") {
		p = strings.TrimPrefix(module, "//")
	} else {
		p = path.Join(path.Dir(from), module)
	}
	if strings.HasPrefix(p, "/") {
		return "", &LoadError{Msg: fmt.Sprintf("%s: absolute paths cannot be loaded; use //path from the corpus root", module)}
	}
	// Check for escape before cleaning swallows the "..".
	depth := 0
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "..":
			depth--
		case ".", "":
		default:
			depth++
		}
		if depth < 0 {
			return "", &LoadError{Msg: fmt.Sprintf("%s leaves the corpus root; only files inside it can be loaded", module)}
		}
	}
	p = path.Clean(p)
	if !strings.HasSuffix(p, ".star") {
		return "", &LoadError{Msg: fmt.Sprintf("%s: only .star files can be loaded", module)}
	}
	return p, nil
}

// loader returns the thread's load function. chain is the stack of files being loaded, for
// cycle detection. Modules are kept per corpus, except those whose load was cut short by a
// cancelled context or the wall-clock limit (the thread that asked is marked: its own outcome
// is not kept either). Two goroutines may load the same module at once, which only duplicates
// deterministic work.
func (c *Corpus) loader(ctx context.Context, chain []string) func(*starlark.Thread, string) (starlark.StringDict, error) {
	return func(th *starlark.Thread, module string) (starlark.StringDict, error) {
		from := chain[len(chain)-1]
		rel, err := ResolveLoad(from, module)
		if err != nil {
			return nil, err
		}
		for _, p := range chain {
			if p == rel {
				return nil, &LoadError{Msg: fmt.Sprintf("%s: load cycle: %s -> %s", module, strings.Join(chain, " -> "), rel)}
			}
		}
		c.mu.Lock()
		m, ok := c.modules[rel]
		c.mu.Unlock()
		if ok {
			return m.globals, m.err
		}
		m, transient := c.loadModule(ctx, rel, module, append(chain[:len(chain):len(chain)], rel))
		if transient {
			th.SetLocal(transientKey, true)
			return m.globals, m.err
		}
		c.mu.Lock()
		c.modules[rel] = m
		c.mu.Unlock()
		return m.globals, m.err
	}
}

// loadModule runs a helper file (rel, loaded as name) and says whether its outcome is transient.
func (c *Corpus) loadModule(ctx context.Context, rel, name string, chain []string) (*module, bool) {
	display := c.DisplayPath(rel)
	sc := c.run(ctx, rel, &fileState{rel: rel, display: display, isHelper: true}, chain, nil)
	var esc *EscapeError
	var bad *NotUTF8Error
	var le *LoadError
	switch {
	case sc.err == nil:
		return &module{globals: sc.globals}, false
	case sc.stage == stageRead && errors.As(sc.err, &esc):
		return &module{err: &LoadError{Msg: fmt.Sprintf("%s: %v", name, esc)}}, false
	case sc.stage == stageRead:
		return &module{err: &LoadError{Msg: fmt.Sprintf("%s: no such file in the corpus (%s)", name, display)}}, false
	case errors.As(sc.err, &bad):
		return &module{err: &LoadError{Msg: fmt.Sprintf("%s: %s", name, bad.diag(display).String())}}, false
	case sc.stage == stageSyntax:
		return &module{err: &LoadError{Msg: fmt.Sprintf("%s: %s", name, SyntaxDiags(sc.err)[0].String())}}, false
	case errors.As(sc.err, &le):
		return &module{err: le}, sc.transient
	}
	d := ErrorDiag("script-error", sc.err)
	return &module{err: &LoadError{Msg: fmt.Sprintf("%s failed: %s", name, d.String())}}, sc.transient
}

// LoadAll loads every task file of the corpus in path order.
func (c *Corpus) LoadAll(ctx context.Context) ([]*File, error) {
	rels, err := c.TaskFiles()
	if err != nil {
		return nil, err
	}
	out := make([]*File, len(rels))
	for i, rel := range rels {
		out[i] = c.LoadFile(ctx, rel)
	}
	return out, nil
}

// DuplicateNames finds tasks whose name an earlier file (in the given order) already declared:
// each gets a schema diagnostic at its task() call.
func DuplicateNames(files []*File) map[*Task]Diagnostic {
	first := map[string]*Task{}
	out := map[*Task]Diagnostic{}
	for _, f := range files {
		for _, t := range f.Tasks {
			if prev, ok := first[t.Name]; ok {
				out[t] = NewDiag("schema", fmt.Sprintf("task: name: %q is already declared at %s", t.Name, posString(prev.Pos))).At(t.Pos)
				continue
			}
			first[t.Name] = t
		}
	}
	return out
}

// ReadSource returns the bytes of a root-relative file; a path that leaves the root is an
// *EscapeError (see CheckPath). Everything that shows corpus source, such as the source line
// of a diagnostic, reads it here.
func (c *Corpus) ReadSource(rel string) ([]byte, error) {
	return c.readFile(rel)
}
