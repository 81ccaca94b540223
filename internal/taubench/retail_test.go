package taubench

import (
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The database is τ-bench's size, the same for the same seed, and another for another seed.
func TestGenerate(t *testing.T) {
	t.Parallel()
	a, b, c := Generate(1), Generate(1), Generate(2)
	assert.Equal(t, a.Files(), b.Files())
	assert.NotEqual(t, a.Files()["data.star"], c.Files()["data.star"])
	for text, n := range map[string]int{a.Users: Users, a.Orders: Orders, a.Products: Products, a.ByEmail: Users, a.ByNameZip: Users} {
		v, err := jsonv.DecodeString(text)
		require.NoError(t, err)
		assert.Len(t, v, n)
	}
	v, _ := jsonv.DecodeString(a.Variants)
	assert.InDelta(t, 600, len(v.([]jsonv.Value)), 100, "τ-bench has 591 variants")
	require.Len(t, a.Gold, 5)
	assert.Contains(t, a.Files()["retail.star"], `agent.call("exchange_delivered_order_items", order_id = "#W`)
	assert.False(t, strings.Contains(a.Files()["retail.star"], "#SOLVE#"))
}
