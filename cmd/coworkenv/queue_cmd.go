package main

import (
	"fmt"
	"io"
)

// cmdQueue is `coworkenv queue`. (Being built.)
func cmdQueue(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "coworkenv queue: not built yet")
	return 2
}
