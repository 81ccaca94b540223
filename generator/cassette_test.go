package generator_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/coworkenv/coworkenv/generator/cassette"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/runtime/modelagent"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "re-record testdata/cassette from the scripted model and rewrite the golden outputs")

// The committed cassette: a whole small run (three attempts: accepted at once, accepted after a
// syntax repair, rejected after --max-rounds 2) recorded from the scripted model. The CLI's
// tests replay it too (cmd/coworkenv).
const (
	cassetteDir  = "testdata/cassette"
	cassetteFile = "testdata/cassette/run.cassette"
	goldenDir    = "testdata/cassette/golden"
	referenceMD  = "testdata/cassette/reference.md"
)

// CassetteOptions are the flags of the committed run (the CLI test uses the same ones).
func cassetteOptions(t *testing.T, p *isolate.Pool, out string) generator.Options {
	zero := 0.0
	ref, err := os.ReadFile(referenceMD)
	require.NoError(t, err)
	return generator.Options{
		Capabilities: []string{"mail.reply"},
		Count:        3,
		Out:          out,
		Corpus:       testCorpus(),
		MaxRounds:    2,
		Jobs:         2,
		Seed:         7,
		Pool:         p,
		Model:        modelagent.Config{Model: "scripted-model", Temperature: &zero},
		Reference:    string(ref),
	}
}

func TestCassetteReplay(t *testing.T) {
	t.Parallel()
	if *update {
		script := map[int64][]string{
			7: {fenced(replies[2].source())},
			8: {fenced(syntaxError(replies[3].source())), fenced(replies[3].source())},
			9: {fenced(unsolvable(replies[4])), fenced(unsolvable(replies[4]))},
		}
		f := newFake(t, script)
		out := t.TempDir()
		opts := cassetteOptions(t, testPool(t), out)
		opts.Model.BaseURL = f.srv.URL + "/v1"
		opts.Record = cassetteFile
		_, err := generator.Run(context.Background(), opts)
		require.NoError(t, err)
		require.NoError(t, os.RemoveAll(goldenDir))
		require.NoError(t, os.MkdirAll(goldenDir, 0o755))
		entries, err := os.ReadDir(out)
		require.NoError(t, err)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(out, e.Name()))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(goldenDir, e.Name()), data, 0o644))
		}
	}
	for run := 0; run < 2; run++ {
		out := t.TempDir()
		opts := cassetteOptions(t, testPool(t), out)
		opts.Model.Model = "" // taken from the cassette
		opts.Replay = cassetteFile
		sum, err := generator.Run(context.Background(), opts)
		require.NoError(t, err, "if the validator's messages or the prompts changed on purpose, re-record: go test ./generator -run TestCassetteReplay -update")
		require.Equal(t, 2, sum.Accepted)
		requireSameDir(t, goldenDir, out)
		validateStrict(t, out)
	}
}

func TestCassetteMismatch(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	opts := cassetteOptions(t, testPool(t), out)
	opts.Replay = cassetteFile
	opts.Reference = "another reference"
	_, err := generator.Run(context.Background(), opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "attempt 0, request 1 differs from the recording")
	require.Contains(t, err.Error(), "first difference at byte")

	p, err := cassette.Load(cassetteFile)
	require.NoError(t, err)
	require.Equal(t, "scripted-model", p.Model())
	require.Equal(t, 5, p.Len())

	opts = cassetteOptions(t, testPool(t), t.TempDir())
	opts.Replay = cassetteFile
	opts.Count = 4
	_, err = generator.Run(context.Background(), opts)
	require.Error(t, err)
	require.Contains(t, err.Error(), "attempt 3 makes request 1, which was not recorded")
}

func TestCassetteIsReadable(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(cassetteFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, `{"format":"coworkenv-cassette/1","model":"scripted-model"}`, lines[0])
	require.Contains(t, lines[1], `"request":{"model":"scripted-model","messages":[{"role":"system"`)
}
