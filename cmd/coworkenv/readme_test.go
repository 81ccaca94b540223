package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
