package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"strings"
	"unicode"
)

// NormalizeSource is a task file without comments and without white space outside string
// literals: two files that differ only in layout and comments normalise to the same text.
func NormalizeSource(src string) string {
	var b strings.Builder
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i++
		case c == '"' || c == '\'':
			j := stringEnd(src, i)
			b.WriteString(src[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// stringEnd returns the index after the string literal that starts at i (single, double or
// triple quoted; an unterminated literal runs to the end).
func stringEnd(src string, i int) int {
	q := src[i]
	if strings.HasPrefix(src[i:], strings.Repeat(string(q), 3)) {
		end := strings.Index(src[i+3:], strings.Repeat(string(q), 3))
		for end >= 0 && escaped(src, i+3+end) {
			next := strings.Index(src[i+3+end+1:], strings.Repeat(string(q), 3))
			if next < 0 {
				end = -1
				break
			}
			end += 1 + next
		}
		if end < 0 {
			return len(src)
		}
		return i + 3 + end + 3
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case q:
			return j + 1
		case '\n':
			return j
		}
	}
	return len(src)
}

// escaped reports whether the byte at i is preceded by an odd number of backslashes.
func escaped(src string, i int) bool {
	n := 0
	for k := i - 1; k >= 0 && src[k] == '\\'; k-- {
		n++
	}
	return n%2 == 1
}

// SourceHash is the SHA-256 of the normalised source.
func SourceHash(src string) string {
	h := sha256.Sum256([]byte(NormalizeSource(src)))
	return hex.EncodeToString(h[:])
}

// ShingleSize is the number of words of one shingle.
const ShingleSize = 3

// Shingles is the set of hashed word n-grams of a text (lower case, letters and digits).
func Shingles(text string) map[uint64]struct{} {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := map[uint64]struct{}{}
	if len(words) < ShingleSize {
		if len(words) > 0 {
			out[hashWords(words)] = struct{}{}
		}
		return out
	}
	for i := 0; i+ShingleSize <= len(words); i++ {
		out[hashWords(words[i:i+ShingleSize])] = struct{}{}
	}
	return out
}

func hashWords(ws []string) uint64 {
	h := fnv.New64a()
	for _, w := range ws {
		h.Write([]byte(w))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// Jaccard is |a ∩ b| / |a ∪ b| (0 for two empty sets).
func Jaccard(a, b map[uint64]struct{}) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for k := range a {
		if _, ok := b[k]; ok {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

// entry is one known task the dedup index compares against.
type entry struct {
	name     string // task name
	where    string // "corpus/tasks/x.star" or "attempt 3"
	attempt  int    // -1 for the corpus
	hash     string // SourceHash of its file
	shingles map[uint64]struct{}
	skel     string // skeletonOf its file ("": none)
}

// dedupText is the text the near-duplicate check compares: the user messages and the
// workspace the setup builds.
func dedupText(prompts []string, setup string) string {
	return strings.Join(prompts, "\n") + "\n" + setup
}

// twin finds the first entry the candidate duplicates: the same normalised source, or a
// Jaccard similarity of prompt and setup at or above threshold (similarity 1 for a copy).
func twin(entries []*entry, hash string, sh map[uint64]struct{}, threshold float64) (*entry, float64) {
	for _, e := range entries {
		if hash != "" && e.hash == hash {
			return e, 1
		}
	}
	if sh == nil {
		return nil, 0
	}
	var best *entry
	bestSim := 0.0
	for _, e := range entries {
		if e.shingles == nil {
			continue
		}
		if s := Jaccard(sh, e.shingles); s >= threshold && s > bestSim {
			best, bestSim = e, s
		}
	}
	return best, bestSim
}
