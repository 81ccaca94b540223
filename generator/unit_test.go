package generator_test

import (
	"testing"

	"github.com/coworkenv/coworkenv/generator"
	"github.com/stretchr/testify/require"
)

const tiny = "def _setup(ws):\n    ws.fs.write(\"/a.txt\", \"a\")\n\ntask(\n    name = \"t\",\n    prompt = \"p\",\n    tools = [\"fs\"],\n)\n"

func TestExtract(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, answer, want string
	}{
		{"fenced python", "Sure!\n\n```python\n" + tiny + "```\n\nLet me know.", tiny},
		{"fenced starlark, no prose", "```starlark\n" + tiny + "```", tiny},
		{"fence without language", "```\n" + tiny + "```\n", tiny},
		{"tilde fence", "~~~python\n" + tiny + "~~~\n", tiny},
		{"the block that declares a task wins", "Use it like this:\n```python\nagent.call(\"fs_read\", path = \"/a\")\n```\nThe file:\n```python\n" + tiny + "```\n", tiny},
		{"a fence left open (cut off)", "Here:\n```python\n" + tiny, tiny},
		{"not fenced, prose around", "Here is the file.\n\n" + tiny + "\nThis task checks the file.\n", tiny},
		{"not fenced, code only", tiny, tiny},
		{"reasoning before", "<think>I could write task( with ```python fences...</think>\n```python\n" + tiny + "```", tiny},
		{"CRLF", "```python\r\n" + "task(\r\n    name = \"t\",\r\n)\r\n```\r\n", "task(\n    name = \"t\",\n)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := generator.Extract(tc.answer)
			require.True(t, ok)
			require.Equal(t, tc.want, got)
		})
	}
	for _, none := range []string{"", "I cannot help with that.", "Which capability do you mean?\nPlease tell me more.", "```text\nJust some words here.\n```\n"} {
		_, ok := generator.Extract(none)
		require.False(t, ok, none)
	}
}

func TestNormalizeSource(t *testing.T) {
	t.Parallel()
	a := "# a comment\nX = \"a # not a comment\"  # trailing\ndef f(x):\n    return x + 1\n"
	b := "X=\"a # not a comment\"\n\n\ndef f(x):\n  return x+1   # another\n"
	require.Equal(t, generator.NormalizeSource(a), generator.NormalizeSource(b))
	require.Equal(t, `X="a # not a comment"deff(x):returnx+1`, generator.NormalizeSource(a))
	// white space inside strings counts
	require.NotEqual(t, generator.NormalizeSource(`X = "a b"`), generator.NormalizeSource(`X = "ab"`))
	require.Equal(t, generator.NormalizeSource("X = \"\"\"a\n # b \"\"\"\n"), `X="""a`+"\n"+` # b """`)
	require.Equal(t, generator.NormalizeSource(`X = 'it\'s' # c`), `X='it\'s'`)
}

func TestJaccard(t *testing.T) {
	t.Parallel()
	a := generator.Shingles("Please reply to Dana with the Q3 total from the sales sheet")
	b := generator.Shingles("please reply to dana with the q3 total from the sales sheet!")
	c := generator.Shingles("Move the stand-up to Thursday and tell the team")
	require.Equal(t, 1.0, generator.Jaccard(a, b))
	require.Equal(t, 0.0, generator.Jaccard(a, c))
	require.Equal(t, 0.0, generator.Jaccard(nil, nil))
}

func TestScenariosAreDeterministicAndDiverse(t *testing.T) {
	t.Parallel()
	require.Equal(t, generator.NewScenario(42), generator.NewScenario(42))
	require.Equal(t, generator.NewScenario(42).Text(), generator.NewScenario(42).Text())
	domains, companies, settings, people := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for seed := int64(1); seed <= 100; seed++ {
		s := generator.NewScenario(seed)
		domains[s.Domain] = true
		companies[s.Company] = true
		settings[s.Domain+"|"+s.Situation+"|"+s.Twist] = true
		people[s.User.Name] = true
		require.Regexp(t, `^[a-z]+@[a-z-]+\.example$`, s.User.Email)
		require.NotEmpty(t, s.People)
		for _, p := range s.People {
			require.NotEqual(t, s.User.Name, p.Name)
		}
	}
	t.Logf("100 seeds: %d domains, %d companies, %d domain×situation×twist, %d users", len(domains), len(companies), len(settings), len(people))
	require.GreaterOrEqual(t, len(domains), 20)
	require.GreaterOrEqual(t, len(companies), 90)
	require.GreaterOrEqual(t, len(settings), 98)
	require.GreaterOrEqual(t, len(people), 85)
}
