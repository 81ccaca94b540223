package budget

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.starlark.net/starlark"
)

func TestCharge(t *testing.T) {
	t.Parallel()
	th := &starlark.Thread{}
	assert.NoError(t, Charge(th, 5), "no charger: free")
	assert.NoError(t, Charge(nil, 5))
	var total uint64
	stop := errors.New("spent")
	Install(th, func(_ *starlark.Thread, n uint64) error {
		if total += n; total > 10 {
			return stop
		}
		return nil
	})
	assert.NoError(t, Charge(th, 4))
	assert.NoError(t, Charge(th, 0))
	assert.ErrorIs(t, Charge(th, 7), stop)
	assert.Equal(t, uint64(11), total)
}
