package main

import (
	"flag"
	"fmt"
	"strings"
)

// undefinedFlag is how the flag package says a flag is not one of the command's.
const undefinedFlag = "flag provided but not defined: -"

// suggestFlag adds to the flag package's error for an unknown flag the nearest of fs's flags
// ("did you mean --samples?"), when one is near enough to be the one meant; other errors are
// returned as they are.
func suggestFlag(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return err
	}
	name = strings.TrimPrefix(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near := nearest(name, names); near != "" {
		return fmt.Errorf("%v (did you mean --%s?)", err, near)
	}
	return err
}

// nearest is the word of words closest to s by edit distance, when it is near enough to be a
// typo of it (at most 2 edits, or a third of the word's length for longer words), the first in
// words' order on a tie; "" when none is. A start of exactly one word, three letters or more,
// is near that word ("--include" for "--include-oracle").
func nearest(s string, words []string) string {
	s = strings.ToLower(s)
	var starts []string
	for _, w := range words {
		if len(s) >= 3 && strings.HasPrefix(w, s) {
			starts = append(starts, w)
		}
	}
	if len(starts) == 1 {
		return starts[0]
	}
	best, bestD := "", -1
	for _, w := range words {
		d := editDistance(s, w)
		if d <= max(2, len(w)/3) && (bestD < 0 || d < bestD) {
			best, bestD = w, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes (flag and command names are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
