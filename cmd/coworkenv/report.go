package main

import (
	"fmt"
	"io"
)

// cmdReport is `coworkenv report`. (Being built.)
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "coworkenv report: not built yet")
	return 2
}
