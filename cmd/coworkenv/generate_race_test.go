//go:build race

package main

// genRaceBuild: the race detector's shadow memory counts against a worker's memory limit, so
// the tests of the memory limit do not run under it.
const genRaceBuild = true
