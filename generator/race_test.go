//go:build race

package generator_test

// raceBuild: the race detector's shadow memory counts against a worker's memory limit and
// multiplies what a task needs, so the tests that exercise the memory limit do not run.
const raceBuild = true
