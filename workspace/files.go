package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/workspace/internal/pmap"
	"golang.org/x/text/unicode/norm"
)

// CleanPath makes p absolute and clean: "a.txt" and "/a.txt" are one file, a trailing slash is
// dropped, and ".." never leaves "/" ("../../x" is "/x"). The empty path is "/". It is also put
// in Unicode normalization form C, so that names that differ only in normalization are one file:
// "cafe\u0301.txt" (e and a combining accent, as macOS writes it) is "caf\u00e9.txt".
func CleanPath(p string) string {
	c := path.Clean("/" + p)
	if !norm.NFC.IsNormalString(c) {
		c = norm.NFC.String(c)
	}
	return c
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

// fsSec holds the files and the folders (but "/") in one map by path, in byte order, so that the
// paths inside a folder are one range of it. A folder's value is nil.
type fsSec struct {
	t     pmap.Map[string, *fileEntry]
	files int // how many entries are files
	bytes int // the bytes they hold
	sum   digestSum
}

func newFsSec() fsSec { return fsSec{t: pmap.New[string, *fileEntry](strings.Compare)} }

// digest is the digest of the entry at p for the section's sum: a file (e) or a folder (nil).
func fsDigest(p string, e *fileEntry) entryDigest {
	if e == nil {
		return digestOf('d', p, nil, "")
	}
	return digestOf('f', p, &e.sum, "")
}

// file returns the file at p.
func (f *fsSec) file(p string) (*fileEntry, bool) {
	e, ok := f.t.Get(p)
	return e, ok && e != nil
}

func (f *fsSec) isDir(p string) bool {
	if p == "/" {
		return true
	}
	e, ok := f.t.Get(p)
	return ok && e == nil
}

// put stores a file (e) or a folder (nil) at p, keeping the counts and the sum; o is the
// writing state's owner of nodes.
func (f *fsSec) put(o *pmap.Owner, p string, e *fileEntry) {
	old, had := f.t.Set(o, p, e)
	if had {
		f.drop(p, old)
	}
	f.sum.add(fsDigest(p, e))
	if e != nil {
		f.files++
		f.bytes += len(e.content)
	}
}

// del removes the entry at p, which exists.
func (f *fsSec) del(o *pmap.Owner, p string) {
	if old, ok := f.t.Delete(o, p); ok {
		f.drop(p, old)
	}
}

// drop takes an entry that left the map out of the counts and the sum.
func (f *fsSec) drop(p string, e *fileEntry) {
	f.sum.sub(fsDigest(p, e))
	if e != nil {
		f.files--
		f.bytes -= len(e.content)
	}
}

// inside yields the paths strictly inside folder dir, in byte order, with their entries.
func (f *fsSec) inside(dir string) func(yield func(string, *fileEntry) bool) {
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	return func(yield func(string, *fileEntry) bool) {
		for p, e := range f.t.From(prefix) {
			if !strings.HasPrefix(p, prefix) || !yield(p, e) {
				return
			}
		}
	}
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
	_, err := f.missingParents(p)
	return err
}

// missingParents returns the folders above p that do not exist yet, outermost first, and fails
// when one above p is a file: one look-up per folder.
func (f *fsSec) missingParents(p string) ([]string, error) {
	var missing []string
	for _, d := range parents(p) {
		e, ok := f.t.Get(d)
		switch {
		case !ok:
			missing = append(missing, d)
		case e != nil:
			return nil, fmt.Errorf("%s is a file, not a folder", d)
		}
	}
	return missing, nil
}

func (f *fsSec) addParents(o *pmap.Owner, p string) {
	missing, _ := f.missingParents(p)
	for _, d := range missing {
		f.put(o, d, nil)
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
	old, exists := s.fs.t.Get(p)
	if p == "/" || exists && old == nil {
		return fmt.Errorf("cannot write %s: it is a folder", p)
	}
	missing, err := s.fs.missingParents(p)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", p, err)
	}
	if exists && old.content == content {
		return nil // nothing changes
	}
	e := &fileEntry{content: content, sum: sha256.Sum256([]byte(content))}
	_ = s.begin()
	f, o := s.fsw(), s.owner()
	for _, d := range missing {
		f.put(o, d, nil)
	}
	f.put(o, p, e)
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
	if e, ok := fs.fs.file(p); ok {
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
	_, ok := fs.fs.t.Get(p)
	return ok || p == "/"
}

// IsDir reports whether p is a folder.
func (fs *Files) IsDir(p string) bool { return fs.fs.isDir(CleanPath(p)) }

// IsFile reports whether p is a file.
func (fs *Files) IsFile(p string) bool {
	_, ok := fs.fs.file(CleanPath(p))
	return ok
}

// List returns the names of the direct children of folder dir, sorted, folders ending in "/".
// It visits the children only, not what the folders among them hold: O(c log n) for c children.
func (fs *Files) List(dir string) ([]string, error) {
	dir, err := checkPath(dir)
	if err != nil {
		return nil, err
	}
	if !fs.fs.isDir(dir) {
		if _, ok := fs.fs.file(dir); ok {
			return nil, fmt.Errorf("%s is a file, not a folder", dir)
		}
		return nil, fmt.Errorf("no such folder: %s", dir)
	}
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	out := []string{}
	for from := prefix; ; {
		p, e, ok := fs.fs.t.Ceil(from)
		if !ok || !strings.HasPrefix(p, prefix) {
			break
		}
		rest := p[len(prefix):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			// inside the child folder rest[:i]: go on after everything it holds
			from = prefix + rest[:i] + "0" // "0" follows "/"
			continue
		}
		if e == nil {
			out = append(out, rest+"/")
		} else {
			out = append(out, rest)
		}
		from = p + "\x00"
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
	for p, e := range fs.fs.inside(dir) {
		if e != nil {
			out = append(out, p)
		}
	}
	return out
}

// Dirs returns the path of every folder inside dir (not dir itself), sorted.
func (fs *Files) Dirs(dir string) []string {
	dir = CleanPath(dir)
	out := []string{}
	for p, e := range fs.fs.inside(dir) {
		if e == nil {
			out = append(out, p)
		}
	}
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

// subtree returns folder p and every path inside it: its files in natural order, and its
// folders (p first).
func (f *fsSec) subtree(p string) (files, dirs []string) {
	dirs = []string{p}
	for q, e := range f.inside(p) {
		if e == nil {
			dirs = append(dirs, q)
		} else {
			files = append(files, q)
		}
	}
	slices.SortFunc(files, NaturalCompare)
	return files, dirs
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
	if e, ok := s.fs.file(p); ok {
		_ = s.begin()
		s.fsw().del(s.owner(), p)
		s.record(Action{Kind: KindFile, Op: "remove", Key: p, before: e})
		return nil
	}
	if !s.fs.isDir(p) {
		return fmt.Errorf("no such file or folder: %s", p)
	}
	_ = s.begin()
	f, o := s.fsw(), s.owner()
	files, dirs := f.subtree(p)
	for _, q := range files {
		e, _ := f.file(q)
		s.record(Action{Kind: KindFile, Op: "remove", Key: q, before: e})
		f.del(o, q)
	}
	s.record(Action{Kind: KindFolder, Op: "remove", Key: p})
	for _, q := range dirs {
		f.del(o, q)
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
	_, srcFile := s.fs.file(src)
	if !srcFile && !s.fs.isDir(src) {
		return "", fmt.Errorf("no such file or folder: %s", src)
	}
	target := dst
	if into || s.fs.isDir(dst) {
		if _, ok := s.fs.file(dst); ok {
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
	if fs.Exists(target) {
		return "", fmt.Errorf("cannot move %s to %s: %s already exists", src, target, target)
	}
	if err := s.fs.checkParents(target); err != nil {
		return "", fmt.Errorf("cannot move %s to %s: %v", src, target, err)
	}
	_ = s.begin()
	f, o := s.fsw(), s.owner()
	f.addParents(o, target)
	if srcFile {
		e, _ := f.file(src)
		f.del(o, src)
		f.put(o, target, e)
		s.record(Action{Kind: KindFile, Op: "move", Key: src, To: target, before: e, after: e})
		return target, nil
	}
	files, dirs := f.subtree(src)
	for _, q := range files {
		e, _ := f.file(q)
		f.del(o, q)
		f.put(o, target+q[len(src):], e)
		s.record(Action{Kind: KindFile, Op: "move", Key: q, To: target + q[len(src):], before: e, after: e})
	}
	s.record(Action{Kind: KindFolder, Op: "move", Key: src, To: target})
	for _, q := range dirs {
		f.del(o, q)
		f.put(o, target+q[len(src):], nil)
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
	if _, ok := s.fs.file(p); ok {
		return fmt.Errorf("cannot make folder %s: it is a file", p)
	}
	if err := s.fs.checkParents(p); err != nil {
		return fmt.Errorf("cannot make folder %s: %v", p, err)
	}
	_ = s.begin()
	f, o := s.fsw(), s.owner()
	f.addParents(o, p)
	f.put(o, p, nil)
	s.record(Action{Kind: KindFolder, Op: "mkdir", Key: p})
	return nil
}

// Glob returns the files (not folders) whose path matches pattern, sorted. The pattern is
// cleaned like a path; within one segment "*", "?" and "[...]" work as in path.Match, and a
// segment that is exactly "**" matches any number of segments, none included
// ("/docs/**/*.md" matches "/docs/a.md" and "/docs/x/y/a.md"). It looks only at the paths
// under the pattern's leading segments that hold no wildcard (GlobLooks counts them).
func (fs *Files) Glob(pattern string) ([]string, error) { return fs.GlobCharged(pattern, nil) }

// GlobCharged is Glob that calls charge (nil: none) with the work of each path it looks at
// beyond the one step GlobLooks counts for it: the further places a "**" makes it try the
// segments that follow it at (see globber.match); it stops at charge's first error.
func (fs *Files) GlobCharged(pattern string, charge func(n int) error) ([]string, error) {
	segs, dir, exact, err := globPlan(pattern)
	if err != nil {
		return nil, err
	}
	g := newGlobber(segs)
	matches := func(p string) (bool, error) {
		ok, extra := g.match(strings.Split(p[1:], "/"))
		if charge != nil && extra > 0 {
			if err := charge(extra); err != nil {
				return false, err
			}
		}
		return ok, nil
	}
	out := []string{}
	if fs.IsFile(dir) { // the pattern without a wildcard, or "/a/**" and a file /a
		if ok, err := matches(dir); err != nil {
			return nil, err
		} else if ok {
			out = append(out, dir)
		}
	}
	if exact {
		return out, nil
	}
	for p, e := range fs.fs.inside(dir) {
		if e == nil {
			continue
		}
		if ok, err := matches(p); err != nil {
			return nil, err
		} else if ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// GlobLooks is the number of paths Glob looks at for pattern (1 for a bad one).
func (fs *Files) GlobLooks(pattern string) int {
	_, dir, exact, err := globPlan(pattern)
	if err != nil || exact {
		return 1
	}
	return 1 + fs.Inside(dir)
}

// globPlan cuts a glob pattern into its segments and finds the folder its leading segments
// without a wildcard name; exact when no segment has one (dir is then the path).
func globPlan(pattern string) (segs []string, dir string, exact bool, err error) {
	clean, err := checkPath(pattern)
	if err != nil {
		return nil, "", false, err
	}
	segs = strings.Split(clean[1:], "/")
	// Collapse runs of "**", which would only make matching slower.
	segs = slices.CompactFunc(segs, func(a, b string) bool { return a == "**" && b == "**" })
	literal := len(segs)
	for i, seg := range segs {
		if _, err := path.Match(seg, ""); err != nil {
			return nil, "", false, fmt.Errorf("bad glob pattern %q", pattern)
		}
		if literal == len(segs) && (seg == "**" || strings.ContainsAny(seg, `*?[\`)) {
			literal = i
		}
	}
	return segs, "/" + strings.Join(segs[:literal], "/"), literal == len(segs), nil
}

// Inside is the number of files and folders inside folder dir, at any depth: O(log n).
func (fs *Files) Inside(dir string) int {
	dir = CleanPath(dir)
	prefix, end := dir+"/", dir+"0" // "0" follows "/": every path inside dir sorts before end
	if dir == "/" {
		prefix, end = "/", "0"
	}
	return fs.fs.t.Rank(end) - fs.fs.t.Rank(prefix)
}

// globber matches the segments of paths against those of one pattern.
type globber struct {
	segs  []string
	plain int    // the segments that are not "**"
	reach []bool // scratch: reach[j] when the segments matched so far can end before part j
}

func newGlobber(segs []string) *globber {
	g := &globber{segs: segs}
	for _, s := range segs {
		if s != "**" {
			g.plain++
		}
	}
	return g
}

// match reports whether the segments of a path match the pattern's, and how many comparisons
// of a segment it made beyond one for each segment of the pattern that is not "**" (extra: 0
// for a pattern without "**"). It keeps the set of places the segments matched so far can end
// at, so it costs O(segments × parts) comparisons at most, however many "**" the pattern has
// (trying each way of matching them could take exponential time).
func (g *globber) match(parts []string) (ok bool, extra int) {
	reach := g.reach[:0]
	for range len(parts) + 1 {
		reach = append(reach, false)
	}
	g.reach = reach
	reach[0] = true
	tries := 0
	for _, seg := range g.segs {
		if seg == "**" { // from the first place reached on, any place
			first := slices.Index(reach, true)
			for j := first + 1; j <= len(parts); j++ {
				reach[j] = true
			}
			continue
		}
		any := false
		for j := len(parts); j > 0; j-- { // one part further, from each place reached
			reach[j] = false
			if reach[j-1] {
				tries++
				if m, _ := path.Match(seg, parts[j-1]); m {
					reach[j], any = true, true
				}
			}
		}
		reach[0] = false
		if !any {
			return false, max(tries-g.plain, 0)
		}
	}
	return reach[len(parts)], max(tries-g.plain, 0)
}

// Size returns the number of files and the total bytes they hold.
func (fs *Files) Size() (files, bytes int) { return fs.fs.files, fs.fs.bytes }
