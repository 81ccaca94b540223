package dsl_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// The in-process guards stop, at the step budget, builtin calls that would otherwise run for
// ages or exhaust memory within one step; each ends with the diagnostic of the budget.
func TestBuiltinsChargeTheirWork(t *testing.T) {
	for _, c := range []struct {
		name, src, code, msg string
		lim                  *dsl.Limits
	}{
		{"max over a huge range", "max(range(1 << 62))\n", "step-limit", "", nil},
		// the wall-clock limit reaches inside too: here there is no step budget
		{"max over a huge range, timed", "max(range(1 << 62))\n", "timeout", "", &dsl.Limits{Timeout: 50 * time.Millisecond}},
		{"all over a huge range", "all(range(1, 1 << 62))\n", "step-limit", "", nil},
		{"list of a huge range", "list(range(1 << 40))\n", "step-limit", "", nil},
		{"sorted of a huge range", "sorted(range(1 << 40), reverse = True)\n", "step-limit", "", nil},
		{"zip of a huge range", "zip(range(1 << 40), range(1 << 40))\n", "step-limit", "", nil},
		{"json.encode of a shared DAG", "x = [1]\nfor i in range(60):\n    x = [x, x]\njson.encode(x)\n", "step-limit", "", nil},
		{"json.encode of a huge range", "json.encode(range(1 << 40))\n", "step-limit", "", nil},
		{"str of deep nesting", "x = []\nfor i in range(100000):\n    x = [x]\ns = str(x)\n", "step-limit", "", nil},
		{"print of a shared DAG", "x = {'a': 1}\nfor i in range(60):\n    x = {'l': x, 'r': x}\nprint(x)\n", "step-limit", "", nil},
		{"json.decode of deep nesting", "json.decode('[' * 100000)\n", "script-error", "nested deeper than 1000 levels", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			corp := corpusOf(map[string]string{"a.star": c.src})
			if c.lim != nil {
				corp = corp.WithLimits(*c.lim)
			}
			f := corp.LoadFile(context.Background(), "a.star")
			require.Len(t, f.Diags, 1)
			assert.Equal(t, c.code, f.Diags[0].Code, f.Diags[0].String())
			assert.Contains(t, f.Diags[0].Message, c.msg)
		})
	}
}

// The guarded builtins give the results they always gave.
func TestGuardedBuiltinsKeepTheirResults(t *testing.T) {
	for expr, want := range map[string]string{
		`list(range(3))`:                                   `[0, 1, 2]`,
		`tuple(range(2))`:                                  `(0, 1)`,
		`sorted(range(3), reverse = True)`:                 `[2, 1, 0]`,
		`max(range(5))`:                                    `4`,
		`min([3, 1, 2])`:                                   `1`,
		`dict(zip(["a", "b"], range(2)))`:                  `{"a": 0, "b": 1}`,
		`list(enumerate(range(2), 1))`:                     `[(1, 0), (2, 1)]`,
		`list(reversed(range(3)))`:                         `[2, 1, 0]`,
		`len(set(range(4)))`:                               `4`,
		`all(range(1, 4)) and not any(range(1))`:           `True`,
		`str([1, "a", (2,), {"k": None}])`:                 `"[1, \"a\", (2,), {\"k\": None}]"`,
		`repr("x")`:                                        `"\"x\""`,
		`json.encode({"b": [1, 2.5], "a": struct(x = 1)})`: `"{\"a\":{\"x\":1},\"b\":[1,2.5]}"`,
		`json.encode(range(3))`:                            `"[0,1,2]"`,
		`json.decode('{"a": [1, {"b": "]]]]"}]}')["a"][1]`: `{"b": "]]]]"}`,
		`json.indent(json.encode([1]))`:                    `"[\n\t1\n]"`,
		`type(list) == type(len)`:                          `True`,
	} {
		v, err := starlark.EvalOptions(dsl.FileOptions, dsl.NewThread("t", dsl.DefaultLimits, nil), "t.star", expr, dsl.Predeclared())
		require.NoError(t, err, expr)
		assert.Equal(t, want, v.String(), expr)
	}
	// a list that contains itself prints as before, and json.encode still refuses it
	f := load(t, map[string]string{"a.star": "x = [1]\nx.append(x)\nS = str(x)\n"}, "a.star")
	require.Empty(t, f.Diags)
	f = load(t, map[string]string{"a.star": "x = [1]\nx.append(x)\njson.encode(x)\n"}, "a.star")
	require.Len(t, f.Diags, 1)
	assert.Contains(t, f.Diags[0].Message, "cycle in JSON structure")
}

// Charge counts steps and reports a spent budget as the interpreter does.
func TestCharge(t *testing.T) {
	th := dsl.NewThread("t", dsl.Limits{Steps: 10}, nil)
	require.NoError(t, dsl.Charge(th, 9))
	err := dsl.Charge(th, 1)
	require.Error(t, err)
	assert.Equal(t, "Starlark computation cancelled: too many steps", err.Error())
}

// print output is bounded per message and in total.
func TestPrintIsBounded(t *testing.T) {
	var msgs []string
	total := 0
	p := dsl.BoundPrint(func(pos syntax.Position, msg string) {
		msgs = append(msgs, msg)
		total += len(msg)
	})
	for i := 0; i < 100; i++ {
		p(syntax.Position{}, strings.Repeat("x", 100000))
	}
	assert.LessOrEqual(t, total, 2*dsl.MaxPrintTotal)
	assert.Contains(t, msgs[0], "more bytes not shown")
	assert.Contains(t, msgs[len(msgs)-1], "print output past 1 MiB is dropped")
	// through a file load too
	loaded := load(t, map[string]string{"a.star": "s = 'x' * 100000\nfor i in range(100):\n    print(s)\n"}, "a.star")
	require.Empty(t, loaded.Diags)
	n := 0
	for _, m := range loaded.Prints {
		n += len(m)
	}
	assert.Less(t, n, 2*dsl.MaxPrintTotal)
}
