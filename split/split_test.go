package split

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// corpusOf is a corpus of n files: file i declares family i/famSize when famSize > 0, loads
// lib/common.star (every file) and lib/h<i/3>.star (threes of files), and every fifth file
// shares the scenario of the file before it.
func corpusOf(n int) []File {
	var files []File
	for i := range n {
		f := File{Rel: fmt.Sprintf("tasks/t%03d.star", i), Helpers: []string{"lib/common.star", fmt.Sprintf("lib/h%d.star", i/3)}}
		if i%7 == 0 {
			f.Family = fmt.Sprintf("fam%d", i/14)
		}
		if i%5 == 4 {
			f.Scenario = fmt.Sprintf("scenario %d", i-1)
		}
		if i%5 == 3 {
			f.Scenario = fmt.Sprintf("scenario %d", i)
		}
		files = append(files, f)
	}
	return files
}

// bound reports whether two files must share a split: the same declared family, scenario, or a
// helper that at most max(2, share×n) files load.
func bound(a, b File, loaders map[string]int, limit float64) bool {
	if a.Family != "" && a.Family == b.Family || a.Scenario != "" && a.Scenario == b.Scenario {
		return true
	}
	for _, h := range a.Helpers {
		for _, g := range b.Helpers {
			if h == g && float64(loaders[h]) <= limit {
				return true
			}
		}
	}
	return false
}

// No two bound files are in different splits; a helper every file loads binds nothing; the
// splits come near the ratio; the result does not depend on the order of the files, and the
// seed changes it.
func TestAssignKeepsFamiliesTogether(t *testing.T) {
	t.Parallel()
	files := corpusOf(100)
	cfg := Config{Ratio: DefaultRatio, Seed: 3}
	got := Assign(files, cfg)
	require.Len(t, got, 100)
	loaders := map[string]int{}
	for _, f := range files {
		for _, h := range f.Helpers {
			loaders[h]++
		}
	}
	for _, a := range files {
		for _, b := range files {
			if bound(a, b, loaders, 10) {
				assert.Equal(t, got[a.Rel], got[b.Rel], "%s and %s are bound", a.Rel, b.Rel)
			}
		}
	}
	count := map[string]int{}
	families := map[string]string{}
	for _, f := range files {
		as := got[f.Rel]
		count[as.Split]++
		if s, ok := families[as.Family]; ok {
			assert.Equal(t, s, as.Split, "family %s crosses splits", as.Family)
		}
		families[as.Family] = as.Split
	}
	assert.Greater(t, len(families), 10, "lib/common.star binds nothing")
	assert.InDelta(t, 80, count[Train], 8, "%v", count)
	assert.InDelta(t, 10, count[Dev], 6, "%v", count)
	assert.InDelta(t, 10, count[Test], 6, "%v", count)

	shuffled := append([]File{}, files...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	assert.Equal(t, got, Assign(shuffled, cfg), "the order of the files does not matter")
	assert.Equal(t, got, Assign(files, cfg), "the same split twice")
	differs := false
	for seed := int64(4); seed < 10 && !differs; seed++ {
		other := Assign(files, Config{Ratio: DefaultRatio, Seed: seed})
		for rel, as := range got {
			differs = differs || other[rel].Split != as.Split
		}
	}
	assert.True(t, differs, "the seed chooses among families of one size")
}

// A family is named after its declared name first, then its scenario, helper, file.
func TestFamilyNames(t *testing.T) {
	t.Parallel()
	got := Assign([]File{
		{Rel: "a.star", Family: "pallets", Helpers: []string{"lib/x.star"}},
		{Rel: "b.star", Helpers: []string{"lib/x.star"}, Scenario: "Linden Museum"},
		{Rel: "c.star", Scenario: "Linden Museum"},
		{Rel: "d.star", Helpers: []string{"lib/y.star"}},
		{Rel: "e.star", Helpers: []string{"lib/y.star"}},
		{Rel: "f.star"},
	}, Config{Ratio: [3]float64{1, 0, 1}})
	assert.Equal(t, "family pallets", got["c.star"].Family)
	assert.Equal(t, "helper lib/y.star", got["e.star"].Family)
	assert.Equal(t, "file f.star", got["f.star"].Family)
	assert.Equal(t, Train, got["a.star"].Split, "the largest family goes to train")
	for _, as := range got {
		assert.NotEqual(t, Dev, as.Split, "a share of 0 gets nothing")
	}
}

func TestParseRatioAndHeader(t *testing.T) {
	t.Parallel()
	r, err := ParseRatio("0.7, 0.15,0.15")
	require.NoError(t, err)
	assert.Equal(t, [3]float64{0.7, 0.15, 0.15}, r)
	assert.Equal(t, "0.8,0.1,0.1", FormatRatio(DefaultRatio))
	for _, bad := range []string{"", "1,2", "a,b,c", "0,0,0", "-1,1,1", "1,1,1,1", "NaN,1,1"} {
		_, err := ParseRatio(bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, "pallets", DeclaredFamily([]byte("# A task.\n\n# family: pallets\nx = 1\n")))
	assert.Equal(t, "", DeclaredFamily([]byte("x = 1\n# family: late\n")), "only the opening comments")
}
