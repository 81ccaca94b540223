//go:build race

package serve_test

// raceBuild: the race detector's shadow memory counts against a worker's memory limit.
const raceBuild = true
