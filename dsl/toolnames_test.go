package dsl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task-defined tool may take the name of a built-in tool the task does not offer (a port of a
// benchmark with its own contacts service); it clashes with one the task offers, by its group or
// by name, in either order.
func TestTaskToolNamedLikeABuiltin(t *testing.T) {
	t.Parallel()
	const decl = "def f(ws, name):\n    return []\n" +
		"CS = tool(name = \"contacts_search\", description = \"Search our CRM's contacts.\", params = {\"name\": param(\"string\", description = \"part of a name\")}, impl = f)\n" +
		"CP = tool(name = \"chat_post\", description = \"Post to our ticket chat.\", params = {\"name\": param(\"string\", description = \"the text\")}, impl = f)\n"
	for tools, clash := range map[string]string{
		`["fs", "mail", CS, CP]`:  "",
		`[CS, CP]`:                "",
		`["contacts", CS]`:        `task-defined tool "contacts_search" has the name of a built-in tool the task offers (group "contacts")`,
		`[CS, "contacts"]`:        `task-defined tool "contacts_search" has the name of a built-in tool the task offers (group "contacts")`,
		`["contacts_search", CS]`: `task-defined tool "contacts_search" has the name of a built-in tool the task offers`,
		`["chat", CS, CP]`:        `task-defined tool "chat_post" has the name of a built-in tool the task offers (group "chat")`,
		`["contacts_add", CS]`:    "",
		`[CS, CS]`:                `two tools are named "contacts_search"`,
	} {
		src := decl + "task(name = \"t\", prompt = \"p\", tools = " + tools + ")\n"
		f := load(t, map[string]string{"a.star": src}, "a.star")
		if clash == "" {
			require.Empty(t, f.Diags, tools)
			require.Len(t, f.Tasks, 1, tools)
			var names []string
			for _, s := range f.Tasks[0].Tools {
				if !s.Builtin {
					names = append(names, s.Name)
				}
			}
			assert.Contains(t, names, "contacts_search", tools)
			continue
		}
		require.Len(t, f.Diags, 1, tools)
		assert.Equal(t, "schema", f.Diags[0].Code, tools)
		assert.Contains(t, f.Diags[0].Message, clash, tools)
	}
}
