// Package split divides a corpus into train, dev and test by family, so that a model is never
// evaluated on a sibling of a task it was trained on (docs/recipe.md).
//
// Families. Generated tasks come in families that share a scenario, helpers and a skeleton;
// training on one member and evaluating on its sibling measures memory, not skill. The unit of a
// split is a task file (the tasks of one file share everything), and two files are of one family
// when they share
//
//   - a declared family: a line `# family: NAME` among the comments that open the file (the
//     command line also reads `metadata = {"family": NAME}` of a task(...) call, from the syntax);
//   - a helper file they load (directly or not), unless that helper is loaded by more than
//     Config.CommonShare (a tenth) of the corpus's files, and by more than two: a library many
//     tasks use (the built-in corpus's cast of people, its calendar checks) binds nothing, or the
//     whole corpus would be one family, while a helper a handful of tasks share is their skeleton;
//   - a generation scenario: what Config.Scenario says of the file (the command line gives the
//     scenario `coworkenv generate` drew from the seed its header records).
//
// Families are the connected groups of that relation. A family is named after its smallest key.
//
// Assignment. The families are taken largest first (ties in an order drawn from the seed and
// their names) and each goes to the split that lacks the most files relative to its target
// (ratio × files), train before dev before test on a tie. The result depends only on the files,
// their families, the ratio and the seed, never on the order the files are given in or on a map's
// order; a family never crosses splits. Adding files can move a family to another split, so a
// split is recorded wherever it matters: in the traces of a rollout and in every export.
package split

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The splits.
const (
	Train = "train"
	Dev   = "dev"
	Test  = "test"
)

// Names are the splits in their order.
var Names = []string{Train, Dev, Test}

// Config chooses a split.
type Config struct {
	// Ratio are the shares of train, dev and test (they need not add up to 1).
	Ratio [3]float64
	// Seed orders families of one size.
	Seed int64
	// CommonShare: a helper loaded by more than this share of the files binds none of them
	// (DefaultCommonShare when 0).
	CommonShare float64
}

// DefaultRatio is the ratio without --split-ratio.
var DefaultRatio = [3]float64{0.8, 0.1, 0.1}

// DefaultCommonShare is the share of files above which a helper is a common library (a helper
// loaded by two files always binds them).
const DefaultCommonShare = 0.1

// File is one task file of a corpus and what binds it to others.
type File struct {
	// Rel is the file's path relative to the corpus root.
	Rel string
	// Family is its declared family ("" when none).
	Family string
	// Helpers are the files it loads, directly or not (root-relative).
	Helpers []string
	// Scenario is the generation scenario it was made from ("" when none).
	Scenario string
}

// Assignment is the split of one file.
type Assignment struct {
	Split  string // Train, Dev or Test
	Family string // the family's name (its smallest key)
}

// ParseRatio reads a ratio written TRAIN,DEV,TEST (non-negative numbers, not all 0).
func ParseRatio(s string) ([3]float64, error) {
	var r [3]float64
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return r, fmt.Errorf("%q: want TRAIN,DEV,TEST, three numbers", s)
	}
	sum := 0.0
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v >= 0) || v > 1e9 {
			return r, fmt.Errorf("%q: %q is not a number >= 0", s, p)
		}
		r[i] = v
		sum += v
	}
	if sum <= 0 {
		return r, fmt.Errorf("%q: the shares add up to 0", s)
	}
	return r, nil
}

// FormatRatio writes a ratio as ParseRatio reads it.
func FormatRatio(r [3]float64) string {
	return strconv.FormatFloat(r[0], 'g', -1, 64) + "," + strconv.FormatFloat(r[1], 'g', -1, 64) + "," + strconv.FormatFloat(r[2], 'g', -1, 64)
}

// DeclaredFamily reads the `# family: NAME` line of the comments that open a file ("" when none).
func DeclaredFamily(src []byte) string {
	return HeaderValue(src, "family")
}

// HeaderValue is the value of a `# KEY: VALUE` line among the comment lines (and blank lines)
// that open a file, "" when there is none.
func HeaderValue(src []byte, key string) string {
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		rest, ok := strings.CutPrefix(line, "#")
		if !ok {
			return ""
		}
		k, v, ok := strings.Cut(rest, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Assign splits files: the assignment of each, by Rel. Files of one Rel given twice count once.
func Assign(files []File, cfg Config) map[string]Assignment {
	share := cfg.CommonShare
	if share <= 0 {
		share = DefaultCommonShare
	}
	byRel := map[string]File{}
	var rels []string
	for _, f := range files {
		if _, dup := byRel[f.Rel]; !dup {
			rels = append(rels, f.Rel)
		}
		byRel[f.Rel] = f
	}
	sort.Strings(rels)
	n := len(rels)
	loaders := map[string]int{}
	for _, rel := range rels {
		for _, h := range uniq(byRel[rel].Helpers) {
			loaders[h]++
		}
	}
	// union-find over the files, through their keys
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[string]int{} // key -> the first file with it
	keysOf := make([][]string, n)
	for i, rel := range rels {
		f := byRel[rel]
		keys := []string{"file:" + rel}
		if f.Family != "" {
			keys = append(keys, "family:"+f.Family)
		}
		if f.Scenario != "" {
			keys = append(keys, "scenario:"+f.Scenario)
		}
		for _, h := range uniq(f.Helpers) {
			if loaders[h] > 1 && float64(loaders[h]) <= max(2, share*float64(n)) {
				keys = append(keys, "helper:"+h)
			}
		}
		keysOf[i] = keys
		for _, k := range keys {
			if j, ok := owner[k]; ok {
				a, b := find(i), find(j)
				if a != b {
					parent[max(a, b)] = min(a, b)
				}
			} else {
				owner[k] = i
			}
		}
	}
	type family struct {
		name  string
		files []int
		order [32]byte
	}
	fams := map[int]*family{}
	var roots []int
	for i := range rels {
		r := find(i)
		fam, ok := fams[r]
		if !ok {
			fam = &family{}
			fams[r] = fam
			roots = append(roots, r)
		}
		fam.files = append(fam.files, i)
		for _, k := range keysOf[i] {
			if name := familyName(k); fam.name == "" || name < fam.name {
				fam.name = name
			}
		}
	}
	list := make([]*family, 0, len(roots))
	for _, r := range roots {
		fam := fams[r]
		var seed [8]byte
		binary.BigEndian.PutUint64(seed[:], uint64(cfg.Seed))
		fam.order = sha256.Sum256(append(seed[:], fam.name...))
		list = append(list, fam)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if len(a.files) != len(b.files) {
			return len(a.files) > len(b.files)
		}
		return bytes.Compare(a.order[:], b.order[:]) < 0
	})
	sum := cfg.Ratio[0] + cfg.Ratio[1] + cfg.Ratio[2]
	ratio := cfg.Ratio
	if sum <= 0 {
		ratio, sum = DefaultRatio, 1
	}
	var have [3]int
	out := make(map[string]Assignment, n)
	for _, fam := range list {
		best, bestFits, bestLack := -1, false, 0.0
		for s := range 3 {
			if ratio[s] <= 0 {
				continue
			}
			target := ratio[s] / sum * float64(n)
			lack := (target - float64(have[s])) / target // the share of its target it still lacks
			fits := float64(have[s]+len(fam.files)) <= target+1e-9
			if best < 0 || (fits && !bestFits) || (fits == bestFits && lack > bestLack+1e-12) {
				best, bestFits, bestLack = s, fits, lack
			}
		}
		have[best] += len(fam.files)
		for _, i := range fam.files {
			out[rels[i]] = Assignment{Split: Names[best], Family: fam.name[2:]}
		}
	}
	return out
}

// familyName is the name a key gives a family after a digit that ranks it: a declared family
// first ("family NAME"), then a scenario ("scenario S"), a helper ("helper lib/x.star"), a file
// ("file tasks/x.star"). A family is named after its first key in that order.
func familyName(key string) string {
	kind, rest, _ := strings.Cut(key, ":")
	rank := map[string]string{"family": "0", "scenario": "1", "helper": "2"}[kind]
	if rank == "" {
		rank = "3"
	}
	return rank + " " + kind + " " + rest
}

func uniq(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	k := 0
	for i, x := range out {
		if i == 0 || x != out[k-1] {
			out[k] = x
			k++
		}
	}
	return out[:k]
}

// Valid reports whether name is a split's name.
func Valid(name string) bool {
	for _, n := range Names {
		if n == name {
			return true
		}
	}
	return false
}
