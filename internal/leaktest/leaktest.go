// Package leaktest finds goroutines a test left running: those whose stack passes through the
// packages under test. Counting every goroutine of the process (runtime.NumGoroutine) also
// counts the HTTP client's and server's own, which end on their own schedule, and any other
// test's; reading the stacks counts only ours.
package leaktest

import (
	"runtime"
	"strings"
)

// yields bounds the wait for goroutines that signalled their end and have yet to return: each
// yield lets them run. It counts scheduler turns, not time, so a slow machine waits as many.
const yields = 100000

// Leftover returns the stack of a goroutine whose stack mentions one of pkgs (like
// "coworkenv/serve.") and not skip, after letting such goroutines finish; "" when there is none.
// skip names the test's own frame with its parenthesis ("serve_test.TestX("), so that the
// goroutines it started, whose stacks end "created by ...TestX", are still found.
func Leftover(skip string, pkgs ...string) string {
	g := find(skip, pkgs)
	for i := 0; i < yields && g != ""; i++ {
		runtime.Gosched()
		if i%100 == 99 {
			g = find(skip, pkgs)
		}
	}
	return g
}

func find(skip string, pkgs []string) string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if skip != "" && strings.Contains(g, skip) {
			continue
		}
		for _, p := range pkgs {
			if strings.Contains(g, p) {
				return g
			}
		}
	}
	return ""
}
