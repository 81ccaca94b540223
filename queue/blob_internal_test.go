package queue

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The cache keeps the blobs most recently read up to its bound, and none larger than a quarter
// of it.
func TestBlobCacheBound(t *testing.T) {
	c := newBlobCache(100)
	c.add("a", make([]byte, 20))
	c.add("b", make([]byte, 20))
	c.add("c", make([]byte, 20))
	c.add("d", make([]byte, 20))
	_, ok := c.get("a") // a is now the most recently used
	assert.True(t, ok)
	c.add("e", make([]byte, 25)) // over the bound: b goes, the least recently used
	_, ok = c.get("b")
	assert.False(t, ok)
	assert.Equal(t, 85, c.size)
	c.add("f", make([]byte, 20)) // then c
	_, ok = c.get("c")
	assert.False(t, ok)
	for _, ref := range []string{"a", "d", "e", "f"} {
		_, ok := c.get(ref)
		assert.True(t, ok, ref)
	}
	assert.Equal(t, 85, c.size)
	c.add("g", make([]byte, 26)) // larger than a quarter: not kept
	_, ok = c.get("g")
	assert.False(t, ok)
	assert.Equal(t, 85, c.size)
}
