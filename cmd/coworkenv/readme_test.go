package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeFirstTask: the README's first task is what it says it is: `validate --strict`
// reports it ok, and with the mail_reply line deleted it reports exactly the error shown.
func TestReadmeFirstTask(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "```python\n")
	require.True(t, i >= 0, "README.md has no python block")
	src := readme[i+len("```python\n"):]
	src = src[:strings.Index(src, "```")]

	dir := t.TempDir()
	p := filepath.Join(dir, "hello.star")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	code, out, errs := cli(t, "validate", "--strict", p)
	require.Equal(t, 0, code, out+errs)
	require.Contains(t, out, "1 task: 1 ok, 0 warn, 0 invalid")

	var kept []string
	for _, line := range strings.Split(src, "\n") {
		if !strings.Contains(line, `agent.call("mail_reply"`) {
			kept = append(kept, line)
		}
	}
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o644))
	t.Chdir(dir)
	_, out, errs = cli(t, "validate", "hello.star")
	j := strings.Index(readme, "hello.star:")
	require.True(t, j >= 0, "README.md shows no broken-task output")
	shown := readme[j:]
	shown = shown[:strings.Index(shown, "\n")]
	require.Contains(t, out+errs, shown)
}

// readmeBlock is the body of the README's first ```sh block that contains want.
func readmeBlock(t *testing.T, readme, want string) string {
	t.Helper()
	for rest := readme; ; {
		i := strings.Index(rest, "```sh\n")
		require.True(t, i >= 0, "README.md has no sh block with %q", want)
		rest = rest[i+len("```sh\n"):]
		block := rest[:strings.Index(rest, "```")]
		if strings.Contains(block, want) {
			return block
		}
	}
}

// readmeCommands are the coworkenv command lines of a README block (`go run ./cmd/coworkenv`
// dropped, comments too), split into arguments.
func readmeCommands(t *testing.T, block string) [][]string {
	t.Helper()
	var cmds [][]string
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		args := strings.Fields(line)
		if len(args) == 0 {
			continue
		}
		require.Equal(t, []string{"go", "run", "./cmd/coworkenv"}, args[:3], "README line %q", line)
		cmds = append(cmds, args[3:])
	}
	return cmds
}

// TestReadmeExportMakesData: the README's oracle rollout and its export write data, and the
// commands table names --include-oracle; without it the same export keeps nothing, and says so
// on stderr with exit status 1 (it used to write an empty file and exit 0).
func TestReadmeExportMakesData(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "| `coworkenv export ")
	require.True(t, i >= 0)
	row := readme[i:]
	row = row[:strings.Index(row, "\n")]
	assert.Contains(t, row, "`--include-oracle`", "the commands table lists --include-oracle")

	cmds := readmeCommands(t, readmeBlock(t, readme, "--include-oracle"))
	require.Len(t, cmds, 2)
	require.Equal(t, "rollout", cmds[0][0])
	require.Equal(t, []string{"export", "sft"}, cmds[1][:2])
	// the README's relative paths (runs/, sft.jsonl), in a folder of the test's own
	dir := t.TempDir()
	for _, args := range cmds {
		for i, a := range args {
			if strings.HasSuffix(a, "/") || strings.HasSuffix(a, ".jsonl") {
				args[i] = filepath.Join(dir, a)
			}
		}
		code, out, errs := cli(t, args...)
		require.Equal(t, 0, code, "%v: %s%s", args, out, errs)
	}
	lines := readLines(t, filepath.Join(dir, "sft.jsonl"))
	assert.NotEmpty(t, lines, "the README's export writes episodes")

	// the same export without --include-oracle keeps nothing: said loudly, exit 1
	var without []string
	for _, a := range cmds[1] {
		if a != "--include-oracle" {
			without = append(without, a)
		}
	}
	none := filepath.Join(dir, "none.jsonl")
	without[len(without)-1] = none
	require.Equal(t, "--out", without[len(without)-2])
	code, out, errs := cli(t, without...)
	assert.Equal(t, 1, code, out+errs)
	assert.Contains(t, out, "wrote 0 episodes")
	assert.Contains(t, errs, "coworkenv export sft: no episode written to "+none+": ")
	assert.Regexp(t, `: every trace was left out \(\d+ not a model's episode \(use --include-oracle\)\)`, errs)
}

// TestReadmeSimulatedUserExample: the README's simulated-user block is a cut of a whole file under
// docs/examples, which the README links and which validates ok --strict; every string the block
// quotes is the file's.
func TestReadmeSimulatedUserExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	const link = "[docs/examples/vat-question.star](docs/examples/vat-question.star)"
	require.Contains(t, readme, link)
	i := strings.Index(readme, "### A user who has to be asked")
	require.True(t, i >= 0)
	j := strings.Index(readme[i:], "```python\n")
	require.True(t, j >= 0)
	block := readme[i+j+len("```python\n"):]
	block = block[:strings.Index(block, "```")]

	p := filepath.Join("..", "..", "docs", "examples", "vat-question.star")
	src, err := os.ReadFile(p)
	require.NoError(t, err)
	quoted := regexp.MustCompile(`"[^"\n]*"`).FindAllString(block, -1)
	require.NotEmpty(t, quoted)
	for _, q := range quoted {
		assert.Contains(t, string(src), q, "the README's block quotes %s; the file does not", q)
	}
	code, out, errs := cli(t, "validate", "--strict", p)
	require.Equal(t, 0, code, out+errs)
	assert.Contains(t, out, "1 task: 1 ok, 0 warn, 0 invalid")
	code, out, errs = cli(t, "run", p)
	require.Equal(t, 0, code, out+errs)
}

// TestReadmeInstall: the README's first commands run the main job and the tests, then install the
// command, from a folder that is the command's package main, named coworkenv as the docs call it.
func TestReadmeInstall(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "```sh\n")
	require.True(t, i >= 0)
	block := readme[i+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	require.Equal(t, []string{"go run ./cmd/coworkenv validate", "go test ./...", "go install ./cmd/coworkenv"}, cmds)
	wd, err := os.Getwd()
	require.NoError(t, err)
	assert.Equal(t, "coworkenv", filepath.Base(wd), "go install names the binary after the folder")
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	assert.Contains(t, string(src), "\npackage main\n", "go install ./cmd/coworkenv installs a command")
	assert.Contains(t, readme[i:], "a few minutes", "the README says the first build takes a while")
}

// TestDocsValidateFolders: a folder that a `coworkenv validate` command of the README or docs/
// names (in a sh block) is one of the repository's, so that the command runs as written from
// the repository's root (docs/report.md named tasks/, which there is not).
func TestDocsValidateFolders(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	checked := 0
	for _, doc := range append(docs, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
			for _, line := range strings.Split(block[1], "\n") {
				line, _, _ = strings.Cut(line, "#")
				line, _, _ = strings.Cut(line, ">")
				_, rest, ok := strings.Cut(line, "coworkenv validate")
				if !ok {
					continue
				}
				// the arguments as validate parses them: its own flags say which take a value
				var opts validateOptions
				fs := newFlags("validate")
				opts.flags(fs)
				pos, err := parse(fs, "", strings.Fields(rest), streams{io.Discard, io.Discard})
				require.NoError(t, err, "%s: %s", doc, line)
				for _, p := range pos {
					if !strings.HasSuffix(p, "/") {
						continue // a file the page has you write (hello.star)
					}
					checked++
					info, err := os.Stat(filepath.Join(root, p))
					if assert.NoError(t, err, "%s: %q names %s, not a folder of the repository", doc, strings.TrimSpace(line), p) {
						assert.True(t, info.IsDir(), "%s: %s", doc, p)
					}
				}
			}
		}
	}
	assert.Positive(t, checked, "the docs name folders to validate")
}
