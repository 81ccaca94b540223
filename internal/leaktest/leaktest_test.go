package leaktest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// park says it runs, then blocks until release is closed: a goroutine of this package, left
// running.
func park(running, release chan struct{}) {
	close(running)
	<-release
}

// A goroutine of the package is found while it runs, and not once it returned; the test's own
// goroutine is skipped.
func TestLeftover(t *testing.T) {
	running, release := make(chan struct{}), make(chan struct{})
	go park(running, release)
	<-running
	assert.Contains(t, Leftover("leaktest.TestLeftover(", "leaktest.park"), "leaktest.park")
	close(release)
	assert.Empty(t, Leftover("leaktest.TestLeftover(", "leaktest.park"))
	assert.Empty(t, Leftover("", "no/such/package."))
}
