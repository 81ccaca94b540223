package validate_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Validating a corpus with limits of its own leaves the corpus as it was: its limits, and what
// it loads with them, are the corpus's (a corpus is shared, by the built-in corpus's users
// among others).
func TestCorpusKeepsItsLimits(t *testing.T) {
	t.Parallel()
	c := dsl.NewCorpus(fstest.MapFS{"a.star": {Data: []byte(`task(name = "a", prompt = "Hi.", tools = ["fs"], verify = lambda ws, ep: check(True, "ok"))` + "\n")}}, ".", "c")
	rep, err := validate.Corpus(context.Background(), c, nil, validate.Options{Limits: dsl.Limits{Steps: 1}, Jobs: 1})
	require.NoError(t, err)
	require.Len(t, rep.Tasks, 1)
	require.NotEmpty(t, rep.Tasks[0].Diagnostics)
	assert.Equal(t, "step-limit", rep.Tasks[0].Diagnostics[0].Code, "the file loads under the limits given")
	assert.Equal(t, dsl.DefaultLimits, c.Limits())
	assert.Empty(t, c.LoadFile(context.Background(), "a.star").Diags)
}
