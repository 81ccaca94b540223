package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/coworkenv/coworkenv/internal/limits"
)

// CleanPath makes p absolute and clean: "a.txt" and "/a.txt" are one file, a trailing slash is
// dropped, and ".." never leaves "/" ("../../x" is "/x"). The empty path is "/".
func CleanPath(p string) string {
	return path.Clean("/" + p)
}

// checkPath is CleanPath for a path that enters a file operation: a path holding a control
// character (NUL, a line break, a tab, ESC, DEL, a C1 control) is an error, so no such path is
// ever stored. Every method of Files that can fail goes through it, and so every ws.fs method
// and fs_* tool does; the others (Exists, IsDir, IsFile, Walk, Dirs) find nothing there.
func checkPath(p string) (string, error) {
	c := CleanPath(p)
	if strings.IndexFunc(c, unicode.IsControl) >= 0 {
		return c, fmt.Errorf("path %q: contains a control character", c)
	}
	return c, nil
}

// Files is the file system of a state: files hold immutable strings, and folders are tracked
// explicitly, so an empty folder made by Mkdir exists. "/" always exists.
type Files State

type fileEntry struct {
	content string
	sum     [32]byte
}

type fsSec struct {
	files map[string]*fileEntry
	dirs  map[string]struct{} // every folder but "/"
	owned bool
	h     *hashCell
}

// own makes the maps private to this state before a write.
func (f *fsSec) own(keysChanged bool) {
	if !f.owned {
		f.files = maps.Clone(f.files)
		f.dirs = maps.Clone(f.dirs)
		f.owned = true
		f.h = f.h.next(keysChanged)
		return
	}
	f.h.reset(keysChanged)
}

func (f *fsSec) sum() [32]byte {
	if h := f.h.get(); h != nil {
		return *h
	}
	keys := f.h.sortedKeys(func() []string {
		keys := make([]string, 0, len(f.files)+len(f.dirs))
		for p := range f.files {
			keys = append(keys, p)
		}
		for p := range f.dirs {
			keys = append(keys, p)
		}
		return keys
	})
	b := make([]byte, 0, 16+len(keys)*64)
	b = appendStr(b, "files")
	b = appendUint(b, uint64(len(keys)))
	for _, p := range keys {
		b = appendStr(b, p)
		if e, ok := f.files[p]; ok {
			b = append(b, 'f')
			b = append(b, e.sum[:]...)
		} else {
			b = append(b, 'd')
		}
	}
	h := sha256.Sum256(b)
	f.h.put(h)
	return h
}

func (f *fsSec) isDir(p string) bool {
	if p == "/" {
		return true
	}
	_, ok := f.dirs[p]
	return ok
}

// parents returns the folders above p, outermost first, without "/".
func parents(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// under reports whether p lies strictly inside folder dir.
func under(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// checkParents fails when a folder above p is a file.
func (f *fsSec) checkParents(p string) error {
	for _, d := range parents(p) {
		if _, ok := f.files[d]; ok {
			return fmt.Errorf("%s is a file, not a folder", d)
		}
	}
	return nil
}

func (f *fsSec) addParents(p string) {
	for _, d := range parents(p) {
		f.dirs[d] = struct{}{}
	}
}

// Write creates or replaces the file at p, creating its parent folders. It fails when p is a
// folder, when a parent is a file, or when content is larger than limits.FileSize.
func (fs *Files) Write(p, content string) error {
	s, p, err := fs.writable(p)
	if err != nil {
		return err
	}
	if len(content) > limits.FileSize {
		return fmt.Errorf("cannot write %s: %d bytes is over the %s limit of a file", p, len(content), limits.Bytes(limits.FileSize))
	}
	if s.fs.isDir(p) {
		return fmt.Errorf("cannot write %s: it is a folder", p)
	}
	if err := s.fs.checkParents(p); err != nil {
		return fmt.Errorf("cannot write %s: %v", p, err)
	}
	old, exists := s.fs.files[p]
	if exists && old.content == content {
		return nil // nothing changes
	}
	e := &fileEntry{content: content, sum: sha256.Sum256([]byte(content))}
	_ = s.begin()
	s.fs.own(!exists)
	s.fs.addParents(p)
	s.fs.files[p] = e
	a := Action{Kind: KindFile, Op: "write", Key: p, after: e}
	if exists {
		a.before = old
	}
	s.record(a)
	return nil
}

// Read returns the content of the file at p.
func (fs *Files) Read(p string) (string, error) {
	p, err := checkPath(p)
	if err != nil {
		return "", err
	}
	if e, ok := fs.fs.files[p]; ok {
		return e.content, nil
	}
	if fs.fs.isDir(p) {
		return "", fmt.Errorf("%s is a folder", p)
	}
	return "", fmt.Errorf("no such file: %s", p)
}

// Exists reports whether p is a file or a folder.
func (fs *Files) Exists(p string) bool {
	p = CleanPath(p)
	_, ok := fs.fs.files[p]
	return ok || fs.fs.isDir(p)
}

// IsDir reports whether p is a folder.
func (fs *Files) IsDir(p string) bool { return fs.fs.isDir(CleanPath(p)) }

// IsFile reports whether p is a file.
func (fs *Files) IsFile(p string) bool {
	_, ok := fs.fs.files[CleanPath(p)]
	return ok
}

// List returns the names of the direct children of folder dir, sorted, folders ending in "/".
func (fs *Files) List(dir string) ([]string, error) {
	dir, err := checkPath(dir)
	if err != nil {
		return nil, err
	}
	if !fs.fs.isDir(dir) {
		if _, ok := fs.fs.files[dir]; ok {
			return nil, fmt.Errorf("%s is a file, not a folder", dir)
		}
		return nil, fmt.Errorf("no such folder: %s", dir)
	}
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	out := []string{}
	for p := range fs.fs.files {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			out = append(out, rest)
		}
	}
	for p := range fs.fs.dirs {
		if rest, ok := strings.CutPrefix(p, prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			out = append(out, rest+"/")
		}
	}
	slices.Sort(out)
	return out, nil
}

// Walk returns the path of every file inside folder dir, at any depth, sorted. It is empty when
// dir is missing or is a file.
func (fs *Files) Walk(dir string) []string {
	dir = CleanPath(dir)
	out := []string{}
	if !fs.fs.isDir(dir) {
		return out
	}
	for p := range fs.fs.files {
		if under(p, dir) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Dirs returns the path of every folder inside dir (not dir itself), sorted.
func (fs *Files) Dirs(dir string) []string {
	dir = CleanPath(dir)
	out := []string{}
	for p := range fs.fs.dirs {
		if under(p, dir) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// writable returns the state to change at path p: an error when the state is frozen or p is not
// a path the workspace accepts (see checkPath), else the state and p cleaned.
func (fs *Files) writable(p string) (*State, string, error) {
	s := (*State)(fs)
	if s.frozen {
		return nil, "", ErrFrozen
	}
	p, err := checkPath(p)
	return s, p, err
}

// Remove deletes the file at p, or the folder at p with everything it holds. "/" cannot be
// removed.
func (fs *Files) Remove(p string) error {
	s, p, err := fs.writable(p)
	if err != nil {
		return err
	}
	if p == "/" {
		return errors.New("cannot remove /")
	}
	if e, ok := s.fs.files[p]; ok {
		_ = s.begin()
		s.fs.own(true)
		delete(s.fs.files, p)
		s.record(Action{Kind: KindFile, Op: "remove", Key: p, before: e})
		return nil
	}
	if !s.fs.isDir(p) {
		return fmt.Errorf("no such file or folder: %s", p)
	}
	_ = s.begin()
	s.fs.own(true)
	var gone []string
	for q := range s.fs.files {
		if under(q, p) {
			gone = append(gone, q)
		}
	}
	slices.SortFunc(gone, NaturalCompare)
	for _, q := range gone {
		s.record(Action{Kind: KindFile, Op: "remove", Key: q, before: s.fs.files[q]})
		delete(s.fs.files, q)
	}
	s.record(Action{Kind: KindFolder, Op: "remove", Key: p})
	for q := range s.fs.dirs {
		if q == p || under(q, p) {
			delete(s.fs.dirs, q)
		}
	}
	return nil
}

// Move moves the file or folder src (with its tree); see MoveTo.
func (fs *Files) Move(src, dst string) error {
	_, err := fs.MoveTo(src, dst)
	return err
}

// MoveTo moves the file or folder src (with its tree) and returns where it ended up. When dst is
// an existing folder, or ends in "/", src moves into it under its own name; otherwise src is
// renamed to dst. Missing parents of the target are created. It fails when src is missing or
// is "/", when the target already exists (nothing is overwritten or merged), or when a folder
// would move into itself. Moving a path onto itself changes nothing.
func (fs *Files) MoveTo(src, dst string) (string, error) {
	s := (*State)(fs)
	if s.frozen {
		return "", ErrFrozen
	}
	into := strings.HasSuffix(dst, "/")
	src, err := checkPath(src)
	if err != nil {
		return "", err
	}
	dst, err = checkPath(dst)
	if err != nil {
		return "", err
	}
	if src == "/" {
		return "", errors.New("cannot move /")
	}
	_, srcFile := s.fs.files[src]
	if !srcFile && !s.fs.isDir(src) {
		return "", fmt.Errorf("no such file or folder: %s", src)
	}
	target := dst
	if into || s.fs.isDir(dst) {
		if _, ok := s.fs.files[dst]; ok {
			return "", fmt.Errorf("cannot move %s into %s: it is a file", src, dst)
		}
		target = path.Join(dst, path.Base(src))
	}
	if target == src {
		return target, nil
	}
	if !srcFile && under(target, src) {
		return "", fmt.Errorf("cannot move %s into itself (%s)", src, target)
	}
	if _, ok := s.fs.files[target]; ok || s.fs.isDir(target) {
		return "", fmt.Errorf("cannot move %s to %s: %s already exists", src, target, target)
	}
	if err := s.fs.checkParents(target); err != nil {
		return "", fmt.Errorf("cannot move %s to %s: %v", src, target, err)
	}
	_ = s.begin()
	s.fs.own(true)
	s.fs.addParents(target)
	if srcFile {
		e := s.fs.files[src]
		s.fs.files[target] = e
		delete(s.fs.files, src)
		s.record(Action{Kind: KindFile, Op: "move", Key: src, To: target, before: e, after: e})
		return target, nil
	}
	var files []string
	for q := range s.fs.files {
		if under(q, src) {
			files = append(files, q)
		}
	}
	var dirs []string
	for q := range s.fs.dirs {
		if q == src || under(q, src) {
			dirs = append(dirs, q)
		}
	}
	slices.SortFunc(files, NaturalCompare)
	for _, q := range files {
		e := s.fs.files[q]
		s.fs.files[target+q[len(src):]] = e
		delete(s.fs.files, q)
		s.record(Action{Kind: KindFile, Op: "move", Key: q, To: target + q[len(src):], before: e, after: e})
	}
	s.record(Action{Kind: KindFolder, Op: "move", Key: src, To: target})
	for _, q := range dirs {
		delete(s.fs.dirs, q)
		s.fs.dirs[target+q[len(src):]] = struct{}{}
	}
	return target, nil
}

// Mkdir creates folder p and its parents. It is not an error when p already is a folder; it is
// when p or a parent is a file.
func (fs *Files) Mkdir(p string) error {
	s, p, err := fs.writable(p)
	if err != nil {
		return err
	}
	if s.fs.isDir(p) {
		return nil
	}
	if _, ok := s.fs.files[p]; ok {
		return fmt.Errorf("cannot make folder %s: it is a file", p)
	}
	if err := s.fs.checkParents(p); err != nil {
		return fmt.Errorf("cannot make folder %s: %v", p, err)
	}
	_ = s.begin()
	s.fs.own(true)
	s.fs.addParents(p)
	s.fs.dirs[p] = struct{}{}
	s.record(Action{Kind: KindFolder, Op: "mkdir", Key: p})
	return nil
}

// Glob returns the files (not folders) whose path matches pattern, sorted. The pattern is
// cleaned like a path; within one segment "*", "?" and "[...]" work as in path.Match, and a
// segment that is exactly "**" matches any number of segments, none included
// ("/docs/**/*.md" matches "/docs/a.md" and "/docs/x/y/a.md").
func (fs *Files) Glob(pattern string) ([]string, error) {
	clean, err := checkPath(pattern)
	if err != nil {
		return nil, err
	}
	segs := strings.Split(clean[1:], "/")
	// Collapse runs of "**", which would only make matching slower.
	segs = slices.CompactFunc(segs, func(a, b string) bool { return a == "**" && b == "**" })
	for _, seg := range segs {
		if _, err := path.Match(seg, ""); err != nil {
			return nil, fmt.Errorf("bad glob pattern %q", pattern)
		}
	}
	out := []string{}
	for p := range fs.fs.files {
		if globMatch(segs, strings.Split(p[1:], "/")) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

func globMatch(segs, parts []string) bool {
	for len(segs) > 0 {
		if segs[0] == "**" {
			for i := 0; i <= len(parts); i++ {
				if globMatch(segs[1:], parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(segs[0], parts[0]); !ok {
			return false
		}
		segs, parts = segs[1:], parts[1:]
	}
	return len(parts) == 0
}

// Size returns the number of files and the total bytes they hold.
func (fs *Files) Size() (files, bytes int) {
	for _, e := range fs.fs.files {
		bytes += len(e.content)
	}
	return len(fs.fs.files), bytes
}
