package validate

import (
	"testing"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/require"
)

// TestEveryCodeHasItsCheck lists every code of dsl.Codes with where it comes from: a row of the
// registry with at least one checker, or the part of the engine that gives it (givenBy), never
// both. Every code has a doc, and every warning (what the author of a task can fix) a repair
// hint, in its one row of dsl.Codes, which the rows of checks read.
func TestEveryCodeHasItsCheck(t *testing.T) {
	t.Parallel()
	rows := map[string]check{}
	for _, c := range checks {
		_, dup := rows[c.code]
		require.False(t, dup, "%s: two rows of checks", c.code)
		rows[c.code] = c
		_, known := dsl.CodeByID(c.code)
		require.True(t, known, "%s: a row of checks for a code that dsl.Codes does not register", c.code)
		require.NotEmpty(t, c.checkers, "%s: a row without a checker", c.code)
		require.Contains(t, []need{needNothing, needNoop, needOracle, needPass}, c.needs, "%s: a row needs one thing of the prelude, or nothing", c.code)
		for _, fn := range c.checkers {
			require.NotNil(t, fn, c.code)
		}
	}
	for code := range givenBy {
		_, known := dsl.CodeByID(code)
		require.True(t, known, "%s: givenBy names a code that dsl.Codes does not register", code)
	}
	for _, code := range dsl.Codes {
		row, checked := rows[code.ID]
		by, elsewhere := givenBy[code.ID]
		switch {
		case checked && elsewhere:
			t.Errorf("%s: a row of checks, and given by %s", code.ID, by)
		case !checked && !elsewhere:
			t.Errorf("%s: no row of checks gives it, and givenBy does not say what does", code.ID)
		case checked:
			require.Equal(t, code, row.Code(), "a row's doc and hint are its code's in dsl.Codes")
		}
		require.NotEmpty(t, code.Doc, "%s: no doc", code.ID)
		if code.Severity == dsl.Warning {
			require.NotEmpty(t, code.Hint, "%s: a warning the author can fix, without a repair hint", code.ID)
		}
	}
	require.Equal(t, "unused-tool", checks[len(checks)-1].code, "unused-tool reads what the verifiers of every run asked about: it runs last")
}

// TestDiagnosticsSortInTheOrderOfTheCodes: a task's diagnostics come errors first, then in the
// order of dsl.Codes, and in the order they were said within a code.
func TestDiagnosticsSortInTheOrderOfTheCodes(t *testing.T) {
	t.Parallel()
	ds := []dsl.Diagnostic{
		dsl.NewDiag("unused-tool", "u"), dsl.NewDiag("brittle-verifier", "b1"), dsl.NewDiag("weak-verifier", "w"),
		dsl.NewDiag("hidden-info", "h"), dsl.NewDiag("reply-only", "r"), dsl.NewDiag("brittle-verifier", "b2"),
		dsl.NewDiag("unsolved", "x"),
	}
	sortDiags(ds)
	var got []string
	for _, d := range ds {
		got = append(got, d.Message)
	}
	require.Equal(t, []string{"x", "h", "w", "r", "b1", "b2", "u"}, got)
}
