package validate_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden validates each broken task of testdata/golden and compares the human output
// (NAME.txt) and the JSON output (NAME.json) with the golden files; -update rewrites them.
func TestGolden(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "golden")
	c := dsl.NewCorpus(os.DirFS(dir), ".", "testdata/golden")
	files, err := c.TaskFiles()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 6)
	for _, rel := range files {
		name := strings.TrimSuffix(rel, ".star")
		t.Run(name, func(t *testing.T) {
			rep, err := validate.Corpus(context.Background(), c, []string{rel}, validate.Options{Jobs: 1})
			require.NoError(t, err)
			var text bytes.Buffer
			rep.WriteText(&text, true)
			js, err := jsonv.Indent(rep.JSON())
			require.NoError(t, err)
			compare(t, filepath.Join(dir, name+".txt"), text.Bytes())
			compare(t, filepath.Join(dir, name+".json"), append(js, '\n'))
			assert.NotZero(t, rep.Summary.Invalid+rep.Summary.Warn, "a golden task is broken on purpose")
		})
	}
}

func compare(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./validate -run TestGolden -update")
	assert.Equal(t, string(want), string(got), "%s differs; run go test ./validate -run TestGolden -update and review the diff", path)
}
